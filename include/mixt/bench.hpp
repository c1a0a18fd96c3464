#ifndef MIXT_BENCH_HPP
#define MIXT_BENCH_HPP

// Google Benchmark helpers for fused-loop microbenchmarks of mixt expressions. The bytes a fused evaluation
// moves are derived from the expression itself: every leaf array read once in its storage dtype, the result
// written once in `value_t<E>`; literals are free. Every helper sets the counters `bytes_per_second` and
// `items_per_second` (one item is one result element) from that count, so a baseline timed with
// `run_baseline` reads in the same units as the expression it stands for.
//
//     static void BM_scale(benchmark::State& state) {
//         Eigen::Tensor<std::int8_t, 1> a(state.range(0));
//         Eigen::Tensor<Eigen::half, 1> b(state.range(0));
//         a.setConstant(1);
//         b.setConstant(Eigen::half(0.5f));
//         mixt::bench::run_fused(state, mixt::lazy(a) * b + 2);  // 1 + 2 + 2 bytes per element
//     }
//     BENCHMARK(BM_scale)->Arg(1 << 20);
//
// Or let the registration own the tensors and build the expression over them:
//
//     mixt::bench::register_expression("BM_scale", mixt::bench::fused | mixt::bench::unfused,
//                                      [](const auto& a, const auto& b) { return mixt::lazy(a) * b + 2; },
//                                      std::move(a), std::move(b));   // BM_scale/fused, BM_scale/unfused
//
// This header is for programs that link benchmark::benchmark; the umbrella mixt/mixt.hpp does not include it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <unsupported/Eigen/CXX11/Tensor>

#include <benchmark/benchmark.h>

#include "mixt/eval/assign.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/operators.hpp"

namespace mixt::bench {

/// Bytes read per result element when every leaf is a distinct array (literals and scalars live in
/// registers): `leaf_bytes_v<decltype(lazy(i8) + f32)>` is 5. The same as mixt::leaf_bytes_v.
using ::mixt::leaf_bytes_v;

/// Bytes moved per result element by one fused pass: `bytes_per_element_v<decltype(lazy(i8) + f32)>` is 9.
template <class E>
inline constexpr std::size_t bytes_per_element_v = leaf_bytes_v<E> + sizeof(value_t<E>);

/// The number of elements `e` evaluates to: `element_count(lazy(a) + b)` is `a.size()`.
template <class E>
    requires mixt_expression<E>
std::int64_t element_count(const E& e) {
    static_assert(std::remove_cvref_t<E>::rank >= 0, "mixt::bench: the expression has no array operand");
    return static_cast<std::int64_t>(mixt::detail::dimensions_of(mixt::detail::first_leaf(e)).TotalSize());
}

/// Bytes one fused evaluation of `e` moves: each distinct leaf array read once, the result written once.
/// A tensor used twice (`lazy(a) * a`) is counted once, as a fused loop reads it once from memory.
template <class E>
    requires mixt_expression<E>
std::int64_t bytes_moved(const E& e) {
    const std::int64_t n = element_count(e);
    std::vector<std::pair<const void*, std::size_t>> seen;
    std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(value_t<E>));
    auto count = [&](const auto& x) {
        using S = typename Eigen::internal::traits<std::remove_cvref_t<decltype(x)>>::Scalar;
        if constexpr (requires { x.data(); }) {
            const std::pair<const void*, std::size_t> key{static_cast<const void*>(x.data()), sizeof(S)};
            for (const auto& k : seen)
                if (k == key) return;
            seen.push_back(key);
        }
        bytes += n * static_cast<std::int64_t>(sizeof(S));
    };
    mixt::detail::for_each_leaf(e, count);
    return bytes;
}

/// Sets `bytes_per_second` and `items_per_second` from `e` for the iterations run so far; call it after the
/// timed loop.
template <class E>
    requires mixt_expression<E>
void set_counters(benchmark::State& state, const E& e) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * bytes_moved(e));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * element_count(e));
}

/// Times `f()` (a hand-written loop, idiomatic Eigen, anything that computes what `e` computes) with the
/// counters of `e`. `f` runs once untimed first, so allocations and first touches of memory are not timed.
template <class E, class F>
    requires mixt_expression<E>
void run_baseline(benchmark::State& state, const E& e, F&& f) {
    f();
    for (auto _ : state) {
        f();
        benchmark::ClobberMemory();
    }
    set_counters(state, e);
}

/// Times `mixt::assign(dst, e, device)` into an existing result (an Eigen::Tensor or TensorMap).
template <class Dst, class E, class Device = Eigen::DefaultDevice>
    requires(eigen_tensor<Dst> && mixt_expression<E>)
void run_fused(benchmark::State& state, Dst& dst, const E& e, const Device& device = Device{}) {
    run_baseline(state, e, [&] {
        mixt::assign(dst, e, device);
        benchmark::DoNotOptimize(dst.data());
    });
}

/// Times `mixt::assign(result, e, device)` into a result of `value_t<E>` allocated (and touched) beforehand.
template <class E, class Device = Eigen::DefaultDevice>
    requires mixt_expression<E>
void run_fused(benchmark::State& state, const E& e, const Device& device = Device{}) {
    auto result = mixt::eval(e, device);
    run_fused(state, result, e, device);
}

namespace detail {
template <class E>
struct is_array_operand : std::true_type {};
template <class T>
struct is_array_operand<literal<T>> : std::false_type {};
template <class T>
struct is_array_operand<scalar<T>> : std::false_type {};

// A child is converted into a temporary when it is an array whose dtype is not the operation's operand type.
template <class C, class S>
inline constexpr bool needs_conversion_v = is_array_operand<C>::value && !std::is_same_v<value_t<C>, S>;

struct no_conversion {
    explicit no_conversion(const auto&) {}
};

template <class S, class E>
using tensor_like_t = Eigen::Tensor<S, E::rank, E::layout == static_cast<int>(Eigen::RowMajor) ? Eigen::RowMajor : 0>;

template <class S, class E, class Dims>
tensor_like_t<S, E> touched_tensor(const Dims& dims) {
    tensor_like_t<S, E> t(dims);
    t.setConstant(S{});
    return t;
}

template <class Op>
struct is_cast_op : std::false_type {};
template <class T>
struct is_cast_op<op::cast<T>> : std::true_type {};

// The eager evaluation of an expression: one pass per conversion and one per operation, each into its own
// temporary (allocated once, when the plan is made). Literals and scalars stay scalars, as eager frameworks
// keep them.
template <class E>
struct unfused_plan;
template <class E>
using unfused_plan_t = unfused_plan<std::remove_cvref_t<E>>;

template <class T>
struct unfused_plan<literal<T>> {
    literal<T> e;
    template <class Dims>
    unfused_plan(const literal<T>& x, const Dims&) : e(x) {}
    void run() {}
    const literal<T>& operand() const { return e; }
};
template <class T>
struct unfused_plan<scalar<T>> {
    scalar<T> e;
    template <class Dims>
    unfused_plan(const scalar<T>& x, const Dims&) : e(x) {}
    void run() {}
    const scalar<T>& operand() const { return e; }
};
template <class P, class X>
struct unfused_plan<leaf<P, X>> {
    const leaf<P, X>* e;
    template <class Dims>
    unfused_plan(const leaf<P, X>& x, const Dims&) : e(&x) {}
    void run() {}
    leaf<P, const std::remove_cvref_t<X>&> operand() const { return {{}, e->x}; }
};

template <class Op, class... Cs>
struct unfused_plan<node<Op, Cs...>> {
    using N = node<Op, Cs...>;
    using R = value_t<N>;
    using S = typename N::operand_types;
    static constexpr std::size_t arity = sizeof...(Cs);
    template <std::size_t K>
    using child_t = std::remove_cvref_t<std::tuple_element_t<K, std::tuple<Cs...>>>;
    // A cast is itself the conversion: its child is converted straight into the result.
    template <std::size_t K>
    using conversion_t =
        std::conditional_t<needs_conversion_v<child_t<K>, boost::mp11::mp_at_c<S, K>> && !is_cast_op<Op>::value,
                           tensor_like_t<boost::mp11::mp_at_c<S, K>, N>, no_conversion>;

    template <class Seq>
    struct parts;
    template <std::size_t... K>
    struct parts<std::index_sequence<K...>> {
        using children = std::tuple<unfused_plan_t<Cs>...>;
        using conversions = std::tuple<conversion_t<K>...>;
    };
    using seq = std::index_sequence_for<Cs...>;

    typename parts<seq>::children children;
    typename parts<seq>::conversions conversions;
    tensor_like_t<R, N> result;

    template <class Dims>
    unfused_plan(const N& n, const Dims& dims) : unfused_plan(n, dims, seq{}) {}

    void run() {
        run(seq{});
    }
    leaf<typename N::policy, const tensor_like_t<R, N>&> operand() const { return {{}, result}; }

private:
    template <class Dims, std::size_t... K>
    unfused_plan(const N& n, const Dims& dims, std::index_sequence<K...>)
        : children(unfused_plan_t<Cs>(std::get<K>(n.children), dims)...),
          conversions(make_conversion<K>(dims)...),
          result(touched_tensor<R, N>(dims)) {}

    template <std::size_t K, class Dims>
    static conversion_t<K> make_conversion(const Dims& dims) {
        if constexpr (std::is_same_v<conversion_t<K>, no_conversion>)
            return no_conversion(dims);
        else
            return touched_tensor<boost::mp11::mp_at_c<S, K>, N>(dims);
    }

    template <std::size_t K>
    auto operand_of() const {
        if constexpr (std::is_same_v<conversion_t<K>, no_conversion>)
            return std::get<K>(children).operand();
        else
            return leaf<typename child_t<K>::policy, const conversion_t<K>&>{{}, std::get<K>(conversions)};
    }

    template <std::size_t... K>
    void run(std::index_sequence<K...>) {
        (std::get<K>(children).run(), ...);
        if constexpr (is_cast_op<Op>::value) {
            mixt::assign(result, mixt::cast<R>(std::get<0>(children).operand()));
        } else {
            (
                [&] {
                    if constexpr (!std::is_same_v<conversion_t<K>, no_conversion>)
                        mixt::assign(std::get<K>(conversions),
                                     mixt::cast<boost::mp11::mp_at_c<S, K>>(std::get<K>(children).operand()));
                }(),
                ...);
            using rebuilt = node<Op, decltype(operand_of<K>())...>;
            static_assert(std::is_same_v<value_t<rebuilt>, R>,
                          "mixt::bench: an operation over its converted operands changed its result dtype");
            mixt::assign(result, rebuilt{{}, {operand_of<K>()...}});
        }
    }
};
} // namespace detail

/// Evaluates `e` eagerly, as PyTorch and NumPy do: every conversion and every operation is its own pass into a
/// temporary. The values equal `mixt::eval(e)`'s; only the memory traffic differs.
template <class E>
    requires mixt_expression<E>
auto eval_unfused(const E& e) {
    auto dims = mixt::detail::dimensions_of(mixt::detail::first_leaf(e));
    detail::unfused_plan_t<E> plan(e, dims);
    plan.run();
    return std::move(plan.result);
}

/// Times the eager evaluation of `e` (see `eval_unfused`; temporaries allocated once, before timing), with
/// the counters of the fused `e`: the GB/s are effective, what the fused pass would need to move.
template <class E>
    requires mixt_expression<E>
void run_unfused(benchmark::State& state, const E& e) {
    detail::unfused_plan_t<E> plan(e, mixt::detail::dimensions_of(mixt::detail::first_leaf(e)));
    run_baseline(state, e, [&] {
        plan.run();
        benchmark::DoNotOptimize(plan.result.data());
    });
}

namespace detail {
template <std::size_t W>
struct bits_impl;
template <>
struct bits_impl<1> { using type = std::uint8_t; };
template <>
struct bits_impl<2> { using type = std::uint16_t; };
template <>
struct bits_impl<4> { using type = std::uint32_t; };
template <>
struct bits_impl<8> { using type = std::uint64_t; };
template <std::size_t W>
using bits_t = typename bits_impl<W>::type;

// Words are moved with memcpy, not bit_cast or pointer casts: defined for every storage type, and the form
// that GCC and Clang both vectorize (GCC 12 vectorizes neither a bit_cast of Eigen::half nor a 16-byte struct).
template <class W>
W load_bits(const void* p, std::int64_t i) {
    W w;
    std::memcpy(&w, static_cast<const unsigned char*>(p) + i * static_cast<std::int64_t>(sizeof(W)), sizeof(W));
    return w;
}
template <class W>
void store_bits(void* p, std::int64_t i, W w) {
    std::memcpy(static_cast<unsigned char*>(p) + i * static_cast<std::int64_t>(sizeof(W)), &w, sizeof(W));
}

// Element i of an array of L as a word of type W (at most 8 bytes): its low bytes, zero-extended or truncated.
// 16-byte elements (c128) are two 8-byte lanes; `high_lane` is the upper one, 0 for narrower elements.
template <class W, class L>
W low_lane(const L* p, std::int64_t i) {
    if constexpr (sizeof(L) == 16)
        return static_cast<W>(load_bits<std::uint64_t>(p, 2 * i));
    else
        return static_cast<W>(load_bits<bits_t<sizeof(L)>>(p, i));
}
template <class L>
std::uint64_t high_lane(const L* p, std::int64_t i) {
    if constexpr (sizeof(L) == 16)
        return load_bits<std::uint64_t>(p, 2 * i + 1);
    else
        return 0;
}

// Elements [begin, end) of the floor into out[0, end - begin).
template <class R, class... Ls>
void traffic_range(R* out, std::int64_t begin, std::int64_t end, const Ls*... src) {
    if constexpr (sizeof(R) == 16) {
        for (std::int64_t i = begin; i < end; ++i) {
            store_bits(out, 2 * (i - begin), (low_lane<std::uint64_t>(src, i) ^ ...));
            store_bits(out, 2 * (i - begin) + 1, (high_lane(src, i) ^ ...));
        }
    } else {
        using word = bits_t<sizeof(R)>;
        for (std::int64_t i = begin; i < end; ++i) {
            const word w = (low_lane<word>(src, i) ^ ...);
            if constexpr (std::is_same_v<R, bool>)
                store_bits(out, i - begin, static_cast<std::uint8_t>(w & 1u)); // a valid bool: 0 or 1
            else
                store_bits(out, i - begin, w);
        }
    }
}

#if MIXT_SIMD_AVX2
#define MIXT_BENCH_VECTOR_FLOOR 1
// 32 bytes of the floor's result words from leaf p at element i: each element's low bytes, zero-extended to the
// result's width, as low_lane does; under a 16-byte result, a narrower leaf's element fills the low 8 bytes
// and 0 the high ones, as high_lane does. A leaf wider than the result (truncated) goes through memory.
template <class R, class L>
__m256i leaf_words(const L* p, std::int64_t i) {
    constexpr std::size_t rw = sizeof(R) == 16 ? 8 : sizeof(R);
    constexpr std::size_t lw = sizeof(L);
    const auto* bytes = reinterpret_cast<const unsigned char*>(p) + i * static_cast<std::int64_t>(lw);
    const auto load128 = [&] { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes)); };
    const auto load64 = [&] { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes)); };
    if constexpr (sizeof(R) == 16 && lw == 16) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes));
    } else if constexpr (sizeof(R) == 16) {
        return _mm256_set_epi64x(0, static_cast<long long>(low_lane<std::uint64_t>(p, i + 1)), 0,
                                 static_cast<long long>(low_lane<std::uint64_t>(p, i)));
    } else if constexpr (lw == rw) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes));
    } else if constexpr (rw == 2 && lw == 1) {
        return _mm256_cvtepu8_epi16(load128());
    } else if constexpr (rw == 4 && lw == 1) {
        return _mm256_cvtepu8_epi32(load64());
    } else if constexpr (rw == 4 && lw == 2) {
        return _mm256_cvtepu16_epi32(load128());
    } else if constexpr (rw == 8 && lw == 1) {
        std::int32_t four;
        std::memcpy(&four, bytes, sizeof four);
        return _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(four));
    } else if constexpr (rw == 8 && lw == 2) {
        return _mm256_cvtepu16_epi64(load64());
    } else if constexpr (rw == 8 && lw == 4) {
        return _mm256_cvtepu32_epi64(load128());
    } else {
        using word = bits_t<rw>;
        alignas(32) word w[32 / rw];
        for (std::size_t k = 0; k < 32 / rw; ++k) w[k] = low_lane<word>(p, i + static_cast<std::int64_t>(k));
        return _mm256_load_si256(reinterpret_cast<const __m256i*>(w));
    }
}

// Elements [0, n) of the floor with streaming stores straight from the registers, as the fused loop's batch
// loop writes (eval/fused.hpp, run_streamed), and with its software prefetch where it has one: 32 bytes of
// result per step.
template <class R, class... Ls>
void traffic_streamed(R* dst, std::int64_t n, const Ls*... src) {
    constexpr std::int64_t step = static_cast<std::int64_t>(32 / sizeof(R));
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(dst) % 32;
    const std::size_t to_boundary = misaligned == 0 ? 0 : 32 - misaligned;
    if (to_boundary % sizeof(R) != 0) {
        traffic_range(dst, 0, n, src...);
        return;
    }
    const std::int64_t head = std::min(static_cast<std::int64_t>(to_boundary / sizeof(R)), n);
    traffic_range(dst, 0, head, src...);
    const auto put = [&](std::int64_t k) {
        __m256i w = _mm256_setzero_si256();
        ((w = _mm256_xor_si256(w, leaf_words<R>(src, k))), ...);
        if constexpr (std::is_same_v<R, bool>) w = _mm256_and_si256(w, _mm256_set1_epi8(1)); // valid bools: 0 or 1
        _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + k), w);
    };
    std::int64_t i = head;
    // 128 bytes of result per iteration, with one prefetch per leaf where the fused loop's unrolled batches
    // prefetch (mixt::detail::software_prefetch_pays).
    const auto run = [&](auto prefetch) {
        for (; i + 4 * step <= n; i += 4 * step) {
            if constexpr (decltype(prefetch)::value)
                (mixt::detail::prefetch_elements<4 * step>(src, i + mixt::detail::prefetch_distance), ...);
            put(i);
            put(i + step);
            put(i + 2 * step);
            put(i + 3 * step);
        }
    };
    if (mixt::detail::software_prefetch_pays())
        run(std::true_type{});
    else
        run(std::false_type{});
    for (; i + step <= n; i += step) put(i);
    traffic_range(dst + i, i, n, src...);
    mixt::simd::stream_fence();
}
#else
#define MIXT_BENCH_VECTOR_FLOOR 0
#endif

// The floor writes with streaming stores where the fused loop would (above mixt's threshold, eval/fused.hpp),
// and at least as fast: straight from the registers in AVX2 builds, as the fused loop's batch loop does, else a
// cache line at a time through a buffer, which keeps the streaming stores spread over the loop (faster than
// the fused loop's own 1 KiB buffer), so that the floor stays a floor.
template <class R, class... Ls>
void traffic_pass(R* dst, std::int64_t n, const Ls*... src) {
    if (mixt::detail::use_streaming(n, (sizeof(R) + ... + sizeof(Ls)))) {
#if MIXT_BENCH_VECTOR_FLOOR
        traffic_streamed(dst, n, src...);
        return;
#endif
        mixt::detail::write_streamed<mixt::simd::stream_alignment>(dst, 0, n, [&](R* out, std::int64_t b, std::int64_t e) {
            traffic_range(out, b, e, src...);
        });
    } else {
        traffic_range(dst, 0, n, src...);
    }
}
} // namespace detail

/// Runs the memory-traffic floor of `e` once into `dst`: reads every leaf array and writes `dst`, element
/// widths as in `e`, combining the raw bits with xor (no conversion, no arithmetic).
template <class Dst, class E>
    requires(eigen_tensor<Dst> && mixt_expression<E>)
void traffic_pass(Dst& dst, const E& e) {
    using R = typename Eigen::internal::traits<std::remove_cvref_t<Dst>>::Scalar;
    static_assert(sizeof(R) == sizeof(value_t<E>), "mixt::bench::traffic_pass: the destination's element width "
                                                   "differs from the expression's");
    static_assert(mixt::detail::fusable_v<E>,
                  "mixt::bench::run_traffic: every leaf must be an Eigen::Tensor or TensorMap (an array in memory)");
    std::apply([&](const auto*... p) { detail::traffic_pass(dst.data(), element_count(e), p...); },
               mixt::detail::leaf_pointers_of(e));
}

/// Times the memory-traffic floor of `e` (see `traffic_pass`) with the counters of `e`: the GB/s a fused
/// loop of `e` cannot beat on this machine.
template <class E>
    requires mixt_expression<E>
void run_traffic(benchmark::State& state, const E& e) {
    auto result = detail::touched_tensor<value_t<E>, std::remove_cvref_t<E>>(
        mixt::detail::dimensions_of(mixt::detail::first_leaf(e)));
    run_baseline(state, e, [&] {
        traffic_pass(result, e);
        benchmark::DoNotOptimize(result.data());
    });
}

/// Which benchmarks `register_expression` registers, under the names `<name>/fused`, `<name>/unfused` and
/// `<name>/traffic`.
enum class variants : unsigned { fused = 1, unfused = 2, traffic = 4, all = 7 };
inline constexpr variants fused = variants::fused;
inline constexpr variants unfused = variants::unfused;
inline constexpr variants traffic = variants::traffic;
constexpr variants operator|(variants a, variants b) {
    return static_cast<variants>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr bool has(variants set, variants v) { return (static_cast<unsigned>(set) & static_cast<unsigned>(v)) != 0; }

/// Registers the variants of the expression `build(tensors...)`, over tensors the registration owns (moved
/// in), and returns the registered benchmarks (to add `->Unit(...)` and the like).
template <class Build, class... Tensors>
    requires(std::invocable<const Build&, const std::remove_cvref_t<Tensors>&...> &&
             mixt_expression<std::invoke_result_t<const Build&, const std::remove_cvref_t<Tensors>&...>>)
std::vector<benchmark::internal::Benchmark*> register_expression(const std::string& name, variants which,
                                                                 Build build, Tensors&&... tensors) {
    auto owned = std::make_shared<const std::tuple<std::remove_cvref_t<Tensors>...>>(
        static_cast<Tensors&&>(tensors)...);
    auto with_expression = [owned, build](auto run) {
        return [owned, build, run](benchmark::State& state) {
            std::apply([&](const auto&... t) { run(state, build(t...)); }, *owned);
        };
    };
    std::vector<benchmark::internal::Benchmark*> registered;
    auto add = [&](variants v, const char* suffix, auto run) {
        if (has(which, v))
            registered.push_back(benchmark::RegisterBenchmark((name + suffix).c_str(), with_expression(run)));
    };
    add(fused, "/fused", [](benchmark::State& s, const auto& e) { run_fused(s, e); });
    add(unfused, "/unfused", [](benchmark::State& s, const auto& e) { run_unfused(s, e); });
    add(traffic, "/traffic", [](benchmark::State& s, const auto& e) { run_traffic(s, e); });
    return registered;
}

/// Registers the variants of an expression built beforehand; the tensors it refers to must outlive the run.
template <class E>
    requires mixt_expression<E>
std::vector<benchmark::internal::Benchmark*> register_expression(const std::string& name, variants which, E e) {
    return register_expression(name, which, [e = std::move(e)] { return e; });
}

} // namespace mixt::bench

#endif // MIXT_BENCH_HPP
