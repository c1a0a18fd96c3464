#ifndef MIXT_SIMD_CONVERT_HPP
#define MIXT_SIMD_CONVERT_HPP

// mixt::simd::convert<To>(b): converts each lane of a batch, bit-identical to the scalar
// mixt::convert<To>(x) of mixt/dtype/convert.hpp (wrapping int -> int, saturating NaN -> 0 float -> int,
// one correct rounding into floats, quiet NaNs keeping sign and top payload bits).
//
//   auto f = mixt::simd::convert<float>(mixt::simd::load(i8_ptr));   // vpmovsxbd + vcvtdq2ps
//
// Under AVX2 every conversion is vectorized: the 64-bit integer <-> double conversions AVX2 lacks are
// built from exact magic-number and bit-field arithmetic, and roundings that would otherwise happen twice
// (i64 -> f32, f64 -> f16, i32 -> bf16) go through a round-to-odd intermediate. f16 <-> f32 uses F16C
// when available (MIXT_SIMD_F16C), else a per-lane loop. Without AVX2 every conversion is a loop over the
// scalar mixt::convert.

#include "mixt/dtype/convert.hpp"
#include "mixt/simd/arch.hpp"
#include "mixt/simd/batch.hpp"

#include <complex>
#include <cstdint>
#include <type_traits>

namespace mixt::simd {

#if MIXT_SIMD_AVX2

namespace detail {

template <class T>
inline constexpr bool is_complex_v = ::mixt::detail::is_complex_v<T>;

inline __m256i i32(int x) noexcept { return _mm256_set1_epi32(x); }
inline __m256i i64(long long x) noexcept { return _mm256_set1_epi64x(x); }

// Joins two 4-lane halves into the 8-lane order.
inline __m256 join(__m128 lo, __m128 hi) noexcept { return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1); }
inline __m256i join(__m128i lo, __m128i hi) noexcept {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// The low 32 bits of each 64-bit lane of a and b, as 8 x 32-bit lanes (truncation: wraps; on masks, narrows).
inline __m256i pack_lo32(__m256i a, __m256i b) noexcept {
    const __m256 s = _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_permute4x64_epi64(_mm256_castps_si256(s), _MM_SHUFFLE(3, 1, 2, 0)); // a0 a1 b0 b1 a2 a3 b2 b3
}
inline __m256i pack_lo32(__m256d a, __m256d b) noexcept {
    return pack_lo32(_mm256_castpd_si256(a), _mm256_castpd_si256(b));
}

inline __m256d abs_pd(__m256d x) noexcept { return _mm256_and_pd(x, _mm256_castsi256_pd(i64(0x7fffffffffffffffLL))); }

// Reduces 32-bit lanes to To's width: wraps, so i8 keeps the sign-extended low byte, u8 the low byte.
template <class To>
__m256i wrap32(__m256i v) noexcept {
    if constexpr (std::is_same_v<To, std::int8_t>) {
        return _mm256_srai_epi32(_mm256_slli_epi32(v, 24), 24);
    } else if constexpr (std::is_same_v<To, std::uint8_t>) {
        return _mm256_and_si256(v, i32(0xff));
    } else if constexpr (std::is_same_v<To, std::int16_t>) {
        return _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16);
    } else if constexpr (std::is_same_v<To, std::uint16_t>) {
        return _mm256_and_si256(v, i32(0xffff));
    } else {
        return v;
    }
}

// u32 lanes -> f32, correctly rounded: both 16-bit halves convert exactly, the multiply by 2^16 is exact,
// so the one addition is the only rounding (FMA contraction changes nothing).
inline __m256 u32_to_f32(__m256i v) noexcept {
    const __m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 16));
    const __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(v, i32(0xffff)));
    return _mm256_add_ps(_mm256_mul_ps(hi, _mm256_set1_ps(65536.0f)), lo);
}

// 64-bit ints -> f64, correctly rounded. The high part is placed in the mantissa of a large power of two
// whose subtraction is exact; the final addition is the only rounding.
inline __m256d u64_to_f64(__m256i x) noexcept {
    const __m256i hi = _mm256_or_si256(_mm256_srli_epi64(x, 32), _mm256_castpd_si256(_mm256_set1_pd(0x1p84)));
    const __m256i lo = _mm256_blend_epi16(x, _mm256_castpd_si256(_mm256_set1_pd(0x1p52)), 0xcc);
    const __m256d h = _mm256_sub_pd(_mm256_castsi256_pd(hi), _mm256_set1_pd(0x1p84 + 0x1p52));
    return _mm256_add_pd(h, _mm256_castsi256_pd(lo));
}

inline __m256d i64_to_f64(__m256i x) noexcept {
    // (x >> 48) lands, sign-extended, in the mantissa of 3 * 2^67 (units of 2^48); the low 48 bits in 2^52's.
    __m256i hi = _mm256_blend_epi16(_mm256_srai_epi32(x, 16), _mm256_setzero_si256(), 0x33);
    hi = _mm256_add_epi64(hi, _mm256_castpd_si256(_mm256_set1_pd(0x1.8p68)));
    const __m256i lo = _mm256_blend_epi16(x, _mm256_castpd_si256(_mm256_set1_pd(0x1p52)), 0x88);
    const __m256d h = _mm256_sub_pd(_mm256_castsi256_pd(hi), _mm256_set1_pd(0x1.8p68 + 0x1p52));
    return _mm256_add_pd(h, _mm256_castsi256_pd(lo));
}

// 64-bit ints -> f64 exactly when |x| < 2^53, else rounded to odd at granularity 2^11 (exact for a later
// rounding to f32 or narrower; see mixt::detail::int_to_f64_odd).
template <class From>
__m256d int64_to_f64_odd(__m256i x) noexcept {
    __m256i small;
    if constexpr (std::is_signed_v<From>) {
        small = _mm256_cmpeq_epi64(_mm256_srli_epi64(_mm256_add_epi64(x, i64(1LL << 53)), 54), _mm256_setzero_si256());
    } else {
        small = _mm256_cmpeq_epi64(_mm256_srli_epi64(x, 53), _mm256_setzero_si256());
    }
    const __m256i sticky = _mm256_and_si256(_mm256_add_epi64(_mm256_and_si256(x, i64(0x7ff)), i64(0x7ff)), i64(0x800));
    const __m256i odd = _mm256_or_si256(_mm256_andnot_si256(i64(0x7ff), x), sticky);
    const __m256i y = _mm256_blendv_epi8(odd, x, small);
    if constexpr (std::is_signed_v<From>) {
        return i64_to_f64(y);
    } else {
        return u64_to_f64(y);
    }
}

// f64 -> f32 rounded to odd: the rounded-to-nearest result, stepped toward zero if it went away from zero,
// with the last bit set if inexact. NaNs compare unordered and pass through cvtpd_ps's quieting.
inline __m256 f64_to_f32_odd(__m256d d0, __m256d d1) noexcept {
    const __m128 f0 = _mm256_cvtpd_ps(d0);
    const __m128 f1 = _mm256_cvtpd_ps(d1);
    const __m256d b0 = _mm256_cvtps_pd(f0);
    const __m256d b1 = _mm256_cvtps_pd(f1);
    const __m256i inexact = pack_lo32(_mm256_cmp_pd(b0, d0, _CMP_NEQ_OQ), _mm256_cmp_pd(b1, d1, _CMP_NEQ_OQ));
    const __m256i away =
        pack_lo32(_mm256_cmp_pd(abs_pd(b0), abs_pd(d0), _CMP_GT_OQ), _mm256_cmp_pd(abs_pd(b1), abs_pd(d1), _CMP_GT_OQ));
    __m256i bits = _mm256_castps_si256(join(f0, f1));
    bits = _mm256_add_epi32(bits, away); // all-ones mask = -1
    return _mm256_castsi256_ps(_mm256_or_si256(bits, _mm256_and_si256(inexact, i32(1))));
}

inline __m256 round_to_f16(__m256 f) noexcept { return f16x8_to_f32(f32x8_to_f16(f)); }
inline __m256 round_to_bf16(__m256 f) noexcept { return _mm256_castsi256_ps(f32x8_to_bf16_high(f)); }

inline void widen(__m256 f, __m256d (&out)[2]) noexcept {
    out[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
    out[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
}

// f64 -> i64/u64 on the bit fields (AVX2 has no such instruction): the integer part is the 53-bit
// significand shifted by the exponent (variable shifts by 64 or more give 0), then NaN -> 0 and
// saturation, as in mixt::detail::float_to_int.
template <class To>
__m256i f64_to_int64(__m256d d) noexcept {
    const __m256i bits = _mm256_castpd_si256(d);
    const __m256i a = _mm256_and_si256(bits, i64(0x7fffffffffffffffLL));
    const __m256i e = _mm256_srli_epi64(a, 52);
    const __m256i m = _mm256_or_si256(_mm256_and_si256(a, i64(0x000fffffffffffffLL)), i64(0x0010000000000000LL));
    const __m256i mag = _mm256_or_si256(_mm256_sllv_epi64(m, _mm256_sub_epi64(e, i64(1075))),
                                        _mm256_srlv_epi64(m, _mm256_sub_epi64(i64(1075), e)));
    const __m256i neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), bits);
    const __m256i nan = _mm256_cmpgt_epi64(a, i64(0x7ff0000000000000LL));
    if constexpr (std::is_signed_v<To>) {
        const __m256i val = _mm256_sub_epi64(_mm256_xor_si256(mag, neg), neg);
        const __m256i over = _mm256_cmpgt_epi64(a, i64(0x43dfffffffffffffLL)); // |d| >= 2^63
        const __m256i sat = _mm256_xor_si256(i64(0x7fffffffffffffffLL), neg);
        return _mm256_andnot_si256(nan, _mm256_blendv_epi8(val, sat, over));
    } else {
        const __m256i over = _mm256_cmpgt_epi64(a, i64(0x43efffffffffffffLL)); // |d| >= 2^64
        return _mm256_andnot_si256(_mm256_or_si256(neg, nan), _mm256_or_si256(mag, over));
    }
}

// f32 -> 32-bit-lane ints with NaN -> 0, truncation and saturation.
template <class To>
__m256i f32_to_int32(__m256 v) noexcept {
    if constexpr (std::is_same_v<To, std::int32_t>) {
        // cvttps gives 0x80000000 for NaN and out-of-range: right for < -2^31, flipped to max for >= 2^31.
        __m256i t = _mm256_cvttps_epi32(v);
        t = _mm256_xor_si256(t, _mm256_castps_si256(_mm256_cmp_ps(v, _mm256_set1_ps(0x1p31f), _CMP_GE_OQ)));
        return _mm256_andnot_si256(_mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)), t);
    } else if constexpr (std::is_same_v<To, std::uint32_t>) {
        const __m256 c = _mm256_max_ps(v, _mm256_setzero_ps()); // NaN and negatives -> 0
        const __m256 big = _mm256_cmp_ps(c, _mm256_set1_ps(0x1p31f), _CMP_GE_OQ);
        const __m256i low = _mm256_cvttps_epi32(c);
        // Floats in [2^31, 2^32) are integers, so subtracting 2^31 is exact.
        const __m256i high =
            _mm256_xor_si256(_mm256_cvttps_epi32(_mm256_sub_ps(c, _mm256_set1_ps(0x1p31f))), i32(INT32_MIN));
        const __m256i t = _mm256_blendv_epi8(low, high, _mm256_castps_si256(big));
        return _mm256_or_si256(t, _mm256_castps_si256(_mm256_cmp_ps(c, _mm256_set1_ps(0x1p32f), _CMP_GE_OQ)));
    } else {
        // Clamped to the target's bounds, the truncation is exact and in range.
        constexpr int bits = 8 * sizeof(To);
        constexpr float lo = std::is_signed_v<To> ? -static_cast<float>(1 << (bits - 1)) : 0.0f;
        constexpr float hi = static_cast<float>(std::is_signed_v<To> ? (1 << (bits - 1)) - 1 : (1 << bits) - 1);
        __m256 c = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(lo)), _mm256_set1_ps(hi));
        c = _mm256_and_ps(c, _mm256_cmp_ps(v, v, _CMP_ORD_Q)); // NaN -> +0
        return _mm256_cvttps_epi32(c);
    }
}

template <class To>
__m256i f64_to_int32(const __m256d (&d)[2]) noexcept {
    __m128i part[2];
    for (int h = 0; h < 2; ++h) {
        __m256d c;
        if constexpr (std::is_same_v<To, std::uint32_t>) {
            // Truncated first, so that subtracting 2^31 (to use the signed conversion) is exact.
            c = _mm256_min_pd(_mm256_max_pd(d[h], _mm256_setzero_pd()), _mm256_set1_pd(4294967295.0));
            c = _mm256_round_pd(c, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            part[h] =
                _mm_xor_si128(_mm256_cvttpd_epi32(_mm256_sub_pd(c, _mm256_set1_pd(0x1p31))), _mm_set1_epi32(INT32_MIN));
        } else {
            constexpr double lo = std::is_signed_v<To> ? -static_cast<double>(1ULL << (8 * sizeof(To) - 1)) : 0.0;
            constexpr double hi = std::is_signed_v<To> ? static_cast<double>((1ULL << (8 * sizeof(To) - 1)) - 1)
                                                       : static_cast<double>((1ULL << (8 * sizeof(To))) - 1);
            c = _mm256_min_pd(_mm256_max_pd(d[h], _mm256_set1_pd(lo)), _mm256_set1_pd(hi));
            c = _mm256_and_pd(c, _mm256_cmp_pd(d[h], d[h], _CMP_ORD_Q));
            part[h] = _mm256_cvttpd_epi32(c);
        }
    }
    return join(part[0], part[1]);
}

// A batch's lanes as 8 x f32 / 2 x 4 x f64, for the sources that are exact there.
template <class From>
void as_f64(const batch<From>& b, __m256d (&out)[2]) noexcept {
    if constexpr (std::is_same_v<From, double>) {
        out[0] = b.v[0];
        out[1] = b.v[1];
    } else if constexpr (is_f32_lane_v<From>) {
        widen(b.v, out);
    } else if constexpr (std::is_same_v<From, std::uint32_t>) {
        // Flip the sign bit to use the signed conversion, then add 2^31 back: both steps exact.
        const __m256i s = _mm256_xor_si256(b.v, i32(INT32_MIN));
        for (int h = 0; h < 2; ++h) {
            const __m128i part = h == 0 ? _mm256_castsi256_si128(s) : _mm256_extracti128_si256(s, 1);
            out[h] = _mm256_add_pd(_mm256_cvtepi32_pd(part), _mm256_set1_pd(0x1p31));
        }
    } else if constexpr (is_lane32_int_v<From>) {
        out[0] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(b.v));
        out[1] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(b.v, 1));
    } else if constexpr (std::is_same_v<From, std::int64_t>) {
        out[0] = i64_to_f64(b.v[0]);
        out[1] = i64_to_f64(b.v[1]);
    } else {
        static_assert(std::is_same_v<From, std::uint64_t>);
        out[0] = u64_to_f64(b.v[0]);
        out[1] = u64_to_f64(b.v[1]);
    }
}

template <class From>
__m256i to_bool(const batch<From>& b) noexcept {
    const __m256i one = i32(1);
    if constexpr (is_lane32_int_v<From>) {
        return _mm256_andnot_si256(_mm256_cmpeq_epi32(b.v, _mm256_setzero_si256()), one);
    } else if constexpr (is_lane64_int_v<From>) {
        const __m256i z = pack_lo32(_mm256_cmpeq_epi64(b.v[0], _mm256_setzero_si256()),
                                    _mm256_cmpeq_epi64(b.v[1], _mm256_setzero_si256()));
        return _mm256_andnot_si256(z, one);
    } else if constexpr (is_f32_lane_v<From>) {
        // Unordered-or-unequal: NaN is true, -0 is false.
        return _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(b.v, _mm256_setzero_ps(), _CMP_NEQ_UQ)), one);
    } else {
        static_assert(std::is_same_v<From, double>);
        const __m256i nz = pack_lo32(_mm256_cmp_pd(b.v[0], _mm256_setzero_pd(), _CMP_NEQ_UQ),
                                     _mm256_cmp_pd(b.v[1], _mm256_setzero_pd(), _CMP_NEQ_UQ));
        return _mm256_and_si256(nz, one);
    }
}

// Whether every value of From is a value of To (both integers or bool): the lanes then need no wrapping.
template <class To, class From>
inline constexpr bool int_range_within_v =
    std::is_same_v<From, bool> ||
    (std::is_signed_v<From> == std::is_signed_v<To> && sizeof(From) <= sizeof(To)) ||
    (std::is_unsigned_v<From> && std::is_signed_v<To> && sizeof(From) < sizeof(To));

template <class To, class From>
__m256i to_int32_lanes(const batch<From>& b) noexcept {
    if constexpr (is_lane32_int_v<From> && int_range_within_v<To, From>) {
        return b.v; // u8 -> i16, i8 -> i32, ...: the lanes already hold the value
    } else if constexpr (is_lane32_int_v<From>) {
        return wrap32<To>(b.v);
    } else if constexpr (is_lane64_int_v<From>) {
        return wrap32<To>(pack_lo32(b.v[0], b.v[1]));
    } else if constexpr (is_f32_lane_v<From>) {
        return f32_to_int32<To>(b.v);
    } else {
        return f64_to_int32<To>(b.v);
    }
}

template <class To, class From>
batch<To> to_int64_lanes(const batch<From>& b) noexcept {
    if constexpr (is_lane32_int_v<From>) {
        // Sign- or zero-extension by the source's signedness; the target's only reinterprets the bits.
        const __m128i lo = _mm256_castsi256_si128(b.v);
        const __m128i hi = _mm256_extracti128_si256(b.v, 1);
        if constexpr (std::is_signed_v<From>) {
            return {{_mm256_cvtepi32_epi64(lo), _mm256_cvtepi32_epi64(hi)}};
        } else {
            return {{_mm256_cvtepu32_epi64(lo), _mm256_cvtepu32_epi64(hi)}};
        }
    } else if constexpr (is_lane64_int_v<From>) {
        return {{b.v[0], b.v[1]}};
    } else {
        __m256d d[2];
        as_f64(b, d); // exact for f16/bf16/f32
        return {{f64_to_int64<To>(d[0]), f64_to_int64<To>(d[1])}};
    }
}

template <class From>
__m256 to_f32(const batch<From>& b) noexcept {
    if constexpr (std::is_same_v<From, std::uint32_t>) {
        return u32_to_f32(b.v);
    } else if constexpr (is_lane32_int_v<From>) {
        return _mm256_cvtepi32_ps(b.v); // rounds i32 to nearest even (MXCSR default); narrower ints are exact
    } else if constexpr (is_lane64_int_v<From>) {
        return join(_mm256_cvtpd_ps(int64_to_f64_odd<From>(b.v[0])), _mm256_cvtpd_ps(int64_to_f64_odd<From>(b.v[1])));
    } else if constexpr (is_f32_lane_v<From>) {
        return b.v;
    } else {
        return join(_mm256_cvtpd_ps(b.v[0]), _mm256_cvtpd_ps(b.v[1]));
    }
}

// An f32 value whose rounding to f16 is b converted to f16: b itself where f32 holds it exactly, else b
// rounded to odd (or clamped where every such value rounds to the same f16), so that one rounding gives the
// correctly rounded result.
template <class From>
__m256 to_f16_unrounded(const batch<From>& b) noexcept {
    if constexpr (std::is_same_v<From, std::int32_t>) {
        // Beyond +-65520 everything is inf: clamping to +-2^20 changes no result and makes the f32 exact.
        return _mm256_cvtepi32_ps(_mm256_max_epi32(_mm256_min_epi32(b.v, i32(1 << 20)), i32(-(1 << 20))));
    } else if constexpr (std::is_same_v<From, std::uint32_t>) {
        return _mm256_cvtepi32_ps(_mm256_min_epu32(b.v, i32(1 << 20)));
    } else if constexpr (is_lane32_int_v<From>) {
        return _mm256_cvtepi32_ps(b.v);
    } else if constexpr (is_lane64_int_v<From>) {
        __m256i c[2];
        for (int h = 0; h < 2; ++h) {
            const __m256i x = b.v[h];
            if constexpr (std::is_signed_v<From>) {
                __m256i y = _mm256_blendv_epi8(x, i64(1 << 20), _mm256_cmpgt_epi64(x, i64(1 << 20)));
                c[h] = _mm256_blendv_epi8(y, i64(-(1 << 20)), _mm256_cmpgt_epi64(i64(-(1 << 20)), y));
            } else {
                const __m256i small = _mm256_cmpeq_epi64(_mm256_srli_epi64(x, 20), _mm256_setzero_si256());
                c[h] = _mm256_blendv_epi8(i64(1 << 20), x, small);
            }
        }
        return _mm256_cvtepi32_ps(pack_lo32(c[0], c[1]));
    } else if constexpr (std::is_same_v<From, double>) {
        return f64_to_f32_odd(b.v[0], b.v[1]);
    } else {
        return b.v;
    }
}

// b converted to f16, as an f32 lane value.
template <class From>
__m256 to_f16(const batch<From>& b) noexcept {
    if constexpr (exact_in_half_v<From>)
        return to_f16_unrounded(b); // every value of From is an f16: nothing to round
    else
        return round_to_f16(to_f16_unrounded(b));
}

// The same for bfloat16.
template <class From>
__m256 to_bf16_unrounded(const batch<From>& b) noexcept {
    if constexpr (std::is_same_v<From, std::int32_t>) {
        // Beyond 2^24 round to odd at granularity 2^8 (24 bits remain: exact in f32), then round once.
        const __m256i x = b.v;
        const __m256i small =
            _mm256_cmpeq_epi32(_mm256_srli_epi32(_mm256_add_epi32(x, i32(1 << 24)), 25), _mm256_setzero_si256());
        const __m256i sticky =
            _mm256_and_si256(_mm256_add_epi32(_mm256_and_si256(x, i32(0xff)), i32(0xff)), i32(0x100));
        const __m256i odd = _mm256_or_si256(_mm256_andnot_si256(i32(0xff), x), sticky);
        return _mm256_cvtepi32_ps(_mm256_blendv_epi8(odd, x, small));
    } else if constexpr (std::is_same_v<From, std::uint32_t>) {
        const __m256i x = b.v;
        const __m256i small = _mm256_cmpeq_epi32(_mm256_srli_epi32(x, 24), _mm256_setzero_si256());
        const __m256i sticky =
            _mm256_and_si256(_mm256_add_epi32(_mm256_and_si256(x, i32(0xff)), i32(0xff)), i32(0x100));
        const __m256i odd = _mm256_or_si256(_mm256_andnot_si256(i32(0xff), x), sticky);
        return u32_to_f32(_mm256_blendv_epi8(odd, x, small));
    } else if constexpr (is_lane32_int_v<From>) {
        return _mm256_cvtepi32_ps(b.v);
    } else if constexpr (is_lane64_int_v<From>) {
        return f64_to_f32_odd(int64_to_f64_odd<From>(b.v[0]), int64_to_f64_odd<From>(b.v[1]));
    } else if constexpr (std::is_same_v<From, double>) {
        return f64_to_f32_odd(b.v[0], b.v[1]);
    } else {
        return b.v;
    }
}

// b converted to bfloat16, as an f32 lane value.
template <class From>
__m256 to_bf16(const batch<From>& b) noexcept {
    if constexpr (exact_in_half_v<From>)
        return to_bf16_unrounded(b); // every value of From is a bfloat16: nothing to round
    else
        return round_to_bf16(to_bf16_unrounded(b));
}

template <class C>
batch<C> real_part(const batch<std::complex<C>>& b) noexcept {
    if constexpr (std::is_same_v<C, float>) {
        return {b.re};
    } else {
        return {{b.re[0], b.re[1]}};
    }
}

template <class C>
batch<C> imag_part(const batch<std::complex<C>>& b) noexcept {
    if constexpr (std::is_same_v<C, float>) {
        return {b.im};
    } else {
        return {{b.im[0], b.im[1]}};
    }
}

template <class C>
batch<std::complex<C>> make_complex(const batch<C>& re, const batch<C>& im) noexcept {
    if constexpr (std::is_same_v<C, float>) {
        return {re.v, im.v};
    } else {
        return {{re.v[0], re.v[1]}, {im.v[0], im.v[1]}};
    }
}

// f32 lanes rounded to the narrow float T, kept as f32 values (convert<float>(convert<T>(x)) per lane).
template <class T>
__m256 round_to_narrow(__m256 f) noexcept {
    return narrow::round_to<T::value_dtype>(f);
}

// Whether every value of From is exactly a float (so that From -> f32 -> a narrow float rounds once).
template <class From>
inline constexpr bool exact_in_f32_v = std::is_same_v<From, bool> || std::is_same_v<From, std::uint8_t> ||
                                       std::is_same_v<From, std::int8_t> || std::is_same_v<From, std::uint16_t> ||
                                       std::is_same_v<From, std::int16_t> || is_f32_lane_v<From>;

} // namespace detail

template <class To, class From>
batch<To> convert(const batch<From>& b) noexcept;

namespace detail {
// The conversions to and from the narrow dtypes, by mixt::convert's rules (dtype/convert.hpp): from a narrow
// float its exact f32 value, from a narrow int its i32 value; to a narrow float one rounding (through f32
// where that is exact, and, from an integer too wide for f32, only where f32 rounding cannot move a value
// across a rounding boundary of the format: every format but e8m0fnu overflows below 2^24; otherwise lane by
// lane); to a narrow int, an integer wraps and a float truncates and saturates at the narrow range.
template <class To, class From>
batch<To> convert_narrow(const batch<From>& b) noexcept {
    if constexpr (::mixt::is_narrow_float_v<From>) {
        return convert<To>(batch<float>{b.v});
    } else if constexpr (::mixt::is_narrow_int_v<From>) {
        if constexpr (::mixt::is_narrow_float_v<To>)
            return {round_to_narrow<To>(_mm256_cvtepi32_ps(b.v))};
        else
            return convert<To>(batch<std::int32_t>{b.v});
    } else if constexpr (::mixt::is_narrow_float_v<To>) {
        constexpr bool wide_int = std::is_same_v<From, std::int32_t> || std::is_same_v<From, std::uint32_t> ||
                                  is_lane64_int_v<From>;
        if constexpr (exact_in_f32_v<From> ||
                      (wide_int && To::value_dtype != ::mixt::dtype::float8_e8m0fnu)) {
            return {round_to_narrow<To>(convert<float>(b).v)};
        } else {
            From in[lanes];
            store(in, b);
            alignas(32) float out[lanes];
            for (int i = 0; i < lanes; ++i) out[i] = static_cast<float>(::mixt::convert<To>(in[i]));
            return {_mm256_load_ps(out)};
        }
    } else {
        static_assert(::mixt::is_narrow_int_v<To>);
        const __m256i v = convert<std::int32_t>(b).v;
        if constexpr (std::is_same_v<From, bool> || ::mixt::detail::is_int_v<From>) {
            constexpr int shift = 32 - To::bits_wide;
            if constexpr (To::is_signed)
                return {_mm256_srai_epi32(_mm256_slli_epi32(v, shift), shift)};
            else
                return {_mm256_and_si256(v, _mm256_set1_epi32(To::mask))};
        } else {
            return {_mm256_min_epi32(_mm256_max_epi32(v, _mm256_set1_epi32(To::min_value)),
                                     _mm256_set1_epi32(To::max_value))};
        }
    }
}
} // namespace detail

/// Converts each lane with mixt::convert's semantics: `auto h = mixt::simd::convert<Eigen::half>(b);`
template <class To, class From>
batch<To> convert(const batch<From>& b) noexcept {
    static_assert(detail::is_dtype_v<To>, "mixt::simd::convert<To>(b) requires To to be one of mixt's dtypes");
    if constexpr (std::is_same_v<To, From>) {
        return b;
    } else if constexpr (::mixt::detail::is_narrow_v<From> ||
                         (::mixt::detail::is_narrow_v<To> && !detail::is_complex_v<From>)) {
        return detail::convert_narrow<To>(b);
    } else if constexpr (detail::is_complex_v<From>) {
        if constexpr (detail::is_complex_v<To>) {
            using D = typename To::value_type;
            return detail::make_complex(convert<D>(detail::real_part(b)), convert<D>(detail::imag_part(b)));
        } else if constexpr (std::is_same_v<To, bool>) {
            return {_mm256_or_si256(convert<bool>(detail::real_part(b)).v, convert<bool>(detail::imag_part(b)).v)};
        } else {
            return convert<To>(detail::real_part(b));
        }
    } else if constexpr (detail::is_complex_v<To>) {
        using C = typename To::value_type;
        return detail::make_complex(convert<C>(b), broadcast(C(0)));
    } else if constexpr (std::is_same_v<To, bool>) {
        return {detail::to_bool(b)};
    } else if constexpr (detail::is_lane32_int_v<To>) {
        return {detail::to_int32_lanes<To>(b)};
    } else if constexpr (detail::is_lane64_int_v<To>) {
        return detail::to_int64_lanes<To>(b);
    } else if constexpr (std::is_same_v<To, double>) {
        __m256d d[2];
        detail::as_f64(b, d);
        return {{d[0], d[1]}};
    } else if constexpr (std::is_same_v<To, float>) {
        return {detail::to_f32(b)};
    } else if constexpr (std::is_same_v<To, Eigen::half>) {
        return {detail::to_f16(b)};
    } else {
        static_assert(std::is_same_v<To, Eigen::bfloat16>);
        return {detail::to_bf16(b)};
    }
}

/// convert<To>(b) for storing only: where To is f16 or bf16, a batch whose lanes hold f32 values not yet
/// rounded to To ("unrounded"), which store, stream_store and store_partial round as they write, so storing it
/// writes the bits that storing convert<To>(b) writes, with one conversion fewer (an f16 round trip is two
/// F16C instructions). Any other operation on an unrounded batch is undefined. Other To: convert<To>(b).
template <class To, class From>
batch<To> convert_unrounded(const batch<From>& b) noexcept {
    if constexpr (::mixt::is_narrow_float_v<From> && !std::is_same_v<From, To>)
        return convert_unrounded<To>(batch<float>{b.v}); // the same lanes: a narrow float's exact values
    else if constexpr (::mixt::is_narrow_int_v<From> && !std::is_same_v<From, To>)
        return convert_unrounded<To>(batch<std::int32_t>{b.v});
    else if constexpr (std::is_same_v<To, Eigen::half> && !std::is_same_v<From, To> && !detail::is_complex_v<From>)
        return {detail::to_f16_unrounded(b)};
    else if constexpr (std::is_same_v<To, Eigen::bfloat16> && !std::is_same_v<From, To> && !detail::is_complex_v<From>)
        return {detail::to_bf16_unrounded(b)};
    else if constexpr (::mixt::is_narrow_float_v<To> && !std::is_same_v<From, To> && detail::exact_in_f32_v<From>)
        return {convert<float>(b).v}; // (a narrow float's store rounds as it encodes)
    else
        return convert<To>(b);
}

#else // portable batches

/// Converts each lane with mixt::convert's semantics: `auto h = mixt::simd::convert<Eigen::half>(b);`
template <class To, class From>
batch<To> convert(const batch<From>& b) noexcept {
    batch<To> r;
    for (int i = 0; i < lanes; ++i) r.v[i] = ::mixt::convert<To>(b.v[i]);
    return r;
}

/// convert<To>(b): the portable batches hold values of To, rounded.
template <class To, class From>
batch<To> convert_unrounded(const batch<From>& b) noexcept {
    return convert<To>(b);
}

#endif // MIXT_SIMD_AVX2

} // namespace mixt::simd

#endif // MIXT_SIMD_CONVERT_HPP
