// Elementwise: literals of the C++ literal's kind, and no undefined behaviour whatever the input.
#include <mixt/mixt.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

int main() {
    Eigen::Tensor<std::uint8_t, 1> u8(2);
    Eigen::Tensor<std::int32_t, 1> i32(2);
    Eigen::Tensor<float, 1> f32(3);
    i32.setValues({7, -7});
    f32.setValues({300.0f, -5.0f, std::nanf("")});
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy(u8) / 255.0)>, double>); // JAX's 64-bit mode
    // x // 0 is 0 and -7 % 2 is 1 (NumPy's results); float-to-int casts saturate and map NaN to 0.
    Eigen::Tensor<std::int32_t, 1> q = mixt::eval(mixt::floor_divide(mixt::lazy(i32), 0) + mixt::lazy(i32) % 2);
    Eigen::Tensor<std::uint8_t, 1> c = mixt::eval(mixt::cast<std::uint8_t>(f32));
    return q(0) == 1 && q(1) == 1 && c(0) == 255 && c(1) == 0 && c(2) == 0 ? 0 : 1;
}
