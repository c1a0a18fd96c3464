// The narrow dtypes: float8 quantization and int4 weights, in fused passes.
#include <mixt/mixt.hpp>

#include <cmath>
#include <type_traits>

int main() {
    using f8 = mixt::float8_e4m3fn;  // one byte: 4 exponent bits, 3 mantissa bits, NaN but no inf
    const Eigen::Index m = 4, n = 64;
    Eigen::Tensor<float, 2> x(m, n);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = std::sin(0.1f * static_cast<float>(i)) * 300.0f;

    // Quantize: one rounding to nearest even per element (an overflow would be e4m3fn's NaN).
    const float scale = 300.0f / 448.0f;  // 448: e4m3fn's largest value
    Eigen::Tensor<f8, 2> q = mixt::eval(mixt::cast<f8>(mixt::lazy(x) * (1.0f / scale)));
    // Dequantize: the exact value of each code, times the scale.
    Eigen::Tensor<float, 2> back = mixt::eval(mixt::cast<float>(mixt::lazy(q)) * scale);
    for (Eigen::Index i = 0; i < x.size(); ++i)
        if (std::fabs(back.data()[i] - x.data()[i]) > 300.0f / 16) return 1;  // 3 mantissa bits: within 1/16

    // Arithmetic on float8 stays float8: computed in f32, rounded once per operation; a literal takes f8.
    auto twice = mixt::lazy(q) * 2.0;
    static_assert(std::is_same_v<mixt::value_t<decltype(twice)>, f8>);

    // int4 weights (one byte each here), a per-row f16 scale and f32 activations: dequantized, multiplied and
    // summed along rows in one pass, accumulated in f32.
    Eigen::Tensor<mixt::int4, 2> w(m, n);
    Eigen::Tensor<Eigen::half, 2> s(m, 1);
    Eigen::Tensor<float, 2> a(1, n);
    for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = mixt::int4(static_cast<int>(i % 16) - 8);
    for (Eigen::Index r = 0; r < m; ++r) s(r, 0) = Eigen::half(0.5f * static_cast<float>(r + 1));
    for (Eigen::Index c = 0; c < n; ++c) a(0, c) = 0.25f * static_cast<float>(c);
    Eigen::Tensor<float, 1> y = mixt::eval(mixt::sum(mixt::cast<float>(mixt::lazy(w)) * s * a, 1));
    for (Eigen::Index r = 0; r < m; ++r) {
        float want = 0;
        for (Eigen::Index c = 0; c < n; ++c)
            want += static_cast<float>(w(r, c).value()) * static_cast<float>(s(r, 0)) * a(0, c);
        if (std::fabs(y(r) - want) > 1e-3f * std::fabs(want)) return 1;
    }

    // Two different 8-bit formats have no join (as in JAX): mixt::cast one of them.
    static_assert(!mixt::has_promotion_v<f8, mixt::float8_e5m2>);
    return 0;
}
