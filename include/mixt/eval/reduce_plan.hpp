#ifndef MIXT_EVAL_REDUCE_PLAN_HPP
#define MIXT_EVAL_REDUCE_PLAN_HPP

// What the CPU's reductions (eval/reduce.hpp) and the GPU's (eval/gpu_reduce.hpp) share, host and device code
// alike: the lanes' arithmetic (reduce_op: identity, from, combine; integers wrap), the shape of a stream (P
// lanes, blocks) and its pairwise stack, the result of a reduction from its lanes (reduce_result), the plan of a
// reduction (make_reduce_plan: output rows, the stream of each, lanes, blocks, super-blocks; every check of the
// reduction made there, before anything runs), and replace_reductions, which evaluates the reductions inside an
// expression first. Nothing here runs a loop.

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
#include "mixt/errors.hpp"
#include "mixt/eval/check.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/functors.hpp"
#include "mixt/expr/reduce.hpp"

namespace mixt::detail {

// --- The lanes' arithmetic ------------------------------------------------------------------------------------

/// Integers are summed and multiplied as unsigned integers of their width: they wrap (two's complement)
/// instead of overflowing.
template <class A>
struct wrapping {
    using type = A;
};
template <>
struct wrapping<bool> { // sum<bool> and prod<bool> (JAX adds bools as `or`, multiplies them as `and`): bytes
    using type = unsigned char;
};
template <class A>
    requires(is_int_v<A> && std::is_signed_v<A>)
struct wrapping<A> {
    using type = std::make_unsigned_t<A>;
};
template <class A>
using wrapping_t = typename wrapping<A>::type;

template <class T>
EIGEN_DEVICE_FUNC constexpr bool reduce_is_nan(const T& x) {
    if constexpr (is_complex_v<T>)
        return x.real() != x.real() || x.imag() != x.imag();
    else if constexpr (std::is_floating_point_v<T>)
        return x != x;
    else
        return false;
}

// Whether a comes before b in the order of min/max: -0 before +0; complex values lexicographically, each part
// so. Neither is NaN.
template <class T>
EIGEN_DEVICE_FUNC constexpr bool ordered_less(const T& a, const T& b) {
    if constexpr (is_complex_v<T>) {
        if (ordered_less(a.real(), b.real())) return true;
        if (ordered_less(b.real(), a.real())) return false;
        return ordered_less(a.imag(), b.imag());
    } else if constexpr (std::is_floating_point_v<T>) {
        using bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
        constexpr int top = 8 * sizeof(T) - 1;
        return a < b || (a == b && (bit_cast<bits>(a) >> top) != 0 && (bit_cast<bits>(b) >> top) == 0);
    } else {
        return a < b;
    }
}

/// The arithmetic of reduction K accumulating in A: `lane` (the accumulator's type), `identity()`,
/// `combine(a, b)` (a comes first in the stream) and `from(x, index)`.
template <reduce_kind K, class A>
struct reduce_op {
    static_assert(K == reduce_kind::sum || K == reduce_kind::mean);
    using lane = wrapping_t<A>;
    static constexpr reduce_kind kind = K;
    static constexpr bool indexed = false;
    EIGEN_DEVICE_FUNC static lane identity() { return lane(0); }
    EIGEN_DEVICE_FUNC static lane combine(lane a, lane b) {
        if constexpr (std::is_same_v<A, bool>)
            return static_cast<lane>(a | b);
        else if constexpr (is_complex_v<A>) // part by part: std::complex's + is miscompiled in CUDA device code
            return lane(a.real() + b.real(), a.imag() + b.imag());
        else
            return static_cast<lane>(a + b);
    }
    EIGEN_DEVICE_FUNC static lane from(A x, index_t) { return static_cast<lane>(x); }
};
template <class A>
struct reduce_op<reduce_kind::prod, A> {
    using lane = wrapping_t<A>;
    static constexpr reduce_kind kind = reduce_kind::prod;
    static constexpr bool indexed = false;
    EIGEN_DEVICE_FUNC static lane identity() { return lane(1); }
    EIGEN_DEVICE_FUNC static lane combine(lane a, lane b) {
        if constexpr (std::is_same_v<A, bool>)
            return static_cast<lane>(a & b);
        else if constexpr (std::is_unsigned_v<lane> && sizeof(lane) < sizeof(unsigned))
            return static_cast<lane>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
        else if constexpr (is_complex_v<A>) // mixt's product (functors.hpp): every product rounded once, on every
            return mul_fn{}(a, b);          // device and whatever -ffp-contract says; never std::complex's operators
#if defined(__CUDA_ARCH__)
        else if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double>)
            return mul_rn(a, b);
#endif
        else
            return static_cast<lane>(a * b);
    }
    EIGEN_DEVICE_FUNC static lane from(A x, index_t) { return static_cast<lane>(x); }
};
template <reduce_kind K, class A>
    requires(K == reduce_kind::min || K == reduce_kind::max)
struct reduce_op<K, A> {
    using lane = std::conditional_t<std::is_same_v<A, bool>, unsigned char, A>; // no std::vector<bool>
    static constexpr reduce_kind kind = K;
    static constexpr bool indexed = false;
    EIGEN_DEVICE_FUNC static lane identity() {
        if constexpr (is_complex_v<A>) {
            using R = typename A::value_type;
            const R inf = std::numeric_limits<R>::infinity();
            return K == reduce_kind::min ? A(inf, inf) : A(-inf, -inf);
        } else if constexpr (std::is_floating_point_v<A>) {
            return K == reduce_kind::min ? std::numeric_limits<A>::infinity() : -std::numeric_limits<A>::infinity();
        } else if constexpr (std::is_same_v<A, bool>) {
            return K == reduce_kind::min;
        } else {
            return K == reduce_kind::min ? std::numeric_limits<A>::max() : std::numeric_limits<A>::lowest();
        }
    }
    // The first NaN wins; else the smaller (min) or larger (max), -0 < +0. Written as selects, which vectorize.
    EIGEN_DEVICE_FUNC static lane combine(lane a, lane b) {
        lane r;
        if constexpr (K == reduce_kind::min)
            r = ordered_less(b, a) ? b : a;
        else
            r = ordered_less(a, b) ? b : a;
        if constexpr (is_complex_v<A> || std::is_floating_point_v<A>) {
            r = reduce_is_nan(b) ? b : r;
            r = reduce_is_nan(a) ? a : r;
        }
        return r;
    }
    EIGEN_DEVICE_FUNC static lane from(A x, index_t) { return x; }
};
/// A candidate of argmin/argmax: a value and its index along the reduced axes.
template <class A>
struct indexed_value {
    A v;
    index_t i;
};
template <reduce_kind K, class A>
    requires(K == reduce_kind::argmin || K == reduce_kind::argmax)
struct reduce_op<K, A> {
    using lane = indexed_value<A>;
    static constexpr reduce_kind kind = K;
    static constexpr bool indexed = true;
    EIGEN_DEVICE_FUNC static lane identity() {
        return {static_cast<A>(reduce_op<K == reduce_kind::argmin ? reduce_kind::min : reduce_kind::max, A>::identity()), -1};
    }
    // b replaces a where it is more extreme (a NaN more than anything), or as extreme with a smaller index;
    // an identity (index -1) is always replaced.
    EIGEN_DEVICE_FUNC static lane combine(lane a, lane b) {
        if (b.i < 0) return a;
        if (a.i < 0) return b;
        const bool an = reduce_is_nan(a.v), bn = reduce_is_nan(b.v);
        bool b_first;
        if (an || bn) {
            b_first = bn && (!an || b.i < a.i);
        } else if (K == reduce_kind::argmin ? b.v < a.v : a.v < b.v) {
            b_first = true;
        } else {
            b_first = b.v == a.v && b.i < a.i;
        }
        return b_first ? b : a;
    }
    EIGEN_DEVICE_FUNC static lane from(A x, index_t i) { return {x, i}; }
    /// `best` combined with the first extreme element of x[0, n) (indices offset by `first`). The segment's
    /// extreme value and whether it has a NaN come from one vectorized scan; only where that beats `best` is the
    /// segment searched for its first such element (for most segments of a long row, it does not).
    static lane with_first_extreme(lane best, const A* __restrict x, index_t n, index_t first) {
        if (n == 0 || (best.i >= 0 && reduce_is_nan(best.v))) return best;
        A m = x[0];
        bool nan = false;
        index_t j = 0;
        if constexpr (std::is_floating_point_v<A>) {
            using flag_t = std::conditional_t<sizeof(A) == 8, std::uint64_t, std::uint32_t>;
            typedef A vec __attribute__((vector_size(32)));
            typedef flag_t flags __attribute__((vector_size(32)));
            constexpr index_t width = 32 / sizeof(A);
            constexpr flag_t exponent_bits = std::bit_cast<flag_t>(std::numeric_limits<A>::infinity());
            if (n >= 4 * width) {
                vec mv[4];
                flags nv[4] = {};
                for (index_t v = 0; v < 4; ++v) std::memcpy(&mv[v], x + v * width, sizeof(vec));
                for (; j + 4 * width <= n; j += 4 * width) {
                    for (index_t v = 0; v < 4; ++v) {
                        vec xv;
                        std::memcpy(&xv, x + j + v * width, sizeof(vec));
                        if constexpr (K == reduce_kind::argmin)
                            mv[v] = xv < mv[v] ? xv : mv[v];
                        else
                            mv[v] = mv[v] < xv ? xv : mv[v];
                        flags bits;
                        std::memcpy(&bits, &xv, sizeof(vec));
                        nv[v] |= (flags)((bits & ~(flag_t{1} << (8 * sizeof(A) - 1))) > exponent_bits);
                    }
                }
                for (index_t v = 0; v < 4; ++v)
                    for (index_t k = 0; k < width; ++k) {
                        m = K == reduce_kind::argmin ? (mv[v][k] < m ? mv[v][k] : m) : (m < mv[v][k] ? mv[v][k] : m);
                        nan = nan || nv[v][k] != 0;
                    }
            }
        }
        for (; j < n; ++j) {
            if constexpr (K == reduce_kind::argmin)
                m = x[j] < m ? x[j] : m;
            else
                m = m < x[j] ? x[j] : m;
            nan = nan || reduce_is_nan(x[j]);
        }
        if (nan) {
            index_t i = 0;
            while (!reduce_is_nan(x[i])) ++i;
            return {x[i], first + i};
        }
        if (best.i >= 0 && !(K == reduce_kind::argmin ? m < best.v : best.v < m)) return best;
        index_t i = 0;
        while (!(x[i] == m)) ++i;
        return {x[i], first + i};
    }
};
template <reduce_kind K, class A>
    requires(K == reduce_kind::any || K == reduce_kind::all)
struct reduce_op<K, A> {
    using lane = unsigned char;
    static constexpr reduce_kind kind = K;
    static constexpr bool indexed = false;
    EIGEN_DEVICE_FUNC static lane identity() { return K == reduce_kind::all; }
    EIGEN_DEVICE_FUNC static lane combine(lane a, lane b) { return K == reduce_kind::any ? (a | b) : (a & b); }
    EIGEN_DEVICE_FUNC static lane from(A x, index_t) { return static_cast<lane>(x ? 1 : 0); }
};

template <class Op>
inline constexpr reduce_kind reduce_kind_of = Op::kind;

// --- One stream: lanes, blocks, the pairwise stack ---------------------------------------------------------------

/// n values of T, each `value` at first: in the object itself for up to N of them, else on the heap. A
/// reduction of a few values would otherwise spend a good part of its time allocating its scratch memory.
template <class T, std::size_t N>
class small_array {
public:
    explicit small_array(std::size_t n, const T& value = T())
        : heap_(n > N ? std::make_unique<T[]>(n) : nullptr), data_(n > N ? heap_.get() : in_place_.data()) {
        std::fill_n(data_, n, value);
    }
    small_array(const small_array&) = delete;
    small_array& operator=(const small_array&) = delete;
    T* data() { return data_; }
    const T* data() const { return data_; }

private:
    std::array<T, N> in_place_;
    std::unique_ptr<T[]> heap_;
    T* data_;
};

/// Scratch memory of a task: P lanes, K columns, and a pairwise stack of `depth` entries of K columns (a
/// stack of n pushes never holds more than bit_width(n) entries, plus the one being pushed).
template <class Lane>
struct reduce_scratch {
    small_array<Lane, 3 * 32> lanes; // (P: 32, or 96 for three columns)
    small_array<Lane, 4> columns;
    small_array<Lane, 4 * 24> stack;
    small_array<int, 24> levels;
    reduce_scratch(index_t p, index_t k, index_t pushes)
        : lanes(static_cast<std::size_t>(p)), columns(static_cast<std::size_t>(k)),
          stack(static_cast<std::size_t>(k) * stack_depth(pushes)), levels(stack_depth(pushes)) {}
    static std::size_t stack_depth(index_t pushes) {
        return static_cast<std::size_t>(std::bit_width(static_cast<std::uint64_t>(pushes))) + 1;
    }
};

/// A pairwise stack of vectors of K lanes: push(v) combines it with the top while their levels match. Its
/// storage holds as many entries as reduce_scratch::stack_depth gives for the number of pushes.
template <class Op>
struct pairwise_stack {
    using lane = typename Op::lane;
    lane* entries; // 64 * K
    int* levels;
    index_t K;
    int size = 0;

    void push(const lane* v) {
        lane* top = entries + static_cast<std::size_t>(size) * static_cast<std::size_t>(K);
        for (index_t k = 0; k < K; ++k) top[k] = v[k]; // K is often 1: no call to memmove
        int level = 0;
        while (size > 0 && levels[size - 1] == level) {
            lane* below = top - K;
            for (index_t k = 0; k < K; ++k) below[k] = Op::combine(below[k], top[k]);
            top = below;
            --size;
            ++level;
        }
        levels[size++] = level;
    }
    /// The combination of everything pushed (each entry with the ones above it, from the top): out[K].
    void finish(lane* out) const {
        if (size == 0) {
            std::fill(out, out + K, Op::identity());
            return;
        }
        const lane* top = entries + static_cast<std::size_t>(size - 1) * static_cast<std::size_t>(K);
        for (index_t k = 0; k < K; ++k) out[k] = top[k];
        for (int e = size - 2; e >= 0; --e) {
            const lane* below = entries + static_cast<std::size_t>(e) * static_cast<std::size_t>(K);
            for (index_t k = 0; k < K; ++k) out[k] = Op::combine(below[k], out[k]);
        }
    }
};

/// Lanes are updated in groups of this many (a whole number of vectors of any width).
inline constexpr index_t lane_group = 32;

/// The geometry of a stream: `columns` columns, P lanes, blocks of `block` elements (a multiple of P).
struct stream_shape {
    index_t columns = 1, P = 32, block = 4096;
};

/// The most values a lane of a stream takes per block (make_stream_shape), which word_sum_v relies on.
inline constexpr index_t most_block_values_per_lane = 129;

/// P is a multiple of the columns k: the least common multiple of k and lane_group where k is smaller than
/// lane_group (3 channels: 96 lanes, 32 per channel), else k (each column a lane).
inline stream_shape make_stream_shape(index_t k) {
    stream_shape s;
    s.columns = k;
    s.P = k >= lane_group ? k : std::lcm(k, lane_group);
    const index_t rows = std::max<index_t>(8, (4096 + s.P - 1) / s.P);
    s.block = s.P * rows;
    eigen_assert(rows <= most_block_values_per_lane);
    return s;
}

// --- materialize: reductions inside an expression evaluated first ------------------------------------------------

/// `e` with every reduction r in it replaced by the leaf `evaluate(r)` gives (r evaluated); the other leaves refer
/// to e's, literals and scalars are copied. The CPU (materialize) and the GPU (gpu_reduce.hpp) differ only in
/// `evaluate`.
template <class E, class F>
E replace_reductions(const E& e, const F&) {
    return e;
}
template <class P, class X, class F>
auto replace_reductions(const leaf<P, X>& l, const F&) {
    return leaf<P, const std::remove_cvref_t<X>&>{{}, l.x};
}
template <reduce_kind K, class C, std::size_t N, bool Keep, bool Given, class F>
auto replace_reductions(const reduction<K, C, N, Keep, Given>& r, const F& evaluate) {
    return evaluate(r);
}
template <class Op, class... Cs, class F>
auto replace_reductions(const node<Op, Cs...>& n, const F& evaluate) {
    return std::apply(
        [&](const auto&... c) {
            return node<Op, decltype(replace_reductions(c, evaluate))...>{{}, {replace_reductions(c, evaluate)...}};
        },
        n.children);
}


// --- The reduction itself --------------------------------------------------------------------------------------------

[[noreturn]] MIXT_COLD inline void throw_empty_reduction(std::string_view what, const std::string& shape) {
    throw shape_error("mixt: " + std::string(what) + ": the reduced axes of an operand of shape " + shape +
                      " have no element, and " + std::string(what) + " of nothing is undefined");
}

/// The result of reduction K (accumulating in A) whose lanes combined to v over `count` elements, in T.
template <reduce_kind K, class A, class T, class Lane>
EIGEN_DEVICE_FUNC T reduce_result(const Lane& v, index_t count) {
    if constexpr (K == reduce_kind::argmin || K == reduce_kind::argmax) {
        return static_cast<T>(v.i);
    } else if constexpr (K == reduce_kind::any || K == reduce_kind::all) {
        return v != 0;
    } else if constexpr (K == reduce_kind::mean) {
        if constexpr (is_int_v<A>) {
            return mixt::convert<T>(divide_rn(static_cast<double>(static_cast<A>(v)), static_cast<double>(count)));
        } else if constexpr (is_complex_v<A>) {
            using F = typename A::value_type;
            const F c = static_cast<F>(count);
            return mixt::convert<T>(A(divide_rn(v.real(), c), divide_rn(v.imag(), c)));
        } else {
            return mixt::convert<T>(divide_rn(v, static_cast<A>(count)));
        }
    } else {
        return mixt::convert<T>(static_cast<A>(v));
    }
}

/// The part of a reduction's plan that depends neither on the operand's rank nor on its count of arrays: the
/// counts, the stream's shape, and whether the output rows are in the result's order. The CPU's strategies read
/// only this (reduce.hpp), so that they are compiled once per kind and dtype, not once per rank.
struct reduce_counts {
    index_t outputs = 1, reduced_count = 1, columns = 1, stream = 0, rows = 0;
    stream_shape shape{};
    index_t super = 0, supers = 0, per_row = 1;
    /// Whether output row `row` starts at row * columns in the result (the kept axes in the result's order):
    /// out_offset then needs no walk over the row's axes.
    bool rows_in_order = false;
};

/// How a reduction of an operand of rank R (L arrays) into a result of rank RO walks the operand: its broadcast
/// shape S; the output rows (the kept axes outside the columns) and the box each one reduces (the reduced axes,
/// then the columns, innermost last: one stream of `stream` elements per row); the stream's lanes, blocks and
/// super-blocks. The CPU's tasks (reduce_operand and its strategies) and the GPU's kernels (gpu_reduce.hpp)
/// both follow it.
template <int R, int RO, std::size_t L>
struct reduce_plan : reduce_counts {
    static constexpr std::size_t RA = static_cast<std::size_t>(R > 0 ? R : 1);
    shape_t<R> S{};
    shape_t<RO> out_shape{};
    shape_t<R> out_stride{}; // the result's stride along each kept axis of the operand
    std::array<shape_t<R>, L> leaf_strides{};
    iteration_space<R, L + 1> box{}; // operand 0: the stream (contiguous)
    /// Where there is one column: the output rows, then each one's box, as one space (operand 0: the streams of
    /// all rows one after another, row `row`'s from row * stream). A run of it may cross rows.
    iteration_space<R, L + 1> rows_box{};
    std::array<int, RA> row_axes{}; // memory order, outermost first
    int n_row_axes = 0;

    /// The offset of output row `row` in the result (row_bases(row).second).
    index_t out_offset(index_t row) const { return rows_in_order ? row * columns : row_bases(row).second; }

    /// The offset of output row `row` in each array, and in the result.
    std::pair<std::array<index_t, L>, index_t> row_bases(index_t row) const {
        std::array<index_t, L> base{};
        index_t out_off = 0;
        for (int a = n_row_axes; a-- > 0;) {
            const auto d = static_cast<std::size_t>(row_axes[static_cast<std::size_t>(a)]);
            const index_t i = a == 0 ? row : row % S[d]; // what is left of row at the outermost axis: its index
            if (a > 0) row /= S[d];
            for (std::size_t k = 0; k < L; ++k) base[k] += i * leaf_strides[k][d];
            out_off += i * out_stride[d];
        }
        return {base, out_off};
    }
};

/// The axes a reduction keeps and reduces, in the operand of rank R (which of them `reduced` says): for
/// lay_out_reduction and lay_out_streams.
template <int R>
using reduced_axes = std::array<bool, static_cast<std::size_t>(R > 0 ? R : 1)>;

/// make_reduce_plan's first half, given the broadcast shape plan.S: the result's shape and strides, the counts
/// of outputs and reduced elements; throws shape_error for a min, max, argmin or argmax of nothing. It depends on
/// the ranks and the count of leaves, not on the expression, so reductions of one rank share its code. Keep:
/// the reduced axes stay in the result with one element each.
template <bool Keep, int R, int RO, std::size_t L>
void lay_out_reduction(reduce_plan<R, RO, L>& plan, const reduced_axes<R>& reduced, reduce_kind K, bool row_major) {
    const shape_t<R>& S = plan.S;
    // The result's shape, and the stride in it of each of the operand's kept axes.
    {
        std::size_t o = 0;
        for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) {
            if (!reduced[d])
                plan.out_shape[o++] = S[d];
            else if constexpr (Keep)
                plan.out_shape[o++] = 1;
        }
    }
    const shape_t<RO> out_contig = contiguous_strides<RO>(plan.out_shape, row_major);
    {
        std::size_t o = 0;
        for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) {
            if (!reduced[d])
                plan.out_stride[d] = out_contig[o++];
            else if constexpr (Keep)
                ++o;
        }
    }
    for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) (reduced[d] ? plan.reduced_count : plan.outputs) *= S[d];
    if (plan.reduced_count == 0 && (K == reduce_kind::min || K == reduce_kind::max || K == reduce_kind::argmin ||
                                    K == reduce_kind::argmax))
        throw_empty_reduction(reduce_name(K), shape_text(S)); // also when there is no output (NumPy and JAX raise too)
}

/// make_reduce_plan's second half, given the result's layout (lay_out_reduction) and the leaves' strides over
/// plan.S: the columns, the streams' spaces (box, rows_box), the output rows, the blocks and super-blocks.
/// Shared by every reduction of one rank and count of leaves, as lay_out_reduction.
template <int R, int RO, std::size_t L>
void lay_out_streams(reduce_plan<R, RO, L>& plan, const reduced_axes<R>& reduced, bool row_major) {
    const shape_t<R>& S = plan.S;
    // Axes of more than one element in memory order (outermost first), in three groups.
    std::array<int, static_cast<std::size_t>(R > 0 ? R : 1)> order{};
    int n_axes = 0;
    for (int k = 0; k < R; ++k) {
        const int d = row_major ? k : R - 1 - k;
        if (S[static_cast<std::size_t>(d)] > 1) order[static_cast<std::size_t>(n_axes++)] = d;
    }
    // The columns: order[first_column, n_axes). None where every reduced axis has one element: each output row
    // is then one value, and a row per output takes the short rows' path (reduce_operand) instead of one
    // stream of as many columns as outputs.
    int first_column = n_axes;
    while (plan.reduced_count != 1 && first_column > 0 &&
           !reduced[static_cast<std::size_t>(order[static_cast<std::size_t>(first_column - 1)])])
        --first_column;
    index_t columns = 1;
    for (int k = first_column; k < n_axes; ++k) columns *= S[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
    plan.columns = columns;

    // The space of `axes` (in that order, innermost last) with operand 0 contiguous over it (a stream) and the
    // leaves' strides, right-aligned in a shape of R (leading dimensions of size 1 are dropped by make_space).
    constexpr std::size_t M = L + 1;
    using axis_list = std::array<int, static_cast<std::size_t>(R > 0 ? R : 1)>;
    const auto space_of = [&](iteration_space<R, M>& out, const axis_list& axes, int na) {
        shape_t<R> dims{};
        dims.fill(1);
        std::array<shape_t<R>, M> strides{};
        index_t step = 1;
        for (int b = na - 1; b >= 0; --b) {
            const auto at = static_cast<std::size_t>(R - na + b);
            const auto d = static_cast<std::size_t>(axes[static_cast<std::size_t>(b)]);
            dims[at] = S[d];
            strides[0][at] = step;
            step *= S[d];
            for (std::size_t k = 0; k < L; ++k) strides[k + 1][at] = plan.leaf_strides[k][d];
        }
        make_space_into<R, M>(out, dims, strides, true);
    };
    // The box of one output row: the reduced axes, then the columns.
    {
        axis_list box_axes{};
        int nb = 0;
        for (int k = 0; k < first_column; ++k)
            if (reduced[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])])
                box_axes[static_cast<std::size_t>(nb++)] = order[static_cast<std::size_t>(k)];
        for (int k = first_column; k < n_axes; ++k) box_axes[static_cast<std::size_t>(nb++)] = order[static_cast<std::size_t>(k)];
        space_of(plan.box, box_axes, nb);
    }
    plan.stream = plan.reduced_count * columns;
    if (columns == 1) { // the kept axes (the output rows, outermost first), then the reduced ones
        axis_list axes{};
        int na = 0;
        for (const bool kept : {true, false})
            for (int k = 0; k < n_axes; ++k)
                if (reduced[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] != kept)
                    axes[static_cast<std::size_t>(na++)] = order[static_cast<std::size_t>(k)];
        space_of(plan.rows_box, axes, na);
    }

    // The output rows: the kept axes outside the columns.
    for (int k = 0; k < first_column; ++k)
        if (!reduced[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])])
            plan.row_axes[static_cast<std::size_t>(plan.n_row_axes++)] = order[static_cast<std::size_t>(k)];
    plan.rows = plan.outputs / columns;
    {
        index_t step = columns;
        plan.rows_in_order = true;
        for (int a = plan.n_row_axes; a-- > 0;) {
            const auto d = static_cast<std::size_t>(plan.row_axes[static_cast<std::size_t>(a)]);
            plan.rows_in_order = plan.rows_in_order && plan.out_stride[d] == step;
            step *= S[d];
        }
    }

    plan.shape = make_stream_shape(columns);
    index_t super = plan.shape.block;
    // Super-blocks of at least 2^18 elements and 512 rows of columns, so that the partial results of the tasks
    // (columns per super-block) stay a small fraction of the input.
    while (super < (index_t{1} << 18) || super < 512 * columns) super *= 2;
    plan.super = super;
    plan.supers = plan.stream == 0 ? 0 : (plan.stream + super - 1) / super;
    plan.per_row = std::max<index_t>(plan.supers, 1);
}

/// The plan of reduction `r` of the operand `c` (without reductions inside); throws shape_error (an
/// incompatible broadcast, min/max/argmin/argmax of nothing) and range errors of literals before anything runs.
/// What depends on the expression is here (its broadcast shape, literals and leaves); the rest is laid out by
/// lay_out_reduction and lay_out_streams, which every reduction of the same ranks shares.
template <class Red, class C>
auto make_reduce_plan(const Red& r, const C& c) {
    constexpr int R = std::remove_cvref_t<C>::rank;
    constexpr int RO = Red::rank;
    using Views = std::remove_const_t<decltype(leaf_views_of(c))>;
    constexpr std::size_t L = std::tuple_size_v<Views>;
    reduce_plan<R, RO, L> plan;
    {
        const std::string what_text(reduce_name(Red::kind));
        plan.S = broadcast_shape(c, what_text.c_str());
    }
    check_literals(c);
    reduced_axes<R> reduced{};
    for (const int a : r.axes) reduced[static_cast<std::size_t>(a)] = true;
    const bool row_major = Red::layout == static_cast<int>(Eigen::RowMajor);
    lay_out_reduction<Red::keep>(plan, reduced, Red::kind, row_major);
    if (plan.outputs == 0) return plan;
    // The leaves' strides over the broadcast shape.
    const auto views = leaf_views_of(c);
    std::apply(
        [&](const auto&... v) {
            std::size_t k = 0;
            ((plan.leaf_strides[k++] = broadcast_view<R>(v, plan.S).strides), ...);
        },
        views);
    lay_out_streams(plan, reduced, row_major);
    return plan;
}

} // namespace mixt::detail

#endif // MIXT_EVAL_REDUCE_PLAN_HPP
