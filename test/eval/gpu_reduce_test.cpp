// mixt/eval/gpu_reduce.hpp without a GPU: the three kernels' per-item functions (lane_of, super_of,
// result_of) over the device nodes (eval/gpu.hpp), run here one item after another on the host, must give the
// CPU's reduction bit for bit (the same values combined in the same order, by the plan both follow). This checks
// the GPU path's logic (the plan's launch geometry, indexing, block and super-block boundaries, the pairwise
// order, the results' placement) in every build; test/gpu/gpu_reduce_test.cu runs the kernels on a GPU.

#include <mixt/mixt.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "support/nan_contract.hpp"

namespace {

using mixt::detail::index_t;

/// Reduction r (of arrays, no reduction inside) evaluated by the GPU kernels' item functions, on the host: with
/// the lanes in a buffer (lane_of, then super_of) or, `from_stream`, computed by the second kernel's items
/// (super_from_stream), as the GPU does where the lanes are short.
template <class Red>
auto reduce_as_the_gpu_does(const Red& r, bool from_stream) {
    using namespace mixt::detail;
    const auto job = gpu::bind_reduction(r, r.child); // as the GPU's reduce_operand starts
    using J = std::remove_const_t<decltype(job)>;
    using Op = typename J::op;
    using T = typename J::result;
    const auto& plan = job.plan;
    const auto& d = job.launch.desc;
    reduction_tensor_t<Red> out(to_dsizes<Red::rank>(plan.out_shape));
    out.setConstant(T(7)); // every element is written below
    if (plan.outputs == 0) return out;
    std::vector<typename J::lane> lanes, partial(static_cast<std::size_t>(d.super_items()));
    if (plan.supers > 0 && from_stream) {
        for (index_t i = 0; i < d.super_items(); ++i)
            partial[static_cast<std::size_t>(i)] = gpu::super_from_stream<Op>(job.nodes, d, i);
    } else if (plan.supers > 0) {
        lanes.resize(static_cast<std::size_t>(d.lane_items()));
        for (index_t i = 0; i < d.lane_items(); ++i) lanes[static_cast<std::size_t>(i)] = gpu::lane_of<Op>(job.nodes, d, i);
        for (index_t i = 0; i < d.super_items(); ++i) partial[static_cast<std::size_t>(i)] = gpu::super_of<Op>(lanes.data(), d, i);
    }
    for (index_t i = 0; i < d.result_items(); ++i) {
        index_t offset = -1;
        const T v = gpu::result_of<J::kind, typename J::accumulator, Op, T>(partial.data(), d, plan.reduced_count, i, offset);
        EXPECT_TRUE(offset >= 0 && offset < out.size());
        if (offset >= 0 && offset < out.size()) out.data()[offset] = v;
    }
    return out;
}

template <class Red>
void expect_as_the_cpu(const std::string& what, const Red& r) {
    const auto want = mixt::eval(r);
    for (const bool from_stream : {false, true}) {
        const auto got = reduce_as_the_gpu_does(r, from_stream);
        const std::string how = what + (from_stream ? " (lanes computed by the second kernel)" : " (lanes in a buffer)");
        ASSERT_EQ(got.size(), want.size()) << how;
        int wrong = 0;
        for (index_t i = 0; i < want.size(); ++i)
            if (!mixt_test::same_result(got.data()[i], want.data()[i]) && ++wrong <= 3)
                ADD_FAILURE() << how << ": element " << i << " differs from the CPU's";
        EXPECT_EQ(wrong, 0) << how;
    }
}

// Values of every magnitude, with NaNs and infinities among the floats where `special`.
template <class T, int L = Eigen::RowMajor, class... I>
Eigen::Tensor<T, sizeof...(I), L> make(std::uint32_t seed, bool special, I... dims) {
    Eigen::Tensor<T, sizeof...(I), L> t(static_cast<index_t>(dims)...);
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> u(-300, 300);
    for (index_t i = 0; i < t.size(); ++i) {
        const double v = u(g);
        if constexpr (mixt::detail::is_complex_v<T>) {
            using F = typename T::value_type;
            t.data()[i] = T(static_cast<F>(v / 64), static_cast<F>(u(g) / 64));
        } else if constexpr (std::is_integral_v<T>) {
            t.data()[i] = static_cast<T>(std::llround(v));
        } else {
            float f = static_cast<float>(v * std::exp2(static_cast<int>(g() % 20) - 10));
            if (special && g() % 397 == 0) f = std::numeric_limits<float>::quiet_NaN();
            if (special && g() % 401 == 0) f = -std::numeric_limits<float>::infinity();
            t.data()[i] = static_cast<T>(f);
        }
    }
    return t;
}

TEST(gpu_reduce, float_sums_over_everything_follow_the_cpus_order) {
    const auto a = make<Eigen::half>(1, false, 100003);
    const auto b = make<Eigen::bfloat16>(2, false, 100003);
    expect_as_the_cpu("sum(f16 * bf16)", mixt::sum(mixt::lazy(a) * b));
    // Longer than a super-block (2^18): the super-blocks' pairwise combination.
    const auto big = make<float>(3, false, 600011);
    expect_as_the_cpu("sum(f32 * 0.5) of 600011", mixt::sum(mixt::lazy(big) * 0.5f));
    const auto rows = make<float>(4, false, 3, 300007);
    expect_as_the_cpu("sum(f32 [3, 300007], 1)", mixt::sum(rows, 1));
    expect_as_the_cpu("mean(f64 of f32 [3, 300007], 1)", mixt::mean(mixt::cast<double>(rows), 1));
}

TEST(gpu_reduce, rows_columns_and_channels) {
    const auto image = make<std::uint8_t>(5, false, 45, 67, 3);
    expect_as_the_cpu("mean(u8 image, {0, 1})", mixt::mean(image, {0, 1}));
    expect_as_the_cpu("sum(u8 image, 2)", mixt::sum(image, 2));
    const auto w = make<std::int8_t>(6, false, 64, 1000);
    const auto s = make<Eigen::half>(7, false, 64, 1);
    const auto x = make<float>(8, false, 1, 1000);
    expect_as_the_cpu("sum(i8 * f16 scale, 1)", mixt::sum(mixt::lazy(w) * s, 1));
    expect_as_the_cpu("sum(i8 * f16 * f32, 1)", mixt::sum(mixt::lazy(w) * s * x, 1));
    expect_as_the_cpu("sum(i8 * f16 * f32, 0)", mixt::sum(mixt::lazy(w) * s * x, 0));
    const auto outer = make<float>(9, false, 300, 700);
    expect_as_the_cpu("sum(f32 [300, 700], 0)", mixt::sum(outer, 0));
    expect_as_the_cpu("sum(f32 [300, 700] col-major, 1)", mixt::sum(make<float, Eigen::ColMajor>(10, false, 300, 700), 1));
    const auto cube = make<Eigen::bfloat16, Eigen::ColMajor>(11, false, 50, 40, 30);
    expect_as_the_cpu("sum(bf16 [50, 40, 30] col-major, {0, 2}, keepdims)", mixt::sum(cube, {0, 2}, mixt::keepdims));
    expect_as_the_cpu("prod(bf16 [50, 40, 30] col-major * 0.01 + 1, 1)", mixt::prod(mixt::lazy(cube) * 0.01f + 1, 1));
    const auto four = make<float>(12, false, 6, 5, 7, 9);
    expect_as_the_cpu("sum(f32 [6, 5, 7, 9], {1, 3})", mixt::sum(four, {1, 3}));
    expect_as_the_cpu("max(f32 [6, 5, 7, 9], {0, 2})", mixt::max(four, {0, 2}));
    expect_as_the_cpu("sum<f64>(f32 [6, 5, 7, 9], {0, 1, 2, 3})", mixt::sum<double>(four));
}

TEST(gpu_reduce, extremes_indices_nan_and_integers) {
    const auto f = make<float>(13, true, 64, 1000);
    expect_as_the_cpu("max(f32) with NaN", mixt::max(f));
    expect_as_the_cpu("min(f32, 1) with NaN", mixt::min(f, 1));
    expect_as_the_cpu("argmax(f32, 1) with NaN", mixt::argmax(f, 1));
    expect_as_the_cpu("argmin(f32, 0) with NaN", mixt::argmin(f, 0));
    const auto h = make<Eigen::half>(14, true, 64, 1000);
    expect_as_the_cpu("argmax(f16, 1)", mixt::argmax(h, 1));
    expect_as_the_cpu("max(abs(f32 - f16))", mixt::max(mixt::abs(mixt::lazy(f) - h)));
    const auto i = make<std::int16_t>(15, false, 100, 1000);
    expect_as_the_cpu("sum(i16, 1)", mixt::sum(i, 1));
    expect_as_the_cpu("min(i16, 0)", mixt::min(i, 0));
    expect_as_the_cpu("prod(i16 % 3 + 1, 1) (wraps)", mixt::prod(mixt::lazy(i) % 3 + 1, 1));
    expect_as_the_cpu("mean(i16)", mixt::mean(i));
    expect_as_the_cpu("any(i16 > 290, 1)", mixt::any(mixt::lazy(i) > 290, 1));
    expect_as_the_cpu("all(i16 > -299, 0)", mixt::all(mixt::lazy(i) > -299, 0));
    expect_as_the_cpu("sum(i16 > 0) (bool)", mixt::sum(mixt::lazy(i) > 0));
}

TEST(gpu_reduce, complex_values_and_empty_reductions) {
    const auto c = make<std::complex<float>>(16, false, 100, 1000);
    expect_as_the_cpu("sum(c64, 1)", mixt::sum(c, 1));
    expect_as_the_cpu("mean(c64, 0)", mixt::mean(c, 0));
    const auto d = make<std::complex<double>>(17, false, 1000, 8);
    expect_as_the_cpu("prod(c128 / 256, 1)", mixt::prod(mixt::lazy(d) / 256, 1));
    const Eigen::Tensor<float, 2, Eigen::RowMajor> empty(4, 0);
    expect_as_the_cpu("sum(f32 [4, 0], 1)", mixt::sum(empty, 1));
    expect_as_the_cpu("prod(f32 [4, 0], 1)", mixt::prod(empty, 1));
    expect_as_the_cpu("sum(f32 [4, 0], 0)", mixt::sum(empty, 0));
}

// Whether the GPU computes r's lanes in its second kernel (short lanes) rather than in a buffer.
template <class Red>
bool short_lanes_of(const Red& r) {
    return mixt::detail::gpu::bind_reduction(r, r.child).launch.desc.short_lanes();
}

TEST(gpu_reduce, short_reduced_axes_take_their_lanes_from_the_stream) {
    // A reduced axis of a few elements: a buffer of lanes would hold about one lane per element of the operand
    // (argmax over 2 rows: 16 bytes per pair of floats); the second kernel computes them instead.
    const auto x = make<float>(21, true, 2, 5000);
    EXPECT_TRUE(short_lanes_of(mixt::argmax(x, 0)));
    expect_as_the_cpu("argmax(f32 [2, 5000], 0)", mixt::argmax(x, 0));
    expect_as_the_cpu("max(f32 [2, 5000], 0)", mixt::max(x, 0));
    const auto img = make<std::uint8_t>(22, false, 1000, 2, 3);
    EXPECT_TRUE(short_lanes_of(mixt::sum(img, 1)));
    expect_as_the_cpu("sum(u8 [1000, 2, 3], 1)", mixt::sum(img, 1));
    expect_as_the_cpu("mean(u8 [1000, 2, 3], {0, 1})", mixt::mean(img, {0, 1}));
    const auto narrow = make<float>(23, false, 700, 3);
    EXPECT_TRUE(short_lanes_of(mixt::sum(narrow, 1)));
    expect_as_the_cpu("sum(f32 [700, 3], 1)", mixt::sum(narrow, 1));
    expect_as_the_cpu("argmin(f32 [700, 3], 1)", mixt::argmin(narrow, 1));
    // Long rows keep the buffer (a lane of a whole block folds 8 elements or more).
    EXPECT_FALSE(short_lanes_of(mixt::sum(make<float>(24, false, 300, 700), 0)));
    EXPECT_FALSE(short_lanes_of(mixt::sum(make<float>(25, false, 30, 4096), 1)));
}

} // namespace
