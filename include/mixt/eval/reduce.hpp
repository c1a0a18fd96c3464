#ifndef MIXT_EVAL_REDUCE_HPP
#define MIXT_EVAL_REDUCE_HPP

// Evaluation of reductions (expr/reduce.hpp) on the CPU, in one pass over the operands' memory.
//
// The operand's broadcast shape is walked in its memory order. Its axes of more than one element split into
// three groups: the kept axes that are innermost in memory (the "columns", K elements per output row; none
// when the innermost axis is reduced), the reduced axes, and the other kept axes (one "output row" per
// position). For each output row, the reduced axes then the columns form a stream of values: the fused
// elementwise kernel (eval/fused.hpp) computes it run by run, converted to the accumulator type (operands not
// contiguous along a run are staged, as in eval/strided.hpp), and it is folded into P lanes (P a multiple of
// K, 32 at least): element s of the stream goes to lane s mod P, whose column is s mod K. Where P is 32 or 96
// and the accumulator a real type of 4 or 8 bytes, the kernel's batches are folded into the lanes in
// registers (fold_rows_of; argmin/argmax of one column: fold_first_extreme_of); otherwise a run is computed
// into a small buffer in L1 first (feed). Each block of stream elements (a fixed multiple of P) is folded
// lanes-to-columns in a fixed order and pushed onto a pairwise stack: two partial results of the same level combine into one of
// the next, so the error of a float sum grows with the logarithm of the number of blocks (as NumPy's pairwise
// sum), not with the number of elements.
//
// Threads. A stream is cut into super-blocks of a fixed power-of-two number of blocks; each (output row,
// super-block) pair is a task with its own lanes and stack, and the partial results of an output row's
// super-blocks are combined pairwise in their order. Nothing depends on which thread ran a task or on how
// many threads there are: a reduction on a thread pool equals the single-threaded one bit for bit.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/dtype/convert.hpp"
#include "mixt/errors.hpp"
#include "mixt/eval/callable_ref.hpp"
#include "mixt/eval/fused.hpp"
#include "mixt/eval/lower.hpp"
#include "mixt/eval/plan.hpp"
#include "mixt/eval/reduce_plan.hpp"
#include "mixt/eval/reduce_rows.hpp"
#include "mixt/eval/reduce_stream.hpp"
#include "mixt/eval/pool.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/eval/strided.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/reduce.hpp"

namespace mixt::detail {

template <class Red>
using reduction_tensor_t =
    Eigen::Tensor<value_t<Red>, Red::rank, result_layout_v<Red::rank, Red::layout>>;

template <class Red, class Device>
reduction_tensor_t<Red> reduce_into_new(const Red& r, const Device& device);
template <class Red, class Device, class OutFor>
void reduce_into(const Red& r, const Device& device, const OutFor& out_for);

/// `e` with every reduction in it replaced by a leaf that owns its result (evaluated on `device`).
template <class E, class Device>
auto materialize(const E& e, const Device& device) {
    return replace_reductions(e, [&](const auto& r) {
        using Red = std::remove_cvref_t<decltype(r)>;
        return leaf<typename Red::policy, reduction_tensor_t<Red>>{{}, reduce_into_new(r, device)};
    });
}

/// materialize, and also every leaf that is an Eigen expression rather than an array in memory (a reshape, a
/// broadcast: its elements must be computed somewhere before a reduction can read them) evaluated into a tensor.
template <class E, class Device>
auto materialize_for_reduction(const E& e, const Device& device) {
    return materialize(e, device); // literals, scalars, reductions
}
template <class P, class X, class Device>
auto materialize_for_reduction(const leaf<P, X>& l, const Device& device) {
    using Xs = std::remove_cvref_t<X>;
    if constexpr (has_view_v<Xs>) {
        return materialize(l, device);
    } else {
        using T = Eigen::Tensor<value_t<leaf<P, X>>, array_traits<Xs>::rank,
                                array_traits<Xs>::layout == static_cast<int>(Eigen::RowMajor) ? Eigen::RowMajor : Eigen::ColMajor>;
        T t = l.x;
        return leaf<P, T>{{}, std::move(t)};
    }
}
template <class Op, class... Cs, class Device>
auto materialize_for_reduction(const node<Op, Cs...>& n, const Device& device) {
    return std::apply(
        [&](const auto&... c) {
            return node<Op, decltype(materialize_for_reduction(c, device))...>{
                {}, {materialize_for_reduction(c, device)...}};
        },
        n.children);
}

/// reduce_into for an operand without reductions inside.
/// How a reduction's rows are computed (the reduction's part of the plan, chosen by choose_reduce_strategy):
enum class reduce_strategy {
    first_extremes,       ///< argmin/argmax of one f16/bf16 array, a row a contiguous run: one scan per row
    short_rows_across,    ///< rows of one column of at most short_row_stream values (short_index_row_stream for
                          ///< argmin/argmax), folded or compared side by side
    short_rows_in_blocks, ///< the same rows, their lanes made and ended a block of rows at a time
    short_rows_in_order,  ///< the same rows, of one array read in place, each folded in memory order in one vector
                          ///< (fold_rows_in_order: results that do not depend on the grouping)
    streams,              ///< each row's stream folded into lanes, in super-blocks (tasks), combined pairwise
};

inline const char* name(reduce_strategy s) {
    switch (s) {
    case reduce_strategy::first_extremes: return "first_extremes";
    case reduce_strategy::short_rows_across: return "short_rows_across";
    case reduce_strategy::short_rows_in_blocks: return "short_rows_in_blocks";
    case reduce_strategy::short_rows_in_order: return "short_rows_in_order";
    case reduce_strategy::streams: return "streams";
    }
    return "?";
}

/// The narrower integer S whose rows short_rows_across reads in place and widens or sums in registers
/// (fold_widened_rows_across) where a reduction of kind Op in A reads them through convert_kernel<A,
/// leaf_kernel<S>> (in_order_source_t) and transposes its rows (transposes_rows_v) or sums them as bytes
/// (byte_rows_summed_across); void otherwise.
template <class Op, class A, class Kern>
using widened_rows_source_t =
    std::conditional_t<!Op::indexed && !std::is_same_v<in_order_source_t<A, Kern>, A> &&
                           (transposes_rows_v<Op, A> || byte_rows_summed_across<Op, A, in_order_source_t<A, Kern>>(8)),
                       in_order_source_t<A, Kern>, void>;

/// Whether the short rows of a reduction (its plan, make_reduce_plan) are read in place from its operand: one
/// array of the accumulator type A, the kernel Kern its plain leaf, the rows one after another in memory.
template <class A, class Kern, class Plan>
bool rows_read_in_place(const Plan& plan) {
    if constexpr (std::is_same_v<Kern, leaf_kernel<A>>)
        return plan.rows_box.flat(1);
    else
        return false;
}

/// Whether rows of n values of S (in_order_source_t), reduced in A, are folded one at a time in memory order
/// (short_rows_in_order) rather than side by side (measured faster so on AMD and Intel CPUs alike;
/// docs/performance-notes.md, "Short rows of every lane type" and "Which short-row choices depend on the vendor"): rows
/// of A longer than two vectors of lanes (2 * 64 / sizeof(A) values) or of lane_group values or more, rows of a
/// narrower integer (read and widened in registers, not converted into a buffer first) that fill half a vector or more
/// and are longer than short_row_columns (shorter ones are widened side by side, fold_widened_rows_across), and rows of
/// 16 bytes or more of a 1- or 2-byte A (min/max), whose lanes have no other vector path; not sums of rows of 8, 16, 24
/// or 32 bytes into 8-byte lanes (byte_rows_summed_across: side by side).
template <class Op, class A, class S>
bool rows_folded_in_order(index_t n) {
    constexpr index_t W = 64 / sizeof(A);
    if (byte_rows_summed_across<Op, A, S>(n)) return false; // (summed side by side wherever it applies)
    if constexpr (sizeof(A) <= 2) // (lanes that fold_rows_across folds one by one)
        return n * static_cast<index_t>(sizeof(A)) >= 16;
    return (std::is_same_v<A, S> ? n > 2 * W || n >= lane_group : 2 * n >= W && n > short_row_columns);
}

/// The strategy of a reduction of kind Op, accumulator A, kernel Kern, with its plan (make_reduce_plan). Rows
/// longer than the lanes and read in place are folded in memory order where their result does not depend on the
/// grouping (rows_folded_in_order), else transposed in registers or read in memory order as long_rows_transposed
/// says for the CPU running the program.
template <class Op, class A, class Kern, class Plan>
reduce_strategy choose_reduce_strategy(const Plan& plan) {
#if MIXT_SIMD_AVX512
    if constexpr (Op::indexed && keyed_leaf_v<Kern>) {
        // Each row of the result one contiguous run of the array, and one task (a super-block) per row.
        if (plan.columns == 1 && plan.per_row == 1 && plan.box.flat(1)) return reduce_strategy::first_extremes;
    }
#endif
    if constexpr (Op::indexed) {
        if (plan.columns == 1 && plan.supers == 1 && plan.stream <= short_index_row_stream)
            return reduce_strategy::short_rows_across;
    }
    if constexpr (!Op::indexed) {
        if (plan.columns == 1 && plan.supers == 1 && plan.stream <= short_row_stream<Op, A>) {
            if constexpr (folds_rows_in_order_v<Op, A, Kern>)
                if (plan.rows_box.flat(1) && rows_folded_in_order<Op, A, in_order_source_t<A, Kern>>(plan.stream))
                    return reduce_strategy::short_rows_in_order;
            // Fewer rows than fold_rows_across takes side by side (lane_group): it would fold a whole group of
            // rows, most of them not there (a sum of 64 values, 32 rows of 64); the blocks fold row_batch rows at a
            // time, and only those that are there: the same bits.
            if (plan.rows < lane_group) return reduce_strategy::short_rows_in_blocks;
            if (plan.stream <= lane_group) return reduce_strategy::short_rows_across;
            if constexpr (extremes_across_v<Op, A>) return reduce_strategy::short_rows_across; // (any length, AVX2)
            if constexpr (transposes_rows_v<Op, A>)
                if (!rows_read_in_place<A, Kern>(plan) || long_rows_transposed()) return reduce_strategy::short_rows_across;
            return reduce_strategy::short_rows_in_blocks;
        }
    }
    return reduce_strategy::streams;
}

/// Whether a reduction's result of type T is its lane, bits unchanged (reduce_result of a sum, product, min or
/// max whose accumulator A is T and its own lane type): its rows' lanes may then be stored straight into the
/// destination.
template <reduce_kind K, class A, class T>
inline constexpr bool stores_lanes_as_results_v =
    (K == reduce_kind::sum || K == reduce_kind::prod || K == reduce_kind::min || K == reduce_kind::max) &&
    std::is_same_v<A, T> && std::is_same_v<typename reduce_op<K, A>::lane, T>;

/// Whether short_rows_across stores a whole batch's results straight into a destination whose rows are in order
/// (stores_lanes_as_results_v), rather than into a buffer copied there at the batch's end: for lanes of 8 bytes,
/// and for rows of at most 4 values (results a fifth or more of the traffic); for longer rows of 4-byte lanes the
/// copy was faster (docs/performance-notes.md, "Short rows of every lane type").
template <class Lane>
constexpr bool results_stored_straight(index_t stream) {
    return sizeof(Lane) == 8 || stream <= 4;
}

/// What the strategies read of a reduction's plan: its rank-free part (reduce_counts) and where each output row's
/// results go (the plan's row_bases(row).second, through callable_ref: called only where the rows are not in order).
struct rows_layout : reduce_counts {
    callable_ref<index_t(index_t)> row_offset;

    index_t out_offset(index_t row) const { return rows_in_order ? row * columns : row_offset(row); }
};

/// Stores the lanes of rows first to first + n - 1 of a reduction of one column (the short-row strategies) as
/// their results (reduce_result) at their places in o: o[row] where the plan's rows are in order (a loop the
/// compiler vectorizes), else o[plan.out_offset(row)].
template <reduce_kind K, class A, class T, class Lane>
void store_row_results(T* o, const rows_layout& plan, index_t first, index_t n, const Lane* results) {
    const index_t count = plan.reduced_count;
    if (plan.rows_in_order)
        for (index_t h = 0; h < n; ++h) o[first + h] = reduce_result<K, A, T>(results[h], count);
    else
        for (index_t h = 0; h < n; ++h) o[plan.out_offset(first + h)] = reduce_result<K, A, T>(results[h], count);
}

/// The whole plan of a reduction r of the operand c (without reductions inside) on device: its layout and checks
/// (make_reduce_plan), the threads and prefetch (decide_reduction_pass), the strategy (choose_reduce_strategy),
/// and `ahead_end`: where the operand is one dense array read whole (no broadcast, no gaps: each task reads its
/// rows in memory order), the end of its memory, up to which a scan may prefetch past the values it is handed
/// (where the target prefetches at all, prefetch_enabled); else null. reduce_operand runs it; explain prints it.
template <class Plan>
struct reduction_plan {
    Plan layout;
    pass_decision pass;
    reduce_strategy strategy;
    const void* ahead_end = nullptr;
    /// How many whole blocks a stream folds at once (stream_fold::blocks_side_by_side where side_by_side_pays
    /// and the reduction reads at most side_by_side_max_bytes; else 1).
    int blocks_side_by_side = 1;
    /// Whether short rows folded side by side in place ask for the operand's lines ahead (short_rows_across, an
    /// `ahead_end`, and rows_prefetched of the bytes read).
    bool rows_ahead = false;
};
template <class Red, class C, class Device>
auto plan_reduction(const Red& r, const C& c, const Device& device) {
    constexpr int R = std::remove_cvref_t<C>::rank;
    using A = typename Red::accumulator_type;
    using Op = reduce_op<Red::kind, A>;
    using Kern = decltype(make_kernel<A>(c));
    auto layout = make_reduce_plan(r, c);
    const pass_decision pass = decide_reduction_pass<C>(layout, device);
    const reduce_strategy strategy = choose_reduce_strategy<Op, A, Kern>(layout);
    const void* ahead_end = nullptr;
    const auto views = leaf_views_of(c);
    if constexpr (std::tuple_size_v<std::remove_const_t<decltype(views)>> == 1 &&
                  !is_packed_element_v<typename std::tuple_element_t<0, std::remove_const_t<decltype(views)>>::element_type>) {
        if (prefetch_enabled) {
            const auto v = broadcast_view<R>(std::get<0>(views), layout.S);
            const auto [lo, hi] = byte_extent(v);
            const index_t count = layout.outputs * layout.reduced_count; // the elements of the broadcast shape
            if (elements_distinct(v) && hi - lo == static_cast<std::uintptr_t>(count) * sizeof(*v.data))
                ahead_end = reinterpret_cast<const void*>(hi);
        }
    }
    int side_by_side = 1;
    if (strategy == reduce_strategy::streams && side_by_side_pays() &&
        static_cast<std::size_t>(layout.stream * layout.rows) * leaf_bytes_v<C> <= side_by_side_max_bytes)
        side_by_side = stream_fold<Op, A>::template blocks_side_by_side<Kern>();
    const bool rows_ahead = strategy == reduce_strategy::short_rows_across && ahead_end != nullptr &&
                            rows_prefetched(static_cast<std::size_t>(layout.stream * layout.rows) * sizeof(A));
    return reduction_plan<decltype(layout)>{std::move(layout), pass, strategy, ahead_end, side_by_side, rows_ahead};
}

/// Where a reduction writes its result: the memory that the caller's out_for(shape) returns for the result's
/// shape, reached through callable_ref, so that reduce_operand is compiled once per reduction whatever the caller
/// (eval's new tensor, assign's destination, an operand's materialized reduction), not once per caller.
template <class T, int R>
using result_memory = callable_ref<T*(const shape_t<R>&)>;

// The strategies below depend on the reduction's kind, accumulator and result type and the device, not on the
// expression or its rank (they read the plan's reduce_counts): each is compiled once per such set, whatever the
// expressions reduced. What does depend on
// the expression (the fused kernel computing a run of the operand's values) reaches them through callable_ref:
// one indirect call per batch of rows or per super-block, not per value.

/// Computes the values of the short rows' streams, one after another (plan.rows_box), from stream element
/// `begin` to `end`, converted to A, into into[0, end - begin).
template <class A>
using rows_values = callable_ref<void(index_t begin, index_t end, A* into)>;

/// Feeds elements `begin` to `end` of output row `row`'s stream into a fold.
template <class Op, class A>
using stream_feed = callable_ref<void(index_t row, index_t begin, index_t end, stream_fold<Op, A>& fold)>;

#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
/// The short_rows_in_order strategy: the rows of x, one after another from its start, each folded in memory order
/// (fold_rows_in_order); the lanes stored straight into o where they are the results and the rows in order, else
/// a batch's lanes at a time through store_row_results.
template <reduce_kind K, class A, class T, class S, class Device>
void reduce_short_rows_in_order(const rows_layout& plan, const S* x, T* o, const Device& device, int threads) {
    using Op = reduce_op<K, A>;
    using lane = typename Op::lane;
    const index_t stream = plan.stream;
    run_reduce_tasks(plan.rows, device, threads, [&](index_t first, index_t last) {
        if constexpr (stores_lanes_as_results_v<K, A, T>) { // (the lanes are the results)
            if (plan.rows_in_order && plan.columns == 1) { // (out_offset(row) is row)
                fold_rows_in_order<Op, A>(x + first * stream, stream, last - first, o + first);
                return;
            }
        }
        constexpr index_t batch = 256; // results of a batch of rows as lanes, then stored in T
        lane results[batch];
        for (index_t t = first; t < last; t += batch) {
            const index_t n = std::min(batch, last - t);
            fold_rows_in_order<Op, A>(x + t * stream, stream, n, results);
            store_row_results<K, A>(o, plan, t, n, results);
        }
    });
}
#endif

/// The short_rows_across strategy: the rows of a batch folded side by side, a row per vector lane
/// (fold_rows_across), from a buffer that values(...) fills, or from the operand itself where it is one array
/// of A whose rows lie one after another (`direct`, no copy). Rows of 2 to short_row_columns values of a
/// narrower integer than A (one array, converted by the kernel), and sums of rows of 8, 16, 24 or 32 i8 or u8
/// values into 8-byte lanes (byte_rows_summed_across), are read in place too (`narrow`) and widened or summed in
/// registers (fold_widened_rows_across), in whole batches (a task's last part batch: the buffer). `ahead`: rows
/// read in place from a large operand ask for its lines ahead (plan_reduction's rows_ahead).
template <reduce_kind K, class A, class T, class Narrow, class Device>
void reduce_short_rows_across(const rows_layout& plan, T* o, const Device& device, int threads, const A* direct,
                              const Narrow* narrow, bool ahead, const rows_values<A>& values_of) {
    using Op = reduce_op<K, A>;
    using lane = typename Op::lane;
    const index_t stream = plan.stream;
    run_reduce_tasks(plan.rows, device, threads, [&](index_t first, index_t last) {
        const index_t batch = rows_per_batch(stream, last - first, lane_group);
        // Not a vector: A may be bool. In place up to 4 KiB, so that a few short rows allocate nothing.
        small_array<A, 4096 / sizeof(A)> values(static_cast<std::size_t>(batch * stream));
        small_array<lane, lane_group> results(static_cast<std::size_t>(batch));
        for (index_t t = first; t < last; t += batch) {
            const index_t n = std::min(batch, last - t);
            const A* from = values.data();
            if (direct && n == batch) { // whole groups of rows, all inside the array
                from = direct + t * stream;
            } else if (narrow && n == batch) { // (the same, widened as they are folded)
            } else {
                values_of(t * stream, (t + n) * stream, values.data());
            }
            const bool in_place_ahead = ahead && from != values.data();
            if constexpr (Op::indexed) { // (argmin/argmax: the rows' first extremes)
                if constexpr (std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
                    if (plan.rows_in_order) { // straight into o: the indices are the results
                        first_extreme_indexes<Op, A>(from, stream, n, o + t, in_place_ahead);
                        continue;
                    }
                }
                first_extremes_across<Op, A>(from, stream, (n + lane_group - 1) / lane_group, results.data(),
                                             in_place_ahead);
            } else {
                const auto fold = [&](index_t groups, lane* into) {
#if MIXT_SIMD_AVX2 && !defined(__CUDACC__)
                    if constexpr (!std::is_void_v<Narrow>)
                        if (narrow && n == batch)
                            return fold_widened_rows_across<Op, A>(narrow + t * stream, stream, groups, into);
#endif
                    fold_rows_across<Op, A>(from, stream, groups, into, in_place_ahead);
                };
                if constexpr (stores_lanes_as_results_v<K, A, T>) {
                    // (the lanes are the results)
                    if (plan.rows_in_order && n == batch && results_stored_straight<lane>(stream)) {
                        fold(n / lane_group, o + t);
                        continue;
                    }
                }
                fold((n + lane_group - 1) / lane_group, results.data());
            }
            store_row_results<K, A>(o, plan, t, n, results.data());
        }
    });
}

/// The short_rows_in_blocks strategy (not argmin/argmax): the rows from a buffer that values(...) fills, or, in
/// memory order, from the operand itself where it is one array of A whose rows lie one after another (`direct`:
/// no copy, and no buffer: end_rows_of_one_block reads only the rows it keeps).
template <reduce_kind K, class A, class T, class Device>
void reduce_short_rows_in_blocks(const rows_layout& plan, T* o, const Device& device, int threads, const A* direct,
                                 const rows_values<A>& values_of) {
    using Op = reduce_op<K, A>;
    using lane = typename Op::lane;
    constexpr index_t row_batch = 8;
    const index_t stream = plan.stream;
    run_reduce_tasks(plan.rows, device, threads, [&](index_t first, index_t last) {
        const index_t batch = rows_per_batch(stream, last - first, row_batch);
        // Not a vector: A may be bool. (lane_group values to spare, which nothing reads.)
        std::unique_ptr<A[]> values;
        if (!direct) values.reset(new A[static_cast<std::size_t>(batch * stream + lane_group)]());
        small_array<lane, row_batch> results(static_cast<std::size_t>(batch));
        for (index_t t = first; t < last; t += batch) {
            const index_t n = std::min(batch, last - t);
            const A* from = values.get();
            if (direct)
                from = direct + t * stream;
            else
                values_of(t * stream, (t + n) * stream, values.get());
            end_rows_of_blocks<Op, A, row_batch>(from, stream, n, results.data());
            store_row_results<K, A>(o, plan, t, n, results.data());
        }
    });
}

/// The streams strategy: a task per (output row, super-block), whose stream elements feed(...) folds into its own
/// lanes and stack (stream_fold); then each row's super-blocks combined pairwise in their order and finished into
/// the result's dtype.
template <reduce_kind K, class A, class T, class Device>
void reduce_streams(const rows_layout& plan, const pass_decision& pass, const void* ahead_end, bool side_by_side, T* o,
                    const Device& device, const stream_feed<reduce_op<K, A>, A>& feed) {
    using Op = reduce_op<K, A>;
    using lane = typename Op::lane;
    const index_t columns = plan.columns, stream = plan.stream, rows = plan.rows, super = plan.super,
                  supers = plan.supers, per_row = plan.per_row, reduced_count = plan.reduced_count;
    const stream_shape shape = plan.shape;
    small_array<lane, 16> partial(static_cast<std::size_t>(rows * per_row * columns), Op::identity());
    const bool prefetch = pass.options.prefetch == prefetch_kind::loads_and_stores; // (a reduction stores nothing)
    run_reduce_tasks(rows * per_row, device, pass.threads, [&](index_t first, index_t last) {
        // As many blocks as a task pushes: a super-block's, or the whole stream's if it is shorter.
        reduce_scratch<lane> scratch(shape.P, columns, (std::min(super, stream) + shape.block - 1) / shape.block);
        for (index_t t = first; t < last; ++t) {
            const index_t row = t / per_row, sb = t % per_row;
            lane* const result = partial.data() + static_cast<std::size_t>(t * columns);
            if (supers == 0) continue; // an empty stream: the identity
            stream_fold<Op, A> fold(shape, scratch);
            fold.ahead_end = ahead_end;
            fold.prefetch = prefetch;
            fold.side_by_side = side_by_side;
            const index_t begin = sb * super, end = std::min(stream, begin + super);
            feed(row, begin, end, fold);
            fold.finish(result);
        }
    });

    const std::size_t depth = reduce_scratch<lane>::stack_depth(supers);
    small_array<lane, 4 * 24> entries(static_cast<std::size_t>(columns) * depth);
    small_array<lane, 4> final_value(static_cast<std::size_t>(columns));
    small_array<int, 24> levels(depth);
    for (index_t row = 0; row < rows; ++row) {
        const lane* v = partial.data() + static_cast<std::size_t>(row * per_row * columns); // one super-block: as is
        if (supers > 1) {
            pairwise_stack<Op> st{entries.data(), levels.data(), columns, 0};
            for (index_t sb = 0; sb < supers; ++sb)
                st.push(partial.data() + static_cast<std::size_t>((row * per_row + sb) * columns));
            st.finish(final_value.data());
            v = final_value.data();
        }
        const index_t out_off = plan.out_offset(row);
        for (index_t k = 0; k < columns; ++k) o[out_off + k] = reduce_result<K, A, T>(v[k], reduced_count);
    }
}

/// The reduction's executor: runs plan_reduction's plan, writing the result where out_for(shape) says. What it
/// compiles per expression is the plan and the fused kernel's runs (`source`, `rows_source`); the strategies
/// are reached through rows_values and stream_feed.
template <class Red, class C, class Device>
void reduce_operand(const Red& r, const C& c, const Device& device, const result_memory<value_t<Red>, Red::rank>& out_for) {
    constexpr int R = std::remove_cvref_t<C>::rank;
    constexpr reduce_kind K = Red::kind;
    using A = typename Red::accumulator_type;
    using T = value_t<Red>;
    using Op = reduce_op<K, A>;

    const auto planned = plan_reduction(r, c, device);
    const auto& plan = planned.layout;
    T* const o = out_for(plan.out_shape); // after the plan's checks: nothing is written before them
    if (plan.outputs == 0) return;
    const auto views = leaf_views_of(c);
    using Kern = decltype(make_kernel<A>(c));
    const int threads = planned.pass.threads;
    const reduce_strategy strategy = planned.strategy;
    const auto row_offset = [&](index_t row) { return plan.row_bases(row).second; };
    const rows_layout layout{plan, callable_ref<index_t(index_t)>::of(row_offset)};
#if MIXT_SIMD_AVX512
    if constexpr (Op::indexed && keyed_leaf_v<Kern>) {
        if (strategy == reduce_strategy::first_extremes) {
            first_extremes_of_rows<Op>(std::get<0>(views).data, plan.stream, plan.rows,
                                       [&](index_t row) { return plan.row_bases(row); }, o, planned.ahead_end, device,
                                       threads);
            return;
        }
    }
#endif
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    if constexpr (folds_rows_in_order_v<Op, A, Kern>) {
        if (strategy == reduce_strategy::short_rows_in_order) { // (the rows one after another from the array's start)
            reduce_short_rows_in_order<K, A>(layout, std::get<0>(views).data, o, device, threads);
            return;
        }
    }
#endif
    // Rows of one column whose stream is at most short_row_stream values (one block): a row's result is its
    // block's end, and the fold's set-up per row and that end would be most of the time. Such rows are computed
    // many at a time, in runs that cross rows (plan.rows_box), into a buffer (or read in place);
    // fold_rows_across or end_rows_of_one_block makes the stream's lanes and their end for many rows at once,
    // the same values as stream_fold's, and the results are stored straight into o (results_stored_straight)
    // or through a buffer of lanes.
    if (strategy == reduce_strategy::short_rows_across || strategy == reduce_strategy::short_rows_in_blocks) {
        const auto rows_source = std::apply(
            [&](const auto&... v) {
                using S_ = reduce_source<A, Kern, R, std::remove_const_t<typename std::remove_cvref_t<decltype(v)>::element_type>...>;
                return S_{{v.data...}, plan.rows_box, kernel_args(make_kernel<A>(c))};
            },
            views);
        const auto copy = [&](index_t begin, index_t end, A* into) {
            copy_sink<A> sink{into, begin};
            rows_source.run({}, begin, end, sink);
        };
        const A* direct = nullptr;
        if constexpr (std::is_same_v<Kern, leaf_kernel<A>>) // (one array of A: its data is an A*)
            if (rows_read_in_place<A, Kern>(plan)) direct = reinterpret_cast<const A*>(std::get<0>(views).data);
        if (strategy == reduce_strategy::short_rows_across) {
            using narrow_t = widened_rows_source_t<Op, A, Kern>;
            const narrow_t* narrow = nullptr;
            if constexpr (!std::is_void_v<narrow_t>)
                if (plan.rows_box.flat(1) && rows_widened_across<Op, A, narrow_t>(plan.stream))
                    narrow = std::get<0>(views).data;
            reduce_short_rows_across<K, A, T, narrow_t>(layout, o, device, threads, direct, narrow,
                                                         direct && planned.rows_ahead, rows_values<A>::of(copy));
            return;
        }
        if constexpr (!Op::indexed) { // (argmin/argmax take only the path above)
            reduce_short_rows_in_blocks<K, A, T>(layout, o, device, threads, direct, rows_values<A>::of(copy));
            return;
        }
    }

    const auto source = std::apply(
        [&](const auto&... v) {
            using S_ = reduce_source<A, Kern, R, std::remove_const_t<typename std::remove_cvref_t<decltype(v)>::element_type>...>;
            return S_{{v.data...}, plan.box, kernel_args(make_kernel<A>(c))};
        },
        views);
    const auto feed = [&](index_t row, index_t begin, index_t end, stream_fold<Op, A>& fold) {
        source.run(plan.row_bases(row).first, begin, end, fold);
    };
    reduce_streams<K, A, T>(layout, planned.pass, planned.ahead_end, planned.blocks_side_by_side > 1, o, device,
                            stream_feed<Op, A>::of(feed));
}

/// Evaluates the reduction r on device into memory that out_for(shape) returns for the result's shape: the
/// result's elements contiguous in its layout. out_for is called once, after every check that can throw
/// (shapes, axes, an empty min or max) and before anything is written.
template <class Red, class Device, class OutFor>
void reduce_into(const Red& r, const Device& device, const OutFor& f) {
    const auto out_for = result_memory<value_t<Red>, Red::rank>::of(f);
    if constexpr (!passes_compiled_for_v<Device>) {
        (void)r, (void)device, (void)out_for; // (nvcc's device pass: device.hpp)
    } else if constexpr (!fusable_v<typename Red::child_type>) {
        const auto m = materialize_for_reduction(r.child, device);
        reduce_operand(r, m, device, out_for);
    } else if constexpr (has_reduction_v<typename Red::child_type>) {
        const auto m = materialize(r.child, device);
        reduce_operand(r, m, device, out_for);
    } else {
        reduce_operand(r, r.child, device, out_for);
    }
}

template <class Red, class Device>
reduction_tensor_t<Red> reduce_into_new(const Red& r, const Device& device) {
    reduction_tensor_t<Red> out;
    reduce_into(r, device, [&](const shape_t<Red::rank>& shape) {
        out.resize(to_dsizes<Red::rank>(shape));
        return out.data();
    });
    return out;
}

} // namespace mixt::detail

#endif // MIXT_EVAL_REDUCE_HPP
