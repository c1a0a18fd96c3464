#ifndef MIXT_EVAL_REDUCE_STREAM_HPP
#define MIXT_EVAL_REDUCE_STREAM_HPP

// The CPU's fold of one stream (eval/reduce.hpp's header says what a stream is): its lanes fed by the fused
// kernel's batches in registers where the accumulator allows (fold_rows_of, fold_first_extreme_of), else from a
// buffer (feed); the blocks' ends pushed onto the pairwise stack (stream_fold); and the source of a stream, the
// fused kernel run over a box of the broadcast shape, converted to the accumulator (reduce_source).

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
#include "mixt/eval/fused.hpp"
#include "mixt/eval/reduce_plan.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/eval/strided.hpp"
#include "mixt/simd/arch.hpp"
#include "mixt/simd/lanes.hpp"

namespace mixt::detail {

// --- Lanes fed by the kernel's batches -------------------------------------------------------------------------

/// Whether a stream of A folded by Op can take the fused kernel's batches straight into its lanes, without the
/// stream passing through memory: a lane holds A's bits (integer sums and products wrap in the unsigned type of
/// A's width), A is a real type of 4 or 8 bytes, and the reduction is neither indexed nor any/all.
/// argmin/argmax of f32 (also of f16 and bf16, whose accumulator it is) take them too.
template <class Op, class A>
inline constexpr bool folds_batches_v =
    Op::indexed ? std::is_same_v<A, float>
                : sizeof(typename Op::lane) == sizeof(A) &&
                      (std::is_same_v<A, float> || std::is_same_v<A, double> || (is_int_v<A> && sizeof(A) >= 4)) &&
                      (Op::kind == reduce_kind::sum || Op::kind == reduce_kind::mean ||
                       Op::kind == reduce_kind::prod || Op::kind == reduce_kind::min || Op::kind == reduce_kind::max);

// The lane-vector folds (select_lanes, combine_lanes, the keys of min/max, fold_vectors): simd/lanes.hpp.
using simd::combine_lanes;
using simd::extreme_add;
using simd::extreme_load;
using simd::extreme_store;
using simd::fold_vectors;
using simd::keyed_extreme_v;
using simd::select_lanes;

/// Whether the kernel Kern of a sum (or mean) accumulating in a 64-bit integer A converts a kernel of bool or an
/// 8- or 16-bit integer: fold_rows_of then adds those values in 32-bit lanes (exact for the rows of a block)
/// and widens the lanes' sums once per call. Integer sums wrap modulo 2^64 whatever the grouping, so the
/// result is the same bits as adding each value in 64 bits.
template <class Op, class A, class Kern>
struct narrow_sum : std::false_type {};
template <class Op, class A, class K2>
    requires((Op::kind == reduce_kind::sum || Op::kind == reduce_kind::mean) && is_int_v<A> && sizeof(A) == 8 &&
             (std::is_same_v<kernel_value_t<K2>, bool> || (is_int_v<kernel_value_t<K2>> && sizeof(kernel_value_t<K2>) <= 2)))
struct narrow_sum<Op, A, convert_kernel<A, K2>> : std::true_type {
    /// The 32-bit lanes' type: signed where the narrow values are.
    using lane32 = std::conditional_t<std::is_signed_v<kernel_value_t<K2>>, std::int32_t, std::uint32_t>;
};
/// The most rows of lanes a call of fold_rows_of may add in 32-bit lanes: 32767 * 65535 fits 31 bits.
inline constexpr index_t narrow_sum_rows = 32767;

/// Whether the kernel Kern of a sum (or mean) accumulating in float or a 64-bit integer converts a u8 or i8 leaf:
/// on AVX-512, fold_rows_of then adds the values in 16-bit lanes (32 per register) for up to
/// most_block_values_per_lane rows at a time, and adds each lane's total to its accumulator lane. The 16-bit
/// totals are exact (129 * 255 < 2^16, 129 * 128 < 2^15). Integer sums wrap modulo 2^64 whatever the
/// grouping. A float lane takes at most 129 values per block (make_stream_shape), so every sum it would make
/// from 0 at the block's start is an integer below 2^16, exact, as is the total added once: the same bits.
template <class Op, class A, class Kern>
inline constexpr bool word_sum_v = false;
template <class Op, class A, class T>
inline constexpr bool word_sum_v<Op, A, convert_kernel<A, leaf_kernel<T>>> =
    (Op::kind == reduce_kind::sum || Op::kind == reduce_kind::mean) &&
    (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t>) &&
    (std::is_same_v<A, float> || (is_int_v<A> && sizeof(A) == 8));

/// Folds `rows` rows of G * lane_group stream elements, elements i, i + 1, ... of the kernel Kern whose run-time
/// values are `args` (kernel_args), into G * lane_group lanes, element p of a row into lane p; the lanes are
/// held in registers meanwhile. With NB > 1, the same for NB runs side by side, run b from element
/// i + b * apart into lanes l + b * G * lane_group (blocks_side_by_side). MIXT_FLATTEN and the values as
/// arguments for the reasons run_range_of gives. With `prefetch` (stream_fold::prefetch), the float and 32-byte
/// loops ask for their inputs prefetch_distance elements ahead, as the fused loop does.
template <class Op, class A, class Kern, int G, int NB, class... Args>
MIXT_FLATTEN void fold_rows_of(typename Op::lane* __restrict l, index_t i, index_t rows, index_t apart, bool prefetch,
                               Args... args) {
    static_assert(folds_batches_v<Op, A> && !Op::indexed);
    static_assert(NB == 1 || (!word_sum_v<Op, A, Kern> && !narrow_sum<Op, A, Kern>::value));
    (void)apart; // (NB == 1)
    using lane = typename Op::lane;
    constexpr index_t row = G * lane_group;
    const Kern k = kernel_from_args<Kern>(args...);
    (void)prefetch; // not with MIXT_SOFTWARE_PREFETCH=0
    // fold(ahead) with ahead a std::bool_constant: whether to prefetch (a loop compiled for each).
    const auto with_prefetch = [&](const auto& fold) {
        if constexpr (prefetch_enabled) {
            if (prefetch) return fold(std::true_type{});
        }
        fold(std::false_type{});
    };
#if MIXT_SIMD_AVX512
    if constexpr (word_sum_v<Op, A, Kern>) {
        using T = kernel_value_t<std::remove_cvref_t<decltype(k.k)>>;
        constexpr bool is_float = std::is_same_v<A, float>;
        if constexpr (is_float) {
            eigen_assert(rows <= most_block_values_per_lane); // see word_sum_v
        }
        for (index_t done = 0; done < rows;) {
            const index_t now = std::min(rows - done, most_block_values_per_lane);
            __m512i acc[G];
            for (int v = 0; v < G; ++v) acc[v] = simd::wide::zero_words();
            for (index_t r = 0; r < now; ++r, i += row)
                for (int v = 0; v < G; ++v) acc[v] = simd::wide::apply_words(add_fn{}, acc[v], k.k.word_at(i + lane_group * v));
            for (int v = 0; v < G; ++v) {
                lane* const lv = l + lane_group * v;
                simd::wide::add_widened_words<std::is_signed_v<T>>(lv, acc[v]);
            }
            done += now;
        }
        return;
    }
#endif
    if constexpr (narrow_sum<Op, A, Kern>::value) {
        using N = typename narrow_sum<Op, A, Kern>::lane32;
        typedef N vec __attribute__((vector_size(32)));
        constexpr index_t per_batch = simd::lanes, count = row / per_batch;
        static_assert(per_batch * sizeof(N) == sizeof(vec));
        for (index_t done = 0; done < rows;) {
            const index_t now = std::min(rows - done, narrow_sum_rows);
            vec acc[count] = {};
            for (index_t r = 0; r < now; ++r, i += row) {
                for (index_t b = 0; b < count; ++b) {
                    alignas(64) N t[per_batch];
                    simd::store(t, simd::convert<N>(k.k.at(i + b * per_batch)));
                    vec x;
                    std::memcpy(&x, t, sizeof(vec));
                    acc[b] += x;
                }
            }
            for (index_t b = 0; b < count; ++b)
                for (index_t h = 0; h < per_batch; ++h)
                    l[b * per_batch + h] = static_cast<lane>(l[b * per_batch + h] + static_cast<lane>(static_cast<A>(acc[b][h])));
            done += now;
        }
        return;
    }
#if MIXT_SIMD_AVX512
    if constexpr (wide_loop_v<A, Kern>) { // f32: 16-lane batches
        typedef float wvec __attribute__((vector_size(64)));
        constexpr index_t count = 2 * G;
        with_prefetch([&](auto ahead) {
            fold_vectors<Op, A, count * NB, sign_clear_kernel<Kern>::value>(l, static_cast<const wvec*>(nullptr), [&](auto&& visit) {
                for (index_t r = 0; r < rows; ++r, i += row) {
                    if constexpr (decltype(ahead)::value)
                        for (int nb = 0; nb < NB; ++nb) k.template prefetch<row>(i + nb * apart + prefetch_distance);
                    for (int nb = 0; nb < NB; ++nb) {
                        const index_t at = i + nb * apart;
#if MIXT_SIMD_AVX512FP16
                        if constexpr (pair_kernel<Kern>::value) { // (f16 arithmetic, 32 values at a time)
                            for (index_t v = 0; v < count; v += 2) {
                                simd::wide::batch<float> lo, hi;
                                wide_pair(k, at + 16 * v, lo, hi);
                                wvec x;
                                std::memcpy(&x, &lo.v, sizeof(wvec));
                                visit(nb * count + v, x);
                                std::memcpy(&x, &hi.v, sizeof(wvec));
                                visit(nb * count + v + 1, x);
                            }
                            continue;
                        }
#endif
                        for (index_t v = 0; v < count; ++v) {
                            const auto b = k.wide_at(at + 16 * v);
                            wvec x;
                            std::memcpy(&x, &b.v, sizeof(wvec));
                            visit(nb * count + v, x);
                        }
                    }
                }
            });
        });
        return;
    }
#endif
    typedef lane vec __attribute__((vector_size(32)));
    constexpr index_t per_vec = 32 / sizeof(lane), per_batch = simd::lanes;
    constexpr index_t count = row / per_vec, vecs_per_batch = per_batch / per_vec;
    with_prefetch([&](auto ahead) {
        fold_vectors<Op, A, count * NB, sign_clear_kernel<Kern>::value>(l, static_cast<const vec*>(nullptr), [&](auto&& visit) { // each batch's vectors of lanes, in order
            for (index_t r = 0; r < rows; ++r, i += row) {
                if constexpr (decltype(ahead)::value)
                    for (int nb = 0; nb < NB; ++nb) k.template prefetch<row>(i + nb * apart + prefetch_distance);
                for (int nb = 0; nb < NB; ++nb)
                    for (index_t b = 0; b < row / per_batch; ++b) {
                        alignas(64) A t[per_batch];
                        simd::store(t, k.at(i + nb * apart + b * per_batch));
                        for (index_t h = 0; h < vecs_per_batch; ++h) {
                            vec x;
                            std::memcpy(&x, t + h * per_vec, sizeof(vec)); // A's bits are the lane's
                            visit(nb * count + b * vecs_per_batch + h, x);
                        }
                    }
            }
        });
    });
}

/// Vectors of W floats and of W 32-bit indices (GCC's vector extensions; a size that depends on a template
/// parameter is not one GCC 12 takes).
template <int W>
struct f32_vectors;
template <>
struct f32_vectors<8> {
    typedef float values __attribute__((vector_size(32)));
    typedef std::int32_t indices __attribute__((vector_size(32)));
};
template <>
struct f32_vectors<16> {
    typedef float values __attribute__((vector_size(64)));
    typedef std::int32_t indices __attribute__((vector_size(64)));
};

/// argmin/argmax: `best` combined with the first extreme of the `rows` rows of lane_group values that at(i, x),
/// at(i + W, x), ... put into x (W each), whose indices are first, first + 1, ... Each of lane_group lanes keeps its first
/// extreme value (a NaN more than anything) and its offset, in registers; the lanes are combined into `best` at
/// the end, by value, then by the smaller index: an extreme element's index does not depend on the order.
template <class Op, int W, class At>
inline typename Op::lane first_extreme_rows(typename Op::lane best, index_t i, index_t rows, index_t first,
                                            const At& at) {
    constexpr int V = static_cast<int>(lane_group) / W;
    using vec = typename f32_vectors<W>::values;
    using ivec = typename f32_vectors<W>::indices;
    ivec iota;
    for (int h = 0; h < W; ++h) iota[h] = h;
    // Per lane: the first extreme non-NaN value and its offset, and apart from them (so that no NaN test is on
    // the loop's chain of dependences) whether a NaN was seen, the first one and its offset.
    vec acc[V], nan_value[V];
    ivec at_index[V], seen[V], nan_index[V];
    for (int v = 0; v < V; ++v) { // the first row as it is
        at(i + v * W, acc[v]);
        at_index[v] = nan_index[v] = iota + v * W;
        seen[v] = acc[v] != acc[v];
        nan_value[v] = acc[v];
    }
    for (index_t r = 1; r < rows; ++r) {
        const auto row_offset = static_cast<std::int32_t>(r * lane_group);
        for (int v = 0; v < V; ++v) {
            vec x;
            at(i + r * lane_group + v * W, x);
            const ivec offset = iota + (row_offset + v * W);
            ivec take;
            if constexpr (Op::kind == reduce_kind::argmax)
                take = x > acc[v];
            else
                take = x < acc[v];
            select_lanes(acc[v], take, x);
            select_lanes(at_index[v], take, offset);
            const ivec first_nan = (x != x) & ~seen[v];
            select_lanes(nan_value[v], first_nan, x);
            select_lanes(nan_index[v], first_nan, offset);
            seen[v] |= first_nan;
        }
    }
    for (int v = 0; v < V; ++v)
        for (int h = 0; h < W; ++h)
            best = Op::combine(best, seen[v][h] ? Op::from(nan_value[v][h], first + nan_index[v][h])
                                                : Op::from(acc[v][h], first + at_index[v][h]));
    return best;
}

/// Whether the kernel Kern converts an f16 or bf16 leaf to float: argmin/argmax of one column then compare the
/// leaf's bits as order keys (simd::wide::first_extreme_key), 32 at a time, where the leaf is contiguous.
template <class Kern>
inline constexpr bool keyed_leaf_v = false;
template <class T>
inline constexpr bool keyed_leaf_v<convert_kernel<float, leaf_kernel<T>>> = is_small_float_v<T>;

#if MIXT_SIMD_AVX512
/// argmin/argmax: `best` combined with the first extreme of the n values of an f16 or bf16 array at x (n a
/// multiple of 32; indices offset by `first`), their bits compared as 16-bit keys (simd::wide::first_extreme_key,
/// which may prefetch up to ahead_end), where best is not already a NaN.
template <class Op, class T>
typename Op::lane with_first_extreme_key(typename Op::lane best, const T* x, index_t n, index_t first,
                                         const void* ahead_end) {
    static_assert(Op::indexed && is_small_float_v<T>);
    if (best.i >= 0 && reduce_is_nan(best.v)) return best;
    constexpr bool is_max = Op::kind == reduce_kind::argmax;
    const auto bits = [](T v) { return std::bit_cast<std::uint16_t>(v); };
    const std::int16_t bound =
        best.i < 0 ? (is_max ? INT16_MIN : INT16_MAX) : simd::wide::small_float_key(bits(static_cast<T>(best.v)));
    const auto found = simd::wide::first_extreme_key<is_max>(reinterpret_cast<const std::uint16_t*>(x), n, bound,
                                                             bits(std::numeric_limits<T>::infinity()),
                                                             static_cast<const std::uint16_t*>(ahead_end));
    // The element found is a NaN or beats best (an earlier index) strictly: it replaces it.
    return found.at < 0 ? best : Op::from(mixt::convert<float>(x[found.at]), first + found.at);
}
#endif

/// first_extreme_rows over elements i, i + 1, ... of the kernel Kern whose run-time values are `args`.
template <class Op, class A, class Kern, class... Args>
MIXT_FLATTEN typename Op::lane fold_first_extreme_of(typename Op::lane best, index_t i, index_t rows, index_t first,
                                                     const void* ahead_end, Args... args) {
    static_assert(Op::indexed && std::is_same_v<A, float>);
    const Kern k = kernel_from_args<Kern>(args...);
    (void)ahead_end; // only the AVX-512 scan prefetches
#if MIXT_SIMD_AVX512
    if constexpr (keyed_leaf_v<Kern>) { // an f16/bf16 leaf contiguous along the row: its bits as 16-bit keys
        using T = kernel_value_t<std::remove_cvref_t<decltype(k.k)>>;
        if (k.k.mask == ~index_t{0})
            return with_first_extreme_key<Op, T>(best, k.k.p + i, rows * lane_group, first, ahead_end);
    }
    if constexpr (wide_loop_v<A, Kern>) {
        return first_extreme_rows<Op, 16>(best, i, rows, first, [&](index_t j, f32_vectors<16>::values& x) {
            const auto b = k.wide_at(j);
            std::memcpy(&x, &b.v, sizeof(x));
        });
    }
#endif
    return first_extreme_rows<Op, simd::lanes>(best, i, rows, first,
                                               [&](index_t j, typename f32_vectors<simd::lanes>::values& x) {
                                                   alignas(64) float t[simd::lanes];
                                                   simd::store(t, k.at(j));
                                                   std::memcpy(&x, t, sizeof(x));
                                               });
}

/// Elements i, i + 1, ..., i + n - 1 of the kernel Kern (no read past i + n), one by one into lanes q, q + 1, ...;
/// for argmin/argmax all into lane q, with the indices first, first + 1, ...
template <class Op, class A, class Kern, class... Args>
void fold_some_of(typename Op::lane* l, index_t q, index_t i, index_t n, index_t first, Args... args) {
    const Kern k = kernel_from_args<Kern>(args...);
    for (index_t j = 0; j < n; j += simd::lanes) {
        const int m = static_cast<int>(std::min<index_t>(simd::lanes, n - j));
        A t[simd::lanes];
        simd::store_partial(t, k.at_partial(i + j, m), m);
        for (int h = 0; h < m; ++h) {
            if constexpr (Op::indexed)
                l[q] = Op::combine(l[q], Op::from(t[h], first + j + h));
            else
                l[q + j + h] = Op::combine(l[q + j + h], Op::from(t[h], 0));
        }
    }
}

/// The most bytes a reduction reads for its float sums to fold blocks side by side (stream_fold::side_by_side):
/// about what a core's L2 holds. Beyond it the fold waits on memory, not on its additions, and four streams
/// of blocks at once were slower than one (docs/performance-notes.md, "Float sums: blocks side by side").
/// MIXT_SIDE_BY_SIDE_MAX_BYTES changes it, the same in every translation unit.
#ifndef MIXT_SIDE_BY_SIDE_MAX_BYTES
#define MIXT_SIDE_BY_SIDE_MAX_BYTES (std::size_t{1} << 20)
#endif
inline constexpr std::size_t side_by_side_max_bytes = MIXT_SIDE_BY_SIDE_MAX_BYTES;

/// Whether float sums, means and products that read at most side_by_side_max_bytes fold whole blocks side by
/// side: not on AMD CPUs, where it did not pay on the family measured (a Zen 3 with AVX2: its fold of one block
/// at a time already keeps up with its L2; docs/performance-notes.md); decided once per program from the CPU's
/// vendor.
/// MIXT_BLOCKS_SIDE_BY_SIDE=0 or 1 decides it at compile time instead.
inline bool side_by_side_pays() noexcept {
#if defined(MIXT_BLOCKS_SIDE_BY_SIDE)
    return MIXT_BLOCKS_SIDE_BY_SIDE != 0;
#else
    return !simd::running_on_amd();
#endif
}

/// C chains of combines side by side (C is 4 or 8): out[c] is from[c][0] combined with from[c][apart],
/// from[c][2 * apart], ... from[c][(m - 1) * apart], in that order. In named accumulators: an array of them
/// became one vector kept on the stack, each combine waiting for the store of the one before (GCC 12). The
/// compiler gathers each step's values into a vector: eight cost twice the shuffles of four, so four where
/// four chains are all there is.
template <class Op, int C>
inline void chains_side_by_side(const typename Op::lane* const (&from)[C], index_t m, index_t apart,
                                typename Op::lane (&out)[C]) {
    static_assert(C == 4 || C == 8);
    using lane = typename Op::lane;
    const lane *const f0 = from[0], *const f1 = from[1], *const f2 = from[2], *const f3 = from[3];
    const lane *const f4 = from[C - 4], *const f5 = from[C - 3], *const f6 = from[C - 2], *const f7 = from[C - 1];
    lane v0 = f0[0], v1 = f1[0], v2 = f2[0], v3 = f3[0], v4 = f4[0], v5 = f5[0], v6 = f6[0], v7 = f7[0];
    for (index_t j = 1; j < m; ++j) {
        const index_t at = j * apart;
        v0 = Op::combine(v0, f0[at]);
        v1 = Op::combine(v1, f1[at]);
        v2 = Op::combine(v2, f2[at]);
        v3 = Op::combine(v3, f3[at]);
        if constexpr (C == 8) {
            v4 = Op::combine(v4, f4[at]);
            v5 = Op::combine(v5, f5[at]);
            v6 = Op::combine(v6, f6[at]);
            v7 = Op::combine(v7, f7[at]);
        }
    }
    out[0] = v0;
    out[1] = v1;
    out[2] = v2;
    out[3] = v3;
    if constexpr (C == 8) {
        out[4] = v4;
        out[5] = v5;
        out[6] = v6;
        out[7] = v7;
    }
}

/// chains_side_by_side for `count` chains, chain t's first value at first(t): four or eight at a time,
/// store(t, result) for each.
template <class Op, class First, class Store>
inline void chains_side_by_side(index_t count, index_t m, index_t apart, const First& first, const Store& store) {
    using lane = typename Op::lane;
    const auto run = [&]<int C>(std::integral_constant<int, C>, index_t t0) {
        const lane* from[C];
        for (index_t c = 0; c < C; ++c) from[c] = first(std::min(t0 + c, count - 1));
        lane out[C];
        chains_side_by_side<Op, C>(from, m, apart, out);
        for (index_t c = 0; c < C && t0 + c < count; ++c) store(t0 + c, out[c]);
    };
    for (index_t t = 0; t < count; t += 8) {
        if (count - t <= 4)
            run(std::integral_constant<int, 4>{}, t);
        else
            run(std::integral_constant<int, 8>{}, t);
    }
}

/// Folds a stream segment by segment into lanes, blocks and a pairwise stack.
template <class Op, class A>
struct stream_fold {
    using lane = typename Op::lane;
    stream_shape shape;
    reduce_scratch<lane>& scratch;
    pairwise_stack<Op> stack;
    index_t in_block = 0;
    /// Whether the lanes hold values not yet pushed (grouping_free streams only; see block_done).
    bool carried = false;
    /// Where the memory of the stream's one array ends, when the task reads all of it in order after the values
    /// it is handed (a dense array, its rows in memory order: plan_reduction, reduce_streams): a scan may
    /// prefetch up to there.
    const void* ahead_end = nullptr;
    /// Whether fold_rows_of prefetches its inputs in software (reduce_streams: the fused loop's rule,
    /// options_for, for the bytes the reduction reads).
    bool prefetch = false;
    /// Whether feed_kernel may fold whole blocks side by side (blocks_side_by_side; reduce_streams:
    /// side_by_side_pays, for the bytes the reduction reads).
    bool side_by_side = false;

    /// Whether the result is the same bits however the stream's values are grouped: the integer lanes of a sum,
    /// mean or product (which wrap modulo 2^N), of min and max, any and all; min and max of float and double,
    /// up to which NaN it is where there is one (its sign and payload are unspecified: README, "NaN"); and
    /// argmin/argmax, whose combine picks one of two (value, index) pairs by an order that does not depend on
    /// grouping (the first NaN, else the extreme value, else the lower index).
    /// Such a stream ignores blocks: its lanes take whole runs and are combined and pushed once, at finish,
    /// instead of at every block's end (for a mean of a u8 image over 3 channels, that combine was a third of
    /// the time). The result does not depend on the number of threads: the super-blocks do not.
    static constexpr bool grouping_free =
        Op::indexed || std::is_integral_v<lane> ||
        ((Op::kind == reduce_kind::min || Op::kind == reduce_kind::max) && std::is_floating_point_v<lane>);

    lane* lanes; // scratch's

    stream_fold(const stream_shape& s, reduce_scratch<lane>& sc)
        : shape(s), scratch(sc), stack{sc.stack.data(), sc.levels.data(), s.columns, 0}, lanes(sc.lanes.data()) {
        reset_lanes();
    }

    void reset_lanes() {
        if (used_lanes() == lane_group) // the usual count, as a constant: no call to memset per stream
            simd::fill_lanes<lane_group>(lanes, Op::identity());
        else
            std::fill_n(lanes, used_lanes(), Op::identity());
    }

    /// The lanes the stream uses: P, but one for argmin/argmax along a row, whose lane 0 takes every element
    /// (feed, feed_kernel: the P lanes are for the columns of an outer reduction).
    index_t used_lanes() const { return Op::indexed && shape.columns == 1 ? 1 : shape.P; }

    /// After `in_block` grew: at a block's end, its lanes combined into columns and pushed. A grouping_free
    /// stream takes whole runs without regard to blocks and only keeps its position among the lanes.
    void block_done() {
        if constexpr (grouping_free) {
            carried = true;
            in_block %= shape.P;
        } else {
            if (in_block == shape.block) end_block();
        }
    }

    void end_block() {
        const index_t columns = shape.columns, m = used_lanes() / columns;
        lane* l = lanes;
        lane* c = scratch.columns.data();
        if (!end_in_registers(columns, m, c)) {
            for (index_t k = 0; k < columns; ++k) {
                lane v = l[k];
                for (index_t j = 1; j < m; ++j) v = Op::combine(v, l[k + j * columns]);
                c[k] = v;
            }
        }
        stack.push(c);
        reset_lanes();
        in_block = 0;
        carried = false;
    }

    /// Where the result does not depend on the grouping, one column's lane_group lanes are combined as a tree
    /// in registers (simd::combine_lanes_to_one) rather than as a chain of scalar combines, whose branches (a
    /// float min or max) a stream of random values mispredicts; true where it wrote c[0].
    bool end_in_registers([[maybe_unused]] index_t columns, [[maybe_unused]] index_t m,
                          [[maybe_unused]] lane* c) const {
#if !defined(__CUDACC__)
        if constexpr (grouping_free && !Op::indexed && folds_batches_v<Op, A>) {
            if (columns == 1 && m == lane_group) {
                c[0] = simd::combine_lanes_to_one<Op, A, lane_group>(lanes);
                return true;
            }
        }
#endif
        return false;
    }

    /// Elements s0, s0 + 1, ... of the stream (s0 a multiple of P away from the start of the block count).
    void feed(const A* x, index_t n, index_t s0) {
        lane* const l = lanes;
        const index_t P = shape.P, columns = shape.columns;
        while (n > 0) {
            const index_t take = grouping_free ? n : std::min(n, shape.block - in_block);
            index_t q = in_block % P, j = 0;
            if constexpr (Op::indexed) {
                if (columns == 1) {
                    // The first extreme element of the segment, found by a vectorized scan, then combined
                    // into lane 0 (an index along a row: the lanes are for the columns of an outer reduction).
                    l[0] = Op::with_first_extreme(l[0], x, take, s0);
                } else {
                    for (; j < take; ++j) {
                        l[q] = Op::combine(l[q], Op::from(x[j], (s0 + j) / columns));
                        if (++q == P) q = 0;
                    }
                }
            } else {
                for (; j < take && q != 0; ++j) {
                    l[q] = Op::combine(l[q], Op::from(x[j], 0));
                    if (++q == P) q = 0;
                }
                if (P == lane_group) {
                    const index_t rows = (take - j) / P;
                    accumulate_rows(l, x + j, rows);
                    j += rows * P;
                }
                for (; j + P <= take; j += P) {
                    index_t p = 0;
                    for (; p + lane_group <= P; p += lane_group) accumulate_group(l + p, x + j + p);
                    for (; p < P; ++p) l[p] = Op::combine(l[p], Op::from(x[j + p], 0));
                }
                for (index_t p = 0; j < take; ++j, ++p) l[p] = Op::combine(l[p], Op::from(x[j], 0));
            }
            in_block += take;
            x += take;
            s0 += take;
            n -= take;
            block_done();
        }
    }

    /// Whether feed_kernel takes this stream: P of 32 lanes (the columns divide 32) or 96 (they divide 96: three colour
    /// channels), and for argmin/argmax one column.
    bool takes_batches() const {
        return Op::indexed ? shape.columns == 1 : (shape.P == lane_group || shape.P == 3 * lane_group);
    }

    /// As feed, for stream elements s0, s0 + 1, ... computed by the kernel Kern with run-time values `args` from its
    /// element 0 (folds_batches_v<Op, A> and takes_batches()): whole rows of lanes go from the kernel's batches
    /// to the lanes in registers.
    template <class Kern, class Args>
        requires folds_batches_v<Op, A>
    void feed_kernel(const Args& args, index_t n, index_t s0) {
        lane* const l = lanes;
        const index_t P = shape.P;
        index_t i = 0;
        while (n > 0) {
            if constexpr (constexpr int NB = blocks_side_by_side<Kern>(); NB > 1) {
                if (side_by_side && in_block == 0 && P == lane_group && n >= NB * shape.block) {
                    const index_t whole = n / (NB * shape.block) * (NB * shape.block);
                    std::apply([&](const auto&... a) { fold_blocks_side_by_side<Kern, NB>(i, whole, a...); }, args);
                    i += whole;
                    s0 += whole;
                    n -= whole;
                    continue;
                }
            }
            const index_t take = grouping_free ? n : std::min(n, shape.block - in_block);
            if constexpr (Op::indexed) { // one column: lane 0 holds the row's first extreme so far
                std::apply(
                    [&](const auto&... a) {
                        const index_t whole = take / P, rest = take - whole * P;
                        if (whole > 0) l[0] = fold_first_extreme_of<Op, A, Kern>(l[0], i, whole, s0, ahead_end, a...);
                        if (rest > 0) fold_some_of<Op, A, Kern>(l, 0, i + whole * P, rest, s0 + whole * P, a...);
                    },
                    args);
            } else {
                const index_t q = in_block % P;
                const index_t head = std::min(take, q == 0 ? 0 : P - q);
                const index_t rows = (take - head) / P, tail = take - head - rows * P;
                std::apply(
                    [&](const auto&... a) {
                        if (head > 0) fold_some_of<Op, A, Kern>(l, q, i, head, 0, a...);
                        if (rows > 0 && P == lane_group) fold_rows_of<Op, A, Kern, 1, 1>(l, i + head, rows, 0, prefetch, a...);
                        if (rows > 0 && P == 3 * lane_group) fold_rows_of<Op, A, Kern, 3, 1>(l, i + head, rows, 0, prefetch, a...);
                        if (tail > 0) fold_some_of<Op, A, Kern>(l, 0, i + head + rows * P, tail, 0, a...);
                    },
                    args);
            }
            in_block += take;
            i += take;
            s0 += take;
            n -= take;
            block_done();
        }
    }

    /// How many whole blocks feed_kernel folds at once (fold_rows_of's NB) for the kernel Kern, where
    /// `side_by_side`. A block's lanes are a chain of dependent combines each, in as many registers as they
    /// fill: two for the 32 f32 lanes of a sum with AVX-512, so that the fold waits on each addition's latency
    /// when its values come from L1 or L2. The blocks are independent until end_block, so NB of them side by
    /// side give the fold NB times the chains, up to eight registers; the same bits. 1 for the streams that
    /// ignore blocks (grouping_free), the lanes that fill eight registers already, and the integer-word and
    /// narrow sums (their own loops).
    template <class Kern>
    static constexpr int blocks_side_by_side() {
        if constexpr (grouping_free || Op::indexed || !folds_batches_v<Op, A> || word_sum_v<Op, A, Kern> ||
                      narrow_sum<Op, A, Kern>::value) {
            return 1;
        } else {
            constexpr std::size_t bytes = wide_loop_v<A, Kern> ? 64 : 32;
            constexpr std::size_t registers = std::max<std::size_t>(1, lane_group * sizeof(lane) / bytes);
            return registers >= 8 ? 1 : static_cast<int>(8 / registers);
        }
    }

    /// The `n` elements of the kernel Kern (values `args`) from element i, NB whole blocks at a time (n a multiple
    /// of NB blocks, in_block 0): each group's blocks folded side by side (fold_rows_of), then ended as
    /// end_block ends one, their chains side by side too, and pushed in order.
    template <class Kern, int NB, class... Args>
    void fold_blocks_side_by_side(index_t i, index_t n, const Args&... args) {
        const index_t block = shape.block, columns = shape.columns, m = lane_group / columns;
        for (const index_t end = i + n; i < end; i += NB * block) {
            alignas(64) lane side[NB * lane_group];
            simd::fill_lanes<NB * lane_group>(side, Op::identity());
            fold_rows_of<Op, A, Kern, 1, NB>(side, i, block / lane_group, block, prefetch, args...);
            lane ends[NB][lane_group];
            chains_side_by_side<Op>( // a chain per (block, column)
                NB * columns, m, columns, [&](index_t t) { return side + t / columns * lane_group + t % columns; },
                [&](index_t t, const lane& v) { ends[t / columns][t % columns] = v; });
            for (int b = 0; b < NB; ++b) stack.push(ends[b]);
        }
    }

    // A group of lanes at a time, with a trip count fixed at compile time and no aliasing between the lanes
    // and the values, so that the compiler vectorizes it at -O2 too.
    static void accumulate_group(lane* __restrict l, const A* __restrict x) {
        for (index_t p = 0; p < lane_group; ++p) l[p] = Op::combine(l[p], Op::from(x[p], 0));
    }
    // `rows` rows of lane_group elements into lane_group lanes, held in registers meanwhile: the vector
    // operations of fold_rows_of (combine_lanes, and the keys of min/max of floats) over the buffer. Most
    // streams of 32 lanes take fold_rows_of itself; this is for the lanes it does not take (min/max of 8- and
    // 16-bit integers, whose lanes are their own type).
    static void accumulate_rows(lane* __restrict l, const A* __restrict x, index_t rows) {
        constexpr reduce_kind kind_here = reduce_kind_of<Op>;
        if constexpr (std::is_arithmetic_v<lane> && sizeof(lane) == sizeof(A) && !std::is_same_v<A, bool> &&
                      (kind_here == reduce_kind::sum || kind_here == reduce_kind::mean ||
                       kind_here == reduce_kind::prod || kind_here == reduce_kind::min || kind_here == reduce_kind::max)) {
            typedef lane vec __attribute__((vector_size(32)));
            constexpr index_t width = 32 / sizeof(lane), count = lane_group / width;
            fold_vectors<Op, A, count>(l, static_cast<const vec*>(nullptr), [&](auto&& visit) {
                for (index_t r = 0; r < rows; ++r)
                    for (index_t v = 0; v < count; ++v) {
                        vec xv;
                        std::memcpy(&xv, x + r * lane_group + v * width, sizeof(vec)); // A's bits are the lane's
                        visit(v, xv);
                    }
            });
        } else {
            for (index_t r = 0; r < rows; ++r)
                for (index_t p = 0; p < lane_group; ++p) l[p] = Op::combine(l[p], Op::from(x[r * lane_group + p], 0));
        }
    }

    void finish(lane* out) {
        if (in_block > 0 || carried) end_block();
        stack.finish(out);
    }
};

// --- The source of a stream: the fused kernel over a box of the broadcast shape ----------------------------------

/// The values of the operand over one output row's box (the reduced axes then the columns, innermost last),
/// computed run by run into a buffer of A.
template <class A, class Kern, int R, class... Ts>
struct reduce_source {
    static constexpr std::size_t L = sizeof...(Ts);
    static constexpr std::size_t M = L + 1;
    using pass = strided_pass<A, Kern, R, Ts...>;
    using args_t = typename pass::args_t;

    std::tuple<view_pointer_t<const Ts>...> data; // (packed memory: packed_ptr, always staged)
    iteration_space<R, M> box; // operand 0: the stream itself (contiguous)
    args_t args;

    /// Computes stream elements [first, last) of the row whose operands start `base[k]` elements after data,
    /// handing each run to sink.feed(values, count, first index), or the kernel itself to sink.feed_kernel where
    /// the sink (a stream_fold) takes its batches, or computing it straight into sink.place(first index) where the
    /// sink keeps the values in memory of its own (copy_sink).
    template <class Sink>
    void run(const std::array<index_t, L>& base, index_t first, index_t last, Sink& sink) const {
        alignas(64) unsigned char stage[pass::stage_offsets[M]];
        const auto rk = static_cast<std::size_t>(box.rank);
        const index_t n = box.inner();
        A* const out = reinterpret_cast<A*>(stage + pass::stage_offsets[0]);
        // Runs of a whole number of the fold's rows of lanes where it takes the kernel's batches: only a box row's
        // ends then leave part of a row to fold one element at a time. Where it takes them and every operand is
        // contiguous along the row (nothing is staged), runs are as long as the row allows: each run costs its
        // offsets and a call.
        index_t most = pass::capacity;
        if constexpr (requires { sink.template feed_kernel<Kern>(args, index_t{}, index_t{}); }) {
            if (sink.takes_batches()) {
                bool staged = false;
                constexpr bool packed[] = {is_packed_element_v<Ts>..., false};
                for (std::size_t k = 0; k < L; ++k) staged = staged || packed[k] || box.strides[k + 1][rk - 1] != 1;
                if (!staged) most = index_t{1} << 20;
                if (most >= sink.shape.P) most -= most % sink.shape.P;
            }
        } else if constexpr (requires { sink.place(index_t{}); }) {
            bool staged = false;
            constexpr bool packed[] = {is_packed_element_v<Ts>..., false};
            for (std::size_t k = 0; k < L; ++k) staged = staged || packed[k] || box.strides[k + 1][rk - 1] != 1;
            if (!staged) most = index_t{1} << 20; // (the values go to the sink's memory, not to the stage)
        } else if constexpr (requires { sink.takes_batches(); }) {
            if (sink.takes_batches() && most >= sink.shape.P) most -= most % sink.shape.P;
        }
        for (index_t pos = first; pos < last;) {
            // (Divisions cost tens of cycles: a stream of one box row, argmax along a row, skips them.)
            const index_t in_row = pos < n ? pos : pos % n;
            const index_t len = std::min({n - in_row, last - pos, most});
            std::array<index_t, L> off = base;
            index_t outer = pos < n ? 0 : pos / n;
            for (std::size_t k = 0; k < L; ++k) off[k] += in_row * box.strides[k + 1][rk - 1];
            for (std::size_t d = rk - 1; outer != 0 && d-- > 0;) {
                const index_t i = outer % box.dims[d];
                outer /= box.dims[d];
                for (std::size_t k = 0; k < L; ++k) off[k] += i * box.strides[k + 1][d];
            }
            std::array<const void*, L> ptrs{};
            std::array<index_t, L> masks;
            masks.fill(~index_t{0});
            [&]<std::size_t... J>(std::index_sequence<J...>) {
                (
                    [&] {
                        using E = std::tuple_element_t<J, std::tuple<Ts...>>;
                        using T = stage_t<E>;
                        const auto src = std::get<J>(data) + off[J];
                        const index_t stride = box.strides[J + 1][rk - 1];
                        T* buffer = reinterpret_cast<T*>(stage + pass::stage_offsets[J + 1]);
                        if constexpr (is_packed_element_v<E>) {
                            unpack_strided(buffer, src, 1, len, 0, stride);
                            ptrs[J] = buffer;
                        } else if (stride == 1) {
                            ptrs[J] = src;
                        } else {
                            if (stride == 0)
                                masks[J] = stage_broadcast<A, Kern>(buffer, src, len); // a value along the run
                            else
                                copy_strided<false>(buffer, src, 1, len, 0, stride);
                            ptrs[J] = buffer;
                        }
                    }(),
                    ...);
            }(std::make_index_sequence<L>{});
            const bool hoist = hoists_leaves<stage_t<Ts>...>(masks); // the f16/bf16 leaves broadcast: converted once
            if constexpr (requires { sink.template feed_kernel<Kern>(args, len, pos); }) {
                if (sink.takes_batches()) {
                    if constexpr (pass::hoists) {
                        if (hoist) {
                            sink.template feed_kernel<hoisted_kernel_t<Kern>>(with_leaf_pointers(args, ptrs, masks),
                                                                             len, pos);
                            pos += len;
                            continue;
                        }
                    }
                    sink.template feed_kernel<Kern>(with_leaf_pointers(args, ptrs, masks), len, pos);
                    pos += len;
                    continue;
                }
            }
            if constexpr (requires { sink.place(pos); }) {
                pass::compute(sink.place(pos), len, with_leaf_pointers(args, ptrs, masks), pass_options{}, hoist);
            } else {
                pass::compute(out, len, with_leaf_pointers(args, ptrs, masks), pass_options{}, hoist);
                sink.feed(out, len, pos);
            }
            pos += len;
        }
    }
};

} // namespace mixt::detail

#endif // MIXT_EVAL_REDUCE_STREAM_HPP
