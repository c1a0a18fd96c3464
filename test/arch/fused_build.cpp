// Compiled (not run) for targets this machine cannot run: AVX-512 (x86-64-v4) builds must keep compiling
// the fused loop and the SIMD back end. The same expressions run in every test configuration elsewhere.
#include <mixt/mixt.hpp>

#include <complex>
#include <cstdint>

void mixt_arch_build_check(Eigen::Tensor<float, 1>& r, const Eigen::Tensor<std::int8_t, 1>& a,
                           const Eigen::Tensor<Eigen::half, 1>& b, const Eigen::Tensor<Eigen::bfloat16, 1>& c,
                           const Eigen::Tensor<double, 1>& d, Eigen::Tensor<std::complex<double>, 1>& z) {
    mixt::assign(r, mixt::lazy(a) + mixt::lazy(b) * 2.0f);
    mixt::assign(r, mixt::where(mixt::lazy(r) > 0, b, c));
    mixt::assign(r, mixt::exp(mixt::lazy(b)) * c);
    mixt::assign(z, mixt::lazy(d) * std::complex<double>(1, 2) + r);
}
