#ifndef MIXT_DTYPE_NARROW_FLOAT_HPP
#define MIXT_DTYPE_NARROW_FLOAT_HPP

// The storage types of the lattice's floats narrower than 16 bits: `mixt::float8_e4m3fn` and its ten siblings
// (float8 e3m4, e4m3, e4m3fn, e4m3fnuz, e4m3b11fnuz, e5m2, e5m2fnuz, e8m0fnu; float6 e2m3fn, e3m2fn; float4
// e2m1fn). Each is one byte holding its code in the low bits (float6 and float4 leave the high bits zero), and
// converts exactly as JAX's ml_dtypes converts:
//  - decoding (to float or double) is exact; a NaN code decodes to the quiet NaN of its sign (an fnuz NaN, 0x80,
//    to -NaN);
//  - encoding (from float or double) rounds once to nearest, ties to even, subnormal results included (a double
//    is rounded directly, never through float); e8m0fnu, whose only bit of significand is the implicit one,
//    rounds ties up (1.5 -> 2), and every value in (2^-127, 2^-126) to 2^-126;
//  - each family's specials: the IEEE-like formats (e3m4, e4m3, e5m2) overflow to +-inf and make NaNs of the
//    input's sign; e4m3fn has no inf (inf and overflow -> NaN of the input's sign, S.1111.111); the fnuz
//    formats have one NaN (0x80: NaN, inf and overflow all encode to it) and no -0 (a negative that rounds to
//    zero is +0); e8m0fnu has no sign and no zero (zero, negatives, NaN, inf and overflow are its NaN, 0xff); the
//    finite-only float6/float4 formats saturate inf and overflow to +-max, and encode a NaN as the zero of the
//    opposite sign (ml_dtypes' choice; the OCP MX specification leaves it to the implementation).
// Arithmetic on these types is in the expressions (each operation computes in f32 and rounds once); the types
// themselves offer only conversions, bits and comparisons.

#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include <Eigen/Core>

#include "mixt/dtype/bits.hpp"
#include "mixt/dtype/dtype.hpp"

namespace mixt {

/// The rules a narrow float format follows for its special values.
enum class float_family : unsigned char {
    ieee,   ///< e3m4, e4m3, e5m2: infinities and NaNs in the top exponent, as IEEE 754's formats
    fn,     ///< e4m3fn: no infinity; S.1111.111 is NaN, every other code finite
    fnuz,   ///< e4m3fnuz, e4m3b11fnuz, e5m2fnuz: no infinity, no -0; 0x80 is the one NaN
    e8m0,   ///< e8m0fnu: unsigned powers of two 2^-127 .. 2^127, 0xff is NaN, no zero
    finite, ///< float6 e2m3fn, e3m2fn, float4 e2m1fn: every code finite, no NaN
};

/// The layout of a narrow float format: `bits` wide (sign included), `exponent` and `mantissa` field widths,
/// the exponent bias.
struct float_format {
    int bits;
    int exponent;
    int mantissa;
    int bias;
    float_family family;
};

namespace detail {

EIGEN_DEVICE_FUNC constexpr float_format format_of(dtype d) noexcept {
    switch (d) {
    case dtype::float8_e3m4: return {8, 3, 4, 3, float_family::ieee};
    case dtype::float8_e4m3: return {8, 4, 3, 7, float_family::ieee};
    case dtype::float8_e5m2: return {8, 5, 2, 15, float_family::ieee};
    case dtype::float8_e4m3fn: return {8, 4, 3, 7, float_family::fn};
    case dtype::float8_e4m3fnuz: return {8, 4, 3, 8, float_family::fnuz};
    case dtype::float8_e4m3b11fnuz: return {8, 4, 3, 11, float_family::fnuz};
    case dtype::float8_e5m2fnuz: return {8, 5, 2, 16, float_family::fnuz};
    case dtype::float8_e8m0fnu: return {8, 8, 0, 127, float_family::e8m0};
    case dtype::float6_e2m3fn: return {6, 2, 3, 1, float_family::finite};
    case dtype::float6_e3m2fn: return {6, 3, 2, 3, float_family::finite};
    case dtype::float4_e2m1fn: return {4, 2, 1, 1, float_family::finite};
    default: return {0, 0, 0, 0, float_family::ieee};
    }
}


/// The constants of format F that the encoder and decoder need, all derived from its layout.
template <dtype D>
struct narrow_float_traits {
    static constexpr float_format f = format_of(D);
    static constexpr int M = f.mantissa;
    static constexpr bool has_sign = f.family != float_family::e8m0;
    static constexpr std::uint8_t sign_bit = has_sign ? static_cast<std::uint8_t>(1u << (f.bits - 1)) : 0;
    static constexpr std::uint8_t magnitude_mask =
        static_cast<std::uint8_t>((1u << (has_sign ? f.bits - 1 : f.bits)) - 1u);
    static constexpr int top_field = (1 << f.exponent) - 1;
    /// The largest finite magnitude's code.
    static constexpr std::uint8_t max_code = [] {
        switch (f.family) {
        case float_family::ieee: return static_cast<std::uint8_t>(((top_field - 1) << M) | ((1 << M) - 1));
        case float_family::fn: return static_cast<std::uint8_t>((top_field << M) | ((1 << M) - 2));
        case float_family::e8m0: return std::uint8_t{0xfe};
        default: return magnitude_mask; // fnuz, finite: every magnitude code is a value
        }
    }();
    /// The code of the NaN this format's encoder makes from a NaN of sign `negative` (finite: none).
    static constexpr std::uint8_t nan_code(bool negative) noexcept {
        switch (f.family) {
        case float_family::ieee:
            return static_cast<std::uint8_t>((negative ? sign_bit : 0) | (top_field << M) | (1 << (M > 0 ? M - 1 : 0)));
        case float_family::fn: return static_cast<std::uint8_t>((negative ? sign_bit : 0) | magnitude_mask);
        case float_family::fnuz: return 0x80;
        case float_family::e8m0: return 0xff;
        default: return static_cast<std::uint8_t>(negative ? 0 : sign_bit); // a zero of the other sign
        }
    }
    /// What an infinity or an overflow of sign `negative` encodes to.
    static constexpr std::uint8_t overflow_code(bool negative) noexcept {
        const std::uint8_t s = negative ? sign_bit : 0;
        switch (f.family) {
        case float_family::ieee: return static_cast<std::uint8_t>(s | (top_field << M));
        case float_family::finite: return static_cast<std::uint8_t>(s | max_code);
        default: return nan_code(negative);
        }
    }
    static constexpr bool is_nan_code(std::uint8_t c) noexcept {
        const std::uint8_t m = static_cast<std::uint8_t>(c & magnitude_mask);
        switch (f.family) {
        case float_family::ieee: return (m >> M) == top_field && (m & ((1 << M) - 1)) != 0;
        case float_family::fn: return m == magnitude_mask;
        case float_family::fnuz: return c == 0x80;
        case float_family::e8m0: return c == 0xff;
        default: return false;
        }
    }
};

/// The exact value of code c of format D, as float bits (every finite value of every format is a float).
template <dtype D>
EIGEN_DEVICE_FUNC constexpr std::uint32_t narrow_to_f32_bits(std::uint8_t c) noexcept {
    using T = narrow_float_traits<D>;
    constexpr int M = T::M;
    if constexpr (T::f.family == float_family::e8m0) {
        if (c == 0xff) return 0x7fc00000u;
        if (c == 0) return 0x00400000u; // 2^-127, a float subnormal
        return static_cast<std::uint32_t>(c) << 23;
    } else {
        const std::uint32_t sign = (c & T::sign_bit) != 0 ? 0x80000000u : 0u;
        if (T::is_nan_code(c)) return sign | 0x7fc00000u;
        const std::uint32_t m = c & T::magnitude_mask;
        const std::uint32_t field = m >> M;
        const std::uint32_t mant = m & ((1u << M) - 1u);
        if constexpr (T::f.family == float_family::ieee) {
            if (field == static_cast<std::uint32_t>(T::top_field)) return sign | 0x7f800000u;
        }
        if (m == 0) return sign;
        if (field == 0) { // subnormal: mant * 2^(1 - bias - M), normalized at its highest bit p
            int p = M - 1;
            while (((mant >> p) & 1u) == 0) --p;
            const int e = 1 - T::f.bias - M + p;
            return sign | (static_cast<std::uint32_t>(e + 127) << 23) | ((mant ^ (1u << p)) << (23 - p));
        }
        return sign | (static_cast<std::uint32_t>(static_cast<int>(field) - T::f.bias + 127) << 23) | (mant << (23 - M));
    }
}

/// x rounded once to format D (the header's rules), from the bits of a double: every float, f16 and bf16 value
/// is a double, so one encoder serves every source, each rounded once.
template <dtype D>
EIGEN_DEVICE_FUNC constexpr std::uint8_t narrow_from_f64(double x) noexcept {
    using T = narrow_float_traits<D>;
    constexpr int M = T::M;
    constexpr int emin = 1 - T::f.bias; // the exponent of the smallest normal (e8m0: of 2^-126, as ml_dtypes)
    const std::uint64_t b = f64_bits(x);
    const bool negative = (b >> 63) != 0;
    const std::uint64_t a = b & 0x7fffffffffffffffu;
    if (a > 0x7ff0000000000000u) return T::nan_code(negative);
    if constexpr (T::f.family == float_family::e8m0) {
        if (negative || a == 0 || a == 0x7ff0000000000000u) return 0xff;
    }
    const std::uint8_t s = negative ? T::sign_bit : 0;
    const std::uint8_t zero = T::f.family == float_family::fnuz ? std::uint8_t{0} : s;
    if (a == 0x7ff0000000000000u) return T::overflow_code(negative);
    if (a == 0) return zero;
    // a = sig * 2^exp2 with sig < 2^53; e = floor(log2 |x|).
    const int field64 = static_cast<int>(a >> 52);
    std::uint64_t sig = a & 0xfffffffffffffu;
    int exp2 = -1074;
    if (field64 != 0) {
        sig |= std::uint64_t{1} << 52;
        exp2 = field64 - 1075;
    }
    int top = 52; // a normal double's leading bit; a subnormal's is found below it (sig != 0, as a != 0)
    if (field64 == 0)
        while (((sig >> top) & 1u) == 0) --top;
    const int e = top + exp2;
    // The result's quantum 2^q: the format's ulp at e, or its subnormal quantum below the normal range.
    int q = (e > emin ? e : emin) - M;
    const int shift = q - exp2; // >= 1 for every format: a double has more bits than any of them
    std::uint64_t n = 0;
    if (shift < 64) {
        n = sig >> shift;
        const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1u);
        const std::uint64_t half = std::uint64_t{1} << (shift - 1);
        if (rem > half || (rem == half && (n & 1u) != 0)) ++n;
    }
    if (n == 0) return T::f.family == float_family::e8m0 ? std::uint8_t{0} : zero;
    if (n == (std::uint64_t{1} << (M + 1))) { // rounded up into the next binade
        n >>= 1;
        ++q;
    }
    std::uint64_t magnitude = 0;
    if (n < (std::uint64_t{1} << M)) {
        magnitude = n; // subnormal: exponent field 0
    } else {
        const int field = q + M + T::f.bias;
        if (field > T::top_field) return T::overflow_code(negative);
        magnitude = (static_cast<std::uint64_t>(field) << M) | (n - (std::uint64_t{1} << M));
    }
    if (magnitude > T::max_code) return T::overflow_code(negative);
    return static_cast<std::uint8_t>(s | magnitude);
}

struct from_bits_t {};

} // namespace detail

/// A narrow float of dtype D (one of the eleven `float8_*`, `float6_*`, `float4_*` nodes): its code in one byte.
/// Conversions are explicit, as Eigen::half's: `mixt::float8_e4m3fn w(0.3f)`, `static_cast<float>(w)`;
/// `mixt::convert<To>(x)` converts between it and every other dtype (dtype/convert.hpp).
template <dtype D>
struct narrow_float {
    static_assert(is_small_float(D), "mixt: narrow_float<D> takes a float8, float6 or float4 dtype");
    using traits = detail::narrow_float_traits<D>;
    static constexpr dtype value_dtype = D;
    static constexpr float_format format = traits::f;

    std::uint8_t code = 0;

    constexpr narrow_float() noexcept = default;
    EIGEN_DEVICE_FUNC constexpr narrow_float(detail::from_bits_t, std::uint8_t c) noexcept : code(c) {}
    EIGEN_DEVICE_FUNC explicit constexpr narrow_float(double x) noexcept : code(detail::narrow_from_f64<D>(x)) {}
    EIGEN_DEVICE_FUNC explicit constexpr narrow_float(float x) noexcept
        : code(detail::narrow_from_f64<D>(static_cast<double>(x))) {}
    /// From an integer, rounded once (through a double rounded to odd above 2^53, which keeps every bit the
    /// final rounding needs).
    template <class I>
        requires(std::is_integral_v<I>)
    EIGEN_DEVICE_FUNC explicit constexpr narrow_float(I i) noexcept : code(detail::narrow_from_f64<D>(detail::int_to_f64_odd(i))) {}

    EIGEN_DEVICE_FUNC static constexpr narrow_float from_bits(std::uint8_t c) noexcept { return {detail::from_bits_t{}, c}; }
    EIGEN_DEVICE_FUNC constexpr std::uint8_t bits() const noexcept { return code; }

    EIGEN_DEVICE_FUNC explicit constexpr operator float() const noexcept {
        return detail::f32_from_bits(detail::narrow_to_f32_bits<D>(code));
    }
    EIGEN_DEVICE_FUNC explicit constexpr operator double() const noexcept { return static_cast<double>(static_cast<float>(*this)); }

    /// Numeric comparisons, as for float: NaN is unordered, +0 == -0.
    EIGEN_DEVICE_FUNC friend constexpr bool operator==(narrow_float a, narrow_float b) noexcept {
        return static_cast<float>(a) == static_cast<float>(b);
    }
    EIGEN_DEVICE_FUNC friend constexpr bool operator<(narrow_float a, narrow_float b) noexcept {
        return static_cast<float>(a) < static_cast<float>(b);
    }
    EIGEN_DEVICE_FUNC friend constexpr bool operator<=(narrow_float a, narrow_float b) noexcept {
        return static_cast<float>(a) <= static_cast<float>(b);
    }
    EIGEN_DEVICE_FUNC friend constexpr bool operator>(narrow_float a, narrow_float b) noexcept { return b < a; }
    EIGEN_DEVICE_FUNC friend constexpr bool operator>=(narrow_float a, narrow_float b) noexcept { return b <= a; }

    friend std::ostream& operator<<(std::ostream& os, narrow_float x) { return os << static_cast<float>(x); }
};

using float8_e3m4 = narrow_float<dtype::float8_e3m4>;
using float8_e4m3 = narrow_float<dtype::float8_e4m3>;
using float8_e4m3fn = narrow_float<dtype::float8_e4m3fn>;
using float8_e4m3fnuz = narrow_float<dtype::float8_e4m3fnuz>;
using float8_e4m3b11fnuz = narrow_float<dtype::float8_e4m3b11fnuz>;
using float8_e5m2 = narrow_float<dtype::float8_e5m2>;
using float8_e5m2fnuz = narrow_float<dtype::float8_e5m2fnuz>;
using float8_e8m0fnu = narrow_float<dtype::float8_e8m0fnu>;
using float6_e2m3fn = narrow_float<dtype::float6_e2m3fn>;
using float6_e3m2fn = narrow_float<dtype::float6_e3m2fn>;
using float4_e2m1fn = narrow_float<dtype::float4_e2m1fn>;

namespace detail {
template <class T>
struct is_narrow_float : std::false_type {};
template <dtype D>
struct is_narrow_float<narrow_float<D>> : std::true_type {};
} // namespace detail

/// Whether T is one of the narrow float storage types.
template <class T>
inline constexpr bool is_narrow_float_v = detail::is_narrow_float<std::remove_cv_t<T>>::value;

} // namespace mixt

namespace Eigen {

/// Eigen's facts about a narrow float: a floating scalar, cheap to copy, whose highest, lowest, epsilon,
/// infinity and NaN are the format's own (infinity is the largest finite value where the format has none, NaN
/// the format's NaN or, for the finite-only formats, zero).
template <mixt::dtype D>
struct NumTraits<mixt::narrow_float<D>> : GenericNumTraits<mixt::narrow_float<D>> {
    using T = mixt::narrow_float<D>;
    using traits = mixt::detail::narrow_float_traits<D>;
    using Real = T;
    using NonInteger = T;
    using Literal = T;
    using Nested = T;
    enum {
        IsComplex = 0,
        IsInteger = 0,
        IsSigned = traits::has_sign ? 1 : 0,
        RequireInitialization = 0,
        ReadCost = 1,
        AddCost = 3,
        MulCost = 3,
    };
    EIGEN_DEVICE_FUNC static constexpr T highest() noexcept { return T::from_bits(traits::max_code); }
    EIGEN_DEVICE_FUNC static constexpr T lowest() noexcept {
        return traits::has_sign ? T::from_bits(static_cast<std::uint8_t>(traits::sign_bit | traits::max_code))
                                : T::from_bits(0);
    }
    EIGEN_DEVICE_FUNC static constexpr T epsilon() noexcept {
        // The gap between 1 and the next value: 2^-M (e8m0fnu: 1, from 1 to 2).
        return T(static_cast<double>(1.0f / static_cast<float>(1u << traits::M)));
    }
    EIGEN_DEVICE_FUNC static constexpr T dummy_precision() noexcept { return epsilon(); }
    EIGEN_DEVICE_FUNC static constexpr T infinity() noexcept { return T::from_bits(traits::overflow_code(false)); }
    EIGEN_DEVICE_FUNC static constexpr T quiet_NaN() noexcept { return T::from_bits(traits::nan_code(false)); }
    EIGEN_DEVICE_FUNC static constexpr int digits() noexcept { return traits::M + 1; }
    EIGEN_DEVICE_FUNC static constexpr int digits10() noexcept { return traits::M >= 4 ? 1 : 0; }
    EIGEN_DEVICE_FUNC static constexpr int max_digits10() noexcept { return traits::M >= 3 ? 3 : 2; }
};

} // namespace Eigen

#endif // MIXT_DTYPE_NARROW_FLOAT_HPP
