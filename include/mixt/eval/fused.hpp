#ifndef MIXT_EVAL_FUSED_HPP
#define MIXT_EVAL_FUSED_HPP

// The fused CPU loop: one pass over memory, every node computed in registers: on simd::batch values, 8
// elements at a time, or (plain integer and float arithmetic, see block_kernel) as a fixed-length scalar
// block loop that the compiler vectorizes at the target's full width. This header is the contiguous loop: a
// run of elements of the destination and of every leaf, one after the other. assign() runs it on the
// DefaultDevice and the ThreadPoolDevice when every leaf is an array in memory (has_view_v): once over the
// whole pass when the operands are all contiguous and of the destination's shape, else once per run of an
// iteration space (eval/strided.hpp). Other leaves (TensorRef, tensor expressions) and other devices go
// through the lowering to Eigen (eval/lower.hpp).
//
// Before the loop, the expression is turned into a kernel: its kernel tree (eval/kernel.hpp: leaf pointers,
// literals already converted) bound to this file's SIMD kernels (cpu_binder: a literal is broadcast into a
// batch once), so nothing per call is redone per element. Results are the same as the per-element definitions (expr/functors.hpp, mixt::convert) bit for
// bit, except transcendental functions, whose vector versions agree within 2 ulp of the result type.

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/dtype/convert.hpp"
#include "mixt/eval/device.hpp"
#include "mixt/eval/kernel.hpp"
#include "mixt/eval/lower.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/simd/arch.hpp"
#include "mixt/simd/convert.hpp"
#include "mixt/simd/divide.hpp"
#include "mixt/simd/halves.hpp"
#include "mixt/simd/ops.hpp"
#include "mixt/simd/stream.hpp"
#include "mixt/simd/wide.hpp"

namespace mixt::detail {

/// Whether the fused loop can evaluate an expression: every leaf is an array in memory (has_view_v).
template <class L>
using leaf_has_view = std::bool_constant<has_view_v<typename L::eigen_type>>;
template <class E>
inline constexpr bool fusable_v = boost::mp11::mp_all_of<leaf_list_t<E>, leaf_has_view>::value;

/// How far ahead of the element being computed the batch loop asks for its inputs (software prefetch), in
/// passes that move at least prefetch_threshold_bytes, on CPUs where that pays (software_prefetch_pays): the
/// hardware prefetcher alone leaves a single core well short of the memory bandwidth when the loop does real
/// work per element (docs/performance-notes.md, "Fused loop: measurements behind the code").
/// Smaller passes run from the caches, where the prefetch instructions would only cost issue slots.
/// MIXT_PREFETCH_DISTANCE (elements) and MIXT_PREFETCH_THRESHOLD_BYTES change them, the same in every
/// translation unit (the distance matters little over a wide range).
#ifndef MIXT_PREFETCH_DISTANCE
#define MIXT_PREFETCH_DISTANCE 1024
#endif
#ifndef MIXT_PREFETCH_THRESHOLD_BYTES
#define MIXT_PREFETCH_THRESHOLD_BYTES (std::size_t{512} << 10)
#endif
inline constexpr index_t prefetch_distance = MIXT_PREFETCH_DISTANCE;
inline constexpr std::size_t prefetch_threshold_bytes = MIXT_PREFETCH_THRESHOLD_BYTES;

/// Passes that move at least this many bytes, more than a core's L1 cache holds, ask for the destination's
/// lines for writing (prefetchw where the target has it) a little ahead of their stores, on CPUs where
/// software prefetch pays: a store that misses L1 waits for its line, and a loop whose result does not fit L1
/// stalls on those misses even when the line is in L2 (docs/performance-notes.md, "Stores prefetched").
/// MIXT_STORE_PREFETCH_THRESHOLD_BYTES changes it, the same in every translation unit.
#ifndef MIXT_STORE_PREFETCH_THRESHOLD_BYTES
#define MIXT_STORE_PREFETCH_THRESHOLD_BYTES (std::size_t{48} << 10)
#endif
inline constexpr std::size_t store_prefetch_threshold_bytes = MIXT_STORE_PREFETCH_THRESHOLD_BYTES;

/// How far past the elements an iteration stores it asks for the destination's lines, in bytes.
inline constexpr std::size_t store_prefetch_ahead = 256;

/// What a pass asks the caches for in software: nothing; the destination's lines, ahead of its stores (from
/// store_prefetch_threshold_bytes); or those and its inputs' lines, prefetch_distance elements ahead (from
/// prefetch_threshold_bytes). Each is a variant of the fused loop (run_range's Prefetch).
enum class prefetch_kind : unsigned char { none, stores, loads_and_stores };

/// Whether software prefetch can be chosen at all: not when MIXT_SOFTWARE_PREFETCH=0, and then the loops that
/// prefetch are not even compiled.
inline constexpr bool prefetch_enabled =
#if defined(MIXT_SOFTWARE_PREFETCH)
    MIXT_SOFTWARE_PREFETCH != 0;
#else
    true;
#endif

/// Whether the fused loop prefetches in software (its destination above store_prefetch_threshold_bytes, its
/// inputs too above prefetch_threshold_bytes): not on AMD CPUs, decided once per program from the CPU's vendor:
/// on AMD the prefetches of inputs made every loop slower, from L3 and from DRAM, and the prefetches of stores
/// are not measured there (docs/performance-notes.md). MIXT_SOFTWARE_PREFETCH=0 or 1 decides it at compile
/// time instead.
inline bool software_prefetch_pays() noexcept {
#if defined(MIXT_SOFTWARE_PREFETCH)
    return prefetch_enabled;
#else
    return !simd::running_on_amd();
#endif
}

/// Whether the 16-lane loop divides f32 by a literal with a multiplication and two fused multiply-adds
/// (simd/divide.hpp, the same bits): on CPUs that are not AMD, decided once per program from the CPU's vendor. A
/// division there occupies the divider for about twice the time the three operations take, and a loop with two
/// divisions per element is bound by them; on AMD the divider keeps up with the loop (docs/performance-notes.md,
/// "Division by a literal"). MIXT_DIVIDE_BY_RECIPROCAL=0 or 1 decides it at compile time instead.
inline bool division_by_reciprocal_pays() noexcept {
#if defined(MIXT_DIVIDE_BY_RECIPROCAL)
    return MIXT_DIVIDE_BY_RECIPROCAL != 0;
#else
    return !simd::running_on_amd();
#endif
}

/// Asks for the cache lines of the bytes [base, base + bytes), one request per line (at least one), for writing
/// where Write. The address is an integer: it may lie past the end of the array (a prefetch never faults).
template <bool Write>
inline void prefetch_span(std::uintptr_t base, std::size_t bytes) noexcept {
#if defined(__GNUC__)
    for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(reinterpret_cast<const void*>(base + b), Write ? 1 : 0);
#else
    (void)base;
    (void)bytes;
#endif
}
/// prefetch_span of a count of bytes known at compile time.
template <std::size_t Bytes, bool Write>
inline void prefetch_lines(std::uintptr_t base) noexcept {
    prefetch_span<Write>(base, Bytes);
}

/// Asks for the destination lines [p + store_prefetch_ahead, p + store_prefetch_ahead + Bytes) for writing.
template <std::size_t Bytes, class D>
inline void prefetch_for_stores(const D* p) noexcept {
    prefetch_lines<Bytes, true>(reinterpret_cast<std::uintptr_t>(p) + store_prefetch_ahead);
}

/// Asks for the cache lines of elements [i, i + Count) of p.
template <index_t Count, class T>
inline void prefetch_elements(const T* p, index_t i) noexcept {
    prefetch_lines<static_cast<std::size_t>(Count) * sizeof(T), false>(reinterpret_cast<std::uintptr_t>(p) +
                                                                       static_cast<std::uintptr_t>(i) * sizeof(T));
}

// A kernel k computes its node at element i: k.at(i) is the batch of elements [i, i + 8), k.at_partial(i, n)
// the first n of them (no read past i + n), k.scalar(i) one element, and k.at_store(i) the batch for a store
// only: for an f16 or bf16 node computed in f32, its lanes are not rounded yet, and the store rounds them
// (simd::apply_unrounded, simd::convert_unrounded), which saves the round trip of the node's own rounding.
// On AVX-512 targets, k.wide_at(i) and k.wide_at_store(i) are the same for the 16 elements [i, i + 16), as
// simd::wide::batch values, where wide_kernel_v<K> (only then are they instantiated), and k.word_at(i) for the
// 32 elements [i, i + 32), one per 16-bit lane, where word_kernel<K> (simd::wide's words). With AVX512-FP16,
// k.half_at(i) is the 32 elements [i, i + 32) as f16 values in f16 arithmetic, where half_kernel<K>
// (simd/halves.hpp).
//
// A leaf's element i is p[i] where its mask is all ones, and p[0] where the mask is 0: an operand that a
// strided pass broadcasts along its runs (stride 0, eval/strided.hpp), whose p then holds broadcast_copies
// copies of the operand's value, so that every batch loads those copies, as a literal's batch is its value
// (without a copy of the value the size of the run). The address is p + i * (mask & 1), a product by a value
// the loop does not change, which the compiler turns into one running offset per leaf; p + (i & mask) took
// every unrolled iteration a move, an `and` and an address per leaf (docs/performance-notes.md, "Leaf
// addresses as a product"). The block loop reads p[i] (its compiler-vectorized loop needs contiguous
// addresses): a broadcast operand of a block-loop kernel is copied the length of the run.
template <class T>
struct leaf_kernel {
    const T* p;
    index_t mask = ~index_t{0}; // all ones, or 0 (a broadcast along the run)
    const T* at_ptr(index_t i) const { return p + i * (mask & 1); }
    simd::batch<T> at(index_t i) const { return simd::load(at_ptr(i)); }
    simd::batch<T> at_partial(index_t i, int n) const { return simd::load_partial(at_ptr(i), n); }
    simd::batch<T> at_store(index_t i) const { return at(i); }
#if MIXT_SIMD_AVX512
    auto wide_at(index_t i) const { return simd::wide::load(at_ptr(i)); }
    auto wide_at_store(index_t i) const { return wide_at(i); }
#endif
#if MIXT_SIMD_AVX512 || MIXT_SIMD_AVX2_WORDS
    simd::wide::words word_at(index_t i) const { return simd::wide::load_words(at_ptr(i)); }
#endif
#if MIXT_SIMD_AVX512FP16
    __m512h half_at(index_t i) const { return simd::wide::load_halves(at_ptr(i)); }
#endif
    T scalar(index_t i) const { return p[i]; }
    template <index_t Count>
    void prefetch(index_t i) const { prefetch_elements<Count>(p, i * (mask & 1)); }
};

/// Whether a leaf of type T is worth converting once where its value is broadcast (hoisted_leaf_kernel): the
/// types whose every batch costs a conversion (f16, bf16, the narrow floats).
template <class T>
inline constexpr bool hoistable_v = is_small_float_v<T> || is_narrow_float_v<T>;

/// The f32 bits of each of the 256 codes of the narrow float D.
template <dtype D>
inline constexpr std::array<std::uint32_t, 256> narrow_f32_bits_table = [] {
    std::array<std::uint32_t, 256> t{};
    for (unsigned c = 0; c < 256; ++c) t[c] = narrow_to_f32_bits<D>(static_cast<std::uint8_t>(c));
    return t;
}();

/// The batches of `lanes` copies of x, as loads of them make them (the same bits, NaN payloads included).
template <class T>
simd::batch<T> copies_batch(T x) {
    alignas(64) T c[simd::lanes];
    for (auto& e : c) e = x;
    return simd::load(c);
}
#if MIXT_SIMD_AVX512
template <class T>
simd::wide::batch<T> wide_copies_batch(T x) {
    if constexpr (is_narrow_float_v<T>) {
        // The decoded value (decode's, bit for bit) from a table of the 256 codes: one load and broadcast.
        return {_mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(narrow_f32_bits_table<T::value_dtype>[x.bits()])))};
    } else {
        alignas(64) T c[simd::wide::lanes];
        for (auto& e : c) e = x;
        return simd::wide::load(c);
    }
}
#endif

/// A leaf whose value is the same along a run (hoistable_v types), or along each row of a run of rows: its
/// batches are loaded and converted once, when the kernel is built (or row_of moves it to a row), instead of
/// for every batch (a per-row f16 scale costs an f16 conversion per batch otherwise). Its run-time values are
/// leaf_kernel's, the mask read as a step: the value of row r is p[r * mask] (a strided pass's run of rows,
/// run_rows_of); a run that is one value has mask 0 (hoists_leaves). The batches are those of loads of the
/// value's copies, so the same values as leaf_kernel's, NaN payloads included.
template <class T>
struct hoisted_leaf_kernel {
    static_assert(hoistable_v<T>);
    const T* p;
    index_t mask;
    simd::batch<T> v;
#if MIXT_SIMD_AVX512
    simd::wide::batch<T> wv;
#endif
    /// The kernel of the value at p (of row 0 where mask is a step).
    static hoisted_leaf_kernel of(const T* p, index_t mask) {
#if MIXT_SIMD_AVX512
        return {p, mask, copies_batch(*p), wide_copies_batch(*p)};
#else
        return {p, mask, copies_batch(*p)};
#endif
    }
    /// The kernel of row r's value (from the kernel of row 0).
    hoisted_leaf_kernel row(index_t r) const { return of(p + r * mask, mask); }
    const simd::batch<T>& at(index_t) const { return v; }
    const simd::batch<T>& at_partial(index_t, int) const { return v; }
    const simd::batch<T>& at_store(index_t) const { return v; }
#if MIXT_SIMD_AVX512
    const simd::wide::batch<T>& wide_at(index_t) const { return wv; }
    const simd::wide::batch<T>& wide_at_store(index_t) const { return wv; }
#endif
#if MIXT_SIMD_AVX512FP16
    __m512h half_at(index_t) const { return simd::wide::broadcast_halves(*p); } // hoisted out of the loop
#endif
    T scalar(index_t) const { return *p; }
    template <index_t Count>
    void prefetch(index_t) const {}
};

/// How many copies of a broadcast operand's value a leaf with mask 0 reads: as many as an unrolled iteration of
/// any loop reads from one place (moved_to): wide_unroll loads of 32 words (simd::wide::load_words).
inline constexpr index_t broadcast_copies = 128;

/// What a literal that divides needs besides its value: an f32 one, the divisor of simd/divide.hpp.
template <class T>
struct divisor_of {
    static divisor_of of(T) noexcept { return {}; }
};
template <>
struct divisor_of<float> : simd::f32_divisor {
    static divisor_of of(float s) noexcept { return {simd::f32_divisor::of(s, division_by_reciprocal_pays())}; }
};

template <class T>
struct const_kernel {
    simd::batch<T> v;
    T s;
    [[no_unique_address]] divisor_of<T> divisor;
    /// The kernel of the value s (already converted to T).
    static const_kernel of(T s) { return {simd::broadcast(s), s, divisor_of<T>::of(s)}; }
    const simd::batch<T>& at(index_t) const { return v; }
    const simd::batch<T>& at_partial(index_t, int) const { return v; }
    const simd::batch<T>& at_store(index_t) const { return v; }
#if MIXT_SIMD_AVX512
    auto wide_at(index_t) const { return simd::wide::broadcast(s); } // hoisted out of the loop
    auto wide_at_store(index_t i) const { return wide_at(i); }
#endif
#if MIXT_SIMD_AVX512 || MIXT_SIMD_AVX2_WORDS
    simd::wide::words word_at(index_t) const { return simd::wide::broadcast_words(s); }
#endif
#if MIXT_SIMD_AVX512FP16
    __m512h half_at(index_t) const { return simd::wide::broadcast_halves(s); }
#endif
    T scalar(index_t) const { return s; }
    template <index_t Count>
    void prefetch(index_t) const {}
};

template <class S, class K>
struct convert_kernel {
    K k;
    simd::batch<S> at(index_t i) const { return simd::convert<S>(k.at(i)); }
    simd::batch<S> at_partial(index_t i, int n) const { return simd::convert<S>(k.at_partial(i, n)); }
    simd::batch<S> at_store(index_t i) const { return simd::convert_unrounded<S>(k.at(i)); }
#if MIXT_SIMD_AVX512
    auto wide_at(index_t i) const { return simd::wide::convert<S>(k.wide_at(i)); }
    auto wide_at_store(index_t i) const { return simd::wide::convert_unrounded<S>(k.wide_at(i)); }
#endif
#if MIXT_SIMD_AVX512 || MIXT_SIMD_AVX2_WORDS
    simd::wide::words word_at(index_t i) const { return k.word_at(i); } // the same bits (simd::wide::word_convertible_v)
#endif
#if MIXT_SIMD_AVX512FP16
    __m512h half_at(index_t i) const { return k.half_at(i); } // already f16 values (half_kernel: exact)
#endif
    S scalar(index_t i) const { return mixt::convert<S>(k.scalar(i)); }
    template <index_t Count>
    void prefetch(index_t i) const { k.template prefetch<Count>(i); }
};

/// Whether an operation quiets a signaling NaN operand itself (+, -, * and / of floats), so that its leaves'
/// wide batches are loaded without load's own quieting (simd::wide::load_operand): the same result bits, fewer
/// instructions per bf16 leaf.
template <class Fn>
inline constexpr bool quiets_operands_v =
    std::is_same_v<Fn, add_fn> || std::is_same_v<Fn, sub_fn> || std::is_same_v<Fn, mul_fn> || std::is_same_v<Fn, div_fn>;

template <class K>
struct is_leaf_kernel : std::false_type {};
template <class T>
struct is_leaf_kernel<leaf_kernel<T>> : std::true_type {};

/// Whether an operation is an f32 division by a literal (its 16-lane batches: simd::wide::divide).
template <class Fn, class R, class... Ks>
inline constexpr bool divides_by_literal_v = false;
template <class A, class B>
inline constexpr bool divides_by_literal_v<div_fn, float, A, B> = std::is_same_v<B, const_kernel<float>>;

/// Whether a kernel widens a bf16 leaf to f32 (exactly: its bits shifted), which as an operand of an operation
/// that quiets its operands may skip load's quieting as a bf16 leaf does.
template <class K>
struct widens_bf16_leaf : std::false_type {};
template <>
struct widens_bf16_leaf<convert_kernel<float, leaf_kernel<Eigen::bfloat16>>> : std::true_type {};

/// k.at(i) as an operand of Fn: a leaf, or a bf16 leaf widened to f32, loaded by load_operand where Fn quiets its
/// operands.
template <class Fn, class K>
auto batch_operand(const K& k, index_t i) {
#if MIXT_SIMD_AVX2
    if constexpr (quiets_operands_v<Fn> && is_leaf_kernel<K>::value)
        return simd::load_operand(k.at_ptr(i));
    else if constexpr (quiets_operands_v<Fn> && widens_bf16_leaf<K>::value)
        return simd::convert<float>(simd::load_operand(k.k.at_ptr(i)));
    else
#endif
        return k.at(i);
}

#if MIXT_SIMD_AVX512
/// k.wide_at(i) as an operand of Fn: a leaf, or a bf16 leaf widened to f32, loaded by load_operand where Fn
/// quiets its operands.
template <class Fn, class K>
auto wide_operand(const K& k, index_t i) {
    if constexpr (quiets_operands_v<Fn> && is_leaf_kernel<K>::value)
        return simd::wide::load_operand(k.at_ptr(i));
    else if constexpr (quiets_operands_v<Fn> && widens_bf16_leaf<K>::value)
        return simd::wide::convert<float>(simd::wide::load_operand(k.k.at_ptr(i)));
    else
        return k.wide_at(i);
}
#endif

template <class Fn, class R, class... Ks>
struct op_kernel {
    using fn = Fn;
    std::tuple<Ks...> ks;
    simd::batch<R> at(index_t i) const {
        return std::apply([&](const auto&... k) { return simd::apply<R>(Fn{}, batch_operand<Fn>(k, i)...); }, ks);
    }
    simd::batch<R> at_partial(index_t i, int n) const {
        return std::apply([&](const auto&... k) { return simd::apply<R>(Fn{}, k.at_partial(i, n)...); }, ks);
    }
    simd::batch<R> at_store(index_t i) const {
        return std::apply([&](const auto&... k) { return simd::apply_unrounded<R>(Fn{}, batch_operand<Fn>(k, i)...); },
                          ks);
    }
#if MIXT_SIMD_AVX512
    auto wide_at(index_t i) const {
        if constexpr (divides_by_literal_v<Fn, R, Ks...>)
            return simd::wide::batch<float>{
                simd::wide::divide(wide_operand<Fn>(std::get<0>(ks), i).v, std::get<1>(ks).divisor)};
        else
            return std::apply([&](const auto&... k) { return simd::wide::apply<R>(Fn{}, wide_operand<Fn>(k, i)...); },
                              ks);
    }
    auto wide_at_store(index_t i) const {
        if constexpr (divides_by_literal_v<Fn, R, Ks...>)
            return wide_at(i); // (an f32 result: nothing to round)
        else
            return std::apply(
                [&](const auto&... k) { return simd::wide::apply_unrounded<R>(Fn{}, wide_operand<Fn>(k, i)...); }, ks);
    }
#endif
#if MIXT_SIMD_AVX512 || MIXT_SIMD_AVX2_WORDS
    simd::wide::words word_at(index_t i) const {
        return std::apply([&](const auto&... k) { return simd::wide::apply_words(Fn{}, k.word_at(i)...); }, ks);
    }
#endif
#if MIXT_SIMD_AVX512FP16
    __m512h half_at(index_t i) const {
        return std::apply([&](const auto&... k) { return simd::wide::apply_halves(Fn{}, k.half_at(i)...); }, ks);
    }
#endif
    R scalar(index_t i) const {
        return std::apply([&](const auto&... k) { return static_cast<R>(Fn{}(k.scalar(i)...)); }, ks);
    }
    template <index_t Count>
    void prefetch(index_t i) const { std::apply([&](const auto&... k) { (k.template prefetch<Count>(i), ...); }, ks); }
};

// An array compared with a literal (literal_compare_functor): in the join J, on whole batches, when the literal
// fits J (the usual case: `x > 0`); otherwise each lane compares exact values.
template <class Fn, bool LiteralLeft, class J, class L, class K>
struct literal_compare_kernel {
    K k;
    literal_compare_functor<Fn, LiteralLeft, J, L> f;
    simd::batch<J> literal_b;
    /// The kernel comparing k's elements with f's literal.
    static literal_compare_kernel of(const K& k, const literal_compare_functor<Fn, LiteralLeft, J, L>& f) {
        return {k, f, simd::broadcast(f.converted)};
    }
    simd::batch<bool> compute(const simd::batch<J>& a) const {
        if (f.fits) [[likely]]
            return LiteralLeft ? simd::apply<bool>(Fn{}, literal_b, a) : simd::apply<bool>(Fn{}, a, literal_b);
        return compare_exact(f, a);
    }
    // A literal that does not fit J (`u8 < 300`): lane by lane, by exact value. Out of line, so the loop of the
    // usual case stays small.
    MIXT_COLD static simd::batch<bool> compare_exact(const literal_compare_functor<Fn, LiteralLeft, J, L>& f,
                                                     const simd::batch<J>& a) {
        return simd::apply<bool>(f, a);
    }
    simd::batch<bool> at(index_t i) const { return compute(k.at(i)); }
    simd::batch<bool> at_partial(index_t i, int n) const { return compute(k.at_partial(i, n)); }
    simd::batch<bool> at_store(index_t i) const { return at(i); }
#if MIXT_SIMD_AVX512
    auto wide_at(index_t i) const {
        const auto a = k.wide_at(i);
        if (f.fits) [[likely]] {
            const auto lit = simd::wide::broadcast(f.converted); // hoisted out of the loop
            return LiteralLeft ? simd::wide::apply<bool>(Fn{}, lit, a) : simd::wide::apply<bool>(Fn{}, a, lit);
        }
        return compare_exact_wide(f, a);
    }
    auto wide_at_store(index_t i) const { return wide_at(i); }
    // compare_exact on each half.
    template <class B>
    MIXT_COLD static auto compare_exact_wide(const literal_compare_functor<Fn, LiteralLeft, J, L>& f, const B& a) {
        return simd::wide::join_bool(simd::apply<bool>(f, simd::wide::half_batch(a, 0)),
                                     simd::apply<bool>(f, simd::wide::half_batch(a, 1)));
    }
#endif
    bool scalar(index_t i) const { return f(k.scalar(i)); }
    template <index_t Count>
    void prefetch(index_t i) const { k.template prefetch<Count>(i); }
};

/// The CPU's kernels of a kernel tree (eval/kernel.hpp), node for node.
struct cpu_binder {
    template <class T>
    MIXT_ALWAYS_INLINE static leaf_kernel<T> of(const ktree::array<T>& a) { return {a.p}; }
    template <class T>
    MIXT_ALWAYS_INLINE static const_kernel<T> of(const ktree::constant<T>& c) { return const_kernel<T>::of(c.value); }
    template <class S, class K>
    MIXT_ALWAYS_INLINE static auto of(const ktree::convert<S, K>& c) {
        auto k = of(c.k);
        return convert_kernel<S, decltype(k)>{k};
    }
    template <class Fn, class R, class... Ks>
    MIXT_ALWAYS_INLINE static auto of(const ktree::op<Fn, R, Ks...>& o) {
        return std::apply([](const auto&... c) { return op_kernel<Fn, R, decltype(of(c))...>{{of(c)...}}; }, o.ks);
    }
    template <class Fn, bool LiteralLeft, class J, class L, class K>
    MIXT_ALWAYS_INLINE static auto of(const ktree::compare<literal_compare_functor<Fn, LiteralLeft, J, L>, K>& c) {
        auto k = of(c.k);
        return literal_compare_kernel<Fn, LiteralLeft, J, L, decltype(k)>::of(k, c.f);
    }
};

/// The CPU kernel that computes `e` converted to `S`.
template <class S, class E>
MIXT_ALWAYS_INLINE auto make_kernel(const E& e) {
    return cpu_binder::of(make_kernel_tree<S>(e));
}

// Kernels of plain integer and float arithmetic (integers, bool, float, double; the operations below; integer
// conversions, integers of up to 32 bits to float or double, float <-> double): written as a scalar loop over
// a block of fixed length, the compiler vectorizes them at the target's full width and in the lanes' own
// widths (16 x i16 per AVX2 register, where simd::batch holds 8 x 32-bit lanes). The per-element functors
// are the same, so are the results, bit for bit. The fixed trip count lets GCC vectorize at -O2 too (its
// "very cheap" model), and GCC's pragma states what run_kernel already requires of the destination: it is
// one of the leaves or overlaps none of them (check_before_write; Clang checks the overlap at run time and
// vectorizes anyway). Everything else (f16, bf16, complex, float -> int, division, the functions) runs on
// simd::batch.
template <class T>
inline constexpr bool block_int_v = is_bool_v<T> || is_int_v<T>;
template <class T>
inline constexpr bool block_value_v = block_int_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class To, class From>
inline constexpr bool block_convert_v =
    (block_int_v<To> && block_int_v<From>) ||
    ((std::is_same_v<To, float> || std::is_same_v<To, double>) &&
     ((block_int_v<From> && sizeof(From) <= 4) || std::is_same_v<From, float> || std::is_same_v<From, double>));
template <class Fn, class R>
inline constexpr bool block_fn_v =
    std::is_same_v<Fn, add_fn> || std::is_same_v<Fn, sub_fn> || std::is_same_v<Fn, mul_fn> ||
    std::is_same_v<Fn, neg_fn> || std::is_same_v<Fn, identity_fn> || std::is_same_v<Fn, equal_fn> ||
    std::is_same_v<Fn, not_equal_fn> || std::is_same_v<Fn, less_fn> || std::is_same_v<Fn, less_equal_fn> ||
    std::is_same_v<Fn, greater_fn> || std::is_same_v<Fn, greater_equal_fn> ||
    (block_int_v<R> &&
     (std::is_same_v<Fn, bit_and_fn> || std::is_same_v<Fn, bit_or_fn> || std::is_same_v<Fn, bit_xor_fn> ||
      std::is_same_v<Fn, bit_not_fn> || std::is_same_v<Fn, logical_and_fn> || std::is_same_v<Fn, logical_or_fn> ||
      std::is_same_v<Fn, logical_not_fn> || std::is_same_v<Fn, minimum_fn> || std::is_same_v<Fn, maximum_fn>));

template <class K>
struct block_kernel : std::false_type {};
template <class T>
struct block_kernel<leaf_kernel<T>> : std::bool_constant<block_value_v<T>> {
    using type = T;
};
template <class T>
struct block_kernel<hoisted_leaf_kernel<T>> : block_kernel<leaf_kernel<T>> {};
template <class T>
struct block_kernel<const_kernel<T>> : std::bool_constant<block_value_v<T>> {
    using type = T;
};
template <class S, class K>
struct block_kernel<convert_kernel<S, K>> {
    static constexpr bool value = [] {
        if constexpr (block_kernel<K>::value) return block_convert_v<S, typename block_kernel<K>::type>;
        else return false;
    }();
    using type = S;
};
template <class Fn, class R, class... Ks>
struct block_kernel<op_kernel<Fn, R, Ks...>>
    : std::bool_constant<block_value_v<R> && block_fn_v<Fn, R> && (block_kernel<Ks>::value && ...)> {
    using type = R;
};
template <class K>
inline constexpr bool block_kernel_v = block_kernel<K>::value;

// Whether a kernel computes some node in lanes narrower than 32 bits (u8 + i8 is i16): a simd::batch holds 8
// x 32-bit lanes whatever the dtype, while the compiler's vectors hold 16 x i16 or 32 x i8. Where every node
// is 32 or 64 bits wide (i8 + f32), the batch loop is the faster one: it widens a narrow leaf as it loads it
// (vpmovsxbd from memory), which the compiler's vectorization of the block loop does with two shuffles more.
template <class K>
struct narrow_kernel : std::false_type {};
template <class S, class K>
struct narrow_kernel<convert_kernel<S, K>> : std::bool_constant<(sizeof(S) < 4) || narrow_kernel<K>::value> {};
template <class Fn, class R, class... Ks>
struct narrow_kernel<op_kernel<Fn, R, Ks...>>
    : std::bool_constant<(sizeof(R) < 4) || (narrow_kernel<Ks>::value || ...)> {};

/// Whether run_kernel runs the block loop (else the batch loop) for a kernel writing D.
template <class D, class K>
inline constexpr bool use_block_loop_v = block_kernel_v<K> && (sizeof(D) < 4 || narrow_kernel<K>::value);


// The value type of a kernel's batches.
template <class K>
struct kernel_value;
template <class T>
struct kernel_value<leaf_kernel<T>> {
    using type = T;
};
template <class T>
struct kernel_value<hoisted_leaf_kernel<T>> {
    using type = T;
};
template <class T>
struct kernel_value<const_kernel<T>> {
    using type = T;
};
template <class S, class K>
struct kernel_value<convert_kernel<S, K>> {
    using type = S;
};
template <class Fn, class R, class... Ks>
struct kernel_value<op_kernel<Fn, R, Ks...>> {
    using type = R;
};
template <class Fn, bool LiteralLeft, class J, class L, class K>
struct kernel_value<literal_compare_kernel<Fn, LiteralLeft, J, L, K>> {
    using type = bool;
};
template <class K>
using kernel_value_t = typename kernel_value<K>::type;

/// Whether every value of a kernel has its sign bit clear, NaNs included: |x| of a real float (abs clears the
/// sign bit, as fabs and the vectors' andnot do), or such a value converted to another float (a conversion keeps
/// the sign). min/max of floats then take the values' bits as their order keys (simd::fold_vectors).
template <class K>
struct sign_clear_kernel : std::false_type {};
template <class R, class K>
struct sign_clear_kernel<op_kernel<abs_fn, R, K>> : std::bool_constant<std::is_floating_point_v<R> || is_small_float_v<R>> {};
template <class S, class K>
struct sign_clear_kernel<convert_kernel<S, K>>
    : std::bool_constant<(std::is_floating_point_v<S> || is_small_float_v<S>) &&
                         (std::is_floating_point_v<kernel_value_t<K>> || is_small_float_v<kernel_value_t<K>>) &&
                         sign_clear_kernel<K>::value> {};

// Whether every node of a kernel has a 16-lane version (simd/wide.hpp): leaves, literals and nodes of f16,
// bf16, f32, bool, 8- to 32-bit integers and the narrow dtypes; conversions to f16, bf16, f32 and the narrow
// floats (from what f32 holds exactly); f32-lane arithmetic, min/max,
// neg, abs, sqrt, comparisons, where, logical ops, and exp of f16 (simd::wide::supported_v).
template <class K>
struct wide_kernel : std::false_type {};
template <class T>
struct wide_kernel<leaf_kernel<T>> : std::bool_constant<simd::wide::has_batch_v<T>> {};
template <class T>
struct wide_kernel<hoisted_leaf_kernel<T>> : std::bool_constant<simd::wide::has_batch_v<T>> {};
template <class T>
struct wide_kernel<const_kernel<T>> : std::bool_constant<simd::wide::has_batch_v<T>> {};
template <class S, class K>
struct wide_kernel<convert_kernel<S, K>>
    : std::bool_constant<wide_kernel<K>::value && simd::wide::convertible_v<S, kernel_value_t<K>>> {};
template <class Fn, class R, class... Ks>
struct wide_kernel<op_kernel<Fn, R, Ks...>>
    : std::bool_constant<(wide_kernel<Ks>::value && ...) && simd::wide::supported_v<R, Fn, kernel_value_t<Ks>...>> {};
template <class Fn, bool LiteralLeft, class J, class L, class K>
struct wide_kernel<literal_compare_kernel<Fn, LiteralLeft, J, L, K>>
    : std::bool_constant<wide_kernel<K>::value && simd::wide::supported_v<bool, Fn, J, J>> {};

/// Whether run_range runs the 16-lane loop (AVX-512 targets): for results of f16, bf16, f32 and the narrow
/// floats whose every node has a wide version. It comes first: where the block loop could run too (f32
/// arithmetic), the compiler's vectorization of it uses 256-bit registers under GCC's tuning for most AVX-512
/// CPUs.
template <class D, class K>
inline constexpr bool wide_loop_v =
    simd::avx512 && (std::is_same_v<D, float> || is_small_float_v<D> || is_narrow_float_v<D>) &&
    wide_kernel<K>::value;

/// Whether every node of a kernel has a version on simd::wide's words: integer leaves and literals of up to 16
/// bits, conversions to u16 and i16, and +, -, *, &, |, ^ computing u16 or i16.
template <class K>
struct word_kernel : std::false_type {};
template <class T>
struct word_kernel<leaf_kernel<T>> : std::bool_constant<simd::wide::has_words_v<T>> {};
template <class T>
struct word_kernel<hoisted_leaf_kernel<T>> : std::bool_constant<simd::wide::has_words_v<T>> {};
template <class T>
struct word_kernel<const_kernel<T>> : std::bool_constant<simd::wide::has_words_v<T>> {};
template <class S, class K>
struct word_kernel<convert_kernel<S, K>>
    : std::bool_constant<word_kernel<K>::value && simd::wide::word_convertible_v<S, kernel_value_t<K>>> {};
template <class Fn, class R, class... Ks>
struct word_kernel<op_kernel<Fn, R, Ks...>>
    : std::bool_constant<(word_kernel<Ks>::value && ...) && simd::wide::word_supported_v<R, Fn, kernel_value_t<Ks>...>> {};

/// Whether every node of a kernel has a version in f16 arithmetic on 32 lanes (half_at; AVX512-FP16): leaves and
/// literals of f16, leaves of i8 and u8, conversions to f16 of those values (exact), and +, -, * computing f16.
template <class K>
struct half_kernel : std::false_type {};
template <class T>
struct half_kernel<leaf_kernel<T>> : std::bool_constant<simd::wide::has_halves_v<T>> {};
template <class T>
struct half_kernel<hoisted_leaf_kernel<T>> : std::bool_constant<simd::wide::has_halves_v<T> && std::is_same_v<T, Eigen::half>> {};
template <class T>
struct half_kernel<const_kernel<T>> : std::bool_constant<simd::wide::has_halves_v<T> && std::is_same_v<T, Eigen::half>> {};
template <class K>
struct half_kernel<convert_kernel<Eigen::half, K>>
    : std::bool_constant<half_kernel<K>::value && simd::wide::has_halves_v<kernel_value_t<K>>> {};
template <class Fn, class... Ks>
struct half_kernel<op_kernel<Fn, Eigen::half, Ks...>>
    : std::bool_constant<simd::wide::halves_supported_v<Fn> &&
                         ((half_kernel<Ks>::value && std::is_same_v<kernel_value_t<Ks>, Eigen::half>) && ...)> {};

/// Whether a kernel's f32 values can be made 32 at a time (wide_pair): a conversion to f32 of a half_kernel
/// that rounds at least one f16 operation (where f16 arithmetic saves the f32 lanes' two conversions per 16
/// results; a conversion of f16 leaves alone gains nothing), or an operation computing f32 with such an operand.
template <class K>
struct pair_kernel : std::false_type {};
template <class Fn, class R, class... Ks>
struct pair_kernel<convert_kernel<float, op_kernel<Fn, R, Ks...>>> : half_kernel<op_kernel<Fn, R, Ks...>> {};
template <class Fn, class... Ks>
struct pair_kernel<op_kernel<Fn, float, Ks...>>
    : std::bool_constant<wide_kernel<op_kernel<Fn, float, Ks...>>::value && (pair_kernel<Ks>::value || ...)> {};

#if MIXT_SIMD_AVX512FP16
template <class Fn, class K>
auto wide_pair_operand(const K& k, index_t i);

/// The f32 values of the 32 elements [i, i + 32) of a pair_kernel, as two wide batches (lo: [i, i + 16)): the
/// values of wide_at(i) and wide_at(i + 16), the f16 subtree computed by half_at.
template <class K>
void wide_pair(const convert_kernel<float, K>& k, index_t i, simd::wide::batch<float>& lo, simd::wide::batch<float>& hi) {
    simd::wide::widen_halves(k.k.half_at(i), lo.v, hi.v);
}
template <class Fn, class... Ks>
void wide_pair(const op_kernel<Fn, float, Ks...>& k, index_t i, simd::wide::batch<float>& lo, simd::wide::batch<float>& hi) {
    std::apply(
        [&](const auto&... c) {
            const auto parts = std::make_tuple(wide_pair_operand<Fn>(c, i)...);
            lo = std::apply([](const auto&... p) { return simd::wide::apply<float>(Fn{}, p.first...); }, parts);
            hi = std::apply([](const auto&... p) { return simd::wide::apply<float>(Fn{}, p.second...); }, parts);
        },
        k.ks);
}
/// An operand of Fn over [i, i + 32) as two wide batches: by wide_pair where it is a pair_kernel, else by
/// wide_operand.
template <class Fn, class K>
auto wide_pair_operand(const K& k, index_t i) {
    if constexpr (pair_kernel<K>::value) {
        std::pair<simd::wide::batch<float>, simd::wide::batch<float>> p;
        wide_pair(k, i, p.first, p.second);
        return p;
    } else {
        return std::pair{wide_operand<Fn>(k, i), wide_operand<Fn>(k, i + simd::wide::lanes)};
    }
}
#endif

/// Whether run_range runs the loop on words (AVX-512 targets, and AVX2 ones where MIXT_SIMD_AVX2_WORDS): for u16 and
/// i16 results whose every node has a version there (`u8 + i8`): the loop the compiler makes of the block loop is
/// bound by its widening shuffles (docs/performance-notes.md).
template <class D, class K>
inline constexpr bool word_loop_v =
    simd::wide::has_words && (std::is_same_v<D, std::int16_t> || std::is_same_v<D, std::uint16_t>) &&
    word_kernel<K>::value;

/// Whether run_range<Prefetch, Stream> runs the block loop.
template <bool Stream, class D, class K>
inline constexpr bool block_loop_v = !wide_loop_v<D, K> && !word_loop_v<D, K> &&
                                     (use_block_loop_v<D, K> || (!Stream && simd::avx512 && block_kernel_v<K>));

/// How many wide batches (or registers of words) run_range computes per iteration of the 16-lane loop (the
/// loop on words).
inline constexpr int wide_unroll = 4;

inline constexpr index_t block_length = 64;

/// Whether a kernel writing D is a + or - of a leaf of type D whose batches simd::apply_store combines straight
/// from memory (complex: `c64 * f32 + c128`, `y = a * x + y`): its batches are stored by store_batch.
template <class D, class K>
struct combined_root : std::false_type {};
template <class D, class Fn, class A, class B>
struct combined_root<D, op_kernel<Fn, D, A, B>>
    : std::bool_constant<simd::combines_from_memory_v<D, Fn> &&
                         (std::is_same_v<A, leaf_kernel<D>> || std::is_same_v<B, leaf_kernel<D>>)> {};
template <class D, class K>
inline constexpr bool combined_root_v = combined_root<D, K>::value;

template <class K>
struct is_convert_kernel : std::false_type {};
template <class S, class K>
struct is_convert_kernel<convert_kernel<S, K>> : std::true_type {};

// The operand a combined_root combines with its leaf: the batch of k, or, where k converts a batch that
// apply_store converts as it combines (complex<float> to complex<double>), the unconverted batch.
template <class D, class Fn, class K>
auto combined_operand(const K& k, index_t i) {
    if constexpr (is_convert_kernel<K>::value) {
        using A = typename std::remove_cvref_t<decltype(k.k.at(i))>::value_type;
        if constexpr (simd::combines_from_memory_v<D, Fn, A>)
            return k.k.at(i);
        else
            return k.at(i);
    } else {
        return k.at(i);
    }
}

/// Whether K, the operand a combined_root combines with its leaf, is a complex<float> leaf times a float node,
/// converted to D, and simd::apply_real_product_store computes it (`c64 * f32 + c128`). real_left: the float
/// is the product's left operand.
template <class D, class Fn, class K>
struct real_product_operand : std::false_type {};
template <class D, class Fn, class X>
    requires std::is_same_v<kernel_value_t<X>, float>
struct real_product_operand<
    D, Fn,
    convert_kernel<D, op_kernel<mul_fn, std::complex<float>, leaf_kernel<std::complex<float>>,
                                convert_kernel<std::complex<float>, X>>>>
    : std::bool_constant<simd::combines_real_product_v<D, Fn>> {
    static constexpr bool real_left = false;
};
template <class D, class Fn, class X>
    requires std::is_same_v<kernel_value_t<X>, float>
struct real_product_operand<
    D, Fn,
    convert_kernel<D, op_kernel<mul_fn, std::complex<float>, convert_kernel<std::complex<float>, X>,
                                leaf_kernel<std::complex<float>>>>>
    : std::bool_constant<simd::combines_real_product_v<D, Fn>> {
    static constexpr bool real_left = true;
};

/// Stores the batch of k at element i to p: store(p, k.at(i)), or, for a combined_root, the other operand's
/// batch combined with the leaf's elements in memory (the right-hand leaf when both are leaves). With Stream,
/// by streaming stores (p aligned to simd::stream_pair_alignment<D>): the batch k.at_store(i), but for a
/// real_product_operand, which is streamed in memory order too.
template <bool Stream = false, class D, class K>
void store_batch(D* p, const K& k, index_t i) {
    if constexpr (combined_root_v<D, K>) {
        using Fn = typename K::fn;
        constexpr bool a_left = std::is_same_v<std::tuple_element_t<1, decltype(k.ks)>, leaf_kernel<D>>;
        const auto& operand = std::get<a_left ? 0 : 1>(k.ks);
        const D* leaf = std::get<a_left ? 1 : 0>(k.ks).at_ptr(i);
        using O = std::remove_cvref_t<decltype(operand)>;
        if constexpr (real_product_operand<D, Fn, O>::value) {
            constexpr bool real_left = real_product_operand<D, Fn, O>::real_left;
            const auto& c64_leaf = std::get<real_left ? 1 : 0>(operand.k.ks);
            const auto& real = std::get<real_left ? 0 : 1>(operand.k.ks).k;
            if (simd::apply_real_product_store<a_left, real_left, Stream>(p, Fn{}, c64_leaf.at_ptr(i), real.at(i), leaf))
                [[likely]]
                return;
        }
        if constexpr (Stream)
            simd::stream_store(p, k.at_store(i));
        else
            simd::apply_store<a_left>(p, Fn{}, combined_operand<D, Fn>(operand, i), leaf);
    } else if constexpr (Stream) {
        simd::stream_store(p, k.at_store(i));
    } else {
        simd::store(p, k.at_store(i));
    }
}

/// How many batches run_kernel computes per iteration: independent chains the CPU overlaps (a hand loop gets
/// the same from the compiler's unrolling or its wider vectors). Four while a result batch fits two AVX
/// registers; a complex128 batch is four registers wide on its own, and more in flight would spill.
template <class D>
inline constexpr int unroll_v = sizeof(simd::batch<D>) <= 64 ? 4 : 1;

/// Whether run_range stores each of the unrolled batches as soon as it is computed, rather than computing all
/// of them first: for a combined_root (its store is its last operation), and for results of 8-byte elements,
/// whose batches are two stores each, and which ran slower with all stores at the end of an iteration
/// (docs/performance-notes.md).
template <class D, class K>
inline constexpr bool store_as_computed_v = combined_root_v<D, K> || sizeof(D) == 8;

/// A kernel's run-time values, in the order of the tree (kernel_args): the data pointer of each leaf followed by
/// its mask, the values of its literals (already converted to the node's type), and the functors of its
/// comparisons with a literal; and the kernel built anew from them (kernel_from_args<K>: a literal's batch is
/// broadcast again from its value). run_range_of takes them as arguments (it says why).
template <class T>
std::tuple<const T*, index_t> kernel_args(const leaf_kernel<T>& k) {
    return {k.p, k.mask};
}
template <class T>
std::tuple<const T*, index_t> kernel_args(const hoisted_leaf_kernel<T>& k) {
    return {k.p, k.mask};
}
template <class T>
std::tuple<T> kernel_args(const const_kernel<T>& k) {
    return {k.s};
}
template <class S, class K>
auto kernel_args(const convert_kernel<S, K>& k) {
    return kernel_args(k.k);
}
template <class Fn, class R, class... Ks>
auto kernel_args(const op_kernel<Fn, R, Ks...>& k) {
    return std::apply([](const auto&... c) { return std::tuple_cat(kernel_args(c)...); }, k.ks);
}
template <class Fn, bool LiteralLeft, class J, class L, class K>
auto kernel_args(const literal_compare_kernel<Fn, LiteralLeft, J, L, K>& k) {
    return std::tuple_cat(kernel_args(k.k), std::tuple{k.f});
}

template <class K>
inline constexpr std::size_t kernel_arg_count_v = std::tuple_size_v<decltype(kernel_args(std::declval<const K&>()))>;

/// How many run-time values the first C of the kernels Ks have.
template <std::size_t C, class... Ks>
constexpr std::size_t args_before() {
    return []<std::size_t... J>(std::index_sequence<J...>) {
        return (std::size_t{0} + ... + kernel_arg_count_v<boost::mp11::mp_at_c<boost::mp11::mp_list<Ks...>, J>>);
    }(std::make_index_sequence<C>{});
}

// The kernel of type K whose run-time values are elements I, I + 1, ... of the tuple t.
template <std::size_t I, class T, class Tuple>
leaf_kernel<T> kernel_from(std::type_identity<leaf_kernel<T>>, const Tuple& t) {
    eigen_assert(std::get<I + 1>(t) == 0 || std::get<I + 1>(t) == ~index_t{0}); // (at_ptr reads its last bit)
    return {std::get<I>(t), std::get<I + 1>(t)};
}
template <std::size_t I, class T, class Tuple>
hoisted_leaf_kernel<T> kernel_from(std::type_identity<hoisted_leaf_kernel<T>>, const Tuple& t) {
    return hoisted_leaf_kernel<T>::of(std::get<I>(t), std::get<I + 1>(t));
}
template <std::size_t I, class T, class Tuple>
const_kernel<T> kernel_from(std::type_identity<const_kernel<T>>, const Tuple& t) {
    return const_kernel<T>::of(std::get<I>(t));
}
template <std::size_t I, class S, class K, class Tuple>
convert_kernel<S, K> kernel_from(std::type_identity<convert_kernel<S, K>>, const Tuple& t) {
    return {kernel_from<I>(std::type_identity<K>{}, t)};
}
template <std::size_t I, class Fn, class R, class... Ks, class Tuple>
op_kernel<Fn, R, Ks...> kernel_from(std::type_identity<op_kernel<Fn, R, Ks...>>, const Tuple& t) {
    return [&]<std::size_t... C>(std::index_sequence<C...>) {
        return op_kernel<Fn, R, Ks...>{{kernel_from<I + args_before<C, Ks...>()>(std::type_identity<Ks>{}, t)...}};
    }(std::index_sequence_for<Ks...>{});
}
template <std::size_t I, class Fn, bool LiteralLeft, class J, class L, class K, class Tuple>
literal_compare_kernel<Fn, LiteralLeft, J, L, K>
kernel_from(std::type_identity<literal_compare_kernel<Fn, LiteralLeft, J, L, K>>, const Tuple& t) {
    return literal_compare_kernel<Fn, LiteralLeft, J, L, K>::of(kernel_from<I>(std::type_identity<K>{}, t),
                                                                std::get<I + kernel_arg_count_v<K>>(t));
}
/// How many array leaves a kernel has (in the tree's order, which kernel_args and a strided pass's operands
/// follow).
template <class K>
inline constexpr std::size_t leaf_count_v = 0; // a literal
template <class T>
inline constexpr std::size_t leaf_count_v<leaf_kernel<T>> = 1;
template <class T>
inline constexpr std::size_t leaf_count_v<hoisted_leaf_kernel<T>> = 1;
template <class S, class K>
inline constexpr std::size_t leaf_count_v<convert_kernel<S, K>> = leaf_count_v<K>;
template <class Fn, class R, class... Ks>
inline constexpr std::size_t leaf_count_v<op_kernel<Fn, R, Ks...>> = (std::size_t{0} + ... + leaf_count_v<Ks>);
template <class Fn, bool LiteralLeft, class J, class L, class K>
inline constexpr std::size_t leaf_count_v<literal_compare_kernel<Fn, LiteralLeft, J, L, K>> = leaf_count_v<K>;

/// A set of leaves: bit j for leaf j (the leaves after the 64th are never in one).
using leaf_set = std::uint64_t;
constexpr leaf_set leaf_set_after(leaf_set s, std::size_t leaves) { return leaves >= 64 ? 0 : s >> leaves; }

/// K with the leaves of the set S (bit 0: K's first leaf) that are of hoistable_v types as
/// hoisted_leaf_kernel (the same run-time values).
template <class K, leaf_set S>
struct hoisted_kernel {
    using type = K;
};
template <class T, leaf_set S>
struct hoisted_kernel<leaf_kernel<T>, S> {
    using type = std::conditional_t<hoistable_v<T> && (S & 1) != 0, hoisted_leaf_kernel<T>, leaf_kernel<T>>;
};
template <class S0, class K, leaf_set S>
struct hoisted_kernel<convert_kernel<S0, K>, S> {
    using type = convert_kernel<S0, typename hoisted_kernel<K, S>::type>;
};
/// How many leaves the first C of the kernels Ks have.
template <std::size_t C, class... Ks>
constexpr std::size_t leaves_before() {
    return []<std::size_t... J>(std::index_sequence<J...>) {
        return (std::size_t{0} + ... + leaf_count_v<boost::mp11::mp_at_c<boost::mp11::mp_list<Ks...>, J>>);
    }(std::make_index_sequence<C>{});
}
template <class Fn, class R, class... Ks, leaf_set S>
struct hoisted_kernel<op_kernel<Fn, R, Ks...>, S> {
    template <class I>
    using child = typename hoisted_kernel<boost::mp11::mp_at<boost::mp11::mp_list<Ks...>, I>,
                                          leaf_set_after(S, leaves_before<I::value, Ks...>())>::type;
    using type = boost::mp11::mp_apply<op_kernel, boost::mp11::mp_append<boost::mp11::mp_list<Fn, R>,
                                                                         boost::mp11::mp_transform<child, boost::mp11::mp_iota_c<sizeof...(Ks)>>>>;
};
template <class Fn, bool LiteralLeft, class J, class L, class K, leaf_set S>
struct hoisted_kernel<literal_compare_kernel<Fn, LiteralLeft, J, L, K>, S> {
    using type = literal_compare_kernel<Fn, LiteralLeft, J, L, typename hoisted_kernel<K, S>::type>;
};

/// The set of K's leaves whose types T have P<T>::value.
template <class K, template <class> class P>
inline constexpr leaf_set leaves_where_v = 0;
template <class T, template <class> class P>
inline constexpr leaf_set leaves_where_v<leaf_kernel<T>, P> = P<T>::value ? 1 : 0;
template <class S, class K, template <class> class P>
inline constexpr leaf_set leaves_where_v<convert_kernel<S, K>, P> = leaves_where_v<K, P>;
template <class Fn, class R, class... Ks, template <class> class P>
inline constexpr leaf_set leaves_where_v<op_kernel<Fn, R, Ks...>, P> = [] {
    constexpr leaf_set sets[] = {leaves_where_v<Ks, P>..., 0};
    constexpr std::size_t counts[] = {leaf_count_v<Ks>..., 0};
    leaf_set s = 0;
    std::size_t at = 0;
    for (std::size_t c = 0; c < sizeof...(Ks); ++c) {
        if (at < 64) s |= sets[c] << at;
        at += counts[c];
    }
    return s;
}();
template <class Fn, bool LiteralLeft, class J, class L, class K, template <class> class P>
inline constexpr leaf_set leaves_where_v<literal_compare_kernel<Fn, LiteralLeft, J, L, K>, P> = leaves_where_v<K, P>;

template <class T>
struct is_hoistable : std::bool_constant<hoistable_v<T>> {};
template <class T>
struct is_small_float : std::bool_constant<is_small_float_v<T>> {};

/// K with its f16 and bf16 leaves as hoisted_leaf_kernel: the kernel of the runs in which every such leaf is
/// broadcast (hoists_leaves).
template <class K>
using hoisted_kernel_t = typename hoisted_kernel<K, leaves_where_v<K, is_small_float>>::type;

/// Whether a kernel has an f16 or bf16 leaf: the leaves whose every batch costs a conversion, which
/// hoisted_kernel_t saves where they are broadcast along a run (the only kernels it is compiled for).
template <class K>
inline constexpr bool has_small_float_leaf_v = !std::is_same_v<hoisted_kernel_t<K>, K>;

/// Whether a run whose leaves, of types Ts in the tree's order, have the masks `masks` takes hoisted_kernel_t:
/// every f16 and bf16 leaf is broadcast along it (mask 0), and there is one.
template <class... Ts, std::size_t L>
bool hoists_leaves(const std::array<index_t, L>& masks) {
    static_assert(sizeof...(Ts) == L);
    constexpr bool small[] = {is_small_float_v<Ts>..., false};
    bool any = false;
    for (std::size_t j = 0; j < L; ++j)
        if (small[j]) {
            if (masks[j] != 0) return false;
            any = true;
        }
    return any;
}

/// The kernel k rebuilt with each of its leaves (leaf_kernel, hoisted_leaf_kernel, const_kernel) replaced by
/// f(leaf), each node of the types its children come back as (row_of keeps every type; moved_to may change a
/// leaf's): the one walk of a kernel's tree that row_of and moved_to share.
template <class T, class F>
auto with_leaves(const leaf_kernel<T>& k, const F& f) {
    return f(k);
}
template <class T, class F>
auto with_leaves(const hoisted_leaf_kernel<T>& k, const F& f) {
    return f(k);
}
template <class T, class F>
auto with_leaves(const const_kernel<T>& k, const F& f) {
    return f(k);
}
template <class S, class K, class F>
auto with_leaves(const convert_kernel<S, K>& k, const F& f) {
    auto c = with_leaves(k.k, f);
    return convert_kernel<S, decltype(c)>{c};
}
template <class Fn, class R, class... Ks, class F>
auto with_leaves(const op_kernel<Fn, R, Ks...>& k, const F& f) {
    return std::apply(
        [&](const auto&... c) { return op_kernel<Fn, R, decltype(with_leaves(c, f))...>{{with_leaves(c, f)...}}; },
        k.ks);
}
template <class Fn, bool LiteralLeft, class J, class L, class K, class F>
auto with_leaves(const literal_compare_kernel<Fn, LiteralLeft, J, L, K>& k, const F& f) {
    auto c = with_leaves(k.k, f);
    return literal_compare_kernel<Fn, LiteralLeft, J, L, decltype(c)>{c, k.f, k.literal_b};
}

/// The kernel k (of row 0) with its hoisted leaves (those with a row) at row r's values (run_rows_of).
template <class K>
K row_of(const K& k, index_t r) {
    return with_leaves(k, [r]<class L>(const L& leaf) -> L {
        if constexpr (requires { leaf.row(r); })
            return leaf.row(r);
        else
            return leaf;
    });
}

/// Whether run_range_of's unrolled iterations read through moved_to(k, i): where K's nodes are leaves,
/// conversions, operations and literals (const_kernel) only. A comparison's functor and batch and
/// hoisted_leaf_kernel's batches, copied into the moved kernel for every iteration, stay on the stack in GCC's
/// code; a literal moves with the leaves (its 16-lane batch is broadcast from its value), which spares every load
/// of the iteration its own index (docs/performance-notes.md, "Literals in the 8-lane loop", "Literals in the 16-lane loop").
template <class K>
inline constexpr bool moves_leaves_v = false;
template <class T>
inline constexpr bool moves_leaves_v<leaf_kernel<T>> = true;
template <class T>
inline constexpr bool moves_leaves_v<const_kernel<T>> = true;
template <class S, class K>
inline constexpr bool moves_leaves_v<convert_kernel<S, K>> = moves_leaves_v<K>;
template <class Fn, class R, class... Ks>
inline constexpr bool moves_leaves_v<op_kernel<Fn, R, Ks...>> = (moves_leaves_v<Ks> && ...);

#if MIXT_SIMD_AVX512VBMI
/// A leaf of u8 in a moved kernel (moved_to), on AVX-512 targets with VBMI: the 16-lane loops read its batches four at a time from
/// one place, so wide_at(i) takes its batch as a quarter of the 64 bytes at p + (i & ~63) (simd::wide::load_quarter):
/// one 64-byte load for the block's four batches, widened in registers, where a load of each batch's 16 bytes
/// widened from memory was slower (docs/performance-notes.md, "Byte leaves read a block at a time"). Its
/// contract: every wide_at(i) comes from an iteration that reads all of [i & ~63, (i & ~63) + 64), as
/// run_range_of's 16-lane loops do from the moved position (their iterations are whole blocks of 64 elements).
template <class T>
struct block_byte_leaf_kernel : leaf_kernel<T> {
    auto wide_at(index_t i) const {
        return simd::wide::load_quarter(this->p + (i & ~index_t{63}), static_cast<int>((i >> 4) & 3));
    }
    auto wide_at_store(index_t i) const { return wide_at(i); }
};
#endif

/// The kernel k moved to element i, for the loads of an unrolled iteration of run_range_of: its leaves at
/// at_ptr(i) with their masks all ones, so that element i + j is read at j (for a leaf with mask 0, j within
/// the broadcast_copies copies at p). The iteration's loads then take constant offsets from one address per leaf. Only for the kernels moves_leaves_v takes: leaves, conversions, operations and
/// literals (kept as they are). On AVX-512 targets with VBMI a leaf of u8 becomes a block_byte_leaf_kernel.
template <class K>
    requires moves_leaves_v<K>
auto moved_to(const K& k, index_t i) {
    return with_leaves(k, [i]<class L>(const L& leaf) {
        if constexpr (requires { leaf.at_ptr(i); }) {
#if MIXT_SIMD_AVX512VBMI
            using T = std::remove_cvref_t<decltype(*leaf.p)>;
            if constexpr (simd::wide::has_quarters_v<T>)
                return block_byte_leaf_kernel<T>{{leaf.at_ptr(i), ~index_t{0}}};
            else
#endif
                return L{leaf.at_ptr(i), ~index_t{0}};
        } else {
            return leaf; // a literal: the same at every element
        }
    });
}

/// An unrolled iteration of run_range_of at element i: m, the kernel it reads through, and o, where element i is
/// in m (iteration_at).
template <class M>
struct iteration {
    M m;
    index_t o;
};

/// The iteration at element i: moved_to(k, i) and 0 where moves_leaves_v<K>, else k itself and i.
template <class K>
auto iteration_at(const K& k, index_t i) {
    if constexpr (moves_leaves_v<K>)
        return iteration<decltype(moved_to(k, i))>{moved_to(k, i), 0};
    else
        return iteration<const K&>{k, i};
}

/// The kernel of type K with the run-time values args (those kernel_args lists).
template <class K, class... Args>
K kernel_from_args(const Args&... args) {
    static_assert(std::is_same_v<std::tuple<Args...>, decltype(kernel_args(std::declval<const K&>()))>);
    return kernel_from<0>(std::type_identity<K>{}, std::forward_as_tuple(args...));
}

/// The data pointers of an expression's array leaves, in the order of the tree: those kernel_args lists.
template <class E>
auto leaf_pointers_of(const E& e) {
    return map_leaves(e, []<class L>(const L& l) -> const value_t<L>* { return view_of(l.x).data; });
}

/// Computes elements [begin, end) of the kernel K whose run-time values are `args` (kernel_args) into
/// out[0, end - begin).
/// The loop builds its own kernel from the values, which arrive as arguments: in registers (the first few;
/// the others in stack slots of their own, each written whole by the caller). A kernel reached through memory
/// fails twice. A reference to the caller's kernel (or a by-value parameter, which the x86-64 ABI passes by
/// hidden reference once it holds a vector register) has its pointers and broadcast literals reloaded after
/// every store, as the SIMD stores may alias any object (the intrinsics' types are may_alias). And a copy of it
/// made here waits for the caller's stores of the kernel it has just built: GCC copies the kernel by 64-byte
/// loads and builds two adjacent pointers in one vector register stored whole (its SLP vectorizer), and on
/// some CPUs a load that spans several smaller stores, or takes half of a wider one, is not forwarded from
/// them, so the loop's first addresses and literals waited on every call (the figures are in
/// docs/performance-notes.md).
/// Prefetch (prefetch_kind) says what each iteration asks for ahead: the destination's lines (stores, unless
/// Stream), and the inputs' too (loads_and_stores).
/// With Stream (batch loops only), whole batches are written with simd::stream_store_pair, stream_store and
/// simd::wide::stream_store, so out + (i - begin) must be aligned to stream_alignment_v<D, K> at every multiple
/// of 16 elements from begin.
///
/// The loop is MIXT_FLATTEN: the whole kernel inlines into it, so the tree's arithmetic runs in registers.
template <prefetch_kind Prefetch, bool Stream, class D, class K, class... Args>
MIXT_FLATTEN void run_range_of(D* out, index_t begin, index_t end, Args... args) {
    static_assert(!(Stream && block_loop_v<Stream, D, K>), "mixt: the block loop has no streaming stores");
    static_assert(broadcast_copies >= unroll_v<D> * simd::lanes, "mixt: an iteration reads within the copies");
    static_assert(broadcast_copies >= wide_unroll * simd::wide::word_lanes, "mixt: an iteration reads within the copies");
#if MIXT_SIMD_AVX512
    static_assert(wide_unroll * simd::wide::lanes % 64 == 0, "mixt: a 16-lane iteration reads whole blocks of 64 (block_byte_leaf_kernel)");
#endif
    const K k = kernel_from_args<K>(args...);
    constexpr bool prefetch_loads = Prefetch == prefetch_kind::loads_and_stores;
    constexpr bool prefetch_stores = Prefetch != prefetch_kind::none && !Stream;
    constexpr index_t w = simd::lanes;
    const auto put = [](D* p, const simd::batch<D>& b) {
        if constexpr (Stream)
            simd::stream_store(p, b);
        else
            simd::store(p, b);
    };
    index_t i = begin;
#if MIXT_SIMD_AVX512
    if constexpr (wide_loop_v<D, K>) {
        // 16 lanes at a time, u batches per iteration; the 8-lane loop below does the rest. Streamed results
        // leave as soon as they are computed; cached ones are stored after all u are computed, as the
        // compiler's own unrolled loops do. Storing each as it came made the loop's speed depend on where the
        // arrays lie (docs/performance-notes.md).
        constexpr index_t ww = simd::wide::lanes;
        constexpr int u = wide_unroll;
        // N batches from element `at` on, read through one moved kernel.
        const auto batches = [&]<int N>(std::integral_constant<int, N>, index_t at) {
            const auto it = iteration_at(k, at);
            return [&]<int... J>(std::integer_sequence<int, J...>) {
                return std::array{it.m.wide_at_store(it.o + J * ww)...};
            }(std::make_integer_sequence<int, N>{});
        };
        const auto group = [&](index_t at) { return batches(std::integral_constant<int, u>{}, at); };
        if constexpr (!Stream && simd::wide::converts_first_v<D>) {
            // Two groups at a time (one check per 2u batches), then one, stored as converted until one hints at a
            // subnormal lane (store_group_converted), then the loop below: one loop each, so that neither tests
            // which way it stores.
            static_assert(broadcast_copies >= 2 * u * ww, "mixt: two groups read within the copies");
            bool converted = true;
            for (; converted && i + 2 * u * ww <= end; i += 2 * u * ww) {
                if constexpr (prefetch_loads) k.template prefetch<2 * u * ww>(i + prefetch_distance);
                if constexpr (prefetch_stores) prefetch_for_stores<2 * u * ww * sizeof(D)>(out + (i - begin));
                converted = simd::wide::store_group_converted(out + (i - begin),
                                                              batches(std::integral_constant<int, 2 * u>{}, i));
            }
            if (converted && i + u * ww <= end) {
                if constexpr (prefetch_loads) k.template prefetch<u * ww>(i + prefetch_distance);
                if constexpr (prefetch_stores) prefetch_for_stores<u * ww * sizeof(D)>(out + (i - begin));
                (void)simd::wide::store_group_converted(out + (i - begin), group(i));
                i += u * ww;
            }
        }
        for (; i + u * ww <= end; i += u * ww) {
            if constexpr (prefetch_loads) k.template prefetch<u * ww>(i + prefetch_distance);
            if constexpr (prefetch_stores) prefetch_for_stores<u * ww * sizeof(D)>(out + (i - begin));
            if constexpr (Stream) {
                const auto it = iteration_at(k, i);
                [&]<int... J>(std::integer_sequence<int, J...>) {
                    (simd::wide::stream_store(out + (i - begin) + J * ww, it.m.wide_at_store(it.o + J * ww)), ...);
                }(std::make_integer_sequence<int, u>{});
            } else {
                simd::wide::store_group(out + (i - begin), group(i));
            }
        }
    }
#endif
#if MIXT_SIMD_AVX512 || MIXT_SIMD_AVX2_WORDS
    if constexpr (word_loop_v<D, K>) {
        // 32 elements per register (16 in AVX2's, MIXT_SIMD_AVX2_WORDS), u registers per iteration, then one at a
        // time; the 8-lane loop below does the last 31 (15) at most.
        constexpr index_t ww = simd::wide::word_lanes;
        constexpr int u = wide_unroll;
        const auto put_words = [](D* p, simd::wide::words v) {
            if constexpr (Stream)
                simd::wide::stream_store_words(p, v);
            else
                simd::wide::store_words(p, v);
        };
        for (; i + u * ww <= end; i += u * ww) {
            if constexpr (prefetch_loads) k.template prefetch<u * ww>(i + prefetch_distance);
            if constexpr (prefetch_stores) prefetch_for_stores<u * ww * sizeof(D)>(out + (i - begin));
            const auto it = iteration_at(k, i);
            [&]<int... J>(std::integer_sequence<int, J...>) {
                const simd::wide::words r[] = {it.m.word_at(it.o + J * ww)...};
                (put_words(out + (i - begin) + J * ww, r[J]), ...);
            }(std::make_integer_sequence<int, u>{});
        }
        for (; i + ww <= end; i += ww) put_words(out + (i - begin), k.word_at(i));
    }
#endif
    if constexpr (block_loop_v<Stream, D, K>) {
        for (; i + block_length <= end; i += block_length) {
            D* const o = out + (i - begin);
            if constexpr (prefetch_stores) prefetch_for_stores<block_length * sizeof(D)>(o);
            if constexpr (sizeof(D) == 8) {
                // Results of 8-byte elements: the vectorized loop over the block kept a loop, each vector's
                // stores right after its loads, as in a plain loop; GCC unrolls it completely otherwise, which
                // was slower from L2 (docs/performance-notes.md, "8-byte results in blocks").
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) // (nvcc's front end knows no GCC unroll)
#pragma GCC ivdep
#pragma GCC unroll 1
#elif defined(__GNUC__) && !defined(__clang__)
#pragma GCC ivdep
#elif defined(__clang__) && !defined(__CUDACC__)
#pragma clang loop unroll(disable)
#endif
                for (index_t j = 0; j < block_length; ++j) o[j] = k.scalar(i + j);
            } else {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC ivdep
#endif
                for (index_t j = 0; j < block_length; ++j) o[j] = k.scalar(i + j);
            }
        }
    } else if constexpr (unroll_v<D> > 1) {
        constexpr int u = unroll_v<D>;
        for (; i + u * w <= end; i += u * w) {
            if constexpr (prefetch_loads) k.template prefetch<u * w>(i + prefetch_distance);
            if constexpr (prefetch_stores) prefetch_for_stores<u * w * sizeof(D)>(out + (i - begin));
            const auto it = iteration_at(k, i);
            if constexpr (Stream) {
                static_assert(u % 2 == 0);
                // The results streamed two batches at a time as soon as they are computed: the streaming stores
                // leave at an even pace, which measured a few percent faster at DRAM sizes than four in a row.
                [&]<int... J>(std::integer_sequence<int, J...>) {
                    (simd::stream_store_pair(out + (i - begin) + 2 * J * w, it.m.at_store(it.o + 2 * J * w),
                                             it.m.at_store(it.o + (2 * J + 1) * w)),
                     ...);
                }(std::make_integer_sequence<int, u / 2>{});
            } else if constexpr (store_as_computed_v<D, K>) {
                [&]<int... J>(std::integer_sequence<int, J...>) {
                    (store_batch(out + (i - begin) + J * w, it.m, it.o + J * w), ...);
                }(std::make_integer_sequence<int, u>{});
            } else {
                // All u results first, then the stores: the loads of one batch do not wait behind the stores
                // of the previous one.
                const auto r = [&]<int... J>(std::integer_sequence<int, J...>) {
                    return std::array<simd::batch<D>, u>{it.m.at_store(it.o + J * w)...};
                }(std::make_integer_sequence<int, u>{});
                if constexpr (simd::packs_pairs_v<D> && u % 2 == 0) {
                    for (int j = 0; j < u; j += 2)
                        simd::store_pair(out + (i - begin) + j * w, r[static_cast<std::size_t>(j)], r[static_cast<std::size_t>(j + 1)]);
                } else {
                    for (int j = 0; j < u; ++j) put(out + (i - begin) + j * w, r[static_cast<std::size_t>(j)]);
                }
            }
        }
    }
    for (; i + w <= end; i += w) {
        if constexpr (unroll_v<D> == 1) {
            if constexpr (prefetch_loads) k.template prefetch<w>(i + prefetch_distance);
            if constexpr (prefetch_stores) prefetch_for_stores<w * sizeof(D)>(out + (i - begin));
        }
        store_batch<Stream>(out + (i - begin), k, i);
    }
    if (i < end) {
        const int n = static_cast<int>(end - i);
        simd::store_partial(out + (i - begin), k.at_partial(i, n), n);
    }
}

/// Computes elements [begin, end) of `kernel` into out[0, end - begin): run_range_of with the kernel's values.
template <prefetch_kind Prefetch, bool Stream, class D, class K>
void run_range(D* out, const K& kernel, index_t begin, index_t end) {
    std::apply([&](const auto&... a) { run_range_of<Prefetch, Stream, D, K>(out, begin, end, a...); }, kernel_args(kernel));
}

/// Passes that move at least this many bytes (every leaf read once plus the result written once) write their
/// result with streaming stores (simd/stream.hpp): such a result does not stay in the caches anyway, and
/// bypassing them saves the read of every destination line before it is written. Define
/// MIXT_STREAMING_THRESHOLD_BYTES to change it (0: never stream), the same in every translation unit.
#ifndef MIXT_STREAMING_THRESHOLD_BYTES
#define MIXT_STREAMING_THRESHOLD_BYTES (std::size_t{32} << 20)
#endif
inline constexpr std::size_t streaming_threshold_bytes = MIXT_STREAMING_THRESHOLD_BYTES;

/// Whether a pass can stream its result at all: not without streaming stores on the target, nor when
/// MIXT_STREAMING_THRESHOLD_BYTES is 0, and then the loops that stream are not even compiled.
inline constexpr bool streaming_enabled = simd::streaming_stores && streaming_threshold_bytes != 0;

/// Whether a pass over n elements moving `bytes_per_element` bytes each streams its result.
inline bool use_streaming(index_t n, std::size_t bytes_per_element) noexcept {
    return streaming_enabled && static_cast<std::size_t>(n) * bytes_per_element >= streaming_threshold_bytes;
}

/// The bytes computed into a cache-resident buffer before they are streamed out: a multiple of every block
/// and batch length in bytes.
inline constexpr std::size_t streaming_chunk_bytes = 1024;

/// Writes elements [begin, end) of dst with streaming stores: `fill(out, b, e)` computes elements [b, e) into
/// out[0, e - b). Whole cache lines go through a buffer and stream_copy; the elements before the first line
/// boundary and after the last go straight to dst. A destination whose elements cannot reach a line boundary
/// (a complex<double> array that is 8 but not 16-byte aligned) is written directly.
/// With `fence` false the caller orders the streaming stores itself (stream_fence) once it has written all it
/// writes.
template <std::size_t ChunkBytes = streaming_chunk_bytes, class D, class Fill>
void write_streamed(D* dst, index_t begin, index_t end, Fill&& fill, bool fence = true) {
    static_assert(ChunkBytes % sizeof(D) == 0 && ChunkBytes % simd::stream_alignment == 0);
    constexpr index_t chunk = static_cast<index_t>(ChunkBytes / sizeof(D));
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(dst + begin) % simd::stream_alignment;
    const std::size_t to_boundary = misaligned == 0 ? 0 : simd::stream_alignment - misaligned;
    if (to_boundary % sizeof(D) != 0) {
        fill(dst + begin, begin, end);
        return;
    }
    index_t i = begin;
    const index_t head = std::min(static_cast<index_t>(to_boundary / sizeof(D)), end - begin);
    if (head > 0) {
        fill(dst + i, i, i + head);
        i += head;
    }
    alignas(simd::stream_alignment) unsigned char buffer[ChunkBytes];
    D* const staged = reinterpret_cast<D*>(buffer);
    for (; i + chunk <= end; i += chunk) {
        fill(staged, i, i + chunk);
        simd::stream_copy(dst + i, buffer, ChunkBytes);
    }
    if (i < end) fill(dst + i, i, end);
    if (fence) simd::stream_fence();
}

/// How a pass writes and reads: with streaming stores, with software prefetch (use_streaming and the
/// thresholds above, decided once per pass from its size, and software_prefetch_pays), and whether a streamed
/// run ends with stream_fence: a pass cut into many runs (eval/strided.hpp) fences once after its last one, as
/// each fence waits until every line written so far has left for memory (one per run of a few KiB cost a
/// quarter of a broadcast pass's time).
struct pass_options {
    bool stream = false;
    prefetch_kind prefetch = prefetch_kind::none;
    bool fence = true;
};
/// The prefetch of a pass whose results go first to a staging buffer (eval/strided.hpp), which stays in L1: its
/// inputs' part only.
constexpr prefetch_kind into_buffer(prefetch_kind p) noexcept {
    return p == prefetch_kind::stores ? prefetch_kind::none : p;
}

inline pass_options options_for(index_t n, std::size_t bytes_per_element) noexcept {
    const std::size_t bytes = static_cast<std::size_t>(n) * bytes_per_element;
    const prefetch_kind prefetch = !software_prefetch_pays()                ? prefetch_kind::none
                                   : bytes >= prefetch_threshold_bytes       ? prefetch_kind::loads_and_stores
                                   : bytes >= store_prefetch_threshold_bytes ? prefetch_kind::stores
                                                                             : prefetch_kind::none;
    return {use_streaming(n, bytes_per_element), prefetch};
}

/// The fewest bytes (leaves read plus result written) a pass on a ThreadPoolDevice gives each thread it takes:
/// waking a pool thread and handing it work costs about what a core takes to move this much from the caches,
/// so a thread given less costs more than it saves (docs/performance-notes.md, "Threads per pass"). Define
/// MIXT_MIN_BYTES_PER_THREAD to change it, the same in every translation unit.
#ifndef MIXT_MIN_BYTES_PER_THREAD
#define MIXT_MIN_BYTES_PER_THREAD (std::size_t{512} << 10)
#endif
inline constexpr std::size_t min_bytes_per_thread = MIXT_MIN_BYTES_PER_THREAD;

/// How many threads a pass that moves `bytes` takes on a device of `threads` threads: one for every
/// `per_thread` bytes, at least one, at most `threads`. Work decides, not Eigen's cost model, which gives a
/// memory-bound pass nearly every thread once it has a few hundred thousand elements.
constexpr int threads_for(std::size_t bytes, int threads, std::size_t per_thread = min_bytes_per_thread) noexcept {
    if (threads <= 1 || per_thread == 0) return threads < 1 ? 1 : threads;
    const std::size_t worth = bytes / per_thread;
    return worth <= 1 ? 1 : worth >= static_cast<std::size_t>(threads) ? threads : static_cast<int>(worth);
}

/// Whether run_kernel streams a kernel's results straight from the registers (the batch loop under AVX2)
/// rather than through write_streamed's buffer (the block loop, portable batches). Straight is faster: the
/// buffer costs a load and a store per 32 bytes, and its bursts of streaming stores stall the loop.
template <class D, class K>
inline constexpr bool direct_streaming_v = simd::avx2 && !block_loop_v<true, D, K>;

/// The alignment run_range<P, true> needs of its destination (see run_range).
template <class D, class K>
inline constexpr std::size_t stream_alignment_v = [] {
    if constexpr (wide_loop_v<D, K>)
        return std::max(simd::wide::stream_alignment<D>, simd::stream_pair_alignment<D>);
    else if constexpr (word_loop_v<D, K>)
        return std::max(sizeof(D) * simd::wide::word_lanes, simd::stream_pair_alignment<D>);
    else
        return simd::stream_pair_alignment<D>;
}();

/// Writes elements [begin, end) of dst with run_range's streaming stores: the elements before the first
/// address aligned for them with ordinary stores, the rest streamed. A destination whose elements never reach
/// such an address (a complex<double> array that is 8 but not 16-byte aligned) is written without streaming.
template <prefetch_kind Prefetch, class D, class K>
void run_streamed(D* dst, const K& kernel, index_t begin, index_t end, bool fence = true) {
    constexpr std::size_t alignment = stream_alignment_v<D, K>;
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(dst + begin) % alignment;
    const std::size_t to_boundary = misaligned == 0 ? 0 : alignment - misaligned;
    if (to_boundary % sizeof(D) != 0) {
        run_range<Prefetch, false>(dst + begin, kernel, begin, end);
        return;
    }
    const index_t head = std::min(static_cast<index_t>(to_boundary / sizeof(D)), end - begin);
    run_range<Prefetch, false>(dst + begin, kernel, begin, begin + head);
    run_range<Prefetch, true>(dst + begin + head, kernel, begin + head, end);
    if (fence) simd::stream_fence();
}

/// Runs a kernel over elements [begin, end) of the destination. The variants a program cannot choose
/// (streaming_enabled, prefetch_enabled) are not instantiated. A streamed pass prefetches its inputs or
/// nothing (its streaming stores need no lines).
template <class D, class K>
void run_kernel(D* dst, const K& kernel, index_t begin, index_t end, pass_options options = {}) {
    using enum prefetch_kind;
    if constexpr (streaming_enabled && direct_streaming_v<D, K>) {
        if (options.stream) {
            if constexpr (prefetch_enabled) {
                if (options.prefetch == loads_and_stores) {
                    run_streamed<loads_and_stores>(dst, kernel, begin, end, options.fence);
                    return;
                }
            }
            run_streamed<none>(dst, kernel, begin, end, options.fence);
            return;
        }
    }
    const auto fill = [&](D* out, index_t b, index_t e) {
        if constexpr (prefetch_enabled) {
            if (options.prefetch == loads_and_stores) {
                run_range<loads_and_stores, false>(out, kernel, b, e);
                return;
            }
            if (options.prefetch == stores) {
                run_range<stores, false>(out, kernel, b, e);
                return;
            }
        }
        run_range<none, false>(out, kernel, b, e);
    };
    if constexpr (streaming_enabled) {
        if (options.stream) {
            write_streamed(dst, begin, end, fill, options.fence);
            return;
        }
    }
    fill(dst + begin, begin, end);
}

/// The batch width of run_rows_of: a row's length must be a multiple of it.
template <class D, class K>
inline constexpr index_t row_lanes_v = [] {
#if MIXT_SIMD_AVX512
    if constexpr (wide_loop_v<D, K>) return simd::wide::lanes;
#endif
    return simd::lanes;
}();

/// Whether run_rows_of<true, D, K> streams (only its 16-lane loop does): its destination must then be aligned
/// to simd::wide::stream_group_alignment at every row.
template <class D, class K>
inline constexpr bool rows_stream_v = [] {
#if MIXT_SIMD_AVX512
    return streaming_enabled && wide_loop_v<D, K>;
#else
    return false;
#endif
}();

/// Computes `rows` rows of n elements (n a multiple of row_lanes_v<D, K>), elements [r * n, r * n + n) into
/// out[r * n, r * n + n), with the kernel K whose run-time values are args, its hoisted leaves at row r's values
/// (row_of): a strided pass's run of short rows that each broadcast a value (a scale per block of 32 elements),
/// which then costs one load and conversion per row rather than a copy per element (eval/strided.hpp). With
/// Stream (rows_stream_v), by streaming stores.
template <bool Stream, class D, class K, class... Args>
MIXT_FLATTEN void run_rows_of(D* out, index_t rows, index_t n, Args... args) {
    const K k = kernel_from_args<K>(args...);
#if MIXT_SIMD_AVX512
    if constexpr (wide_loop_v<D, K>) {
        // Pairs of batches (one bf16 conversion and 64-byte store per pair), then the row's odd batch if any:
        // one loop per case, so that a row of one pair is a few instructions besides the work.
        constexpr index_t ww = simd::wide::lanes;
        const auto rows_of = [&]<bool Odd>(std::bool_constant<Odd>) {
            index_t i = 0;
            for (index_t r = 0; r < rows; ++r) {
                const K kr = row_of(k, r);
                for (const index_t pairs_end = i + n - (Odd ? ww : 0); i < pairs_end; i += 2 * ww) {
                    simd::wide::store_group<Stream>(out + i, std::array{kr.wide_at_store(i), kr.wide_at_store(i + ww)});
                }
                if constexpr (Odd) {
                    simd::wide::store_group<Stream>(out + i, std::array{kr.wide_at_store(i)});
                    i += ww;
                }
            }
        };
        if (n % (2 * ww) == 0)
            rows_of(std::false_type{});
        else
            rows_of(std::true_type{});
    } else
#endif
    {
        static_assert(!Stream, "mixt: run_rows_of streams only with 16-lane batches");
        index_t i = 0;
        for (index_t r = 0; r < rows; ++r) {
            const K kr = row_of(k, r);
            for (const index_t end = i + n; i < end; i += simd::lanes) store_batch(out + i, kr, i);
        }
    }
}

} // namespace mixt::detail

#endif // MIXT_EVAL_FUSED_HPP
