#ifndef MIXT_SIMD_COLUMNS_HPP
#define MIXT_SIMD_COLUMNS_HPP

// Columns of a few rows in AVX2 registers: the reductions along short rows without AVX-512
// (eval/reduce_rows.hpp) fold several rows side by side, a row per lane, and so need each column of those
// rows as one vector. The rows are read by plain loads, a row per register, and turned into columns by a
// transpose in registers (unpacks within 128-bit halves, shuffles, and permutes across the halves):
//   - columns_of_8_rows: 8 rows of up to 8 floats (the last ones of a row by a masked load, which reads
//     nothing past the row), into 8 vectors of 8 lanes, column j's value of row k in lane k of columns[j];
//   - columns_of_4_rows: 4 rows of 4 doubles into 4 vectors of 4 lanes, the same way.
// The AVX-512 versions, for 16 rows, are simd::wide::detail::transpose_rows (wide.hpp).

#include <cstddef>

#include "mixt/simd/arch.hpp"
#include "mixt/simd/batch.hpp"

#if MIXT_SIMD_AVX2 && !defined(__CUDACC__)
#include <immintrin.h>

namespace mixt::simd {

/// Columns 0 to 7 of the 8 rows at p, p + stride, ..., p + 7 * stride (floats apart): columns[j] holds value j of
/// row k in lane k. Only the first `cols` (1 to 8) values of each row are read; the columns past them are zero.
MIXT_ALWAYS_INLINE void columns_of_8_rows(const float* p, std::ptrdiff_t stride, int cols, __m256 (&columns)[8]) noexcept {
    __m256 v[8];
    if (cols == 8) {
        MIXT_UNROLLED
        for (int k = 0; k < 8; ++k) v[k] = _mm256_loadu_ps(p + k * stride);
    } else {
        const __m256i mask = detail::lane_index_mask(cols);
        MIXT_UNROLLED
        for (int k = 0; k < 8; ++k) v[k] = _mm256_maskload_ps(p + k * stride, mask);
    }
    // Pairs of rows interleaved (t), then quadruples (u), each 128-bit half on its own; the halves' columns
    // 0-3 and 4-7 are then joined across the halves.
    const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
    const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
    const __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
    const __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
    columns[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    columns[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    columns[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    columns[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    columns[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    columns[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    columns[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    columns[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/// Columns 0 to 3 of the 4 rows at p, p + stride, p + 2 * stride, p + 3 * stride (doubles apart): columns[j]
/// holds value j of row k in lane k.
MIXT_ALWAYS_INLINE void columns_of_4_rows(const double* p, std::ptrdiff_t stride, __m256d (&columns)[4]) noexcept {
    const __m256d r0 = _mm256_loadu_pd(p), r1 = _mm256_loadu_pd(p + stride), r2 = _mm256_loadu_pd(p + 2 * stride),
                  r3 = _mm256_loadu_pd(p + 3 * stride);
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    columns[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    columns[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    columns[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    columns[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

} // namespace mixt::simd

#endif // MIXT_SIMD_AVX2 && !defined(__CUDACC__)

#endif // MIXT_SIMD_COLUMNS_HPP
