// Compiled (not run) for targets that no default configuration builds with that compiler: AVX-512 (x86-64-v4)
// builds must keep compiling the fused loop and the SIMD back end, AVX512-FP16 ones (sapphirerapids) the f16
// arithmetic of reductions' rows, and GCC's baseline x86-64 build its portable loops (test/CMakeLists.txt). The same expressions run in every test configuration elsewhere.
#include <mixt/mixt.hpp>

#include <complex>
#include <cstdint>

void mixt_arch_build_check(Eigen::Tensor<float, 1>& r, const Eigen::Tensor<std::int8_t, 1>& a,
                           const Eigen::Tensor<Eigen::half, 1>& b, const Eigen::Tensor<Eigen::bfloat16, 1>& c,
                           const Eigen::Tensor<double, 1>& d, Eigen::Tensor<std::complex<double>, 1>& z,
                           const Eigen::Tensor<std::uint8_t, 1>& u, Eigen::Tensor<Eigen::bfloat16, 1>& o) {
    mixt::assign(r, mixt::lazy(a) + mixt::lazy(b) * 2.0f);
    mixt::assign(r, mixt::lazy(u) * r + r);            // a u8 leaf (a block at a time with AVX512-VBMI)
    mixt::assign(o, mixt::cast<Eigen::bfloat16>(mixt::lazy(u) * r)); // the same in the bf16 converting loop
    mixt::assign(r, mixt::where(mixt::lazy(r) > 0, b, c));
    mixt::assign(r, mixt::exp(mixt::lazy(b)) * c);
    mixt::assign(z, mixt::lazy(d) * std::complex<double>(1, 2) + r);
}

// Reductions' AVX-512 paths: byte sums in 16-bit lanes (float and 64-bit accumulators), a broadcast f16 scale
// converted once per run (with AVX512-FP16, the products in f16 arithmetic, alone and under an f32 product),
// argmax over rows, min/max keys; short rows: i8 sums in int64 and i8 max in memory order,
// f64 max transposed or in memory order.
void mixt_arch_reduce_check(Eigen::Tensor<float, 1, Eigen::RowMajor>& r, Eigen::Tensor<std::int64_t, 1, Eigen::RowMajor>& i,
                            Eigen::Tensor<std::int8_t, 1, Eigen::RowMajor>& b, Eigen::Tensor<double, 1, Eigen::RowMajor>& m,
                            const Eigen::Tensor<std::uint8_t, 2, Eigen::RowMajor>& u,
                            const Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor>& q,
                            const Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor>& s,
                            const Eigen::Tensor<Eigen::bfloat16, 2, Eigen::RowMajor>& h,
                            const Eigen::Tensor<double, 2, Eigen::RowMajor>& d,
                            const Eigen::Tensor<float, 2, Eigen::RowMajor>& x) {
    mixt::assign(r, mixt::sum<float>(u, 0));
    mixt::assign(r, mixt::mean<float>(q, 1));
    mixt::assign(i, mixt::sum<std::int64_t>(q, 0));
    mixt::assign(r, mixt::sum(mixt::lazy(q) * s, 1));
    mixt::assign(r, mixt::sum(mixt::lazy(q) * s * x, 1));
    mixt::assign(i, mixt::argmax(mixt::lazy(q) * h, 1));
    mixt::assign(r, mixt::max(mixt::lazy(h) - s, 1));
    mixt::assign(i, mixt::sum(q, 1));
    mixt::assign(b, mixt::max(q, 1));
    mixt::assign(m, mixt::max(d, 1));
}
