#ifndef MIXT_EVAL_REDUCE_ROWS_HPP
#define MIXT_EVAL_REDUCE_ROWS_HPP

// The CPU's reductions of short rows and of f16/bf16 rows by argmin/argmax: many output rows at a time, folded
// side by side into the lanes and the end of block that the stream's fold (eval/reduce_stream.hpp) would make,
// so the same bits (reduce_strategy::short_rows_across, short_rows_in_blocks, first_extremes), or, where the
// result does not depend on the grouping, each row in one vector in memory order (short_rows_in_order).

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/dtype/convert.hpp"
#include "mixt/eval/pool.hpp"
#include "mixt/eval/reduce_plan.hpp"
#include "mixt/eval/reduce_stream.hpp"
#include "mixt/simd/arch.hpp"
#include "mixt/simd/columns.hpp"
#include "mixt/simd/ops.hpp"

namespace mixt::detail {

#if MIXT_SIMD_AVX512
/// argmin/argmax (Op) of the rows of one f16 or bf16 array `x`, each row one contiguous run of `n` values at
/// x + base(row): with_first_extreme_key over the row's first multiple of 32 values, then the others one by
/// one, each row's index stored at out + out_offset(row). It skips the stream's lanes, blocks and per-row
/// set-up, a large part of the time for rows of a few thousand values (docs/performance-notes.md, "R6"). A scan
/// may prefetch up to `ahead_end` (the end of the array where the rows are read in memory order; else null).
template <class Op, class T, class O, class Rows, class Device>
void first_extremes_of_rows(const T* x, index_t n, index_t rows, const Rows& row_bases, O* out,
                            const void* ahead_end, const Device& device, int threads) {
    const index_t vectored = n / lane_group * lane_group;
    run_reduce_tasks(rows, device, threads, [&](index_t first, index_t last) {
        for (index_t row = first; row < last; ++row) {
            const auto [base, out_off] = row_bases(row);
            const T* const p = x + base[0];
            auto best = with_first_extreme_key<Op, T>(Op::identity(), p, vectored, 0, ahead_end);
            for (index_t j = vectored; j < n; ++j) best = Op::combine(best, Op::from(mixt::convert<float>(p[j]), j));
            out[out_off] = static_cast<O>(best.i);
        }
    });
}
#endif

/// A stream's values stored in order from stream element `first` on (reduce_source::run's sink): each run
/// computed straight into its place.
template <class A>
struct copy_sink {
    A* values;
    index_t first;
    A* place(index_t s0) const { return values + (s0 - first); }
};

/// Whether fold_rows_across turns rows into columns in registers (AVX-512, lanes of 4 or 8 bytes that
/// fold_vectors takes), and so takes rows of any length up to a block; otherwise rows of at most lane_group values.
template <class Op, class A>
inline constexpr bool transposes_rows_v =
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    folds_batches_v<Op, A>; // (lanes of 4 or 8 bytes)
#else
    false;
#endif

/// Whether the sums of floats along rows longer than lane_group, read in place from the operand, are turned into
/// columns in registers (fold_rows_across, where transposes_rows_v) rather than folded a row at a time in memory order
/// with the stream's lanes (end_rows_of_one_block). The transposition reads 16 rows at once (8 of 8-byte lanes), each
/// at a stride of a whole row, a column of 16 (8) values at a time: on AMD CPUs the hardware prefetcher does not follow
/// that order through a page, and from DRAM the rows then took several times the hand loop's time, while read in memory
/// order they run ahead of it; on Intel CPUs the transposition was as fast from DRAM and faster from L2
/// (docs/performance-notes.md, "Short rows by CPU family" and "Which short-row choices depend on the vendor"). Decided
/// once per program from the CPU's vendor (simd::running_on_amd); MIXT_TRANSPOSE_LONG_ROWS=0 or 1 decides it at compile
/// time instead. Rows computed into a buffer first are transposed everywhere (in L1, where the order costs nothing).
/// Rows whose result does not depend on the grouping (rows_folded_in_order, eval/reduce.hpp) and rows of a narrower
/// integer (fold_widened_rows_across, sum_byte_rows_across) are read in memory order on every CPU: both families
/// measured them faster so.
inline bool long_rows_transposed() noexcept {
#if defined(MIXT_TRANSPOSE_LONG_ROWS)
    return MIXT_TRANSPOSE_LONG_ROWS != 0;
#else
    return !simd::running_on_amd();
#endif
}

/// How far ahead of the rows it folds side by side a fold that reads them in place asks for the operand's lines
/// (prefetch_rows_ahead, bytes), and from what size of operand (rows_prefetched).
inline constexpr std::size_t rows_prefetch_ahead = 4096;
inline constexpr std::size_t rows_prefetch_threshold_bytes = std::size_t{4} << 20;

/// Whether the folds that turn rows of at most lane_group values into columns in registers (fold_rows_across,
/// first_extremes_side_by_side), reading them in place from an operand of `bytes` bytes (one dense array read whole:
/// plan_reduction asks, where it has an `ahead_end`), ask for the lines rows_prefetch_ahead past the rows they fold:
/// on AMD CPUs, for operands of rows_prefetch_threshold_bytes or more.
/// There the hardware prefetcher alone left such a fold, which reads a burst of 16 lines and then works in
/// registers, at the speed of a plain loop from DRAM, and the prefetches made it faster; below that size they
/// only cost (the figures: docs/performance-notes.md, "Masked loads from memory, and rows prefetched"). Not measured on other
/// vendors: none there. MIXT_PREFETCH_ROWS=0 or 1 decides the vendor's part at compile time; MIXT_SOFTWARE_PREFETCH=0
/// turns it off with every other software prefetch.
inline bool rows_prefetched(std::size_t bytes) noexcept {
    if (bytes < rows_prefetch_threshold_bytes) return false;
#if defined(MIXT_PREFETCH_ROWS)
    return MIXT_PREFETCH_ROWS != 0;
#else
    return simd::running_on_amd();
#endif
}

/// Asks for the cache lines of the `bytes` bytes rows_prefetch_ahead past p, for reading (prefetch_span).
MIXT_ALWAYS_INLINE void prefetch_rows_ahead(const void* p, std::size_t bytes) noexcept {
    prefetch_span<false>(reinterpret_cast<std::uintptr_t>(p) + rows_prefetch_ahead, bytes);
}

/// Whether fold_rows_across folds a row at a time in memory order, each row's lane its values combined in order
/// from the identity (the operations and order of the lanes side by side, without their strided reads and a
/// group's accumulators in memory): without AVX-512, sums, means, products and integer lanes, faster so on an
/// AVX2 CPU; min and max of floats stay in vectors (extremes_across_v with AVX2, fold_vectors' keys without), a
/// row at a time being a compare and a branch per value (docs/performance-notes.md, "Short rows without
/// AVX-512").
template <class Op, class A>
inline constexpr bool folds_rows_one_at_a_time_v =
#if !MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    Op::kind == reduce_kind::sum || Op::kind == reduce_kind::mean || Op::kind == reduce_kind::prod ||
    std::is_integral_v<typename Op::lane>;
#else
    false;
#endif

/// Whether fold_rows_across sums rows of floats 8 side by side, their columns turned into vectors by transposes
/// in registers (fold_float_rows_transposed), where the target has AVX2 and not AVX-512 and the rows hold
/// short_rows_transposed_min to lane_group values: on AMD's family 19h (Zen 3), where they measured faster than a
/// row at a time (each row one chain of dependent adds); not on Zen 2, where they were not, nor elsewhere, where they
/// were not measured (the figures: docs/performance-notes.md, "Short rows without AVX-512" and "Float rows
/// transposed with AVX2"). Decided once per program from the CPU's
/// family (simd::running_amd_family); MIXT_TRANSPOSE_SHORT_ROWS=0 or 1 decides it at compile time instead.
inline bool short_rows_transposed() noexcept {
#if defined(MIXT_TRANSPOSE_SHORT_ROWS)
    return MIXT_TRANSPOSE_SHORT_ROWS != 0;
#else
    return simd::running_amd_family() == 0x19;
#endif
}
/// The shortest rows short_rows_transposed applies to: shorter ones fill too few of a transpose's columns.
inline constexpr index_t short_rows_transposed_min = 8;

/// Whether fold_float_rows_transposed folds Op's rows of A: sums and means of f32.
template <class Op, class A>
inline constexpr bool float_rows_transposed_v =
#if MIXT_SIMD_AVX2 && !MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    (Op::kind == reduce_kind::sum || Op::kind == reduce_kind::mean) && std::is_same_v<A, float> &&
    std::is_same_v<typename Op::lane, float>;
#else
    false;
#endif

#if MIXT_SIMD_AVX2 && !MIXT_SIMD_AVX512 && !defined(__CUDACC__)
/// The sums of `rows` rows (a multiple of 8) of n floats each, row r's at x + r * n, into out[r]: each row's values
/// added in order from +0, as a row at a time adds them, 8 rows side by side (a row per lane). Each 8 columns of 8
/// rows are loaded (the last ones of a row masked: nothing past it is read), turned into 8 vectors of one column
/// each by an 8 x 8 transpose (unpacks, shuffles and lane permutes), and added in column order. The same bits as
/// a row at a time: the same adds in the same order per lane.
template <class Op>
MIXT_FLATTEN void fold_float_rows_transposed(const float* __restrict x, index_t n, index_t rows, float* __restrict out) {
    for (index_t r = 0; r < rows; r += 8) {
        const float* const xr = x + r * n;
        __m256 acc = _mm256_setzero_ps();
        for (index_t c0 = 0; c0 < n; c0 += 8) {
            const int cols = static_cast<int>(std::min<index_t>(8, n - c0));
            __m256 columns[8];
            simd::columns_of_8_rows(xr + c0, n, cols, columns);
            MIXT_UNROLLED
            for (int j = 0; j < 8; ++j)
                if (j < cols) acc = _mm256_add_ps(acc, columns[j]);
        }
        _mm256_storeu_ps(out + r, acc);
    }
}
#endif

/// Whether fold_rows_across folds rows side by side in AVX2 vectors (fold_extremes_across), where the target has
/// AVX2 and not AVX-512: min and max of f32 and f64, whose combine of two lanes is the functors' vector
/// minimum/maximum (simd/ops_avx2.hpp: a NaN first, the first operand's; else the smaller or larger; -0 below
/// +0); rows of any length up to short_row_stream (choose_reduce_strategy), whose result does not depend on how
/// the stream would have grouped their values (stream_fold::grouping_free) but for which NaN (README, "NaN").
template <class Op, class A>
inline constexpr bool extremes_across_v =
#if MIXT_SIMD_AVX2 && !MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    (Op::kind == reduce_kind::min || Op::kind == reduce_kind::max) &&
    (std::is_same_v<A, float> || std::is_same_v<A, double>) && std::is_same_v<typename Op::lane, A>;
#else
    false;
#endif

/// The longest rows fold_rows_across folds with their count of values known at compile time (their columns
/// picked out of the rows' plain loads by simd::wide::columns_of_short_rows, where transposes_rows_v).
inline constexpr index_t short_row_columns = 4;

/// Whether rows of n values of S summed in A are summed 8 bytes at a time, side by side (sum_byte_rows_across):
/// with AVX2 or AVX-512, sums of i8 or u8 in 8-byte lanes, rows of 8, 16, 24 or 32 values (not mean: not
/// measured).
template <class Op, class A, class S>
constexpr bool byte_rows_summed_across(index_t n) {
#if MIXT_SIMD_AVX2 && !defined(__CUDACC__)
    if constexpr (Op::kind == reduce_kind::sum && is_int_v<A> && sizeof(A) == 8 &&
                  (std::is_same_v<S, std::int8_t> || std::is_same_v<S, std::uint8_t>))
        return n % 8 == 0 && n >= 8 && n <= 32;
#endif
    (void)n;
    return false;
}

/// Whether short_rows_across reads rows of n values of S (a narrower integer than A) in place and widens or sums
/// them in registers (fold_widened_rows_across): rows of 2 to short_row_columns values where transposes_rows_v,
/// and byte_rows_summed_across.
template <class Op, class A, class S>
constexpr bool rows_widened_across(index_t n) {
    return (transposes_rows_v<Op, A> && n >= 2 && n <= short_row_columns) || byte_rows_summed_across<Op, A, S>(n);
}

#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
/// The sums of groups of lane_group rows of 8N bytes S (N 1 to 4; byte_rows_summed_across) one after another,
/// into lanes of 8 bytes: 8 rows at a time, N plain loads, each byte's sum of 8 by vpsadbw (against zero: the
/// sum of 8 unsigned bytes; a signed byte's bits flipped at 0x80 first, v + 128, and 128 per value taken off the
/// row's sum), then the row's N sums of 8 picked out as columns (simd::wide::columns_of_short_rows) and added.
/// Exact, as the stream's lanes sum (an integer sum does not depend on the grouping).
template <class Op, class A, int N, class S>
MIXT_ALWAYS_INLINE void sum_byte_rows_across(const S* __restrict x, index_t groups, typename Op::lane* __restrict out) {
    constexpr bool flip = std::is_signed_v<S>;
    const __m512i zero = _mm512_setzero_si512(), sign = _mm512_set1_epi8(static_cast<char>(0x80));
    const __m512i bias = _mm512_set1_epi64(flip ? 128 * 8 * N : 0);
    for (index_t q = 0; q < groups * (lane_group / 8); ++q) {
        const S* const p = x + q * 64 * N;
        __m512i r[N];
        MIXT_UNROLLED
        for (int k = 0; k < N; ++k) {
            __m512i b = _mm512_loadu_si512(p + 64 * k);
            if constexpr (flip) b = _mm512_xor_si512(b, sign);
            r[k] = _mm512_sad_epu8(b, zero);
        }
        __m512i sum = r[0];
        if constexpr (N > 1) {
            __m512i columns[8];
            simd::wide::columns_of_short_rows<N, std::uint64_t>(r, columns);
            sum = columns[0];
            MIXT_UNROLLED
            for (int j = 1; j < N; ++j) sum = _mm512_add_epi64(sum, columns[j]);
        }
        if constexpr (flip) sum = _mm512_sub_epi64(sum, bias);
        _mm512_storeu_si512(out + q * 8, sum);
    }
}

/// fold_rows_across of rows of N values (2 to short_row_columns) of S one after another: the same values,
/// folded in the same order, with the count of values a constant, so that the columns stay in registers and the
/// loop over them is unrolled. S is A, or an integer narrower than an integer A of 4 or 8 bytes
/// (in_order_source_t), each vector of it sign- or zero-extended to lanes of A as it is loaded.
template <class Op, class A, int N, class S = A>
MIXT_ALWAYS_INLINE void fold_short_rows_across(const S* __restrict x, index_t groups, typename Op::lane* __restrict out) {
    using lane = typename Op::lane;
    typedef lane vec __attribute__((vector_size(64)));
    constexpr index_t rows_per = 64 / sizeof(lane);
    for (index_t g = 0; g < groups; ++g) {
        lane* const l = out + g * lane_group;
        std::fill_n(l, lane_group, Op::identity());
        fold_vectors<Op, A, lane_group / rows_per>(l, static_cast<const vec*>(nullptr), [&](auto&& visit) {
            MIXT_UNROLLED
            for (index_t v = 0; v < lane_group / rows_per; ++v) {
                const S* const p = x + (g * lane_group + v * rows_per) * N;
                __m512i r[N], columns[rows_per];
                MIXT_UNROLLED
                for (int k = 0; k < N; ++k) {
                    if constexpr (std::is_same_v<S, A>)
                        r[k] = _mm512_loadu_si512(p + rows_per * k);
                    else
                        r[k] = simd::wide::widen_to_lanes<A, S>(p + rows_per * k);
                }
                simd::wide::columns_of_short_rows<N, lane>(r, columns);
                MIXT_UNROLLED
                for (int j = 0; j < N; ++j) {
                    vec xv;
                    std::memcpy(&xv, &columns[j], sizeof(vec)); // A's bits are the lane's
                    visit(v, xv);
                }
            }
        });
    }
}

/// fold_short_rows_across with the rows' count n as a constant, where n is 2 to short_row_columns; false
/// (nothing folded) for another n.
template <class Op, class A, class S>
MIXT_ALWAYS_INLINE bool fold_short_rows_of_count(const S* __restrict x, index_t n, index_t groups,
                                                 typename Op::lane* __restrict out) {
    static_assert(short_row_columns == 4, "mixt: a case for each count of values");
    switch (n) {
    case 2: fold_short_rows_across<Op, A, 2, S>(x, groups, out); return true;
    case 3: fold_short_rows_across<Op, A, 3, S>(x, groups, out); return true;
    case 4: fold_short_rows_across<Op, A, 4, S>(x, groups, out); return true;
    default: return false;
    }
}

#elif MIXT_SIMD_AVX2 && !defined(__CUDACC__)
/// The sums of groups of lane_group rows of 8N bytes S (N 1 to 4; byte_rows_summed_across) one after another,
/// into lanes of 8 bytes, with AVX2: 4 rows at a time, N plain loads of 32 bytes, each 8 bytes' sum by vpsadbw
/// (against zero: the sum of 8 unsigned bytes; a signed byte's bits flipped at 0x80 first, v + 128, and 128 per
/// value taken off the row's sum), then each row's N sums of 8 (in consecutive 8-byte lanes) added. Exact, as the
/// stream's lanes sum (an integer sum does not depend on the grouping).
template <class Op, class A, int N, class S>
MIXT_ALWAYS_INLINE void sum_byte_rows_across(const S* __restrict x, index_t groups, typename Op::lane* __restrict out) {
    constexpr bool flip = std::is_signed_v<S>;
    const __m256i zero = _mm256_setzero_si256(), sign = _mm256_set1_epi8(static_cast<char>(0x80));
    const __m256i bias = _mm256_set1_epi64x(flip ? 128 * 8 * N : 0);
    for (index_t q = 0; q < groups * (lane_group / 4); ++q) {
        const S* const p = x + q * 32 * N;
        __m256i r[N];
        MIXT_UNROLLED
        for (int k = 0; k < N; ++k) {
            __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * k));
            if constexpr (flip) b = _mm256_xor_si256(b, sign);
            r[k] = _mm256_sad_epu8(b, zero);
        }
        __m256i sum;
        if constexpr (N == 1) {
            sum = r[0];
        } else if constexpr (N == 2) { // r[0] = (r0a r0b r1a r1b), r[1] = (r2a r2b r3a r3b)
            const __m256i halves = _mm256_add_epi64(_mm256_unpacklo_epi64(r[0], r[1]), _mm256_unpackhi_epi64(r[0], r[1]));
            sum = _mm256_permute4x64_epi64(halves, 0xD8); // (rows 0 2 1 3 -> 0 1 2 3)
        } else if constexpr (N == 4) { // r[k] = row k's four sums
            const __m256i t0 = _mm256_add_epi64(_mm256_unpacklo_epi64(r[0], r[1]), _mm256_unpackhi_epi64(r[0], r[1]));
            const __m256i t1 = _mm256_add_epi64(_mm256_unpacklo_epi64(r[2], r[3]), _mm256_unpackhi_epi64(r[2], r[3]));
            sum = _mm256_add_epi64(_mm256_permute2x128_si256(t0, t1, 0x20), _mm256_permute2x128_si256(t0, t1, 0x31));
        } else { // (rows of 24 bytes straddle the vectors: their sums of 8 added from memory)
            alignas(32) std::uint64_t v[4 * N];
            MIXT_UNROLLED
            for (int k = 0; k < N; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(v + 4 * k), r[k]);
            sum = _mm256_set_epi64x(static_cast<long long>(v[9] + v[10] + v[11]), static_cast<long long>(v[6] + v[7] + v[8]),
                                    static_cast<long long>(v[3] + v[4] + v[5]), static_cast<long long>(v[0] + v[1] + v[2]));
        }
        if constexpr (flip) sum = _mm256_sub_epi64(sum, bias);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + q * 4), sum);
    }
}

#endif

#if MIXT_SIMD_AVX2 && !defined(__CUDACC__)
/// fold_rows_across of the rows rows_widened_across takes, read in place: sums of rows of 8, 16, 24 or 32 bytes
/// into 8-byte lanes (byte_rows_summed_across: sum_byte_rows_across of the target, AVX-512 or AVX2), and with
/// AVX-512 rows of 2 to short_row_columns values of S (an integer narrower than A) widened in registers
/// (fold_short_rows_across), where the stream would otherwise convert them into a buffer of A first.
template <class Op, class A, class S>
void fold_widened_rows_across(const S* __restrict x, index_t n, index_t groups, typename Op::lane* __restrict out) {
    if constexpr (byte_rows_summed_across<Op, A, S>(8)) {
        switch (n) {
        case 8: return sum_byte_rows_across<Op, A, 1, S>(x, groups, out);
        case 16: return sum_byte_rows_across<Op, A, 2, S>(x, groups, out);
        case 24: return sum_byte_rows_across<Op, A, 3, S>(x, groups, out);
        case 32: return sum_byte_rows_across<Op, A, 4, S>(x, groups, out);
        default: break;
        }
    }
#if MIXT_SIMD_AVX512
    [[maybe_unused]] const bool folded = fold_short_rows_of_count<Op, A>(x, n, groups, out);
    eigen_assert(folded && "mixt: rows widened in registers are of 2 to short_row_columns values or summed as bytes");
#else
    eigen_assert(false && "mixt: rows widened in registers with AVX2 alone are bytes summed 8 at a time");
#endif
}
#endif

#if MIXT_SIMD_AVX2 && !MIXT_SIMD_AVX512 && !defined(__CUDACC__)
/// The lanes of `rows` rows (a multiple of 8) of n values of A one after another (extremes_across_v): 8 rows of
/// f32 or 4 of f64 side by side, a row per vector lane, value j of each row gathered into one vector (for f64, 4
/// columns at a time by a transpose of the 4 rows' vectors), and each row's lane its values combined in order
/// from the identity (the identity combined with a value gives that value's bits): the stream's lanes.
template <class Op, class A>
void fold_extremes_across(const A* __restrict x, index_t n, index_t rows, A* __restrict out) {
    using F = std::conditional_t<Op::kind == reduce_kind::min, minimum_fn, maximum_fn>;
    if constexpr (std::is_same_v<A, double>) {
        const index_t blocks = n / 4 * 4; // (columns taken 4 at a time, by a transpose of the 4 rows' vectors)
        const __m256d identity = _mm256_set1_pd(Op::identity());
        for (index_t r = 0; r < rows; r += 4) {
            const double* const p = x + r * n;
            __m256d acc = identity;
            index_t j = 0;
            for (; j < blocks; j += 4) {
                __m256d columns[4];
                simd::columns_of_4_rows(p + j, n, columns);
                for (const __m256d& c : columns) acc = simd::detail::minmax_pd<F>(acc, c);
            }
            for (; j < n; ++j)
                acc = simd::detail::minmax_pd<F>(acc, _mm256_set_pd(p[3 * n + j], p[2 * n + j], p[n + j], p[j]));
            _mm256_storeu_pd(out + r, acc);
        }
    } else {
        const __m256 identity = _mm256_set1_ps(Op::identity());
        for (index_t r = 0; r < rows; r += 8) {
            const float* const p = x + r * n;
            __m256 acc = identity;
            for (index_t j = 0; j < n; ++j)
                acc = simd::detail::minmax_ps<F>(acc, _mm256_set_ps(p[7 * n + j], p[6 * n + j], p[5 * n + j], p[4 * n + j],
                                                                    p[3 * n + j], p[2 * n + j], p[n + j], p[j]));
            _mm256_storeu_ps(out + r, acc);
        }
    }
}
#endif

/// The results of `groups` groups of lane_group rows of n values each (at most one block; at most lane_group
/// unless transposes_rows_v or extremes_across_v), row r's at x + r * n, as the stream's fold makes them: value j into lane
/// j % lane_group, in order, from the identity, then lane 0 combined with lanes 1, 2, ... in that order
/// (stream_fold::end_block), the lanes no value reached left out (combining a lane that started at the
/// identity with the identity gives the same bits: a float sum is never -0 then, a product keeps its NaN,
/// min and max their value). The rows are folded side by side, a row per vector lane: 16 rows (of 4-byte lanes)
/// or 8 (of 8-byte ones) at a time turned into columns in registers (simd::wide::rows_as_columns) where
/// transposes_rows_v (rows of 2 to short_row_columns values by fold_short_rows_across, their count a
/// constant); with AVX2 alone, min and max of f32 and f64 by fold_extremes_across (rows of any length:
/// extremes_across_v), and sums, products and integer lanes a row at a time (folds_rows_one_at_a_time_v); else,
/// for rows of at most lane_group values (one value per lane: the lanes' end is the values combined in order
/// from the identity), each value of 32 rows at once, in vectors or one by one.
template <class Op, class A>
MIXT_FLATTEN void fold_rows_across(const A* __restrict x, index_t n, index_t groups, typename Op::lane* __restrict out,
                                   bool ahead = false) {
    using lane = typename Op::lane;
    const index_t used = std::min(n, lane_group);
    (void)ahead; // (only the transposing fold prefetches)
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    if constexpr (transposes_rows_v<Op, A>) {
        typedef lane vec __attribute__((vector_size(64)));
        constexpr index_t rows_per = 64 / sizeof(lane); // the rows a transpose turns into columns: 16 or 8
        if (n <= lane_group) { // one value per lane: the values of each row combined in order, from the identity
            // Rows one after another, their count of values a constant.
            if (n <= short_row_columns && fold_short_rows_of_count<Op, A>(x, n, groups, out)) return;
            for (index_t g = 0; g < groups; ++g) {
                lane* const l = out + g * lane_group;
                if (ahead) prefetch_rows_ahead(x + g * lane_group * n, lane_group * n * sizeof(A));
                std::fill_n(l, lane_group, Op::identity());
                fold_vectors<Op, A, lane_group / rows_per>(l, static_cast<const vec*>(nullptr), [&](auto&& visit) {
                    for (index_t v = 0; v < lane_group / rows_per; ++v)
                        for (index_t c0 = 0; c0 < n; c0 += rows_per) {
                            const int cols = static_cast<int>(std::min(rows_per, n - c0));
                            __m512i columns[rows_per];
                            simd::wide::rows_as_columns(x + (g * lane_group + v * rows_per) * n + c0, n, cols, columns);
                            for (int j = 0; j < cols; ++j) {
                                vec xv;
                                std::memcpy(&xv, &columns[j], sizeof(vec)); // A's bits are the lane's
                                visit(v, xv);
                            }
                        }
                });
            }
            return;
        }
        alignas(64) lane lanes[lane_group * rows_per]; // lane p of row r at lanes[p * rows_per + r]
        for (index_t q = 0; q < groups * (lane_group / rows_per); ++q) {
            const A* const xq = x + q * rows_per * n;
            std::fill_n(lanes, lane_group * rows_per, Op::identity());
            fold_vectors<Op, A, lane_group>(lanes, static_cast<const vec*>(nullptr), [&](auto&& visit) {
                for (index_t c0 = 0; c0 < n; c0 += rows_per) {
                    const int cols = static_cast<int>(std::min(rows_per, n - c0));
                    __m512i columns[rows_per];
                    simd::wide::rows_as_columns(xq + c0, n, cols, columns);
                    for (int j = 0; j < cols; ++j) {
                        vec xv;
                        std::memcpy(&xv, &columns[j], sizeof(vec)); // A's bits are the lane's
                        visit((c0 + j) % lane_group, xv);
                    }
                }
            });
            lane* const r = out + q * rows_per;
            std::copy_n(lanes, rows_per, r);
            fold_vectors<Op, A, 1>(r, static_cast<const vec*>(nullptr), [&](auto&& visit) {
                for (index_t p = 1; p < used; ++p) {
                    vec lv;
                    std::memcpy(&lv, lanes + p * rows_per, sizeof(vec));
                    visit(0, lv);
                }
            });
        }
        return;
    }
#endif
#if MIXT_SIMD_AVX2 && !MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    if constexpr (extremes_across_v<Op, A>) return fold_extremes_across<Op>(x, n, groups * lane_group, out);
#endif
    eigen_assert(n <= lane_group);
    (void)used;
    if constexpr (folds_rows_one_at_a_time_v<Op, A>) {
#if MIXT_SIMD_AVX2 && !MIXT_SIMD_AVX512 && !defined(__CUDACC__)
        if constexpr (float_rows_transposed_v<Op, A>)
            if (n >= short_rows_transposed_min && short_rows_transposed())
                return fold_float_rows_transposed<Op>(x, n, groups * lane_group, out);
#endif
        for (index_t r = 0; r < groups * lane_group; ++r) {
            const A* const xr = x + r * n;
            lane acc = Op::identity();
            for (index_t j = 0; j < n; ++j) acc = Op::combine(acc, Op::from(xr[j], 0));
            out[r] = acc;
        }
        return;
    }
    for (index_t g = 0; g < groups; ++g) {
        lane* const l = out + g * lane_group;
        const A* const xg = x + g * lane_group * n;
#if !defined(__CUDACC__) // nvcc's host compiler fails (a segmentation fault) on these vectors; its code takes the loop
        if constexpr (folds_batches_v<Op, A>) { // in vectors; min/max of floats as keys (fold_vectors)
            typedef lane vec __attribute__((vector_size(simd::fold_vector_bytes)));
            constexpr index_t per_vec = simd::fold_vector_bytes / sizeof(lane), count = lane_group / per_vec;
            fold_vectors<Op, A, count, false, true>(l, static_cast<const vec*>(nullptr), [&](auto&& visit) {
                for (index_t j = 0; j < n; ++j)
                    for (index_t v = 0; v < count; ++v) {
                        vec xv;
                        const A* const column = xg + v * per_vec * n + j;
                        alignas(64) A t[per_vec]; // (without AVX-512: with it, transposes_rows_v)
                        for (index_t k = 0; k < per_vec; ++k) t[k] = column[k * n];
                        std::memcpy(&xv, t, sizeof(vec));
                        visit(v, xv);
                    }
            });
            continue;
        }
#endif
        for (index_t p = 0; p < lane_group; ++p) l[p] = Op::identity();
        for (index_t j = 0; j < n; ++j)
            for (index_t p = 0; p < lane_group; ++p) l[p] = Op::combine(l[p], Op::from(xg[p * n + j], 0));
    }
}

/// Whether first_extremes_across compares rows side by side in registers (AVX-512): 16 rows of a 4-byte type or 8
/// of an 8-byte one (f32, f64, and integers of 4 and 8 bytes; longer rows of an 8-byte type each in 8 lanes,
/// first_extreme_in_lanes); integers of 1 or 2 bytes and bools are widened to i32 first (widens_rows_across_v);
/// other types and targets scan each row in turn (first_extreme_of_row).
template <class Op, class A>
inline constexpr bool indexes_rows_across_v =
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    Op::indexed && (std::is_same_v<A, float> || std::is_same_v<A, double> ||
                    (is_int_v<A> && (sizeof(A) == 4 || sizeof(A) == 8)));
#else
    false;
#endif

/// Whether argmin/argmax of A (an integer of 1 or 2 bytes, or bool) compares rows side by side as i32 values:
/// each stretch of rows widened to i32 in a buffer (sign- or zero-extended, which keeps their order), then the
/// 4-byte path (indexes_rows_across_v), faster than a row at a time (docs/performance-notes.md, "1- and 2-byte
/// types widened to i32").
template <class Op, class A>
inline constexpr bool widens_rows_across_v =
    Op::indexed && indexes_rows_across_v<Op, std::int32_t> &&
    (std::is_same_v<A, bool> || (is_int_v<A> && sizeof(A) <= 2));

#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
/// The lanes of `v` (a column of rows, A's bits) that are more extreme than `best` for Op: strictly greater
/// (argmax) or less (argmin), or a NaN where best is not one (the first NaN stays).
template <class Op, class A>
auto more_extreme_lanes(__m512i v, __m512i best) {
    constexpr bool min = Op::kind == reduce_kind::argmin;
    if constexpr (std::is_same_v<A, float>) {
        const __m512 a = _mm512_castsi512_ps(v), b = _mm512_castsi512_ps(best);
        return static_cast<__mmask16>(_mm512_cmp_ps_mask(a, b, min ? _CMP_LT_OQ : _CMP_GT_OQ) |
                                      _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(b, b, _CMP_ORD_Q), a, a, _CMP_UNORD_Q));
    } else if constexpr (std::is_same_v<A, double>) {
        const __m512d a = _mm512_castsi512_pd(v), b = _mm512_castsi512_pd(best);
        return static_cast<__mmask8>(_mm512_cmp_pd_mask(a, b, min ? _CMP_LT_OQ : _CMP_GT_OQ) |
                                     _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(b, b, _CMP_ORD_Q), a, a, _CMP_UNORD_Q));
    } else {
        constexpr int cmp = min ? _MM_CMPINT_LT : _MM_CMPINT_NLE;
        if constexpr (sizeof(A) == 4)
            return std::is_signed_v<A> ? _mm512_cmp_epi32_mask(v, best, cmp) : _mm512_cmp_epu32_mask(v, best, cmp);
        else
            return std::is_signed_v<A> ? _mm512_cmp_epi64_mask(v, best, cmp) : _mm512_cmp_epu64_mask(v, best, cmp);
    }
}
#endif

/// argmin/argmax (Op) of the n values of one row at x: its first extreme value and that value's index (a NaN is
/// more extreme than any number: the row's first NaN). One compare per value, taken without a branch (random
/// values would mispredict it), NaNs noted on the way and searched for only in a row that has one: the plain
/// loop a user would write (a stream's lanes cost more than such a row's values, short_index_row_stream).
template <class Op, class A>
typename Op::lane first_extreme_of_row(const A* __restrict x, index_t n) {
    A best = x[0];
    index_t at = 0;
    bool nan = reduce_is_nan(best);
    for (index_t j = 1; j < n; ++j) {
        const A v = x[j];
        const bool more = Op::kind == reduce_kind::argmin ? v < best : best < v;
        best = more ? v : best;
        at = more ? j : at;
        nan = nan || reduce_is_nan(v);
    }
    if (nan)
        for (index_t j = 0; j < n; ++j)
            if (reduce_is_nan(x[j])) return Op::from(x[j], j);
    return Op::from(best, at);
}

#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
/// The first extremes of `subgroups` groups of 16 rows of a 4-byte type or 8 of an 8-byte one (indexes_rows_across_v),
/// n values a row, side by side: `take(row0, best, at)` receives each group's values (A's bits) and indices (i32
/// lanes for a 4-byte type, i64 for an 8-byte one).
template <class Op, class A, class Take>
MIXT_FLATTEN void first_extremes_side_by_side(const A* __restrict x, index_t n, index_t subgroups, Take&& take,
                                              bool ahead = false) {
    constexpr index_t rows_per = 64 / sizeof(A);
    for (index_t q = 0; q < subgroups; ++q) {
        if (ahead) prefetch_rows_ahead(x + q * rows_per * n, static_cast<std::size_t>(rows_per * n) * sizeof(A));
        __m512i best = _mm512_setzero_si512(), at = _mm512_setzero_si512();
        for (index_t c0 = 0; c0 < n; c0 += rows_per) {
            const int cols = static_cast<int>(std::min(rows_per, n - c0));
            __m512i columns[rows_per];
            simd::wide::rows_as_columns(x + q * rows_per * n + c0, n, cols, columns);
            for (int j = 0; j < cols; ++j) {
                using mask = decltype(more_extreme_lanes<Op, A>(best, best));
                const mask more = c0 + j == 0 ? static_cast<mask>(-1) : more_extreme_lanes<Op, A>(columns[j], best);
                if constexpr (sizeof(A) == 4) {
                    best = _mm512_mask_mov_epi32(best, more, columns[j]);
                    at = _mm512_mask_mov_epi32(at, more, _mm512_set1_epi32(static_cast<int>(c0 + j)));
                } else {
                    best = _mm512_mask_mov_epi64(best, more, columns[j]);
                    at = _mm512_mask_mov_epi64(at, more, _mm512_set1_epi64(c0 + j));
                }
            }
        }
        take(q * rows_per, best, at);
    }
}

/// Op's lanes out[0, 64 / sizeof(V)) from one group of first_extremes_side_by_side over values of V (A, or i32 for
/// rows widened from A): the values `best` (V's bits) and their indices `at` (i32 lanes for a 4-byte V, i64 for 8).
template <class Op, class A, class V = A>
void store_first_extremes(typename Op::lane* __restrict out, __m512i best, __m512i at) {
    static_assert(sizeof(V) == 4 || sizeof(V) == 8);
    constexpr index_t rows_per = 64 / sizeof(V);
    alignas(64) V values[rows_per];
    alignas(64) std::conditional_t<sizeof(V) == 4, std::int32_t, std::int64_t> indices[rows_per];
    _mm512_store_si512(values, best);
    _mm512_store_si512(indices, at);
    for (index_t r = 0; r < rows_per; ++r) out[r] = Op::from(static_cast<A>(values[r]), indices[r]);
}
/// The index of the first extreme value (Op) of one row of n >= 8 values of an 8-byte type (indexes_rows_across_v),
/// in 8 lanes: lane k keeps the first extreme of values k, k + 8, k + 16, ... (more_extreme_lanes, as side by
/// side), then the lanes are combined: the smallest index among the lanes that hold a NaN, else among those equal
/// to the most extreme value (-0 and +0 alike). For rows longer than across_rows_of_8_bytes, where 8 rows side by
/// side lose to a row at a time (docs/performance-notes.md, "Long rows of 8-byte types in lanes").
template <class Op, class A>
index_t first_extreme_in_lanes(const A* __restrict x, index_t n) {
    static_assert(sizeof(A) == 8);
    constexpr bool min = Op::kind == reduce_kind::argmin;
    __m512i best = _mm512_loadu_si512(x), at = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), index = at;
    const __m512i eight = _mm512_set1_epi64(8);
    const auto take = [&](__m512i v, __mmask8 in) {
        index = _mm512_add_epi64(index, eight);
        const __mmask8 more = in & more_extreme_lanes<Op, A>(v, best);
        best = _mm512_mask_mov_epi64(best, more, v);
        at = _mm512_mask_mov_epi64(at, more, index);
    };
    index_t j = 8;
    for (; j + 8 <= n; j += 8) take(_mm512_loadu_si512(x + j), 0xff);
    if (j < n) { // the last values: the lanes past the row's end neither read nor taken
        const auto in = static_cast<__mmask8>((1u << (n - j)) - 1u);
        take(_mm512_maskz_loadu_epi64(in, x + j), in);
    }
    __mmask8 pick;
    if constexpr (std::is_same_v<A, double>) {
        const __m512d b = _mm512_castsi512_pd(best);
        pick = _mm512_cmp_pd_mask(b, b, _CMP_UNORD_Q);
        if (pick == 0)
            pick = _mm512_cmp_pd_mask(b, _mm512_set1_pd(min ? _mm512_reduce_min_pd(b) : _mm512_reduce_max_pd(b)), _CMP_EQ_OQ);
    } else if constexpr (std::is_signed_v<A>) {
        pick = _mm512_cmpeq_epi64_mask(best, _mm512_set1_epi64(min ? _mm512_reduce_min_epi64(best) : _mm512_reduce_max_epi64(best)));
    } else {
        const unsigned long long m = min ? _mm512_reduce_min_epu64(best) : _mm512_reduce_max_epu64(best);
        pick = _mm512_cmpeq_epi64_mask(best, _mm512_set1_epi64(static_cast<long long>(m)));
    }
    return static_cast<index_t>(_mm512_mask_reduce_min_epi64(pick, at));
}
#endif

/// The longest rows of an 8-byte type that first_extremes_across takes side by side; longer ones go each in 8
/// lanes (first_extreme_in_lanes), faster from about 20 values on the AMD machine of the notes (4-byte types side
/// by side win at every length; docs/performance-notes.md, "Long rows of 8-byte types in lanes").
inline constexpr index_t across_rows_of_8_bytes = 16;

/// Whether first_extremes_across and first_extreme_indexes compare rows of n values of A side by side: where
/// indexes_rows_across_v, a 4-byte type at every length, an 8-byte one in rows of at most across_rows_of_8_bytes
/// (longer rows: first_extreme_in_lanes).
template <class A>
constexpr bool side_by_side_rows(index_t n) {
    return sizeof(A) == 4 || n <= across_rows_of_8_bytes;
}

/// Rows widened at a time by widened_rows (widens_rows_across_v): whole groups of widened_group (the i32 lanes
/// of first_extremes_side_by_side), about widened_values values.
inline constexpr index_t widened_group = 64 / sizeof(std::int32_t);
inline constexpr index_t widened_values = 2048;

/// widens_rows_across_v: calls take(row0, count, w) for stretches of whole groups of widened_group of the `rows` rows of n
/// values at x (the last group read whole: the caller makes it readable), each stretch's values widened to i32 at
/// w (rows that run past `rows` included).
template <class A, class Take>
void widened_rows(const A* __restrict x, index_t n, index_t rows, Take&& take) {
    constexpr index_t group = widened_group;
    const index_t per_stretch = std::max<index_t>(1, widened_values / (group * n)) * group;
    // On the stack for rows of up to widened_values / widened_group values (every short row), else on the heap.
    alignas(64) std::int32_t local[widened_values];
    std::unique_ptr<std::int32_t[]> heap;
    std::int32_t* const w = per_stretch * n <= widened_values
                                ? local
                                : (heap.reset(new std::int32_t[static_cast<std::size_t>(per_stretch * n)]), heap.get());
    for (index_t row0 = 0; row0 < rows; row0 += per_stretch) {
        const index_t count = std::min(per_stretch, rows - row0);
        const index_t values = (count + group - 1) / group * group * n;
        if constexpr (std::is_same_v<A, bool>) { // a bool's byte is 0 or 1: read as bytes, the loop vectorizes
            const auto* const from = reinterpret_cast<const unsigned char*>(x + row0 * n);
            for (index_t k = 0; k < values; ++k) w[k] = from[k];
        } else {
            const A* const from = x + row0 * n;
            for (index_t k = 0; k < values; ++k) w[k] = static_cast<std::int32_t>(from[k]);
        }
        take(row0, count, static_cast<const std::int32_t*>(w));
    }
}

/// argmin/argmax (Op) of `groups` groups of lane_group rows of n values each, row r's at x + r * n: out[r] is
/// the row's first extreme value and its index (a NaN more extreme than any number: the row's first NaN), the
/// one result every order of Op::combine gives. Where indexes_rows_across_v (for an 8-byte type, in rows of at
/// most across_rows_of_8_bytes values; longer ones each in 8 lanes, first_extreme_in_lanes), 16 or 8 rows side
/// by side, a row per vector lane, turned into columns in
/// registers (simd::wide::rows_as_columns), each column compared with the best so far and taken where it is
/// strictly more extreme (more_extreme_lanes), so that the first of equal values (-0 and +0 alike) stays; integers
/// of 1 or 2 bytes and bools the same as i32 (widens_rows_across_v); otherwise each row in turn
/// (first_extreme_of_row).
template <class Op, class A>
void first_extremes_across(const A* __restrict x, index_t n, index_t groups, typename Op::lane* __restrict out,
                           bool ahead = false) {
    (void)ahead; // (only the side-by-side compares prefetch)
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    if constexpr (indexes_rows_across_v<Op, A>) {
        if (side_by_side_rows<A>(n)) {
            constexpr index_t rows_per = 64 / sizeof(A);
            first_extremes_side_by_side<Op, A>(
                x, n, groups * (lane_group / rows_per),
                [&](index_t row0, __m512i best, __m512i at) { store_first_extremes<Op, A>(out + row0, best, at); }, ahead);
            return;
        }
        if constexpr (sizeof(A) == 8) { // longer rows of an 8-byte type: each in 8 lanes
            for (index_t r = 0; r < groups * lane_group; ++r) {
                const A* const row = x + r * n;
                const index_t i = first_extreme_in_lanes<Op, A>(row, n);
                out[r] = Op::from(row[i], i);
            }
            return;
        }
    }
    if constexpr (widens_rows_across_v<Op, A>) {
        widened_rows(x, n, groups * lane_group, [&](index_t row0, index_t count, const std::int32_t* w) {
            first_extremes_side_by_side<reduce_op<Op::kind, std::int32_t>, std::int32_t>(
                w, n, count / widened_group, [&](index_t r0, __m512i best, __m512i at) {
                    store_first_extremes<Op, A, std::int32_t>(out + row0 + r0, best, at);
                });
        });
        return;
    }
#endif
    for (index_t r = 0; r < groups * lane_group; ++r) out[r] = first_extreme_of_row<Op>(x + r * n, n);
}

/// first_extremes_across of `rows` rows, only their indices, written to out[0, rows) as T (an integer of 4 or 8
/// bytes: argmin/argmax into an index array whose rows are in order; no lanes, no copy). Side by side, the last
/// group's rows past `rows` are read (the caller makes whole groups of 16 rows of a 4-byte type or of one of 1
/// or 2 bytes, 8 of an 8-byte one, readable, as for first_extremes_across) and not written.
template <class Op, class A, class T>
void first_extreme_indexes(const A* __restrict x, index_t n, index_t rows, T* __restrict out, bool ahead = false) {
    (void)ahead; // (only the side-by-side compares prefetch)
    static_assert(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8));
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    if constexpr (indexes_rows_across_v<Op, A>) {
        if (side_by_side_rows<A>(n)) {
            constexpr index_t rows_per = 64 / sizeof(A);
            first_extremes_side_by_side<Op, A>(x, n, (rows + rows_per - 1) / rows_per, [&](index_t row0, __m512i, __m512i at) {
                const auto count = static_cast<unsigned>(std::min(rows_per, rows - row0));
                const auto first = static_cast<__mmask16>(count >= 16 ? 0xffffu : (1u << count) - 1u);
                if constexpr (sizeof(A) == 4 && sizeof(T) == 4) {
                    _mm512_mask_storeu_epi32(out + row0, first, at);
                } else if constexpr (sizeof(A) == 4) { // 16 i32 indices as two halves of 8 i64
                    _mm512_mask_storeu_epi64(out + row0, static_cast<__mmask8>(first), simd::wide::widen_half_epi32<0>(at));
                    if (count > 8)
                        _mm512_mask_storeu_epi64(out + row0 + 8, static_cast<__mmask8>(first >> 8),
                                                 simd::wide::widen_half_epi32<1>(at));
                } else if constexpr (sizeof(T) == 4) { // 8 i64 indices narrowed
                    _mm512_mask_cvtepi64_storeu_epi32(out + row0, static_cast<__mmask8>(first), at);
                } else {
                    _mm512_mask_storeu_epi64(out + row0, static_cast<__mmask8>(first), at);
                }
            }, ahead);
            return;
        }
        if constexpr (sizeof(A) == 8) { // longer rows of an 8-byte type: each in 8 lanes
            for (index_t r = 0; r < rows; ++r) out[r] = static_cast<T>(first_extreme_in_lanes<Op, A>(x + r * n, n));
            return;
        }
    }
    if constexpr (widens_rows_across_v<Op, A>) {
        widened_rows(x, n, rows, [&](index_t row0, index_t count, const std::int32_t* w) {
            first_extreme_indexes<reduce_op<Op::kind, std::int32_t>, std::int32_t>(w, n, count, out + row0);
        });
        return;
    }
#endif
    for (index_t r = 0; r < rows; ++r) out[r] = static_cast<T>(first_extreme_of_row<Op>(x + r * n, n).i);
}

/// The results of Rows streams of one column, each at most one block of `n` values, row h's at x + h * n, as
/// stream_fold makes them: value j goes into lane j % lane_group, in order, from the identity (the stream's
/// lanes); the last values, fewer than the lanes, make a whole row of lanes with the identity in the lanes
/// they do not reach. The block's end is lane 0 combined with
/// lanes 1, 2, ... in that order (stream_fold::end_block), a chain of dependent combines as long as the lanes:
/// the rows' chains run side by side here. Lanes from n on, which a stream shorter than the lanes never
/// reached, hold the identity and are left out: combining a lane that started at the identity with the
/// identity gives the same bits (a float sum is never -0 then, a product keeps its NaN, min and max their
/// value). Where the result does not depend on the grouping (stream_fold::grouping_free), the lanes are
/// combined as a tree instead, in registers where they are vectors (fold_vectors_to_one). out[h] = result for
/// the first `kept` rows; the rows after them are not folded. The results go to lanes, not to a caller's store: the
/// function depends on (Op, A, Rows) alone, so every reduction of one kind and accumulator shares one copy
/// of this flattened body (a store per call site made one per expression, a quarter of a reduction test's
/// compile time).
template <class Op, class A, index_t Rows>
MIXT_FLATTEN void end_rows_of_one_block(const A* __restrict x, index_t n, index_t kept, typename Op::lane* __restrict out) {
    using lane = typename Op::lane;
    // Where the result does not depend on the grouping and the lanes are vectors, a row's lanes are folded and
    // combined in registers (fold_vectors_to_one): they never reach `held`.
    constexpr bool in_registers =
#if !defined(__CUDACC__)
        stream_fold<Op, A>::grouping_free && folds_batches_v<Op, A>;
#else
        false;
#endif
    // Rows past `kept` are neither filled nor read. The lanes of vectors start from the identity in registers
    // (fold_vectors' FromIdentity); the others' identity goes in by fill_lanes: GCC made a loop over all Rows one
    // `rep stos`, slow to start (docs/performance-notes.md, "Small reductions without allocations").
    alignas(64) lane held[Rows][lane_group];
    for (index_t h = 0; h < kept; ++h) {
        const A* const xr = x + h * n;
        lane* const l = held[h];
        const index_t whole = n / lane_group * lane_group, rest = n - whole;
        alignas(64) lane last[lane_group];
        const auto fill_last = [&] {
            for (index_t p = 0; p < lane_group; ++p) last[p] = p < rest ? Op::from(xr[whole + p], 0) : Op::identity();
        };
#if !defined(__CUDACC__) // nvcc's host compiler fails (a segmentation fault) on these vectors; its code takes the loops
        if constexpr (folds_batches_v<Op, A>) { // in vectors; min/max of floats as keys (fold_vectors)
            typedef lane vec __attribute__((vector_size(simd::fold_vector_bytes)));
            constexpr index_t per_vec = simd::fold_vector_bytes / sizeof(lane), count = lane_group / per_vec;
#if MIXT_SIMD_AVX512
            // The last values of vector v and the identity after them, by one masked load: `last` built in memory
            // by the compiler's 32-byte stores, then read as 64-byte vectors, made each read wait until those
            // stores had left (no store forwarding; docs/performance-notes.md, "Small reductions: a call's fixed
            // cost").
            vec identity{};
            for (index_t p = 0; p < per_vec; ++p) identity[p] = Op::identity();
            const auto last_vector = [&](index_t v) {
                const index_t left = std::clamp<index_t>(rest - v * per_vec, 0, per_vec);
                if (left == 0) return identity;
                const A* const from = xr + whole + v * per_vec;
                __m512i loaded;
                if constexpr (sizeof(lane) == 4)
                    loaded = _mm512_mask_loadu_epi32(std::bit_cast<__m512i>(identity), static_cast<__mmask16>((1u << left) - 1u), from);
                else
                    loaded = _mm512_mask_loadu_epi64(std::bit_cast<__m512i>(identity), static_cast<__mmask8>((1u << left) - 1u), from);
                return std::bit_cast<vec>(loaded);
            };
#else
            fill_last();
#endif
            const auto for_each_vector = [&](auto&& visit) {
                for (index_t j = 0; j < whole; j += lane_group)
                    for (index_t v = 0; v < count; ++v) {
                        vec xv;
                        std::memcpy(&xv, xr + j + v * per_vec, sizeof(vec)); // A's bits are the lane's
                        visit(v, xv);
                    }
                for (index_t v = 0; v < count; ++v) {
#if MIXT_SIMD_AVX512
                    visit(v, last_vector(v));
#else
                    vec xv;
                    std::memcpy(&xv, last + v * per_vec, sizeof(vec));
                    visit(v, xv);
#endif
                }
            };
            if constexpr (in_registers)
                out[h] = simd::fold_vectors_to_one<Op, A, count>(static_cast<const vec*>(nullptr), for_each_vector);
            else
                fold_vectors<Op, A, count, false, true>(l, static_cast<const vec*>(nullptr), for_each_vector);
        } else
#endif
        {
            simd::fill_lanes<lane_group>(l, Op::identity());
            fill_last();
            for (index_t j = 0; j < whole; j += lane_group)
                for (index_t p = 0; p < lane_group; ++p) l[p] = Op::combine(l[p], Op::from(xr[j + p], 0));
            for (index_t p = 0; p < lane_group; ++p) l[p] = Op::combine(l[p], last[p]);
        }
    }
    if constexpr (in_registers) {
        // (out[h] above)
    } else if constexpr (stream_fold<Op, A>::grouping_free) {
        for (index_t h = 0; h < kept; ++h) {
            lane* const l = held[h];
            for (index_t w = lane_group / 2; w >= 1; w /= 2)
                for (index_t p = 0; p < w; ++p) l[p] = Op::combine(l[p], l[p + w]);
            out[h] = l[0];
        }
    } else {
        const index_t used = std::min(n, lane_group);
        chains_side_by_side<Op>(
            kept, used, 1, [&](index_t h) -> const lane* { return held[h]; }, [&](index_t h, const lane& v) { out[h] = v; });
    }
}

/// end_rows_of_one_block for `rows` rows of n values, Rows at a time (a last group of fewer rows: the values after
/// them are not read): out[h] = row h's result. One call per batch of rows, so that the shared, flattened body
/// is entered once per batch rather than once per group.
template <class Op, class A, index_t Rows>
MIXT_FLATTEN void end_rows_of_blocks(const A* __restrict x, index_t n, index_t rows, typename Op::lane* __restrict out) {
    for (index_t g = 0; g < rows; g += Rows) end_rows_of_one_block<Op, A, Rows>(x + g * n, n, std::min(Rows, rows - g), out + g);
}

/// The array type S whose elements a reduction's kernel Kern reads one by one and converts to A, where it is one
/// leaf (leaf_kernel<S>, or convert_kernel<A, leaf_kernel<S>> for an integer S narrower than an integer A of 4
/// or 8 bytes: a sign or zero extension, exact); void for any other kernel.
template <class A, class Kern>
struct in_order_source {
    using type = void;
};
template <class A>
struct in_order_source<A, leaf_kernel<A>> {
    using type = A;
};
template <class A, class S>
    requires(is_int_v<A> && is_int_v<S> && sizeof(S) < sizeof(A) && sizeof(A) >= 4) // (simd::wide::widen_to_lanes' pairs)
struct in_order_source<A, convert_kernel<A, leaf_kernel<S>>> {
    using type = S;
};
template <class A, class Kern>
using in_order_source_t = typename in_order_source<A, Kern>::type;

/// Whether rows of a reduction of kind Op, accumulator A, kernel Kern may be folded one at a time in memory order
/// (fold_rows_in_order): AVX-512, a result that does not depend on the grouping (integer sums and products,
/// min/max: stream_fold::grouping_free) of lanes that fold_vectors takes, or min/max of an integer of 1 or 2
/// bytes (lanes of its own type), read from one array (in_order_source_t).
template <class Op, class A, class Kern>
inline constexpr bool folds_rows_in_order_v =
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    !Op::indexed && stream_fold<Op, A>::grouping_free &&
    (folds_batches_v<Op, A> || (is_int_v<A> && sizeof(A) <= 2 && std::is_same_v<typename Op::lane, A> &&
                                (Op::kind == reduce_kind::min || Op::kind == reduce_kind::max))) &&
    !std::is_void_v<in_order_source_t<A, Kern>>;
#else
    false;
#endif

#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
/// The lanes of v in segments of M (a power of two): each segment's lanes combined by halves in registers, so that
/// lane k * M holds segment k's result (combine_halves within each segment at once).
template <reduce_kind K, std::size_t M, class V>
V combine_segments(V v) {
    if constexpr (M > 1) {
        constexpr std::size_t W = sizeof(V) / sizeof(v[0]);
        const V hi = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return __builtin_shufflevector(v, v, (I % M < M / 2 ? I + M / 2 : I)...);
        }(std::make_index_sequence<W>{});
        combine_lanes<K>(v, hi);
        return combine_segments<K, M / 2>(v);
    } else {
        return v;
    }
}

/// The lanes of a vector v (GCC's vector extensions) combined into one by halves in registers: lanes [0, W/2)
/// with [W/2, W) (combine_lanes of kind K), and so on, by narrower vectors down to 16 bytes, then within them
/// (combine_segments of one segment), for results that do not depend on the grouping.
template <reduce_kind K, class V>
auto combine_halves(const V& v) {
    constexpr std::size_t W = sizeof(V) / sizeof(v[0]);
    if constexpr (sizeof(V) > 16) {
        auto lo = [&]<std::size_t... I>(std::index_sequence<I...>) { return __builtin_shufflevector(v, v, I...); }(
            std::make_index_sequence<W / 2>{});
        const auto hi = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return __builtin_shufflevector(v, v, (I + W / 2)...);
        }(std::make_index_sequence<W / 2>{});
        combine_lanes<K>(lo, hi);
        return combine_halves<K>(lo);
    } else {
        return combine_segments<K, W>(v)[0];
    }
}

/// fold_rows_in_order for integer min/max in lanes of 1 or 2 bytes (their own type) of rows of exactly M values
/// (16, 32 or 64 bytes): 64 / (M * sizeof(A)) rows per 64-byte load, each row's lanes combined within its segment
/// (combine_segments), where a row of its own would take a vector and halvings of which it fills only part; rows
/// of 64 bytes two at a time, their low halves combined with their high halves into one vector first. Returns the
/// count of rows done; the caller folds the rest.
template <class Op, class A, std::size_t M, class Store>
MIXT_ALWAYS_INLINE index_t fold_rows_sharing_vectors(const A* __restrict x, index_t rows, const Store& store) {
    using lane = typename Op::lane;
    typedef lane vec __attribute__((vector_size(64)));
    index_t r = 0;
    if constexpr (M * sizeof(A) == 64) { // a row per vector: two rows' halves combined into one vector first
        constexpr std::size_t W = M;
        for (; r + 2 <= rows; r += 2) {
            vec a, b;
            std::memcpy(&a, x + r * static_cast<index_t>(M), sizeof(a)); // A's bits are the lane's
            std::memcpy(&b, x + (r + 1) * static_cast<index_t>(M), sizeof(b));
            vec v = [&]<std::size_t... I>(std::index_sequence<I...>) { // the low halves of a and b
                return __builtin_shufflevector(a, b, (I < W / 2 ? I : I + W / 2)...);
            }(std::make_index_sequence<W>{});
            const vec hi = [&]<std::size_t... I>(std::index_sequence<I...>) { // and their high halves
                return __builtin_shufflevector(a, b, (I < W / 2 ? I + W / 2 : I + W)...);
            }(std::make_index_sequence<W>{});
            combine_lanes<Op::kind>(v, hi);
            v = combine_segments<Op::kind, W / 2>(v);
            store(r, v[0]);
            store(r + 1, v[W / 2]);
        }
    } else {
        constexpr index_t per = 64 / static_cast<index_t>(M * sizeof(A)); // rows per vector
        for (; r + per <= rows; r += per) {
            vec v;
            std::memcpy(&v, x + r * static_cast<index_t>(M), sizeof(v)); // A's bits are the lane's
            v = combine_segments<Op::kind, M>(v);
            MIXT_UNROLLED
            for (index_t k = 0; k < per; ++k) store(r + k, v[k * static_cast<index_t>(M)]);
        }
    }
    return r;
}

/// The results of `rows` rows of n values of S each (in_order_source_t: A, or a narrower integer widened to A),
/// row r's at x + r * n, where the result does not depend on the grouping (folds_rows_in_order_v): each row read
/// in memory order into one vector of 64 bytes of lanes (min/max of floats as keys, simd/lanes.hpp), whole
/// vectors and then the rest, the lanes it does not reach at the identity (a masked load: nothing past the row
/// is read), and its lanes combined by halves in registers; rows of exactly 16, 32 or 64 bytes of a 1- or 2-byte
/// integer's min/max several to a vector first (fold_rows_sharing_vectors). out[r] = row r's result (lanes, not
/// a caller's store: compiled once per kind, accumulator and source type, not per expression). What a hand loop
/// does; the rows' chains overlap.
template <class Op, class A, class S>
MIXT_FLATTEN void fold_rows_in_order(const S* __restrict x, index_t n, index_t rows, typename Op::lane* __restrict out) {
    using lane = typename Op::lane;
    const auto store = [out](index_t r, lane v) { out[r] = v; };
    constexpr index_t W = 64 / sizeof(lane);
    constexpr reduce_kind K = Op::kind;
    typedef lane vec __attribute__((vector_size(64)));
    using key_t = std::conditional_t<
        sizeof(lane) == 1, std::int8_t,
        std::conditional_t<sizeof(lane) == 2, std::int16_t, std::conditional_t<sizeof(lane) == 4, std::int32_t, std::int64_t>>>;
    typedef key_t keys __attribute__((vector_size(64))); // (of min/max of floats; and the lanes' masks)
    const index_t whole = n / W * W;
    const auto rest = static_cast<unsigned>(n - whole);
    keys iota;
    for (index_t p = 0; p < W; ++p) iota[p] = static_cast<key_t>(p);
    const keys past = iota >= static_cast<key_t>(rest); // the lanes the last values do not reach
    vec identity;
    for (index_t p = 0; p < W; ++p) identity[p] = Op::identity();
    const auto values = [](const S* p) { // W values of S as lanes
        vec v;
        if constexpr (std::is_same_v<S, A>) {
            std::memcpy(&v, p, sizeof(v)); // A's bits are the lane's
        } else {
            const __m512i w = simd::wide::widen_to_lanes<A, S>(p);
            std::memcpy(&v, &w, sizeof(v));
        }
        return v;
    };
    const std::uint64_t rest_mask = (std::uint64_t{1} << rest) - 1; // (rest < W <= 64)
    const auto last_values = [&](const S* p) { // the `rest` values at p (a masked load), the identity after them
        __m512i b;
        if constexpr (sizeof(S) == 1) b = _mm512_maskz_loadu_epi8(rest_mask, p);
        else if constexpr (sizeof(S) == 2) b = _mm512_maskz_loadu_epi16(static_cast<__mmask32>(rest_mask), p);
        else if constexpr (sizeof(S) == 4) b = _mm512_maskz_loadu_epi32(static_cast<__mmask16>(rest_mask), p);
        else b = _mm512_maskz_loadu_epi64(static_cast<__mmask8>(rest_mask), p);
        vec v = values(reinterpret_cast<const S*>(&b));
        select_lanes(v, past, identity);
        return v;
    };
    index_t r0 = 0;
    if constexpr (std::is_same_v<S, A> && sizeof(lane) <= 2 && is_int_v<A> && (K == reduce_kind::min || K == reduce_kind::max)) {
        constexpr index_t whole_vector = 64 / static_cast<index_t>(sizeof(A)), half = whole_vector / 2, quarter = half / 2;
        if (n == whole_vector) r0 = fold_rows_sharing_vectors<Op, A, whole_vector>(x, rows, store);
        else if (n == half) r0 = fold_rows_sharing_vectors<Op, A, half>(x, rows, store);
        else if (n == quarter) r0 = fold_rows_sharing_vectors<Op, A, quarter>(x, rows, store);
    }
    for (index_t r = r0; r < rows; ++r) {
        const S* const xr = x + r * n;
        if constexpr (keyed_extreme_v<Op, A>) {
            keys hi, lo;
            extreme_load(hi, lo, &identity);
            for (index_t j = 0; j < whole; j += W) extreme_add(hi, lo, values(xr + j));
            if (rest != 0) extreme_add(hi, lo, last_values(xr + whole));
            // The largest and smallest keys of all lanes: what one lane that took every value would hold.
            const keys top = keys{} + combine_halves<reduce_kind::max>(hi), bottom = keys{} + combine_halves<reduce_kind::min>(lo);
            alignas(64) lane extremes[W];
            extreme_store<K, A>(top, bottom, extremes);
            store(r, extremes[0]);
        } else {
            vec acc = identity;
            for (index_t j = 0; j < whole; j += W) combine_lanes<K>(acc, values(xr + j));
            if (rest != 0) combine_lanes<K>(acc, last_values(xr + whole));
            store(r, static_cast<lane>(combine_halves<K>(acc)));
        }
    }
}
#endif

/// Rows up to this long of an argmin/argmax take reduce_operand's short-row path (first_extreme_indexes, or
/// first_extremes_across where the results' rows are not in order).
inline constexpr index_t short_index_row_stream = 128;

/// Streams up to this long take reduce_operand's short-row path, in batches of about short_rows_values values:
/// longer where the lanes' end is a tree (stream_fold::grouping_free) than where it is a chain of lane_group
/// combines, which the per-row fold overlaps better with a long row's values (docs/performance-notes.md,
/// "Short rows").
template <class Op, class A>
inline constexpr index_t short_row_stream = stream_fold<Op, A>::grouping_free ? 256 : 128;
inline constexpr index_t short_rows_values = 4096;

/// The rows of `stream` values a task of the short-row path folds per batch: about short_rows_values values, a
/// multiple of `group` rows, but no more groups than the task's `rows` need (the batch's buffer is allocated and
/// cleared on every call: a reduction of a few short rows cleared 16 KiB for them).
inline index_t rows_per_batch(index_t stream, index_t rows, index_t group) {
    const index_t most = std::max<index_t>(group, short_rows_values / stream / group * group);
    return std::min(most, (rows + group - 1) / group * group);
}

} // namespace mixt::detail

#endif // MIXT_EVAL_REDUCE_ROWS_HPP
