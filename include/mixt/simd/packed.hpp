#ifndef MIXT_SIMD_PACKED_HPP
#define MIXT_SIMD_PACKED_HPP

// Packed sub-byte codes (dtype/packed.hpp) to one code per byte and back, a register at a time:
//   - unpack_bytes<Bits>(out, in, n): the n bytes at `in`, each holding 8 / Bits codes (the first in the low
//     bits), as n * 8 / Bits bytes at `out`, one code each (its low Bits bits; the high bits zero);
//   - pack_bytes<Bits>(out, in, n): the other way, n bytes written from n * 8 / Bits codes (each code's bits
//     above Bits ignored).
// How: a byte widened to a 16-bit lane (Bits 4) or a 32-bit lane (Bits 2) holds all its codes; shifted copies of
// the lane ORed together put code k at the bottom of byte k of the lane, and a mask clears the rest, so a
// widening load, two or four shifts and ORs and an AND unpack 32 (64) codes; packing narrows the same way back
// (vpmovwb / vpmovdb on AVX-512, packus and a permute on AVX2). Without AVX2 the loops are plain C++.

#include <cstdint>
#include <cstring>

#include "mixt/simd/arch.hpp"

#if MIXT_SIMD_AVX2
#include <immintrin.h>
#endif

namespace mixt::simd {

namespace detail {
template <int Bits>
inline std::uint8_t unpack_code(std::uint8_t b, int k) {
    return static_cast<std::uint8_t>((b >> (k * Bits)) & ((1u << Bits) - 1u));
}
template <int Bits>
inline std::uint8_t pack_codes(const std::uint8_t* c) {
    constexpr unsigned mask = (1u << Bits) - 1u;
    unsigned b = 0;
    for (int k = 0; k < 8 / Bits; ++k) b |= (c[k] & mask) << (k * Bits);
    return static_cast<std::uint8_t>(b);
}
} // namespace detail

/// The codes of n packed bytes, one per byte of out (n * 8 / Bits bytes).
template <int Bits>
inline void unpack_bytes(std::uint8_t* out, const std::uint8_t* in, std::ptrdiff_t n) {
    static_assert(Bits == 4 || Bits == 2);
    constexpr int per = 8 / Bits;
    std::ptrdiff_t i = 0;
#if MIXT_SIMD_AVX512
    if constexpr (Bits == 4) {
        const __m512i m = _mm512_set1_epi16(0x0F0F);
        for (; i + 32 <= n; i += 32) {
            const __m512i w = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
            _mm512_storeu_si512(out + i * 2, _mm512_and_si512(_mm512_or_si512(w, _mm512_slli_epi16(w, 4)), m));
        }
    } else {
        const __m512i m = _mm512_set1_epi32(0x03030303);
        for (; i + 16 <= n; i += 16) {
            const __m512i w = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
            const __m512i r = _mm512_or_si512(_mm512_or_si512(w, _mm512_slli_epi32(w, 6)),
                                              _mm512_or_si512(_mm512_slli_epi32(w, 12), _mm512_slli_epi32(w, 18)));
            _mm512_storeu_si512(out + i * 4, _mm512_and_si512(r, m));
        }
    }
#endif
#if MIXT_SIMD_AVX2 // (after the 16-lane loop: its last 16 or 8 bytes)
    if constexpr (Bits == 4) {
        const __m256i m = _mm256_set1_epi16(0x0F0F);
        for (; i + 16 <= n; i += 16) {
            const __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i * 2),
                                _mm256_and_si256(_mm256_or_si256(w, _mm256_slli_epi16(w, 4)), m));
        }
    } else {
        const __m256i m = _mm256_set1_epi32(0x03030303);
        for (; i + 8 <= n; i += 8) {
            const __m256i w = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + i)));
            const __m256i r = _mm256_or_si256(_mm256_or_si256(w, _mm256_slli_epi32(w, 6)),
                                              _mm256_or_si256(_mm256_slli_epi32(w, 12), _mm256_slli_epi32(w, 18)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i * 4), _mm256_and_si256(r, m));
        }
    }
#endif
    for (; i < n; ++i)
        for (int k = 0; k < per; ++k) out[i * per + k] = detail::unpack_code<Bits>(in[i], k);
}

/// n packed bytes from the codes at in (n * 8 / Bits of them).
template <int Bits>
inline void pack_bytes(std::uint8_t* out, const std::uint8_t* in, std::ptrdiff_t n) {
    static_assert(Bits == 4 || Bits == 2);
    constexpr int per = 8 / Bits;
    std::ptrdiff_t i = 0;
#if MIXT_SIMD_AVX512
    if constexpr (Bits == 4) {
        const __m512i m = _mm512_set1_epi16(0x0F0F);
        for (; i + 32 <= n; i += 32) {
            const __m512i w = _mm512_and_si512(_mm512_loadu_si512(in + i * 2), m);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                                _mm512_cvtepi16_epi8(_mm512_or_si512(w, _mm512_srli_epi16(w, 4))));
        }
        if (i + 16 <= n) { // 16 bytes more, from 32 codes
            const __m256i w = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i * 2)),
                                               _mm256_set1_epi16(0x0F0F));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtepi16_epi8(_mm256_or_si256(w, _mm256_srli_epi16(w, 4))));
            i += 16;
        }
    } else {
        const __m512i m = _mm512_set1_epi32(0x03030303);
        for (; i + 16 <= n; i += 16) {
            const __m512i w = _mm512_and_si512(_mm512_loadu_si512(in + i * 4), m);
            const __m512i r = _mm512_or_si512(_mm512_or_si512(w, _mm512_srli_epi32(w, 6)),
                                              _mm512_or_si512(_mm512_srli_epi32(w, 12), _mm512_srli_epi32(w, 18)));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(r));
        }
    }
#elif MIXT_SIMD_AVX2
    if constexpr (Bits == 4) {
        const __m256i m = _mm256_set1_epi16(0x0F0F);
        const __m256i low = _mm256_set1_epi16(0x00FF);
        for (; i + 32 <= n; i += 32) {
            const __m256i w0 = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i * 2)), m);
            const __m256i w1 = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i * 2 + 32)), m);
            const __m256i r0 = _mm256_and_si256(_mm256_or_si256(w0, _mm256_srli_epi16(w0, 4)), low);
            const __m256i r1 = _mm256_and_si256(_mm256_or_si256(w1, _mm256_srli_epi16(w1, 4)), low);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                                _mm256_permute4x64_epi64(_mm256_packus_epi16(r0, r1), 0xD8));
        }
    } else {
        const __m256i m = _mm256_set1_epi32(0x03030303);
        const __m256i low = _mm256_set1_epi32(0xFF);
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        for (; i + 32 <= n; i += 32) {
            __m256i r[4];
            for (int q = 0; q < 4; ++q) {
                const __m256i w =
                    _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i * 4 + q * 32)), m);
                const __m256i v = _mm256_or_si256(_mm256_or_si256(w, _mm256_srli_epi32(w, 6)),
                                                  _mm256_or_si256(_mm256_srli_epi32(w, 12), _mm256_srli_epi32(w, 18)));
                r[q] = _mm256_and_si256(v, low);
            }
            const __m256i a = _mm256_packus_epi32(r[0], r[1]);
            const __m256i b = _mm256_packus_epi32(r[2], r[3]);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                                _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, b), order));
        }
    }
#endif
    for (; i < n; ++i) out[i] = detail::pack_codes<Bits>(in + i * per);
}

} // namespace mixt::simd

#endif // MIXT_SIMD_PACKED_HPP
