// mixt's reductions on an Eigen::GpuDevice (eval/gpu_reduce.hpp), over TensorMaps of cudaMalloc'd memory:
// they follow the CPU's plan (lanes, blocks, super-blocks, pairwise stacks) and combine the same values in the
// same order, so their results are the DefaultDevice's bit for bit, float sums included, under the NaN contract
// (test/support/nan_contract.hpp). test/eval/gpu_reduce_test.cpp runs the same per-item functions on the host
// without a GPU. Compiled beside gpu_test.cu into test_gpu (two translation units: nvcc compiles them at once).

#define EIGEN_USE_GPU

#include "gpu_support.hpp"

#include <stdexcept>

namespace {

using namespace mixt_gpu_test;

// A tensor of the given shape and layout holding make<T>(seed)'s values (repeated where it has more than n).
template <class T, int L = Eigen::RowMajor, class... I>
Eigen::Tensor<T, sizeof...(I), L> make_shaped(std::uint64_t seed, I... dims) {
    Eigen::Tensor<T, sizeof...(I), L> t(static_cast<Eigen::Index>(dims)...);
    const auto flat = make<T>(seed);
    for (Eigen::Index i = 0; i < t.size(); ++i) t.data()[i] = flat(i % n);
    return t;
}

// Evaluates build(leaves) on the host (mixt::eval, DefaultDevice) and with assign on the GPU (the leaves in
// device memory), and expects the same result, element by element, under the NaN contract.
template <class Build, class... Hs>
void expect_reduction(const Eigen::GpuDevice& device, const std::string& what, Build build, const Hs&... host) {
    const auto want = mixt::eval(build(host...));
    using W = std::remove_cvref_t<decltype(want)>;
    const std::tuple<device_tensor<typename Hs::Scalar, Hs::NumDimensions, Hs::Layout>...> on_device(host...);
    const device_tensor<typename W::Scalar, W::NumDimensions, W::Layout> out(want);
    std::apply([&](const auto&... d) { mixt::assign(out.map(), build(d.map()...), device); }, on_device);
    device.synchronize();
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << what;
    const W got = out.download();
    expect_all(what, want.size(), [&](Eigen::Index i) { return got.data()[i]; }, [&](Eigen::Index i) { return want.data()[i]; },
               [](const auto& g, const auto& w) { return mixt_test::same_result(g, w); },
               [](Eigen::Index) { return " differs from the DefaultDevice's"; });
}

// mixt's reductions on the GPU follow the CPU's plan (lanes, blocks, super-blocks, pairwise stacks) and
// combine the same values in the same order: the same bits as the DefaultDevice, float sums included.
TEST_F(gpu, reductions_equal_the_cpu_bit_for_bit) {
    const auto& dev = *device_;
    const auto f16 = make<Eigen::half>(31);
    const auto bf16 = make<Eigen::bfloat16>(32);
    const auto f32 = make<float>(33);
    // Over everything (32 lanes), and a stream longer than a super-block (2^18 elements).
    expect_reduction(dev, "sum(f16 * bf16)", [](const auto& a, const auto& b) { return mixt::sum(mixt::lazy(a) * b); }, f16, bf16);
    const auto long_f32 = make_shaped<float>(34, 3, 300007);
    expect_reduction(dev, "sum(f32 [3, 300007], 1)", [](const auto& a) { return mixt::sum(a, 1); }, long_f32);
    expect_reduction(dev, "sum(f32 [600011])", [](const auto& a) { return mixt::sum(mixt::lazy(a) * 0.5f); },
                     make_shaped<float>(35, 600011));
    expect_reduction(dev, "max(abs(f32 - bf16)) (NaN)", [](const auto& a, const auto& b) {
        return mixt::max(mixt::abs(mixt::lazy(a) - b));
    }, f32, bf16);
    expect_reduction(dev, "min(f32) (NaN)", [](const auto& a) { return mixt::min(a); }, f32);
    // Channels last: three columns, 96 lanes.
    const auto image = make_shaped<std::uint8_t>(36, 45, 67, 3);
    expect_reduction(dev, "mean(u8 image, {0, 1})", [](const auto& a) { return mixt::mean(a, {0, 1}); }, image);
    // Rows: a per-row scale broadcast along the reduced axis, a dequantized GEMV, argmax of each row.
    const auto w = make_shaped<std::int8_t>(37, 64, 1000);
    const auto scale = make_shaped<Eigen::half>(38, 64, 1);
    const auto x = make_shaped<float>(39, 1, 1000);
    expect_reduction(dev, "sum(i8 * f16 scale, 1)", [](const auto& a, const auto& s) { return mixt::sum(mixt::lazy(a) * s, 1); }, w, scale);
    expect_reduction(dev, "sum(i8 * f16 * f32, 1)", [](const auto& a, const auto& s, const auto& v) {
        return mixt::sum(mixt::lazy(a) * s * v, 1);
    }, w, scale, x);
    const auto logits = make_shaped<Eigen::half>(40, 64, 1000);
    expect_reduction(dev, "argmax(f16, 1) (NaN)", [](const auto& a) { return mixt::argmax(a, 1); }, logits);
    expect_reduction(dev, "argmin(f32 [64, 1000], 0)", [](const auto& a) { return mixt::argmin(a, 0); },
                     make_shaped<float>(41, 64, 1000));
    // An outer axis: 700 columns of lanes; column-major; keepdims; a result dtype.
    expect_reduction(dev, "sum(f32 [300, 700], 0)", [](const auto& a) { return mixt::sum(a, 0); }, make_shaped<float>(42, 300, 700));
    expect_reduction(dev, "sum(bf16 [50, 40, 30] col-major, {0, 2}, keepdims)", [](const auto& a) {
        return mixt::sum(a, {0, 2}, mixt::keepdims);
    }, make_shaped<Eigen::bfloat16, Eigen::ColMajor>(43, 50, 40, 30));
    expect_reduction(dev, "sum<f64>(f16 [64, 1000], 1)", [](const auto& a) { return mixt::sum<double>(a, 1); }, logits);
    // Integers wrap in their accumulator; products; bools; complex values part by part.
    expect_reduction(dev, "sum(i8)", [](const auto& a) { return mixt::sum(a); }, make<std::int8_t>(44));
    expect_reduction(dev, "prod(u16 [100, 1000] % 3 + 1, 1)", [](const auto& a) { return mixt::prod(mixt::lazy(a) % 3 + 1, 1); },
                     make_shaped<std::uint16_t>(45, 100, 1000));
    expect_reduction(dev, "mean(i64)", [](const auto& a) { return mixt::mean(a); }, make<std::int64_t>(46));
    expect_reduction(dev, "any(i8 > 120), all(i8 > -120) per row", [](const auto& a) {
        return mixt::where(mixt::any(mixt::lazy(a) > 120, 1), 1, 0) + mixt::where(mixt::all(mixt::lazy(a) > -120, 1), 2, 0);
    }, w);
    expect_reduction(dev, "sum(c64 * f32)", [](const auto& a, const auto& b) { return mixt::sum(mixt::lazy(a) * b); },
                     make<std::complex<float>>(47), f32);
    expect_reduction(dev, "prod(c128 [1000, 8] / 16, 1)", [](const auto& a) { return mixt::prod(mixt::lazy(a) / 16, 1); },
                     make_shaped<std::complex<double>>(48, 1000, 8));
    expect_reduction(dev, "mean(c64 [100, 1000], 0)", [](const auto& a) { return mixt::mean(a, 0); },
                     make_shaped<std::complex<float>>(49, 100, 1000));
    // Reductions inside an expression, and a reduction of one: each evaluated first into device memory.
    expect_reduction(dev, "f32 - max(f32, 1, keepdims)", [](const auto& a) { return mixt::lazy(a) - mixt::max(a, 1, mixt::keepdims); },
                     make_shaped<float>(50, 64, 1000));
    expect_reduction(dev, "sum(exp(f32 - max(f32, 1, keepdims)), 1)", [](const auto& a) {
        return mixt::sum(mixt::exp(mixt::lazy(a) * 0.01f - mixt::max(mixt::lazy(a) * 0.01f, 1, mixt::keepdims)), 1);
    }, make_shaped<float>(51, 64, 1000));
    // Nothing to reduce: sum is 0; max of nothing throws before any launch.
    const Eigen::Tensor<float, 2, Eigen::RowMajor> empty(4, 0);
    expect_reduction(dev, "sum(f32 [4, 0], 1)", [](const auto& a) { return mixt::sum(a, 1); }, empty);
    const device_tensor<float, 2, Eigen::RowMajor> d_empty(empty);
    const device_tensor<float, 1, Eigen::RowMajor> d_out(Eigen::Tensor<float, 1, Eigen::RowMajor>(4));
    EXPECT_THROW(mixt::assign(d_out.map(), mixt::max(d_empty.map(), 1), dev), mixt::shape_error);
}

} // namespace
