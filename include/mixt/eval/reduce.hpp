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
#include "mixt/eval/fused.hpp"
#include "mixt/eval/lower.hpp"
#include "mixt/eval/plan.hpp"
#include "mixt/eval/pool.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/eval/strided.hpp"
#include "mixt/expr/expression.hpp"
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

/// Scratch memory of a task: P lanes, K columns, and a pairwise stack of `depth` entries of K columns (a
/// stack of n pushes never holds more than bit_width(n) entries, plus the one being pushed).
template <class Lane>
struct reduce_scratch {
    std::vector<Lane> lanes, columns, stack;
    std::vector<int> levels;
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

/// The geometry of a stream: K columns, P lanes, blocks of `block` elements (a multiple of P).
struct stream_shape {
    index_t K = 1, P = 32, block = 4096;
};

/// The most values a lane of a stream takes per block (make_stream_shape), which word_sum_v relies on.
inline constexpr index_t most_block_values_per_lane = 129;

/// P is a multiple of K: the least common multiple of K and lane_group where K is smaller than lane_group
/// (3 channels: 96 lanes, 32 per channel), else K (each column a lane).
inline stream_shape make_stream_shape(index_t k) {
    stream_shape s;
    s.K = k;
    s.P = k >= lane_group ? k : std::lcm(k, lane_group);
    const index_t rows = std::max<index_t>(8, (4096 + s.P - 1) / s.P);
    s.block = s.P * rows;
    eigen_assert(rows <= most_block_values_per_lane);
    return s;
}

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

/// a = mask ? x : a, lane by lane, for a mask of all-ones or zero lanes of the same width. nvcc's front end
/// stops at a `?:` between a mask and vectors of a type that depends on a template parameter (an internal
/// error), so there it selects the bits (GCC then makes three operations of it, not one blend).
template <class M, class V>
inline void select_lanes(V& a, const M& mask, const V& x) {
#if defined(__CUDACC__)
    M ab, xb;
    std::memcpy(&ab, &a, sizeof(ab));
    std::memcpy(&xb, &x, sizeof(xb));
    ab = (xb & mask) | (ab & ~mask);
    std::memcpy(&a, &ab, sizeof(ab));
#else
    a = mask ? x : a;
#endif
}

/// Op::combine on every lane of two vectors of lanes (GCC's vector extensions, which Clang has too) for sums,
/// products and integer min/max: a comes first in the stream.
template <reduce_kind K, class V>
inline void combine_lanes(V& a, const V& x) { // by reference: no vector crosses a call in a build without AVX
    if constexpr (K == reduce_kind::sum || K == reduce_kind::mean) {
        a = a + x;
    } else if constexpr (K == reduce_kind::prod) {
        a = a * x;
    } else {
        using E = std::remove_cvref_t<decltype(a[0])>;
        typedef std::make_signed_t<E> mask __attribute__((vector_size(sizeof(V))));
        select_lanes(a, static_cast<mask>(K == reduce_kind::max ? a < x : x < a), x);
    }
}

/// min/max of floats in fold_rows_of hold each lane's values as integer keys in the order of Op::combine: the
/// bits, with the magnitude flipped for negatives (the same transform maps a key back), so that -0 comes just
/// before +0 and a NaN lies beyond an infinity: above +inf's key where its sign bit is clear, below -inf's
/// where it is set. A lane keeps the largest and the smallest key it has seen, an integer max and min per
/// vector and nothing else on the loop's chain of dependences. Its result is the extreme the reduction asks
/// for, or, where the other one lies beyond its infinity, that NaN: a NaN wins either way (as in
/// Op::combine). Which NaN a lane then holds (the outermost key) depends only on the values it took, not on
/// their grouping or order; a NaN's sign and payload are unspecified anyway (README, "NaN").
template <class B>
inline void flip_key(B& b) {
    using I = std::remove_cvref_t<decltype(b[0])>;
    b ^= (b >> (8 * sizeof(I) - 1)) & std::numeric_limits<I>::max();
}
template <class B>
inline void extreme_load(B& hi, B& lo, const void* p) {
    std::memcpy(&hi, p, sizeof(hi));
    flip_key(hi);
    lo = hi;
}
template <class B, class V>
inline void extreme_add(B& hi, B& lo, const V& x) {
    static_assert(sizeof(B) == sizeof(V));
    B k;
    std::memcpy(&k, &x, sizeof(k));
    flip_key(k);
    select_lanes(hi, static_cast<B>(hi < k), k);
    select_lanes(lo, static_cast<B>(k < lo), k);
}
template <reduce_kind K, class A, class B>
inline void extreme_store(const B& hi, const B& lo, void* p) {
    using I = std::remove_cvref_t<decltype(hi[0])>;
    static_assert(sizeof(I) == sizeof(A));
    // +inf's key is its bits; -inf's is their complement (a negative value's key is the complement of its
    // magnitude's).
    constexpr I top = std::bit_cast<I>(std::numeric_limits<A>::infinity());
    const B inf_key = B{} + top;
    B r = K == reduce_kind::max ? hi : lo;
    const B nan_other = K == reduce_kind::max ? static_cast<B>(lo < ~inf_key) : static_cast<B>(inf_key < hi);
    select_lanes(r, nan_other, K == reduce_kind::max ? lo : hi);
    flip_key(r);
    std::memcpy(p, &r, sizeof(r));
}

/// Whether fold_rows_of keeps min/max of floats as keys (above).
template <class Op, class A>
inline constexpr bool keyed_extreme_v =
    (Op::kind == reduce_kind::min || Op::kind == reduce_kind::max) && std::is_floating_point_v<A>;

/// Folds vectors of lanes (V, a GCC vector of A's bits) into Count vectors held in registers, loaded from the
/// lanes at l and stored back: for_each_vector(visit) calls visit(v, x) with each vector x of the stream, in
/// order, v its vector among Count. min/max of floats keep two key extremes per lane (above), the others
/// combine_lanes. V is deduced from the type of a null pointer, not named: nvcc's front end drops the vector
/// attribute of a type given as an explicit template argument, and its code generator fails on a vector
/// constant (`V{}`).
template <class Op, class A, index_t Count, class V, class ForEach>
inline void fold_vectors(typename Op::lane* l, const V* /* type only */, const ForEach& for_each_vector) {
    constexpr index_t per_vector = static_cast<index_t>(sizeof(V) / sizeof(typename Op::lane));
    if constexpr (keyed_extreme_v<Op, A>) {
        using key_t = std::conditional_t<sizeof(A) == 4, std::int32_t, std::int64_t>;
        typedef key_t bits __attribute__((vector_size(sizeof(V))));
        bits hi[Count], lo[Count];
        for (index_t v = 0; v < Count; ++v) extreme_load(hi[v], lo[v], l + v * per_vector);
        for_each_vector([&](index_t v, const V& x) { extreme_add(hi[v], lo[v], x); });
        for (index_t v = 0; v < Count; ++v) extreme_store<Op::kind, A>(hi[v], lo[v], l + v * per_vector);
    } else {
        V acc[Count];
        std::memcpy(acc, l, sizeof(acc));
        for_each_vector([&](index_t v, const V& x) { combine_lanes<Op::kind>(acc[v], x); });
        std::memcpy(l, acc, sizeof(acc));
    }
}

/// Whether the kernel K of a sum (or mean) accumulating in a 64-bit integer A converts a kernel of bool or an
/// 8- or 16-bit integer: fold_rows_of then adds those values in 32-bit lanes (exact for the rows of a block)
/// and widens the lanes' sums once per call. Integer sums wrap modulo 2^64 whatever the grouping, so the
/// result is the same bits as adding each value in 64 bits.
template <class Op, class A, class K>
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

/// Whether the kernel K of a sum (or mean) accumulating in float or a 64-bit integer converts a u8 or i8 leaf:
/// on AVX-512, fold_rows_of then adds the values in 16-bit lanes (32 per register) for up to
/// most_block_values_per_lane rows at a time, and adds each lane's total to its accumulator lane. The 16-bit
/// totals are exact (129 * 255 < 2^16, 129 * 128 < 2^15). Integer sums wrap modulo 2^64 whatever the
/// grouping. A float lane takes at most 129 values per block (make_stream_shape), so every sum it would make
/// from 0 at the block's start is an integer below 2^16, exact, as is the total added once: the same bits.
template <class Op, class A, class K>
inline constexpr bool word_sum_v = false;
template <class Op, class A, class T>
inline constexpr bool word_sum_v<Op, A, convert_kernel<A, leaf_kernel<T>>> =
    (Op::kind == reduce_kind::sum || Op::kind == reduce_kind::mean) &&
    (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t>) &&
    (std::is_same_v<A, float> || (is_int_v<A> && sizeof(A) == 8));

/// Folds `rows` rows of G * lane_group stream elements, elements i, i + 1, ... of the kernel K whose run-time
/// values are `args` (kernel_args), into G * lane_group lanes, element p of a row into lane p; the lanes are
/// held in registers meanwhile. MIXT_FLATTEN and the values as arguments for the reasons run_range_of gives.
/// With `prefetch` (stream_fold::prefetch), the float and 32-byte loops ask for their inputs prefetch_distance
/// elements ahead, as the fused loop does.
template <class Op, class A, class K, int G, class... Args>
MIXT_FLATTEN void fold_rows_of(typename Op::lane* __restrict l, index_t i, index_t rows, bool prefetch, Args... args) {
    static_assert(folds_batches_v<Op, A> && !Op::indexed);
    using lane = typename Op::lane;
    constexpr index_t row = G * lane_group;
    const K k = kernel_from_args<K>(args...);
    (void)prefetch; // not with MIXT_SOFTWARE_PREFETCH=0
    // fold(ahead) with ahead a std::bool_constant: whether to prefetch (a loop compiled for each).
    const auto with_prefetch = [&](const auto& fold) {
        if constexpr (prefetch_enabled) {
            if (prefetch) return fold(std::true_type{});
        }
        fold(std::false_type{});
    };
#if MIXT_SIMD_AVX512
    if constexpr (word_sum_v<Op, A, K>) {
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
    if constexpr (narrow_sum<Op, A, K>::value) {
        using N = typename narrow_sum<Op, A, K>::lane32;
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
    if constexpr (wide_loop_v<A, K>) { // f32: 16-lane batches
        typedef float wvec __attribute__((vector_size(64)));
        constexpr index_t count = 2 * G;
        with_prefetch([&](auto ahead) {
            fold_vectors<Op, A, count>(l, static_cast<const wvec*>(nullptr), [&](auto&& visit) {
                for (index_t r = 0; r < rows; ++r, i += row) {
                    if constexpr (decltype(ahead)::value) k.template prefetch<row>(i + prefetch_distance);
                    for (index_t v = 0; v < count; ++v) {
                        const auto b = k.wide_at(i + 16 * v);
                        wvec x;
                        std::memcpy(&x, &b.v, sizeof(wvec));
                        visit(v, x);
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
        fold_vectors<Op, A, count>(l, static_cast<const vec*>(nullptr), [&](auto&& visit) { // each batch's vectors of lanes, in order
            for (index_t r = 0; r < rows; ++r, i += row) {
                if constexpr (decltype(ahead)::value) k.template prefetch<row>(i + prefetch_distance);
                for (index_t b = 0; b < row / per_batch; ++b) {
                    alignas(64) A t[per_batch];
                    simd::store(t, k.at(i + b * per_batch));
                    for (index_t h = 0; h < vecs_per_batch; ++h) {
                        vec x;
                        std::memcpy(&x, t + h * per_vec, sizeof(vec)); // A's bits are the lane's
                        visit(b * vecs_per_batch + h, x);
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

/// Whether the kernel K converts an f16 or bf16 leaf to float: argmin/argmax of one column then compare the
/// leaf's bits as order keys (simd::wide::first_extreme_key), 32 at a time, where the leaf is contiguous.
template <class K>
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

/// first_extreme_rows over elements i, i + 1, ... of the kernel K whose run-time values are `args`.
template <class Op, class A, class K, class... Args>
MIXT_FLATTEN typename Op::lane fold_first_extreme_of(typename Op::lane best, index_t i, index_t rows, index_t first,
                                                     const void* ahead_end, Args... args) {
    static_assert(Op::indexed && std::is_same_v<A, float>);
    const K k = kernel_from_args<K>(args...);
    (void)ahead_end; // only the AVX-512 scan prefetches
#if MIXT_SIMD_AVX512
    if constexpr (keyed_leaf_v<K>) { // an f16/bf16 leaf contiguous along the row: its bits as 16-bit keys
        using T = kernel_value_t<std::remove_cvref_t<decltype(k.k)>>;
        if (k.k.mask == ~index_t{0})
            return with_first_extreme_key<Op, T>(best, k.k.p + i, rows * lane_group, first, ahead_end);
    }
    if constexpr (wide_loop_v<A, K>) {
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

/// Elements i, i + 1, ..., i + n - 1 of the kernel K (no read past i + n), one by one into lanes q, q + 1, ...;
/// for argmin/argmax all into lane q, with the indices first, first + 1, ...
template <class Op, class A, class K, class... Args>
void fold_some_of(typename Op::lane* l, index_t q, index_t i, index_t n, index_t first, Args... args) {
    const K k = kernel_from_args<K>(args...);
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
    /// it is handed (a dense array, its rows in memory order: reduce_operand): a scan may prefetch up to there.
    const void* ahead_end = nullptr;
    /// Whether fold_rows_of prefetches its inputs in software (reduce_operand: the fused loop's rule,
    /// options_for, for the bytes the reduction reads).
    bool prefetch = false;

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
        : shape(s), scratch(sc), stack{sc.stack.data(), sc.levels.data(), s.K, 0}, lanes(sc.lanes.data()) {
        reset_lanes();
    }

    void reset_lanes() {
        if (used_lanes() == lane_group) // the usual count, as a constant: no call to memset per stream
            std::fill_n(lanes, lane_group, Op::identity());
        else
            std::fill_n(lanes, used_lanes(), Op::identity());
    }

    /// The lanes the stream uses: P, but one for argmin/argmax along a row, whose lane 0 takes every element
    /// (feed, feed_kernel: the P lanes are for the columns of an outer reduction).
    index_t used_lanes() const { return Op::indexed && shape.K == 1 ? 1 : shape.P; }

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
        const index_t K = shape.K, m = used_lanes() / K;
        lane* l = lanes;
        lane* c = scratch.columns.data();
        for (index_t k = 0; k < K; ++k) {
            lane v = l[k];
            for (index_t j = 1; j < m; ++j) v = Op::combine(v, l[k + j * K]);
            c[k] = v;
        }
        stack.push(c);
        reset_lanes();
        in_block = 0;
        carried = false;
    }

    /// Elements s0, s0 + 1, ... of the stream (s0 a multiple of P away from the start of the block count).
    void feed(const A* x, index_t n, index_t s0) {
        lane* const l = lanes;
        const index_t P = shape.P, K = shape.K;
        while (n > 0) {
            const index_t take = grouping_free ? n : std::min(n, shape.block - in_block);
            index_t q = in_block % P, j = 0;
            if constexpr (Op::indexed) {
                if (K == 1) {
                    // The first extreme element of the segment, found by a vectorized scan, then combined
                    // into lane 0 (an index along a row: the lanes are for the columns of an outer reduction).
                    l[0] = Op::with_first_extreme(l[0], x, take, s0);
                } else {
                    for (; j < take; ++j) {
                        l[q] = Op::combine(l[q], Op::from(x[j], (s0 + j) / K));
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

    /// Whether feed_kernel takes this stream: P of 32 lanes (K divides 32) or 96 (K divides 96: three colour
    /// channels), and for argmin/argmax one column.
    bool takes_batches() const {
        return Op::indexed ? shape.K == 1 : (shape.P == lane_group || shape.P == 3 * lane_group);
    }

    /// As feed, for stream elements s0, s0 + 1, ... computed by the kernel K with run-time values `args` from its
    /// element 0 (folds_batches_v<Op, A> and takes_batches()): whole rows of lanes go from the kernel's batches
    /// to the lanes in registers.
    template <class K, class Args>
        requires folds_batches_v<Op, A>
    void feed_kernel(const Args& args, index_t n, index_t s0) {
        lane* const l = lanes;
        const index_t P = shape.P;
        index_t i = 0;
        while (n > 0) {
            const index_t take = grouping_free ? n : std::min(n, shape.block - in_block);
            if constexpr (Op::indexed) { // K == 1: lane 0 holds the row's first extreme so far
                std::apply(
                    [&](const auto&... a) {
                        const index_t whole = take / P, rest = take - whole * P;
                        if (whole > 0) l[0] = fold_first_extreme_of<Op, A, K>(l[0], i, whole, s0, ahead_end, a...);
                        if (rest > 0) fold_some_of<Op, A, K>(l, 0, i + whole * P, rest, s0 + whole * P, a...);
                    },
                    args);
            } else {
                const index_t q = in_block % P;
                const index_t head = std::min(take, q == 0 ? 0 : P - q);
                const index_t rows = (take - head) / P, tail = take - head - rows * P;
                std::apply(
                    [&](const auto&... a) {
                        if (head > 0) fold_some_of<Op, A, K>(l, q, i, head, 0, a...);
                        if (rows > 0 && P == lane_group) fold_rows_of<Op, A, K, 1>(l, i + head, rows, prefetch, a...);
                        if (rows > 0 && P == 3 * lane_group) fold_rows_of<Op, A, K, 3>(l, i + head, rows, prefetch, a...);
                        if (tail > 0) fold_some_of<Op, A, K>(l, 0, i + head + rows * P, tail, 0, a...);
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

    std::tuple<const Ts*...> data;
    iteration_space<R, M> box; // operand 0: the stream itself (contiguous)
    args_t args;

    /// Computes stream elements [first, last) of the row whose operands start `base[k]` elements after data,
    /// handing each run to sink.feed(values, count, first index), or the kernel itself to sink.feed_kernel where
    /// the sink (a stream_fold) takes its batches.
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
                for (std::size_t k = 0; k < L; ++k) staged = staged || box.strides[k + 1][rk - 1] != 1;
                if (!staged) most = index_t{1} << 20;
                if (most >= sink.shape.P) most -= most % sink.shape.P;
            }
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
                        using T = std::tuple_element_t<J, std::tuple<Ts...>>;
                        const T* src = std::get<J>(data) + off[J];
                        const index_t stride = box.strides[J + 1][rk - 1];
                        if (stride == 1) {
                            ptrs[J] = src;
                            return;
                        }
                        T* buffer = reinterpret_cast<T*>(stage + pass::stage_offsets[J + 1]);
                        if (stride == 0)
                            masks[J] = stage_broadcast<A, Kern>(buffer, src, len); // a value along the run
                        else
                            copy_strided<false>(buffer, src, 1, len, 0, stride);
                        ptrs[J] = buffer;
                    }(),
                    ...);
            }(std::make_index_sequence<L>{});
            const bool hoist = hoists_leaves<Ts...>(masks); // the f16/bf16 leaves broadcast: converted once
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
            pass::compute(out, len, with_leaf_pointers(args, ptrs, masks), pass_options{}, hoist);
            sink.feed(out, len, pos);
            pos += len;
        }
    }
};

// --- Running tasks -------------------------------------------------------------------------------------------------

/// Runs task(first, last) over [0, tasks) on `threads` threads of the device (the caller one of them), pieces
/// taken in turn from a shared counter (run_in_pieces, pool.hpp); on any other device on the calling thread.
template <class Device, class Task>
void run_reduce_tasks(index_t tasks, const Device& device, int threads, const Task& task) {
#if defined(EIGEN_USE_THREADS)
    if constexpr (is_thread_pool_device_v<Device>) {
        run_in_pieces(tasks, 1, device, threads, task);
        return;
    }
#endif
    (void)device;
    (void)threads;
    task(index_t{0}, tasks);
}


template <class Red>
using reduction_tensor_t =
    Eigen::Tensor<value_t<Red>, Red::rank, result_layout_v<Red::rank, Red::layout>>;

template <class Red, class Device>
reduction_tensor_t<Red> reduce_into_new(const Red& r, const Device& device);
template <class Red, class Device, class OutFor>
void reduce_into(const Red& r, const Device& device, const OutFor& out_for);

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

/// How a reduction of an operand of rank R (L arrays) into a result of rank RO walks the operand: its broadcast
/// shape S; the output rows (the kept axes outside the columns) and the box each one reduces (the reduced axes,
/// then the columns, innermost last: one stream of `stream` elements per row); the stream's lanes, blocks and
/// super-blocks. The CPU's tasks (reduce_operand) and the GPU's kernels (gpu_reduce.hpp) both follow it.
template <int R, int RO, std::size_t L>
struct reduce_plan {
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
    index_t outputs = 1, reduced_count = 1, columns = 1, stream = 0, rows = 0;
    stream_shape shape{};
    index_t super = 0, supers = 0, per_row = 1;
    /// Whether output row `row` starts at row * columns in the result (the kept axes in the result's order):
    /// out_offset then needs no walk over the row's axes.
    bool rows_in_order = false;

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

/// The plan of reduction `r` of the operand `c` (without reductions inside); throws shape_error (an
/// incompatible broadcast, min/max/argmin/argmax of nothing) and range errors of literals before anything runs.
template <class Red, class C>
auto make_reduce_plan(const Red& r, const C& c) {
    constexpr int R = std::remove_cvref_t<C>::rank;
    constexpr int RO = Red::rank;
    constexpr reduce_kind K = Red::kind;
    using Views = std::remove_const_t<decltype(leaf_views_of(c))>;
    constexpr std::size_t L = std::tuple_size_v<Views>;
    reduce_plan<R, RO, L> plan;
    const std::string_view what = reduce_name(K);
    const std::string what_text(what);

    const shape_t<R> S = broadcast_shape(c, what_text.c_str());
    plan.S = S;
    check_literals(c);
    std::array<bool, static_cast<std::size_t>(R > 0 ? R : 1)> reduced{};
    for (const int a : r.axes) reduced[static_cast<std::size_t>(a)] = true;

    // The result's shape, and the stride in it of each of the operand's kept axes.
    {
        std::size_t o = 0;
        for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) {
            if (!reduced[d])
                plan.out_shape[o++] = S[d];
            else if constexpr (Red::keep)
                plan.out_shape[o++] = 1;
        }
    }
    const bool row_major = Red::layout == static_cast<int>(Eigen::RowMajor);
    const shape_t<RO> out_contig = contiguous_strides<RO>(plan.out_shape, row_major);
    {
        std::size_t o = 0;
        for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) {
            if (!reduced[d])
                plan.out_stride[d] = out_contig[o++];
            else if constexpr (Red::keep)
                ++o;
        }
    }
    for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d) (reduced[d] ? plan.reduced_count : plan.outputs) *= S[d];
    if (plan.reduced_count == 0 && (K == reduce_kind::min || K == reduce_kind::max || K == reduce_kind::argmin ||
                                    K == reduce_kind::argmax))
        throw_empty_reduction(what, shape_text(S)); // also when there is no output (NumPy and JAX raise too)
    if (plan.outputs == 0) return plan;

    // The leaves' strides over the broadcast shape.
    const auto views = leaf_views_of(c);
    std::apply(
        [&](const auto&... v) {
            std::size_t k = 0;
            ((plan.leaf_strides[k++] = broadcast_view<R>(v, S).strides), ...);
        },
        views);

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
    const auto space_of = [&](const axis_list& axes, int na) {
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
        return make_space<R, M>(dims, strides, true);
    };
    // The box of one output row: the reduced axes, then the columns.
    {
        axis_list box_axes{};
        int nb = 0;
        for (int k = 0; k < first_column; ++k)
            if (reduced[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])])
                box_axes[static_cast<std::size_t>(nb++)] = order[static_cast<std::size_t>(k)];
        for (int k = first_column; k < n_axes; ++k) box_axes[static_cast<std::size_t>(nb++)] = order[static_cast<std::size_t>(k)];
        plan.box = space_of(box_axes, nb);
    }
    plan.stream = plan.reduced_count * columns;
    if (columns == 1) { // the kept axes (the output rows, outermost first), then the reduced ones
        axis_list axes{};
        int na = 0;
        for (const bool kept : {true, false})
            for (int k = 0; k < n_axes; ++k)
                if (reduced[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] != kept)
                    axes[static_cast<std::size_t>(na++)] = order[static_cast<std::size_t>(k)];
        plan.rows_box = space_of(axes, na);
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
    return plan;
}

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

/// A stream's values stored in order from stream element `first` on (reduce_source::run's sink).
template <class A>
struct copy_sink {
    A* values;
    index_t first;
    void feed(const A* x, index_t n, index_t s0) { std::copy_n(x, n, values + (s0 - first)); }
};

/// Whether fold_rows_across turns rows into columns in registers (AVX-512, lanes of 4 bytes that fold_vectors
/// takes), and so takes rows of any length up to a block; otherwise rows of at most lane_group values.
template <class Op, class A>
inline constexpr bool transposes_rows_v =
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    folds_batches_v<Op, A> && sizeof(typename Op::lane) == 4;
#else
    false;
#endif

/// The results of `groups` groups of lane_group rows of n values each (at most one block; at most lane_group
/// unless transposes_rows_v), row r's at x + r * n, as the stream's fold makes them: value j into lane
/// j % lane_group, in order, from the identity, then lane 0 combined with lanes 1, 2, ... in that order
/// (stream_fold::end_block), the lanes no value reached left out (combining a lane that started at the
/// identity with the identity gives the same bits: a float sum is never -0 then, a product keeps its NaN,
/// min and max their value). The rows are folded side by side, a row per vector lane: 16 rows at a time turned
/// into columns in registers (simd::wide::rows_as_columns) where transposes_rows_v; else, for rows of at most
/// lane_group values (one value per lane: the lanes' end is the values combined in order from the identity),
/// each value of 32 rows at once, by a gather with AVX-512 and 8-byte lanes, or one by one.
template <class Op, class A>
void fold_rows_across(const A* __restrict x, index_t n, index_t groups, typename Op::lane* __restrict out) {
    using lane = typename Op::lane;
    const index_t used = std::min(n, lane_group);
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    if constexpr (transposes_rows_v<Op, A>) {
        typedef lane vec __attribute__((vector_size(64)));
        constexpr index_t rows_per = 16;
        if (n <= lane_group) { // one value per lane: the values of each row combined in order, from the identity
            for (index_t g = 0; g < groups; ++g) {
                lane* const l = out + g * lane_group;
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
        alignas(64) lane lanes[lane_group * rows_per]; // lane p of row r at lanes[p * 16 + r]
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
    eigen_assert(n <= lane_group);
    (void)used;
    for (index_t g = 0; g < groups; ++g) {
        lane* const l = out + g * lane_group;
        for (index_t p = 0; p < lane_group; ++p) l[p] = Op::identity();
        const A* const xg = x + g * lane_group * n;
#if !defined(__CUDACC__) // nvcc's host compiler fails (a segmentation fault) on these vectors; its code takes the loop
        if constexpr (folds_batches_v<Op, A>) { // in vectors; min/max of floats as keys (fold_vectors)
            typedef lane vec __attribute__((vector_size(64)));
            constexpr index_t per_vec = 64 / sizeof(lane), count = lane_group / per_vec;
#if MIXT_SIMD_AVX512
            const __m512i offsets = simd::wide::gather_offsets<A>(static_cast<std::int32_t>(n));
#endif
            fold_vectors<Op, A, count>(l, static_cast<const vec*>(nullptr), [&](auto&& visit) {
                for (index_t j = 0; j < n; ++j)
                    for (index_t v = 0; v < count; ++v) {
                        vec xv;
                        const A* const column = xg + v * per_vec * n + j;
#if MIXT_SIMD_AVX512
                        const __m512i gathered = simd::wide::gather_lanes(column, offsets);
                        std::memcpy(&xv, &gathered, sizeof(vec)); // A's bits are the lane's
#else
                        alignas(64) A t[per_vec];
                        for (index_t k = 0; k < per_vec; ++k) t[k] = column[k * n];
                        std::memcpy(&xv, t, sizeof(vec));
#endif
                        visit(v, xv);
                    }
            });
            continue;
        }
#endif
        for (index_t j = 0; j < n; ++j)
            for (index_t p = 0; p < lane_group; ++p) l[p] = Op::combine(l[p], Op::from(xg[p * n + j], 0));
    }
}

/// Lanes l[0, W) combined with l[W, 2W), then the first half of those with the second, and so on down to l[0]:
/// fold_vectors at each width (vectors of W lanes, min/max of floats as keys; below 16 bytes still faster than
/// scalar combines, whose branches a min or max of random values mispredicts).
#if !defined(__CUDACC__)
template <class Op, class A, index_t W>
void halve_lanes(typename Op::lane* l) {
    using lane = typename Op::lane;
    typedef lane vec __attribute__((vector_size(W * sizeof(lane))));
    fold_vectors<Op, A, 1>(l, static_cast<const vec*>(nullptr), [&](auto&& visit) {
        vec upper;
        std::memcpy(&upper, l + W, sizeof(vec));
        visit(0, upper);
    });
    if constexpr (W > 1) halve_lanes<Op, A, W / 2>(l);
}
#endif

/// The results of Rows streams of one column, each at most one block of `n` values, row h's at x + h * n, as
/// stream_fold makes them: value j goes into lane j % lane_group, in order, from the identity (the stream's
/// lanes); the last values, fewer than the lanes, make a whole row of lanes with the identity in the lanes
/// they do not reach. The block's end is lane 0 combined with
/// lanes 1, 2, ... in that order (stream_fold::end_block), a chain of dependent combines as long as the lanes:
/// the rows' chains run side by side here. Lanes from n on, which a stream shorter than the lanes never
/// reached, hold the identity and are left out: combining a lane that started at the identity with the
/// identity gives the same bits (a float sum is never -0 then, a product keeps its NaN, min and max their
/// value). Where the result does not depend on the grouping (stream_fold::grouping_free), the lanes are
/// combined as a tree instead, in vectors. store(h, result) for the first `kept` rows.
template <class Op, class A, index_t Rows, class Store>
void end_rows_of_one_block(const A* __restrict x, index_t n, index_t kept, const Store& store) {
    using lane = typename Op::lane;
    alignas(64) lane held[Rows][lane_group];
    for (index_t h = 0; h < Rows; ++h) {
        const A* const xr = x + h * n;
        lane* const l = held[h];
        for (index_t p = 0; p < lane_group; ++p) l[p] = Op::identity();
        const index_t whole = n / lane_group * lane_group, rest = n - whole;
        alignas(64) lane last[lane_group];
        for (index_t p = 0; p < lane_group; ++p) last[p] = p < rest ? Op::from(xr[whole + p], 0) : Op::identity();
#if !defined(__CUDACC__) // nvcc's host compiler fails (a segmentation fault) on these vectors; its code takes the loops
        if constexpr (folds_batches_v<Op, A>) { // in vectors; min/max of floats as keys (fold_vectors)
            typedef lane vec __attribute__((vector_size(64)));
            constexpr index_t per_vec = 64 / sizeof(lane), count = lane_group / per_vec;
            fold_vectors<Op, A, count>(l, static_cast<const vec*>(nullptr), [&](auto&& visit) {
                for (index_t j = 0; j < whole; j += lane_group)
                    for (index_t v = 0; v < count; ++v) {
                        vec xv;
                        std::memcpy(&xv, xr + j + v * per_vec, sizeof(vec)); // A's bits are the lane's
                        visit(v, xv);
                    }
                for (index_t v = 0; v < count; ++v) {
                    vec xv;
                    std::memcpy(&xv, last + v * per_vec, sizeof(vec));
                    visit(v, xv);
                }
            });
        } else
#endif
        {
            for (index_t j = 0; j < whole; j += lane_group)
                for (index_t p = 0; p < lane_group; ++p) l[p] = Op::combine(l[p], Op::from(xr[j + p], 0));
            for (index_t p = 0; p < lane_group; ++p) l[p] = Op::combine(l[p], last[p]);
        }
    }
    if constexpr (stream_fold<Op, A>::grouping_free) {
        for (index_t h = 0; h < Rows; ++h) {
            lane* const l = held[h];
#if !defined(__CUDACC__) // as above
            if constexpr (folds_batches_v<Op, A>) { // from the fewest lanes that hold the stream's values
                if (n > 16)
                    halve_lanes<Op, A, 16>(l);
                else if (n > 8)
                    halve_lanes<Op, A, 8>(l);
                else if (n > 4)
                    halve_lanes<Op, A, 4>(l);
                else if (n > 2)
                    halve_lanes<Op, A, 2>(l);
                else if (n > 1)
                    halve_lanes<Op, A, 1>(l);
            } else
#endif
            {
                for (index_t w = lane_group / 2; w >= 1; w /= 2)
                    for (index_t p = 0; p < w; ++p) l[p] = Op::combine(l[p], l[p + w]);
            }
            if (h < kept) store(h, l[0]);
        }
    } else {
        const index_t used = std::min(n, lane_group);
        lane v[Rows];
        for (index_t h = 0; h < Rows; ++h) v[h] = held[h][0];
        for (index_t p = 1; p < used; ++p)
            for (index_t h = 0; h < Rows; ++h) v[h] = Op::combine(v[h], held[h][p]);
        for (index_t h = 0; h < kept; ++h) store(h, v[h]);
    }
}

/// Streams up to this long take reduce_operand's short-row path, in batches of about short_rows_values values:
/// longer where the lanes' end is a tree (stream_fold::grouping_free) than where it is a chain of lane_group
/// combines, which the per-row fold overlaps better with a long row's values (docs/performance-notes.md,
/// "Short rows").
template <class Op, class A>
inline constexpr index_t short_row_stream = stream_fold<Op, A>::grouping_free ? 256 : 128;
inline constexpr index_t short_rows_values = 4096;

/// reduce_into for an operand without reductions inside.
/// How a reduction's rows are computed (the reduction's part of the plan, chosen by choose_reduce_strategy):
enum class reduce_strategy {
    first_extremes,       ///< argmin/argmax of one f16/bf16 array, a row a contiguous run: one scan per row
    short_rows_across,    ///< rows of one column of at most short_row_stream values, folded side by side
    short_rows_in_blocks, ///< the same rows, their lanes made and ended a block of rows at a time
    streams,              ///< each row's stream folded into lanes, in super-blocks (tasks), combined pairwise
};

inline const char* name(reduce_strategy s) {
    switch (s) {
    case reduce_strategy::first_extremes: return "first_extremes";
    case reduce_strategy::short_rows_across: return "short_rows_across";
    case reduce_strategy::short_rows_in_blocks: return "short_rows_in_blocks";
    case reduce_strategy::streams: return "streams";
    }
    return "?";
}

/// The strategy of a reduction of kind Op, accumulator A, kernel Kern, with its plan (make_reduce_plan).
template <class Op, class A, class Kern, class Plan>
reduce_strategy choose_reduce_strategy(const Plan& plan) {
#if MIXT_SIMD_AVX512
    if constexpr (Op::indexed && keyed_leaf_v<Kern>) {
        // Each row of the result one contiguous run of the array, and one task (a super-block) per row.
        if (plan.columns == 1 && plan.per_row == 1 && plan.box.flat(1)) return reduce_strategy::first_extremes;
    }
#endif
    if constexpr (!Op::indexed) {
        if (plan.columns == 1 && plan.supers == 1 && plan.stream <= short_row_stream<Op, A>)
            return plan.stream <= lane_group || transposes_rows_v<Op, A> ? reduce_strategy::short_rows_across
                                                                         : reduce_strategy::short_rows_in_blocks;
    }
    return reduce_strategy::streams;
}

template <class Red, class C, class Device, class OutFor>
void reduce_operand(const Red& r, const C& c, const Device& device, const OutFor& out_for) {
    constexpr int R = std::remove_cvref_t<C>::rank;
    constexpr reduce_kind K = Red::kind;
    using A = typename Red::accumulator_type;
    using T = value_t<Red>;
    using Op = reduce_op<K, A>;
    using lane = typename Op::lane;

    const auto plan = make_reduce_plan(r, c);
    T* const o = out_for(plan.out_shape); // after the plan's checks: nothing is written before them
    if (plan.outputs == 0) return;
    const index_t columns = plan.columns, stream = plan.stream, rows = plan.rows, super = plan.super,
                  supers = plan.supers, per_row = plan.per_row, reduced_count = plan.reduced_count;
    const stream_shape shape = plan.shape;
    const auto& box = plan.box;
    const auto views = leaf_views_of(c);

    using Kern = decltype(make_kernel<A>(c));
    const auto source = std::apply(
        [&](const auto&... v) {
            using S_ = reduce_source<A, Kern, R, std::remove_const_t<std::remove_pointer_t<decltype(v.data)>>...>;
            return S_{{v.data...}, box, kernel_args(make_kernel<A>(c))};
        },
        views);
    const auto row_bases = [&](index_t row) { return plan.row_bases(row); };
    // An operand that is one dense array read whole (no broadcast, no gaps: each task reads its rows in memory
    // order): the end of its memory, up to which a scan may prefetch past the values it is handed.
    const void* ahead_end = nullptr;
    if constexpr (std::tuple_size_v<std::remove_const_t<decltype(views)>> == 1) {
        if (prefetch_enabled) {
            const auto v = broadcast_view<R>(std::get<0>(views), plan.S);
            const auto [lo, hi] = byte_extent(v);
            const index_t count = plan.outputs * plan.reduced_count; // the elements of the broadcast shape
            if (elements_distinct(v) && hi - lo == static_cast<std::uintptr_t>(count) * sizeof(*v.data))
                ahead_end = reinterpret_cast<const void*>(hi);
        }
    }
    const pass_decision pass = decide_reduction_pass<C>(plan, device); // threads and prefetch: the plan's
    const int threads = pass.threads;
    const reduce_strategy strategy = choose_reduce_strategy<Op, A, Kern>(plan);
#if MIXT_SIMD_AVX512
    if constexpr (Op::indexed && keyed_leaf_v<Kern>) {
        if (strategy == reduce_strategy::first_extremes) {
            first_extremes_of_rows<Op>(std::get<0>(views).data, stream, rows, row_bases, o, ahead_end, device, threads);
            return;
        }
    }
#endif
    // Rows of one column whose stream is at most short_row_stream values (one block): a row's result is its
    // block's end, and the fold's set-up per row and that end would be most of the time. Such rows are computed
    // many at a time, in runs that cross rows (plan.rows_box), into a buffer; end_rows_of_one_block makes the
    // stream's lanes and their end from it for row_batch rows at once, the same values as stream_fold's, and
    // each row's result is stored as it is made.
    if constexpr (!Op::indexed) {
    if (strategy == reduce_strategy::short_rows_across || strategy == reduce_strategy::short_rows_in_blocks) {
        const auto rows_source = std::apply(
            [&](const auto&... v) {
                using S_ = reduce_source<A, Kern, R, std::remove_const_t<std::remove_pointer_t<decltype(v.data)>>...>;
                return S_{{v.data...}, plan.rows_box, kernel_args(make_kernel<A>(c))};
            },
            views);
        constexpr index_t row_batch = 8;
        if (strategy == reduce_strategy::short_rows_across) {
            // The rows of a batch folded side by side, a row per vector lane (fold_rows_across), from a buffer,
            // or from the operand itself where it is one array of A whose rows lie one after another (no copy).
            const A* direct = nullptr;
            if constexpr (std::is_same_v<Kern, leaf_kernel<A>>)
                if (plan.rows_box.flat(1)) direct = reinterpret_cast<const A*>(std::get<0>(views).data);
            run_reduce_tasks(rows, device, threads, [&](index_t first, index_t last) {
                const index_t batch = std::max<index_t>(lane_group, short_rows_values / stream / lane_group * lane_group);
                const std::unique_ptr<A[]> values(new A[static_cast<std::size_t>(batch * stream)]()); // A may be bool
                const std::unique_ptr<lane[]> results(new lane[static_cast<std::size_t>(batch)]);
                copy_sink<A> sink{values.get(), 0};
                for (index_t t = first; t < last; t += batch) {
                    const index_t n = std::min(batch, last - t);
                    const A* from = values.get();
                    if (direct && n == batch) { // whole groups of rows, all inside the array
                        from = direct + t * stream;
                    } else {
                        sink.first = t * stream;
                        rows_source.run({}, t * stream, (t + n) * stream, sink);
                    }
                    fold_rows_across<Op, A>(from, stream, (n + lane_group - 1) / lane_group, results.get());
                    if (plan.rows_in_order) // (a loop the compiler vectorizes)
                        for (index_t h = 0; h < n; ++h) o[t + h] = reduce_result<K, A, T>(results[h], reduced_count);
                    else
                        for (index_t h = 0; h < n; ++h)
                            o[row_bases(t + h).second] = reduce_result<K, A, T>(results[h], reduced_count);
                }
            });
            return;
        }
        run_reduce_tasks(rows, device, threads, [&](index_t first, index_t last) {
            const index_t batch = std::max<index_t>(row_batch, short_rows_values / stream / row_batch * row_batch);
            // Not a vector: A may be bool. (lane_group values to spare, which nothing reads.)
            const std::unique_ptr<A[]> values(new A[static_cast<std::size_t>(batch * stream + lane_group)]());
            copy_sink<A> sink{values.get(), 0};
            for (index_t t = first; t < last; t += batch) {
                const index_t n = std::min(batch, last - t);
                sink.first = t * stream;
                rows_source.run({}, t * stream, (t + n) * stream, sink);
                for (index_t g = 0; g < n; g += row_batch) { // a last group of fewer rows: the values after them ignored
                    end_rows_of_one_block<Op, A, row_batch>(values.get() + g * stream, stream, std::min(row_batch, n - g),
                                                            [&](index_t h, const lane& v) {
                                                                o[plan.out_offset(t + g + h)] =
                                                                    reduce_result<K, A, T>(v, reduced_count);
                                                            });
                }
            }
        });
        return;
    }
    }

    std::vector<lane> partial(static_cast<std::size_t>(rows * per_row * columns), Op::identity());
    const bool prefetch = pass.options.prefetch;
    const auto task = [&](index_t first, index_t last) {
        // As many blocks as a task pushes: a super-block's, or the whole stream's if it is shorter.
        reduce_scratch<lane> scratch(shape.P, columns, (std::min(super, stream) + shape.block - 1) / shape.block);
        for (index_t t = first; t < last; ++t) {
            const index_t row = t / per_row, sb = t % per_row;
            lane* const result = partial.data() + static_cast<std::size_t>(t * columns);
            if (supers == 0) continue; // an empty stream: the identity
            stream_fold<Op, A> fold(shape, scratch);
            fold.ahead_end = ahead_end;
            fold.prefetch = prefetch;
            const auto [base, out_off] = row_bases(row);
            (void)out_off;
            const index_t begin = sb * super, end = std::min(stream, begin + super);
            source.run(base, begin, end, fold);
            fold.finish(result);
        }
    };
    run_reduce_tasks(rows * per_row, device, threads, task);

    // Each row's super-blocks combined pairwise, then finished into the result's dtype.
    const std::size_t depth = reduce_scratch<lane>::stack_depth(supers);
    std::vector<lane> entries(static_cast<std::size_t>(columns) * depth), final_value(static_cast<std::size_t>(columns));
    std::vector<int> levels(depth);
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
    return;
}

/// Evaluates the reduction r on device into memory that out_for(shape) returns for the result's shape: the
/// result's elements contiguous in its layout. out_for is called once, after every check that can throw
/// (shapes, axes, an empty min or max) and before anything is written.
template <class Red, class Device, class OutFor>
void reduce_into(const Red& r, const Device& device, const OutFor& out_for) {
    if constexpr (!fusable_v<typename Red::child_type>) {
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
