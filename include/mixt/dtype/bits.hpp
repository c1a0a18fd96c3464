#ifndef MIXT_DTYPE_BITS_HPP
#define MIXT_DTYPE_BITS_HPP

// The bits of a float or double as an unsigned integer and back, as constant expressions and in device code: the
// vocabulary of every exact conversion (dtype/convert.hpp, dtype/narrow_float.hpp).

#include <cstdint>

#include <Eigen/Core>

#if defined(__has_builtin)
#if __has_builtin(__builtin_bit_cast)
#define MIXT_DETAIL_HAS_BUILTIN_BIT_CAST 1
#endif
#endif

namespace mixt::detail {

template <class To, class From>
EIGEN_DEVICE_FUNC constexpr To bit_cast(const From& x) noexcept {
    static_assert(sizeof(To) == sizeof(From));
#if defined(MIXT_DETAIL_HAS_BUILTIN_BIT_CAST)
    return __builtin_bit_cast(To, x);
#else
    return Eigen::numext::bit_cast<To>(x);
#endif
}

EIGEN_DEVICE_FUNC constexpr std::uint32_t f32_bits(float x) noexcept { return bit_cast<std::uint32_t>(x); }
EIGEN_DEVICE_FUNC constexpr float f32_from_bits(std::uint32_t b) noexcept { return bit_cast<float>(b); }
EIGEN_DEVICE_FUNC constexpr std::uint64_t f64_bits(double x) noexcept { return bit_cast<std::uint64_t>(x); }
EIGEN_DEVICE_FUNC constexpr double f64_from_bits(std::uint64_t b) noexcept { return bit_cast<double>(b); }

// NaN tests on the bits, not x != x, so they survive -ffast-math and are constant expressions.
EIGEN_DEVICE_FUNC constexpr bool is_nan(float x) noexcept { return (f32_bits(x) & 0x7fffffffu) > 0x7f800000u; }
EIGEN_DEVICE_FUNC constexpr bool is_nan(double x) noexcept {
    return (f64_bits(x) & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
}

} // namespace mixt::detail

#endif // MIXT_DTYPE_BITS_HPP
