#ifndef MIXT_SIMD_LANES_HPP
#define MIXT_SIMD_LANES_HPP

// Folds of vectors of lanes, for the reductions' streams (eval/reduce_stream.hpp): GCC vector extensions (which
// Clang has too) of a reduction's lane type, combined lane by lane (sums, products, integer min/max) or, for
// min/max of floats, kept as integer keys. Op is a reduction's lane arithmetic (eval/reduce_plan.hpp's reduce_op:
// Op::kind, Op::lane); nothing here depends on the evaluation layer.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/expr/reduce.hpp"
#include "mixt/simd/arch.hpp"

#if MIXT_SIMD_AVX2 && !defined(__CUDACC__)
#include <immintrin.h>
#endif

namespace mixt::simd {

// GCC 12's AVX-512 intrinsics trip -Wuninitialized (GCC bug 105593; see simd/wide.hpp): load_lanes's insert of a
// 32-byte half reports it wherever a fold inlines it (a -march=x86-64-v4 build on a CPU without AVX-512, where the
// build's own flags keep the warning on).
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define MIXT_LANES_DIAGNOSTICS_PUSHED 1
#endif

/// The width of the vectors of lanes that a fold keeps in registers: the widest register the build has. (A wider
/// GCC vector is split into registers, and GCC 12 moves its parts through the stack at every step.)
inline constexpr std::size_t fold_vector_bytes = MIXT_SIMD_AVX512 ? 64 : MIXT_SIMD_AVX2 ? 32 : 16;

/// v = the sizeof(V) bytes at p. A 64-byte vector is loaded as two 32-byte halves: lanes just written by the
/// compiler's own 32-byte stores (GCC's tuning for AVX-512 CPUs fills and copies arrays so) are then forwarded
/// from those stores, where one 64-byte load over two of them waits until both are written; a 64-byte store
/// forwards to either half.
template <class V>
inline void load_lanes(V& v, const void* p) {
#if MIXT_SIMD_AVX512 && !defined(__CUDACC__)
    if constexpr (sizeof(V) == 64) {
        const __m256i lo = _mm256_loadu_si256(static_cast<const __m256i*>(p));
        const __m256i hi = _mm256_loadu_si256(static_cast<const __m256i*>(p) + 1);
        const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
        std::memcpy(&v, &w, sizeof(V));
        return;
    }
#endif
    std::memcpy(&v, p, sizeof(V));
}

/// p[0, N) = x, for lanes that a fold loads next: with AVX2, by 32-byte stores of x's vector. A fill of a few
/// hundred bytes is otherwise a `rep stos` where GCC tunes for AMD CPUs, slow to start, and the fold's loads
/// of the lanes then wait until its stores are written.
template <std::size_t N, class T>
inline void fill_lanes(T* p, T x) {
#if MIXT_SIMD_AVX2 && !defined(__CUDACC__)
    if constexpr (std::is_arithmetic_v<T> && (sizeof(T) == 4 || sizeof(T) == 8) && N * sizeof(T) % 32 == 0) {
        typedef T vec __attribute__((vector_size(32)));
        const vec v = vec{} + x;
        for (std::size_t i = 0; i < N * sizeof(T) / 32; ++i) {
            __m256i w;
            std::memcpy(&w, &v, sizeof(w));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(p) + i, w);
        }
        return;
    }
#endif
    std::fill_n(p, N, x);
}

#ifdef MIXT_LANES_DIAGNOSTICS_PUSHED
#pragma GCC diagnostic pop
#undef MIXT_LANES_DIAGNOSTICS_PUSHED
#endif

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
#if defined(__CUDACC__)
        using E = std::remove_cvref_t<decltype(a[0])>;
        typedef std::make_signed_t<E> mask __attribute__((vector_size(sizeof(V))));
        select_lanes(a, static_cast<mask>(K == reduce_kind::max ? a < x : x < a), x);
#else // (a compare in the select itself: GCC makes one integer max or min of it, not a compare and a blend)
        if constexpr (K == reduce_kind::max)
            a = a < x ? x : a;
        else
            a = x < a ? x : a;
#endif
    }
}

/// min/max of floats in fold_rows_of hold each lane's values as integer keys in the order of Op::combine: the
/// bits, with the magnitude flipped for negatives (the same transform maps a key back), so that -0 comes just
/// before +0 and a NaN lies beyond an infinity: above +inf's key where its sign bit is clear, below -inf's
/// where it is set. A lane keeps the largest and the smallest key it has seen, an integer max and min per
/// vector and nothing else on the loop's chain of dependences. Its result is the extreme the reduction asks
/// for, or, where the other one lies beyond its infinity, that NaN: a NaN wins either way (as in
/// Op::combine). Which NaN a lane then holds (the outermost key) depends only on the values it took, not on
/// their grouping or order; a NaN's sign and payload are unspecified anyway (the README's NaN contract).
template <class B>
inline void flip_key(B& b) {
    using I = std::remove_cvref_t<decltype(b[0])>;
    b ^= (b >> (8 * sizeof(I) - 1)) & std::numeric_limits<I>::max();
}
template <class B>
inline void extreme_load(B& hi, B& lo, const void* p) {
    load_lanes(hi, p);
    flip_key(hi);
    lo = hi;
}
/// With SignClear (every value's sign bit clear: |x|, NaNs included) a key is the value's bits, so there is no
/// flip; and a max (K) keeps only the largest key, since the smallest only shows a NaN of set sign beyond -inf and
/// no value is one (lo keeps what extreme_load gave it: extreme_store's result is the same bits as without).
template <bool SignClear = false, reduce_kind K = reduce_kind::max, class B, class V>
inline void extreme_add(B& hi, B& lo, const V& x) {
    static_assert(sizeof(B) == sizeof(V));
    B k;
    std::memcpy(&k, &x, sizeof(k));
    if constexpr (!SignClear) flip_key(k);
    constexpr bool keeps_lo = !SignClear || K == reduce_kind::min;
#if defined(__CUDACC__)
    select_lanes(hi, static_cast<B>(hi < k), k);
    if constexpr (keeps_lo) select_lanes(lo, static_cast<B>(k < lo), k);
#else // (the compare inside the select: one integer max and one min, as in combine_lanes)
    hi = hi < k ? k : hi;
    if constexpr (keeps_lo) lo = k < lo ? k : lo;
#endif
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
/// combine_lanes; with SignClear (every value's sign bit clear: detail::sign_clear_kernel), the keys are the
/// bits (extreme_add). With FromIdentity the lanes start from the identity, not from l (which is then only
/// written: no fill of it, and no loads of that fill). V is deduced from the type of a null pointer, not
/// named: nvcc's front end drops the vector attribute of a type given as an explicit template argument, and its
/// code generator fails on a vector constant (`V{}`).
template <class Op, class A, Eigen::Index Count, bool SignClear = false, bool FromIdentity = false, class V, class ForEach>
inline void fold_vectors(typename Op::lane* l, const V* /* type only */, const ForEach& for_each_vector) {
    using lane = typename Op::lane;
    constexpr Eigen::Index per_vector = static_cast<Eigen::Index>(sizeof(V) / sizeof(lane));
    lane identity[FromIdentity ? per_vector : 1];
    if constexpr (FromIdentity) std::fill_n(identity, per_vector, Op::identity());
    const auto start = [&](Eigen::Index v) -> const lane* { return FromIdentity ? identity : l + v * per_vector; };
    if constexpr (keyed_extreme_v<Op, A>) {
        using key_t = std::conditional_t<sizeof(A) == 4, std::int32_t, std::int64_t>;
        typedef key_t bits __attribute__((vector_size(sizeof(V))));
        bits hi[Count], lo[Count];
        for (Eigen::Index v = 0; v < Count; ++v) extreme_load(hi[v], lo[v], start(v));
        for_each_vector([&](Eigen::Index v, const V& x) { extreme_add<SignClear, Op::kind>(hi[v], lo[v], x); });
        for (Eigen::Index v = 0; v < Count; ++v) extreme_store<Op::kind, A>(hi[v], lo[v], l + v * per_vector);
    } else {
        V acc[Count];
        for (Eigen::Index v = 0; v < Count; ++v) load_lanes(acc[v], start(v));
        for_each_vector([&](Eigen::Index v, const V& x) { combine_lanes<Op::kind>(acc[v], x); });
        for (Eigen::Index v = 0; v < Count; ++v) std::memcpy(l + v * per_vector, &acc[v], sizeof(V));
    }
}

#if !defined(__CUDACC__) // (GCC's and Clang's __builtin_shufflevector; nvcc's code takes the lanes through memory)
/// Lane 0 of v (16 bytes or narrower) after lanes M/2 apart are combined, then M/4 apart, and so on: the first
/// M lanes combined into lane 0 (combine_to_first's last steps).
template <std::size_t M, class V, class Combine>
inline auto combine_within(V& v, const Combine& combine) {
    if constexpr (M > 1) {
        constexpr std::size_t W = sizeof(V) / sizeof(v[0]);
        V upper;
        [&]<std::size_t... I>(std::index_sequence<I...>) { upper = __builtin_shufflevector(v, v, ((I + M / 2) % W)...); }(
            std::make_index_sequence<W>{});
        combine(v, upper);
        return combine_within<M / 2>(v, combine);
    } else {
        return v[0];
    }
}
/// v's lanes combined by combine(a, b) (a = a with b, lane by lane; a combine whose result does not depend on
/// the grouping) into one value, returned: halves combined down to 16 bytes, then lanes within them
/// (combine_within). Vectors go by reference only (none crosses a call in a build without AVX).
template <class V, class Combine>
inline auto combine_to_first(const V& v, const Combine& combine) {
    using E = std::remove_cvref_t<decltype(v[0])>;
    constexpr std::size_t W = sizeof(V) / sizeof(E);
    if constexpr (sizeof(V) > 16) {
        typedef E half __attribute__((vector_size(sizeof(V) / 2)));
        half lower, upper;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            lower = __builtin_shufflevector(v, v, I...);
            upper = __builtin_shufflevector(v, v, (I + W / 2)...);
        }(std::make_index_sequence<W / 2>{});
        combine(lower, upper);
        return combine_to_first(lower, combine);
    } else {
        V w = v;
        return combine_within<W>(w, combine);
    }
}

/// fold_vectors from the identity, for a result that does not depend on how its values are grouped (integer
/// sums and products, min/max): the Count vectors folded, then combined with each other and lane with lane in
/// registers, and the one result returned. The same bits as fold_vectors followed by combines of the lanes in
/// memory, by halves: for min/max of floats the key extremes are combined before their result is taken, which
/// picks the same value or NaN (extreme_store's NaN of the other sign is the outermost key either way).
template <class Op, class A, Eigen::Index Count, bool SignClear = false, class V, class ForEach>
inline typename Op::lane fold_vectors_to_one(const V* /* type only */, const ForEach& for_each_vector) {
    using lane = typename Op::lane;
    constexpr Eigen::Index per_vector = static_cast<Eigen::Index>(sizeof(V) / sizeof(lane));
    alignas(64) lane identity[per_vector];
    std::fill_n(identity, per_vector, Op::identity());
    if constexpr (keyed_extreme_v<Op, A>) {
        using key_t = std::conditional_t<sizeof(A) == 4, std::int32_t, std::int64_t>;
        typedef key_t bits __attribute__((vector_size(sizeof(V))));
        bits hi[Count], lo[Count];
        for (Eigen::Index v = 0; v < Count; ++v) extreme_load(hi[v], lo[v], identity);
        for_each_vector([&](Eigen::Index v, const V& x) { extreme_add<SignClear, Op::kind>(hi[v], lo[v], x); });
        for (Eigen::Index v = 1; v < Count; ++v) {
            hi[0] = hi[0] < hi[v] ? hi[v] : hi[0];
            lo[0] = lo[v] < lo[0] ? lo[v] : lo[0];
        }
        // (the two extremes of all lanes in every lane of a 16-byte vector: extreme_store's operands)
        typedef key_t keys16 __attribute__((vector_size(16)));
        const keys16 top = keys16{} + combine_to_first(hi[0], [](auto& a, const auto& b) { a = a < b ? b : a; });
        const keys16 bottom = keys16{} + combine_to_first(lo[0], [](auto& a, const auto& b) { a = b < a ? b : a; });
        lane result[16 / sizeof(lane)];
        extreme_store<Op::kind, A>(top, bottom, result);
        return result[0];
    } else {
        V acc[Count];
        for (Eigen::Index v = 0; v < Count; ++v) load_lanes(acc[v], identity);
        for_each_vector([&](Eigen::Index v, const V& x) { combine_lanes<Op::kind>(acc[v], x); });
        for (Eigen::Index v = 1; v < Count; ++v) combine_lanes<Op::kind>(acc[0], acc[v]);
        return combine_to_first(acc[0], [](auto& a, const auto& b) { combine_lanes<Op::kind>(a, b); });
    }
}

/// The N lanes at l combined into one, in registers, for a result that does not depend on the grouping: the
/// lanes as fold_vectors_to_one's stream (vectors of fold_vector_bytes; N a multiple of their lanes).
template <class Op, class A, std::size_t N>
inline typename Op::lane combine_lanes_to_one(const typename Op::lane* l) {
    using lane = typename Op::lane;
    typedef lane vec __attribute__((vector_size(fold_vector_bytes)));
    constexpr std::size_t per_vector = fold_vector_bytes / sizeof(lane);
    static_assert(N % per_vector == 0);
    constexpr Eigen::Index count = static_cast<Eigen::Index>(N / per_vector);
    return fold_vectors_to_one<Op, A, count>(static_cast<const vec*>(nullptr), [&](auto&& visit) {
        for (Eigen::Index v = 0; v < count; ++v) {
            vec x;
            load_lanes(x, l + v * static_cast<Eigen::Index>(per_vector));
            visit(v, x);
        }
    });
}
#endif

} // namespace mixt::simd

#endif // MIXT_SIMD_LANES_HPP
