#ifndef MIXT_SIMD_DIVIDE_HPP
#define MIXT_SIMD_DIVIDE_HPP

// f32 division by a value known before the loop (a literal: `u8 / 255`), with a multiplication and two fused
// multiply-adds instead of a division, and the same bits:
//   - f32_divisor::of(b, chosen): b, its magnitude's reciprocal rounded to nearest, and whether the loop divides
//     that way (chosen by the caller's rule, for the divisors below, and only in AVX-512 builds);
//   - wide::divide(a, d): a / b for 16 lanes (AVX-512).
//
// The computation. With y = RN(1/|b|): q = RN(a * y), the remainder r = |b| * q - a by one fused multiply-add, and
// the result RN(q - r * y). Where |a| lies in [2^-60, 2^80] and |b| in [2^-20, 2^20] nothing underflows or
// overflows (the quotient lies in [2^-80, 2^100], and the exponents of |b| and q sum to at least -100, where the
// remainder's exactness needs -103), so only the significands matter, and a divisor is taken for one of two reasons:
//   - the theorem: where y's relative error |y * |b| - 1| (exact by one fused multiply-add) is below 2^-25, q is
//     within one ulp of a / |b| for every a, r is exact, and RN(q - r * y) is RN(a / |b|) (Markstein's theorem:
//     y within half an ulp of 1/|b|, q within one ulp of the quotient). About two divisors in three;
//   - the exhaustive check: a divisor whose significand has at most 8 significant bits (255, 3, 10, 100, 1000,
//     127.5, ...), each of which simd_wide.division_by_a_constant_has_the_bits_of_division divides every
//     significand of the dividend by, bit for bit against the division (exponents only scale every step).
// Any other divisor divides. A zero a comes out as the signed zero of a / |b| (the remainder is +0, and q - (+0)
// keeps q's sign); a negative b divides a with its sign flipped by |b| (the same value: negation is exact). Every
// other lane (subnormal, tiny or huge a, infinities, NaNs) is rare, so a batch with one takes the division
// instruction for all 16 lanes, with the operands as given, NaN payloads included.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "mixt/simd/arch.hpp"

#if MIXT_SIMD_AVX512
#include <immintrin.h>
#endif

namespace mixt::simd {

/// A divisor known before the loop, with what dividing by a multiplication needs.
struct f32_divisor {
    float divisor = 1;       // b, as given
    float magnitude = 1;     // |b|
    float inverse = 1;       // RN(1 / |b|)
    std::uint32_t sign = 0;  // b's sign bit
    bool by_reciprocal = false;

    /// b's divisor; by_reciprocal where `chosen`, |b| lies in [2^-20, 2^20] and one of the two reasons above holds
    /// (always false without AVX-512, where nothing divides this way).
    static f32_divisor of(float b, bool chosen) noexcept {
        f32_divisor d;
        d.divisor = b;
        std::uint32_t bits = 0;
        std::memcpy(&bits, &b, sizeof bits);
        d.sign = bits & 0x80000000u;
        bits &= 0x7fffffffu;
        std::memcpy(&d.magnitude, &bits, sizeof bits);
#if MIXT_SIMD_AVX512
        if (chosen && d.magnitude >= 0x1p-20f && d.magnitude <= 0x1p20f) {
            d.inverse = 1.0f / d.magnitude;
            const bool short_significand = (bits & 0x7fffu) == 0; // at most 8 significant bits
            const float error = std::fma(d.inverse, d.magnitude, -1.0f); // y * |b| - 1, exact
            d.by_reciprocal = short_significand || std::fabs(error) < 0x1p-25f;
        }
#else
        (void)chosen;
#endif
        return d;
    }
};

#if MIXT_SIMD_AVX512
namespace wide {

/// a / d.divisor in each of 16 lanes, rounded to nearest: the bits of _mm512_div_ps (see the top of this header).
inline __m512 divide(__m512 a, const f32_divisor& d) noexcept {
    if (d.by_reciprocal) {
        const __m512i bits = _mm512_castps_si512(a);
        const __m512i magnitude_bits = _mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff));
        // |a| in [2^-60, 2^80]: one unsigned compare of the magnitude's bits less those of 2^-60.
        constexpr std::int32_t low = (127 - 60) << 23, high = (127 + 80) << 23;
        const __mmask16 in_range = _mm512_cmple_epu32_mask(_mm512_sub_epi32(magnitude_bits, _mm512_set1_epi32(low)),
                                                           _mm512_set1_epi32(high - low));
        const __mmask16 zero = _mm512_testn_epi32_mask(bits, _mm512_set1_epi32(0x7fffffff));
        if (_kortestc_mask16_u8(in_range, zero)) {
            const __m512 x = _mm512_castsi512_ps(_mm512_xor_si512(bits, _mm512_set1_epi32(static_cast<int>(d.sign))));
            const __m512 b = _mm512_set1_ps(d.magnitude), y = _mm512_set1_ps(d.inverse);
            const __m512 q = _mm512_mul_ps(x, y);
            const __m512 r = _mm512_fmsub_ps(b, q, x); // |b| * q - x, exact
            return _mm512_fnmadd_ps(r, y, q);          // q - r * y, rounded once
        }
    }
    return _mm512_div_ps(a, _mm512_set1_ps(d.divisor));
}

} // namespace wide
#endif

} // namespace mixt::simd

#endif // MIXT_SIMD_DIVIDE_HPP
