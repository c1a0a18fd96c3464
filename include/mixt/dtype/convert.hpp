#ifndef MIXT_DTYPE_CONVERT_HPP
#define MIXT_DTYPE_CONVERT_HPP

// mixt::convert<To>(x): the one definition of what converting a value between two of mixt's 33 concrete
// dtypes means (the narrow ones, float8/6/4 and int4/2, by the rules of dtype/narrow_float.hpp and
// dtype/narrow_int.hpp). Every other conversion in mixt (the vectorized batches in simd/, the fused loops, device
// kernels) is tested to be bit-identical to this function, so it is written for exactness first and is
// defined for every input: no undefined behaviour, whatever the value.
//
// The rules, in the order they are applied:
//  1. To == From: the value itself, bit for bit.
//  2. complex -> complex: componentwise. complex -> bool: re != 0 || im != 0. complex -> other real: the
//     real part converted (the imaginary part is dropped, as NumPy and JAX do).
//  3. real -> complex: (convert<component>(x), 0).
//  4. anything -> bool: x != 0, so NaN -> true and -0 -> false. bool -> anything: 0 or 1.
//  5. int -> int: wraps modulo 2^n (two's complement truncation / sign extension).
//  6. float -> int (f16, bf16, f32, f64 sources): truncates toward zero; NaN -> 0; a value whose truncation
//     is outside the target's range saturates to the target's min or max (+inf -> max, -inf -> min).
//  7. int -> float and float -> float: correctly rounded to nearest, ties to even, in one rounding
//     (never through an intermediate type that would round twice); overflow -> +-inf.
//  8. NaN -> float: a quiet NaN with the source's sign and the top bits of its payload (truncated), the
//     quiet bit set. This is what x86 (cvtss2sd, cvtsd2ss, F16C), ARM and CUDA hardware produce, so
//     vectorized code matches this function without a fix-up; a signaling NaN comes out quiet, also when
//     widening (f16 -> f32 or bf16 -> f32).
//
// Assumes IEEE 754 float/double evaluated at their own precision in the default rounding mode
// (round-to-nearest-even, no flush-to-zero), as on every x86-64, AArch64 and CUDA target.
//
// Example:
//   mixt::convert<std::int8_t>(300)            == 44
//   mixt::convert<std::int32_t>(1e10f)         == 2147483647
//   mixt::convert<Eigen::half>(65520.0)        is +inf
//   mixt::convert<float>(std::int64_t{(1LL << 62) + (1LL << 38) + 1}) rounds up once (no double rounding)

#include <Eigen/Core>

#include "mixt/dtype/bits.hpp"
#include "mixt/dtype/narrow_float.hpp"
#include "mixt/dtype/narrow_int.hpp"

#include <complex>
#include <cstdint>
#include <type_traits>

namespace mixt {
namespace detail {

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex<T>::value;

template <class T>
inline constexpr bool is_bool_v = std::is_same_v<T, bool>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
/// f16 and bf16: the 16-bit floats, whose arithmetic and functions every back end computes in f32 (or f64) and
/// rounds once.
template <class T>
inline constexpr bool is_small_float_v = std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;
template <class T>
inline constexpr bool is_float_like_v = std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16> ||
                                        std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T>
inline constexpr bool is_convert_dtype_v =
    std::is_same_v<T, bool> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> || std::is_same_v<T, std::int8_t> ||
    std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
    is_float_like_v<T> || std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>> ||
    is_narrow_float_v<T> || is_narrow_int_v<T>;

#if defined(EIGEN_HAS_ARM64_FP16_SCALAR_ARITHMETIC) || defined(SYCL_DEVICE_ONLY)
// There Eigen::half wraps a native half type, whose bits only Eigen's (non-constexpr) bit_cast reaches.
EIGEN_DEVICE_FUNC inline std::uint16_t half_bits(Eigen::half h) noexcept {
    return Eigen::numext::bit_cast<std::uint16_t>(h);
}
EIGEN_DEVICE_FUNC constexpr Eigen::half half_from_bits(std::uint16_t b) noexcept {
    return Eigen::half(Eigen::half_impl::raw_uint16_to_half(b));
}
#elif defined(EIGEN_HAS_GPU_FP16)
// Under CUDA and HIP Eigen::half wraps the toolkit's __half_raw, which is not a literal type, so these two
// cannot be constexpr there.
EIGEN_DEVICE_FUNC inline std::uint16_t half_bits(Eigen::half h) noexcept { return h.x; }
EIGEN_DEVICE_FUNC inline Eigen::half half_from_bits(std::uint16_t b) noexcept {
    return Eigen::half(Eigen::half_impl::raw_uint16_to_half(b));
}
#else
EIGEN_DEVICE_FUNC constexpr std::uint16_t half_bits(Eigen::half h) noexcept { return h.x; }
EIGEN_DEVICE_FUNC constexpr Eigen::half half_from_bits(std::uint16_t b) noexcept {
    return Eigen::half(Eigen::half_impl::raw_uint16_to_half(b));
}
#endif
EIGEN_DEVICE_FUNC constexpr std::uint16_t bf16_bits(Eigen::bfloat16 h) noexcept {
    return Eigen::bfloat16_impl::raw_bfloat16_as_uint16(h);
}
EIGEN_DEVICE_FUNC constexpr Eigen::bfloat16 bf16_from_bits(std::uint16_t b) noexcept {
    return Eigen::bfloat16(Eigen::bfloat16_impl::raw_uint16_to_bfloat16(b));
}

// f16 -> f32 is exact; written on the bits (not Eigen's half_to_float) so that it is constexpr and quiets
// signaling NaNs exactly as F16C's vcvtph2ps does.
// In CUDA device code the conversions below are the GPU's own instructions (cvt), which round the same way
// (to nearest even, subnormals included); a NaN may come out with another payload (the NaN contract).
EIGEN_DEVICE_FUNC constexpr float f16_bits_to_f32(std::uint16_t h) noexcept {
#if defined(__CUDA_ARCH__)
    if (!std::is_constant_evaluated()) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
        return f;
    }
#endif
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return f32_from_bits(sign | (man != 0 ? 0x7fc00000u | (man << 13) : 0x7f800000u));
    if (exp != 0) return f32_from_bits(sign | ((exp + 112) << 23) | (man << 13));
    // Subnormal or zero: man * 2^-24, exact in float (an 10-bit integer times a power of two).
    return f32_from_bits(sign | f32_bits(static_cast<float>(man) * 5.9604644775390625e-08f));
}

EIGEN_DEVICE_FUNC constexpr float bf16_bits_to_f32(std::uint16_t h) noexcept {
    std::uint32_t b = static_cast<std::uint32_t>(h) << 16;
    if ((b & 0x7fffffffu) > 0x7f800000u) b |= 0x00400000u;
    return f32_from_bits(b);
}

// f32 -> f16, round to nearest even; bit-identical to vcvtps2ph with _MM_FROUND_TO_NEAREST_INT.
EIGEN_DEVICE_FUNC constexpr std::uint16_t f32_to_f16_bits(float f) noexcept {
#if defined(__CUDA_ARCH__)
    if (!std::is_constant_evaluated()) {
        unsigned short r;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
        return r;
    }
#endif
    const std::uint32_t b = f32_bits(f);
    const std::uint32_t sign = (b >> 16) & 0x8000u;
    const std::uint32_t a = b & 0x7fffffffu;
    std::uint32_t r = 0;
    if (a > 0x7f800000u) {
        r = 0x7e00u | ((a >> 13) & 0x3ffu);
    } else if (a >= 0x477ff000u) { // >= 65520 = halfway between 65504 (max) and 2^16: ties to even = inf
        r = 0x7c00u;
    } else if (a >= 0x38800000u) { // >= 2^-14: normal half. Rebias the exponent; a carry out of the
                                   // mantissa correctly bumps the exponent.
        r = (a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13;
    } else if (a > 0x33000000u) {        // (2^-25, 2^-14): subnormal half, units of 2^-24
        const std::uint32_t e = a >> 23; // 102..112
        const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
        const std::uint32_t s = 126 - e; // value = m * 2^(e - 150) = (m >> s) units of 2^-24
        const std::uint32_t q = m >> s;
        const std::uint32_t rem = m & ((1u << s) - 1u);
        const std::uint32_t half = 1u << (s - 1);
        r = q + ((rem > half || (rem == half && (q & 1u) != 0)) ? 1u : 0u);
    } // else |f| <= 2^-25 (a tie at 2^-25 goes to the even 0): a signed zero
    return static_cast<std::uint16_t>(sign | r);
}

EIGEN_DEVICE_FUNC constexpr std::uint16_t f32_to_bf16_bits(float f) noexcept {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (!std::is_constant_evaluated()) {
        unsigned short r;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
        return r;
    }
#endif
    const std::uint32_t b = f32_bits(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((b >> 16) | 0x0040u);
    // Adding just under half an ulp (plus the lsb for ties-to-even) carries into the exponent when rounding
    // up; that also turns values that round past the max into inf. Cannot overflow 32 bits for non-NaN.
    return static_cast<std::uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

// f64 -> f32 rounded to odd: truncate toward zero, then set the last bit if anything was lost. Rounding a
// round-to-odd result with at least two more bits than the final format to nearest-even gives the same
// answer as rounding the exact value once, so f64 -> f16/bf16 go through this instead of plain f64 -> f32.
EIGEN_DEVICE_FUNC constexpr float f64_to_f32_odd(double d) noexcept {
    const float f = static_cast<float>(d);
    if (is_nan(d)) return f;
    const double back = static_cast<double>(f);
    if (back == d) return f;
    const double ad = d < 0 ? -d : d;
    const double ab = back < 0 ? -back : back;
    // Bits of a float are monotonic in magnitude, so stepping the bits by one steps toward zero.
    const std::uint32_t b = f32_bits(f) - (ab > ad ? 1u : 0u);
    return f32_from_bits(b | 1u);
}

// int -> f64, correctly rounded: both halves are exact in double and one addition rounds once.
template <class I>
EIGEN_DEVICE_FUNC constexpr double int_to_f64(I x) noexcept {
    if constexpr (sizeof(I) <= 4) {
        return static_cast<double>(x);
    } else {
        const auto u = static_cast<std::uint64_t>(x);
        const auto lo = static_cast<double>(static_cast<std::uint32_t>(u));
        if constexpr (std::is_signed_v<I>) {
            // C++20: >> on a negative value is an arithmetic shift.
            const auto hi = static_cast<double>(static_cast<std::int32_t>(static_cast<std::int64_t>(x) >> 32));
            return hi * 4294967296.0 + lo;
        } else {
            return static_cast<double>(static_cast<std::uint32_t>(u >> 32)) * 4294967296.0 + lo;
        }
    }
}

// int -> f32 rounded to odd (exact below 2^24), the intermediate for int -> bf16.
template <class I>
EIGEN_DEVICE_FUNC constexpr float int_to_f32_odd(I x) noexcept {
    if constexpr (sizeof(I) <= 2) {
        return static_cast<float>(x);
    } else if constexpr (sizeof(I) == 4) {
        constexpr I lim = I{1} << 24;
        if constexpr (std::is_signed_v<I>) {
            if (x >= -lim && x <= lim) return static_cast<float>(x);
        } else {
            if (x <= lim) return static_cast<float>(x);
        }
        const auto u = collapse_low_bits(static_cast<std::uint32_t>(x), 8); // 24 bits left: exact
        return static_cast<float>(static_cast<I>(u));
    } else {
        return f64_to_f32_odd(int_to_f64_odd(x));
    }
}

template <class F>
EIGEN_DEVICE_FUNC constexpr F pow2(int k) noexcept {
    F r = 1;
    for (int i = 0; i < k; ++i) r *= 2;
    return r;
}

// f32/f64 -> int: NaN -> 0, truncation toward zero, saturation. Each bound is an exact power of two
// (float(INT32_MAX) would round up to 2^31 and let 2^31 through to an undefined cast).
template <class I, class F>
EIGEN_DEVICE_FUNC constexpr I float_to_int(F x) noexcept {
    if (is_nan(x)) return I{0};
    using U = std::make_unsigned_t<I>;
    constexpr int bits = 8 * static_cast<int>(sizeof(I));
    if constexpr (std::is_signed_v<I>) {
        constexpr F hi = pow2<F>(bits - 1);
        constexpr I max = static_cast<I>(static_cast<U>(~U{0}) >> 1);
        constexpr I min = static_cast<I>(-max - 1);
        if (x >= hi) return max;
        // In (-2^(n-1) - 1, -2^(n-1)) the truncation is min too.
        if (x < -hi) return min;
        return static_cast<I>(x);
    } else {
        constexpr F hi = pow2<F>(bits);
        if (x >= hi) return static_cast<I>(~U{0});
        if (!(x > F(-1))) return I{0};
        return static_cast<I>(x);
    }
}

// Half/bfloat16 -> float (exact) for the cases that go through float.
template <class T>
EIGEN_DEVICE_FUNC constexpr float widen_to_f32(T x) noexcept {
    if constexpr (std::is_same_v<T, Eigen::half>) {
        return f16_bits_to_f32(half_bits(x));
    } else if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
        return bf16_bits_to_f32(bf16_bits(x));
    } else {
        static_assert(std::is_same_v<T, float>);
        return x;
    }
}

template <class To, class From>
EIGEN_DEVICE_FUNC constexpr To int_to_float_like(From x) noexcept {
    if constexpr (std::is_same_v<To, double>) {
        return int_to_f64(x);
    } else if constexpr (std::is_same_v<To, float>) {
        if constexpr (sizeof(From) <= 2 || std::is_same_v<From, std::int32_t>) {
            return static_cast<float>(x); // exact, or one rounding (and one instruction, which loops vectorize)
        } else if constexpr (sizeof(From) <= 4) {
            return static_cast<float>(static_cast<double>(x)); // exact, then one rounding
        } else {
            return static_cast<float>(int_to_f64_odd(x));
        }
    } else if constexpr (std::is_same_v<To, Eigen::half>) {
        // Everything at or beyond 65520 becomes inf, so clamping to +-2^20 changes no result and leaves an
        // integer that float holds exactly.
        From c = x;
        if constexpr (sizeof(From) >= 4) {
            constexpr From lim = From{1} << 20;
            if (c > lim) c = lim;
            if constexpr (std::is_signed_v<From>) {
                if (c < -lim) c = -lim;
            }
        }
        return half_from_bits(f32_to_f16_bits(static_cast<float>(c)));
    } else {
        static_assert(std::is_same_v<To, Eigen::bfloat16>);
        return bf16_from_bits(f32_to_bf16_bits(int_to_f32_odd(x)));
    }
}

template <class To, class From>
EIGEN_DEVICE_FUNC constexpr To float_like_to_float_like(From x) noexcept {
    if constexpr (std::is_same_v<From, double>) {
        if constexpr (std::is_same_v<To, float>) {
            return static_cast<float>(x);
        } else if constexpr (std::is_same_v<To, Eigen::half>) {
            return half_from_bits(f32_to_f16_bits(f64_to_f32_odd(x)));
        } else {
            return bf16_from_bits(f32_to_bf16_bits(f64_to_f32_odd(x)));
        }
    } else {
        // f16, bf16 and f32 all widen to f32 exactly, so each of these rounds at most once.
        const float f = widen_to_f32(x);
        if constexpr (std::is_same_v<To, double>) {
            return static_cast<double>(f);
        } else if constexpr (std::is_same_v<To, float>) {
            return f;
        } else if constexpr (std::is_same_v<To, Eigen::half>) {
            return half_from_bits(f32_to_f16_bits(f));
        } else {
            return bf16_from_bits(f32_to_bf16_bits(f));
        }
    }
}

template <class T>
EIGEN_DEVICE_FUNC constexpr bool to_bool(T x) noexcept {
    if constexpr (std::is_same_v<T, Eigen::half>) {
        return (half_bits(x) & 0x7fffu) != 0;
    } else if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
        return (bf16_bits(x) & 0x7fffu) != 0;
    } else if constexpr (std::is_same_v<T, float>) {
        return (f32_bits(x) & 0x7fffffffu) != 0;
    } else if constexpr (std::is_same_v<T, double>) {
        return (f64_bits(x) & 0x7fffffffffffffffu) != 0;
    } else {
        return x != 0;
    }
}

} // namespace detail

// Converts x to To with mixt's documented semantics (see the top of this header): wrapping between
// integers, saturating NaN->0 float->int, single correct rounding into floats, componentwise for complex.
//   auto h = mixt::convert<Eigen::half>(std::int64_t{70000});   // +inf
template <class To, class From>
EIGEN_DEVICE_FUNC constexpr To convert(From x) noexcept {
    static_assert(detail::is_convert_dtype_v<To> && detail::is_convert_dtype_v<From>,
                  "mixt::convert<To>(x) requires To and the type of x to be storage types of mixt's dtypes: bool, "
                  "u8..u64, i8..i64, Eigen::bfloat16, Eigen::half, float, double, std::complex<float>, "
                  "std::complex<double>, mixt::float8_* / float6_* / float4_e2m1fn, mixt::int4 / uint4 / int2 / uint2");
    if constexpr (std::is_same_v<To, From>) {
        return x;
    } else if constexpr (is_narrow_float_v<From>) {
        // Decoded exactly to float, which every rule below then rounds at most once.
        return convert<To>(static_cast<float>(x));
    } else if constexpr (is_narrow_int_v<From>) {
        return convert<To>(static_cast<std::int8_t>(x.value()));
    } else if constexpr (detail::is_complex_v<From>) {
        if constexpr (detail::is_complex_v<To>) {
            using C = typename To::value_type;
            return To(convert<C>(x.real()), convert<C>(x.imag()));
        } else if constexpr (detail::is_bool_v<To>) {
            return detail::to_bool(x.real()) || detail::to_bool(x.imag());
        } else {
            return convert<To>(x.real());
        }
    } else if constexpr (detail::is_complex_v<To>) {
        using C = typename To::value_type;
        return To(convert<C>(x), C(0));
    } else if constexpr (is_narrow_float_v<To>) {
        // Rule 7 (one rounding, to nearest even) with each format's specials (dtype/narrow_float.hpp).
        if constexpr (detail::is_bool_v<From>) {
            return To(x ? 1 : 0);
        } else if constexpr (detail::is_int_v<From>) {
            return To(x);
        } else if constexpr (std::is_same_v<From, double>) {
            return To(x);
        } else {
            return To(static_cast<double>(detail::widen_to_f32(x)));
        }
    } else if constexpr (is_narrow_int_v<To>) {
        // Rules 5 and 6: an integer wraps; a float truncates toward zero, NaN -> 0, saturated at To's range.
        if constexpr (detail::is_bool_v<From>) {
            return To(x ? 1 : 0);
        } else if constexpr (detail::is_int_v<From>) {
            return To(x);
        } else {
            const std::int32_t i = convert<std::int32_t>(x);
            return To(i < To::min_value ? To::min_value : i > To::max_value ? To::max_value : i);
        }
    } else if constexpr (detail::is_bool_v<To>) {
        return detail::to_bool(x);
    } else if constexpr (detail::is_bool_v<From>) {
        return convert<To>(static_cast<std::uint8_t>(x ? 1 : 0));
    } else if constexpr (detail::is_int_v<From> && detail::is_int_v<To>) {
        // Through the unsigned type: signed -> unsigned is modular in every C++ version, and C++20 makes the
        // final unsigned -> signed step modular too.
        return static_cast<To>(static_cast<std::make_unsigned_t<To>>(x));
    } else if constexpr (detail::is_int_v<To>) {
        if constexpr (std::is_same_v<From, double>) {
            return detail::float_to_int<To>(x);
        } else {
            return detail::float_to_int<To>(detail::widen_to_f32(x));
        }
    } else if constexpr (detail::is_int_v<From>) {
        return detail::int_to_float_like<To>(x);
    } else {
        return detail::float_like_to_float_like<To>(x);
    }
}

} // namespace mixt

#endif // MIXT_DTYPE_CONVERT_HPP
