// mixt in one screen: mixed-dtype Eigen tensors, JAX's result types, one fused pass.
#include <mixt/mixt.hpp>

#include <cstdint>
#include <type_traits>

int main() {
    const Eigen::Index h = 3, w = 5;
    Eigen::Tensor<std::int8_t, 2> a(h, w);  // quantized weights
    Eigen::Tensor<Eigen::half, 2> b(h, w);  // activations
    Eigen::Tensor<float, 2> c(h, w);        // accumulators
    a.setConstant(-3);
    b.setConstant(Eigen::half(0.5f));
    c.setConstant(4.0f);

    // No casts: int8 + half * float is float, the literal 2 stays weak. Nothing is computed yet.
    auto e = mixt::lazy(a) + mixt::lazy(b) * c + 2;
    static_assert(std::is_same_v<mixt::value_t<decltype(e)>, float>);

    Eigen::Tensor<float, 2> r = mixt::eval(e);  // one pass over memory
    if (r(2, 4) != -3 + 0.5f * 4.0f + 2) return 1;

    // The lattice, at compile time: (i8 + u8) + f16 == i8 + (u8 + f16) == f16, and bf16 + f16 is f32.
    static_assert(std::is_same_v<mixt::promote_t<std::int8_t, std::uint8_t, Eigen::half>, Eigen::half>);
    static_assert(std::is_same_v<mixt::promote_t<Eigen::bfloat16, Eigen::half>, float>);

    // Weak literals keep the array's dtype; an integer literal that does not fit is an error, not a wrap.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy(a) * 2)>, std::int8_t>);
    bool threw = false;
    try {
        mixt::eval(mixt::lazy(a) + 300);
    } catch (const mixt::overflow_error&) {
        threw = true;
    }
    return threw ? 0 : 1;
}
