#ifndef MIXT_DTYPE_NARROW_INT_HPP
#define MIXT_DTYPE_NARROW_INT_HPP

// The storage types of the lattice's integers narrower than a byte: `mixt::int4`, `mixt::uint4`, `mixt::int2`,
// `mixt::uint2`. Each is one byte holding its value's two's complement bits in the low 4 or 2 bits, the high
// bits zero. An integer converts into one by wrapping modulo 2^bits, as between mixt's other integers (int4(9) is
// -7, uint4(-1) is 15); floats convert as to mixt's other integers (mixt::convert: truncated toward zero, NaN to
// 0, saturated at the type's range). Packed arrays, two or four elements per byte, are a separate view.

#include <cstdint>
#include <ostream>
#include <type_traits>

#include <Eigen/Core>

#include "mixt/dtype/dtype.hpp"

namespace mixt {


/// A narrow integer of dtype D (int4, uint4, int2, uint2). `value()` is its value as an int.
template <dtype D>
struct narrow_int {
    static_assert(is_small(D) && kind(D) != dtype_kind::floating, "mixt: narrow_int<D> takes int4, uint4, int2 or uint2");
    static constexpr dtype value_dtype = D;
    static constexpr int bits_wide = info(D).bits;
    static constexpr bool is_signed = kind(D) == dtype_kind::signed_int;
    static constexpr std::uint8_t mask = static_cast<std::uint8_t>((1u << bits_wide) - 1u);
    static constexpr int min_value = is_signed ? -(1 << (bits_wide - 1)) : 0;
    static constexpr int max_value = is_signed ? (1 << (bits_wide - 1)) - 1 : (1 << bits_wide) - 1;

    std::uint8_t code = 0;

    constexpr narrow_int() noexcept = default;
    /// From an integer: its low bits (wraps modulo 2^bits).
    template <class I>
        requires(std::is_integral_v<I>)
    EIGEN_DEVICE_FUNC explicit constexpr narrow_int(I i) noexcept
        : code(static_cast<std::uint8_t>(static_cast<std::uint64_t>(i) & mask)) {}

    EIGEN_DEVICE_FUNC static constexpr narrow_int from_bits(std::uint8_t c) noexcept {
        narrow_int r;
        r.code = static_cast<std::uint8_t>(c & mask);
        return r;
    }
    EIGEN_DEVICE_FUNC constexpr std::uint8_t bits() const noexcept { return code; }
    /// The value: the low bits, sign-extended for int4 and int2.
    EIGEN_DEVICE_FUNC constexpr int value() const noexcept {
        const int v = code & mask;
        return is_signed && v > max_value ? v - (1 << bits_wide) : v;
    }
    template <class T>
        requires(std::is_arithmetic_v<T>)
    EIGEN_DEVICE_FUNC explicit constexpr operator T() const noexcept {
        return static_cast<T>(value());
    }

    EIGEN_DEVICE_FUNC friend constexpr bool operator==(narrow_int a, narrow_int b) noexcept { return a.value() == b.value(); }
    EIGEN_DEVICE_FUNC friend constexpr bool operator<(narrow_int a, narrow_int b) noexcept { return a.value() < b.value(); }
    EIGEN_DEVICE_FUNC friend constexpr bool operator<=(narrow_int a, narrow_int b) noexcept { return a.value() <= b.value(); }
    EIGEN_DEVICE_FUNC friend constexpr bool operator>(narrow_int a, narrow_int b) noexcept { return b < a; }
    EIGEN_DEVICE_FUNC friend constexpr bool operator>=(narrow_int a, narrow_int b) noexcept { return b <= a; }

    friend std::ostream& operator<<(std::ostream& os, narrow_int x) { return os << x.value(); }
};

using int4 = narrow_int<dtype::int4>;
using uint4 = narrow_int<dtype::uint4>;
using int2 = narrow_int<dtype::int2>;
using uint2 = narrow_int<dtype::uint2>;

namespace detail {
template <class T>
struct is_narrow_int : std::false_type {};
template <dtype D>
struct is_narrow_int<narrow_int<D>> : std::true_type {};
} // namespace detail

/// Whether T is one of the narrow integer storage types.
template <class T>
inline constexpr bool is_narrow_int_v = detail::is_narrow_int<std::remove_cv_t<T>>::value;

} // namespace mixt

namespace Eigen {

/// Eigen's facts about a narrow integer: an integer scalar, cheap to copy.
template <mixt::dtype D>
struct NumTraits<mixt::narrow_int<D>> : GenericNumTraits<mixt::narrow_int<D>> {
    using T = mixt::narrow_int<D>;
    using Real = T;
    using NonInteger = float;
    using Literal = T;
    using Nested = T;
    enum {
        IsComplex = 0,
        IsInteger = 1,
        IsSigned = T::is_signed ? 1 : 0,
        RequireInitialization = 0,
        ReadCost = 1,
        AddCost = 1,
        MulCost = 1,
    };
    EIGEN_DEVICE_FUNC static constexpr T highest() noexcept { return T(T::max_value); }
    EIGEN_DEVICE_FUNC static constexpr T lowest() noexcept { return T(T::min_value); }
    EIGEN_DEVICE_FUNC static constexpr T epsilon() noexcept { return T(0); }
    EIGEN_DEVICE_FUNC static constexpr T dummy_precision() noexcept { return T(0); }
    EIGEN_DEVICE_FUNC static constexpr int digits10() noexcept { return 0; }
    EIGEN_DEVICE_FUNC static constexpr int digits() noexcept { return T::bits_wide - (T::is_signed ? 1 : 0); }
};

} // namespace Eigen

#endif // MIXT_DTYPE_NARROW_INT_HPP
