// Reductions: JAX's result and accumulator dtypes, fused with the elementwise work that feeds them.
#include <mixt/mixt.hpp>

#include <cstdint>
#include <type_traits>

int main() {
    // A dequantized matrix-vector product, one pass over the int8 weights: i8 * f16 is f16, times f32 is f32.
    Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> w(2, 3);
    w.setValues({{1, 2, 3}, {-1, -2, -3}});
    Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s(2, 1);
    s.setValues({{Eigen::half(0.5f)}, {Eigen::half(2.0f)}});
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(1, 3);
    x.setValues({{1.0f, 1.0f, 0.5f}});
    auto y = mixt::eval(mixt::sum(mixt::lazy(w) * s * x, 1));
    if (y(0) != 0.5f * 4.5f || y(1) != -2.0f * 4.5f) return 1;

    // Small ints sum in the default int (i64 under jax), f16 returns f16, the mean of ints is f32.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(w))>, std::int64_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(s))>, Eigen::half>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::mean(w))>, float>);

    // keepdims keeps the reduced axis as size 1, so the result broadcasts back: the first step of a softmax.
    Eigen::Tensor<float, 2, Eigen::RowMajor> shifted = mixt::eval(mixt::lazy(x) - mixt::max(x, 1, mixt::keepdims));
    if (shifted(0, 2) != -0.5f || mixt::eval(mixt::argmax(x))() != 0) return 2;

    // Empty axes: max over the non-empty axis of [0, 3] is an empty [0]; a sum of nothing is 0.
    Eigen::Tensor<float, 2> empty(0, 3);
    return mixt::eval(mixt::max(empty, 1)).dimension(0) == 0 && mixt::eval(mixt::sum(empty, 0))(2) == 0 ? 0 : 3;
}
