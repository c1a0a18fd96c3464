#ifndef MIXT_DTYPE_BITS_HPP
#define MIXT_DTYPE_BITS_HPP

// The bits of a float or double as an unsigned integer and back, as constant expressions and in device code: the
// vocabulary of every exact conversion (dtype/convert.hpp, dtype/narrow_float.hpp).

#include <cstdint>
#include <type_traits>

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

// Rounds x (2^k <= |x|) to odd at granularity 2^k: clear the k low bits and, if any was set, set bit k.
// Works on two's complement too, since round-to-odd picks the odd neighbour whichever way it lies.
template <class U>
EIGEN_DEVICE_FUNC constexpr U collapse_low_bits(U u, int k) noexcept {
    const U mask = static_cast<U>((U{1} << k) - 1u);
    return static_cast<U>((u & static_cast<U>(~mask)) | static_cast<U>(((u & mask) + mask) & (mask + 1u)));
}

// int -> f64 exactly when |x| < 2^53, rounded to odd (at granularity 2^11) above: exact for the later
// rounding to f32 or narrower.
template <class I>
EIGEN_DEVICE_FUNC constexpr double int_to_f64_odd(I x) noexcept {
    if constexpr (sizeof(I) <= 4) {
        return static_cast<double>(x);
    } else {
        constexpr I lim = I{1} << 53;
        if constexpr (std::is_signed_v<I>) {
            if (x >= -lim && x <= lim) return static_cast<double>(x);
        } else {
            if (x <= lim) return static_cast<double>(x);
        }
        // Bits 11..63 (53 of them) survive, so the conversion below is exact.
        const auto u = collapse_low_bits(static_cast<std::uint64_t>(x), 11);
        return static_cast<double>(static_cast<I>(u));
    }
}

} // namespace mixt::detail

#endif // MIXT_DTYPE_BITS_HPP
