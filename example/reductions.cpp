// Reductions: JAX's result and accumulator dtypes, fused with the elementwise work that feeds them.
#include <mixt/mixt.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

int main() {
    // A dequantized matrix-vector product: int8 weights, a half scale per row, a float vector. One pass over
    // the weights; i8 * f16 is f16, times f32 is f32, summed in f32.
    Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> w(3, 4);
    w.setValues({{1, 2, 3, 4}, {-1, -2, -3, -4}, {0, 1, 0, 1}});
    Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s(3, 1);
    s.setValues({{Eigen::half(0.5f)}, {Eigen::half(2.0f)}, {Eigen::half(1.0f)}});
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(1, 4);
    x.setValues({{1.0f, 1.0f, 1.0f, 0.5f}});
    Eigen::Tensor<float, 1, Eigen::RowMajor> y = mixt::eval(mixt::sum(mixt::lazy(w) * s * x, 1));
    if (y(0) != 0.5f * (1 + 2 + 3 + 2) || y(1) != -2.0f * (1 + 2 + 3 + 2)) return 1;

    // Result dtypes are JAX's: small integers sum in the default int (int64 under the jax policy, int32 under
    // jax_x32), f16 accumulates in f32 and returns f16, the mean of integers is f32.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(w))>, std::int64_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(mixt::lazy<mixt::policy::jax_x32>(w)))>, std::int32_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::sum(s))>, Eigen::half>);
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::mean(w))>, float>);
    if (mixt::eval(mixt::sum(w))() != 2) return 2;
    // sum<T> converts every element to T first (as jnp.sum(x, dtype=T)); integers wrap in their dtype.
    Eigen::Tensor<std::int8_t, 1> big(3);
    big.setValues({100, 100, 100});
    if (mixt::eval(mixt::sum(big))() != 300 || mixt::eval(mixt::sum<std::int8_t>(big))() != 44) return 3;

    // Axes: all of them, one, or a set; keepdims keeps them as size 1, so the result broadcasts back: the
    // first step of a softmax.
    Eigen::Tensor<float, 2, Eigen::RowMajor> logits(2, 3);
    logits.setValues({{1.0f, 3.0f, 2.0f}, {0.5f, -1.0f, 0.25f}});
    Eigen::Tensor<float, 2, Eigen::RowMajor> shifted = mixt::eval(mixt::lazy(logits) - mixt::max(logits, 1, mixt::keepdims));
    if (shifted(0, 1) != 0.0f || shifted(1, 1) != -1.5f) return 4;
    Eigen::Tensor<std::int64_t, 1, Eigen::RowMajor> best = mixt::eval(mixt::argmax(logits, 1));
    if (best(0) != 1 || best(1) != 0) return 5;

    // The mean colour of a channel-last uint8 image: a reduction over its two outer axes, summed exactly.
    Eigen::Tensor<std::uint8_t, 3, Eigen::RowMajor> image(4, 5, 3);
    image.setConstant(10);
    image(0, 0, 2) = 70;
    Eigen::Tensor<float, 1, Eigen::RowMajor> colour = mixt::eval(mixt::mean(image, {0, 1}));
    if (colour(0) != 10.0f || colour(2) != 13.0f) return 6;

    // A reduction of nothing that has no value (max, min, argmax, argmin) throws before anything is written.
    Eigen::Tensor<float, 2> empty(0, 3);
    try {
        (void)mixt::eval(mixt::max(empty, 0));
        return 7;
    } catch (const mixt::shape_error&) {
    }
    return mixt::eval(mixt::sum(empty))() == 0.0f ? 0 : 8;
}
