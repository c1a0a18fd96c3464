// Before and after: dequantize int8 weights, scale by half-precision activations, add a float bias.
// Both versions compute the same float tensor; the mixt one has no cast and reads memory once.
#include <mixt/mixt.hpp>

#include <cmath>
#include <cstdint>

int main() {
    const Eigen::Index n = 1000;
    Eigen::Tensor<std::int8_t, 1> q(n);
    Eigen::Tensor<Eigen::half, 1> act(n);
    Eigen::Tensor<float, 1> bias(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        q(i) = static_cast<std::int8_t>(i % 256 - 128);
        act(i) = Eigen::half(static_cast<float>(i % 17) * 0.125f);
        bias(i) = static_cast<float>(i) * 0.5f;
    }
    const float scale = 0.02f;

    // before: Eigen 3.4, every cast and the result type chosen by hand
    Eigen::Tensor<float, 1> before = q.cast<float>() * scale * act.cast<float>() + bias;

    // after: no casts; the lattice gives float (int8 * float32 * float16 + float32), and the whole line is one
    // fused pass. `strong` types the scalar as float32: a bare `0.02f` would be a weak literal, as in JAX, and
    // `int8 * 0.02f * half` would then be half.
    Eigen::Tensor<float, 1> after = mixt::eval(mixt::lazy(q) * mixt::strong(scale) * act + bias);

    // mixt rounds the product before the sum whatever the flags. Eigen's line may be compiled into fused
    // multiply-adds (GCC's default, -ffp-contract=fast), which skip that rounding: then the two differ by at
    // most a rounding of the product and one of the sum. Under -ffp-contract=off (mixt's own builds define
    // MIXT_EXAMPLE_EXACT for it) they are the same bits.
    for (Eigen::Index i = 0; i < n; ++i) {
#if defined(MIXT_EXAMPLE_EXACT)
        if (before(i) != after(i)) return 1;
#else
        const float product = static_cast<float>(q(i)) * scale * static_cast<float>(act(i));
        if (std::fabs(before(i) - after(i)) > 0x1p-23f * (std::fabs(product) + std::fabs(after(i)))) return 1;
#endif
    }
    return 0;
}
