#ifndef MIXT_BENCH_SUITE_HPP
#define MIXT_BENCH_SUITE_HPP

// The machinery of mixt's benchmark suite (the program mixt-bench). An expression of the suite is a class
// with
//   - `id`, `text`: its fixed id (`E3`) and what it computes (`i8 + f16 * f32`);
//   - `inputs`: the storage types of its leaves, `result`: its result dtype (checked against mixt::value_t);
//   - `expression(in...)`: the mixt expression over the input tensors;
//   - `hand_loop(n, r, in...)`: a plain loop over raw pointers with static_casts, one statement per node, so
//     it rounds where mixt rounds (and no compiler contracts a * b + c into an fma where mixt does not);
//   - `eigen_cast(r, in...)`: idiomatic Eigen 3.4 with .cast<>(), one fused Eigen expression;
//   - `temps` and `eigen_unfused(temps, r, in...)`: eager evaluation, as PyTorch runs it on the CPU: every cast
//     and every operation is one Eigen assignment into its own temporary (kept between runs, so what is
//     measured is the extra passes over memory, not allocation).
// Each variant of an expression at a size is one Google Benchmark, `BM_<variant>/<id>/<n>`. Its
// bytes_per_second and items_per_second come from the expression's own count (mixt/bench.hpp: every leaf read
// once in its storage dtype, the result written once), whatever the variant does, so that GB/s compare
// directly: an unfused variant moves more bytes than it is credited with.

// Every TU of the program must see Eigen's thread-pool code the same way: bench/CMakeLists.txt sets this for
// the whole target.
#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif

// GCC 12 with -march=native on AVX-512 reports -Wmaybe-uninitialized inside its own avx512fintrin.h when it
// inlines Eigen's bf16 packet code (Bf16ToF32: `__m512i __Y = __Y;` of _mm512_undefined_epi32). Not our code,
// not a bug; the pragma must precede the includes to reach those locations.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include <benchmark/benchmark.h>

#include <mixt/bench.hpp>
#include <mixt/mixt.hpp>

namespace mixt_suite {

using index_t = Eigen::Index;
/// An array of the workspace: the inputs and the result every variant reads and writes (placed by `arena`).
template <class T>
using vec = Eigen::TensorMap<Eigen::Tensor<T, 1>>;
/// An array that owns its memory: eigen_unfused's temporaries, the check's results.
template <class T>
using tensor = Eigen::Tensor<T, 1>;

using i8 = std::int8_t;
using i16 = std::int16_t;
using i32 = std::int32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;
using u32 = std::uint32_t;
using f16 = Eigen::half;
using bf16 = Eigen::bfloat16;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

/// What the program does with a group of expressions. With `check`, the size argument is a verbosity flag.
enum class action { describe, register_benchmarks, check };

// One function per translation unit (so the groups compile in parallel), called in this order.
bool group_1(action a, index_t n); // E1-E4
bool group_2(action a, index_t n); // E5-E8
bool group_3(action a, index_t n); // E9-E12
bool group_4(action a, index_t n); // E13-E14
bool stream(action a, index_t n);  // stream_copy, stream_triad
bool shapes(action a, index_t n);  // B1-B6, at their full sizes (registered once, not per size)
bool reductions(action a, index_t n); // R1-R6, the same way
bool short_rows(action a, index_t n); // S1-S5, the same way
bool narrow(action a, index_t n);     // Q1, Q2, Q5 (the narrow floats), the same way
// mixt/bench.hpp itself on expressions the suite does not cover (bench/header_check.cpp).
bool check_bench_header(bool verbose);

/// The sizes of the suite: in L1, in L2/L3, in DRAM.
inline constexpr index_t sizes[] = {4096, 262144, 16777216};

// --- Inputs --------------------------------------------------------------------------------------------

// splitmix64: deterministic and cheap enough to fill the DRAM-sized inputs quickly.
struct random_bits {
    std::uint64_t state;
    std::uint64_t operator()() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [-4, 4): no overflow anywhere in the suite, exp(f16) stays finite, half the values negative.
    float real() { return static_cast<float>(static_cast<double>((*this)() >> 11) * 0x1.0p-53 * 8.0 - 4.0); }
};

// Values in benign ranges: integers small enough that no sum or product in the suite overflows, floats in
// [-4, 4), complex numbers with both parts there.
template <class T>
T random_value(random_bits& g) {
    if constexpr (std::is_same_v<T, bool>)
        return (g() & 1) != 0;
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
        return static_cast<T>(static_cast<int>(g() % 201) - 100);
    else if constexpr (std::is_integral_v<T>)
        return static_cast<T>(g() % 201);
    else if constexpr (mixt::detail::is_complex_v<T>) {
        using R = typename T::value_type;
        const float re = g.real();
        return T(static_cast<R>(re), static_cast<R>(g.real()));
    } else
        return static_cast<T>(g.real());
}

template <class T>
void fill_random(T* p, index_t n, std::uint64_t seed) {
    random_bits g{seed};
    for (index_t i = 0; i < n; ++i) p[i] = random_value<T>(g);
}

template <class T>
tensor<T> random_tensor(index_t n, std::uint64_t seed) {
    tensor<T> t(n);
    fill_random(t.data(), n, seed);
    return t;
}

template <class T>
tensor<T> zero_tensor(index_t n) {
    tensor<T> t(n);
    t.setConstant(T{});
    return t;
}

// --- Workspaces --------------------------------------------------------------------------------------

/// Where a workspace's arrays lie. A loop's speed over arrays that fit the caches depends on where they lie,
/// beyond their alignment: on this suite's Zen 4 machine, E1 at 4096 elements ran at 30 to 145 GB/s
/// depending only on which 4 KiB pages held its arrays (probably AMD's L1 way predictor, which tells lines
/// apart by a hash of their address bits above 12, so two lines may evict each other in a cache that holds
/// both), and the slow placements were not the same for every loop. Allocated separately, the arrays lie
/// wherever the allocator and ASLR put them, the same for all the variants and rounds of a run and different
/// in the next run, so one draw decided whole rows. So every round places them anew, in one buffer, at a start
/// page and gaps between them (multiples of 64 bytes, up to a page) drawn from the round's number: the rounds
/// of a row see different placements, the variants of a round the same one, and two runs the same sequence.
struct arena {
    struct free_deleter {
        void operator()(unsigned char* p) const noexcept { std::free(p); }
    };
    std::unique_ptr<unsigned char[], free_deleter> memory;
    std::size_t size = 0;
    std::size_t used = 0;
    std::uint64_t draws;

    static constexpr std::size_t page = 4096;
    static constexpr std::size_t line = 64;

    /// Room for arrays of `bytes` in all, placed for round `layout`.
    arena(std::size_t bytes, std::size_t arrays, int layout) : draws(0x5eed0000ull + static_cast<std::uint64_t>(layout)) {
        size = 64 * page + bytes + arrays * (page + line);
        size = (size + page - 1) / page * page;
        memory.reset(static_cast<unsigned char*>(std::aligned_alloc(page, size)));
        if (!memory) throw std::bad_alloc();
        used = static_cast<std::size_t>(random_bits{draws++}() % 64) * page;
    }

    /// The next array: n elements of T, `line`-aligned, after a gap of 0 to 63 lines.
    template <class T>
    T* take(index_t n) {
        used += static_cast<std::size_t>(random_bits{draws++}() % (page / line)) * line;
        T* p = reinterpret_cast<T*>(memory.get() + used);
        used += (static_cast<std::size_t>(n) * sizeof(T) + line - 1) / line * line;
        if (used > size) throw std::logic_error("mixt-bench: arena overflow");
        return p;
    }
};

/// The inputs, result and temporaries of expression X at size n, shared by all its variants in a round.
template <class X, class Inputs = typename X::inputs>
struct workspace;
template <class X, class... Ts>
struct workspace<X, std::tuple<Ts...>> {
    using result = typename X::result;
    arena memory;
    std::tuple<vec<Ts>...> in;
    vec<result> out;
    typename X::temps temps{};

    /// Placed for round `layout` (see arena).
    workspace(index_t n, std::uint64_t seed, int layout)
        : memory(static_cast<std::size_t>(n) * (sizeof(result) + ... + sizeof(Ts)), sizeof...(Ts) + 1, layout),
          in(place_inputs(n, seed, std::index_sequence_for<Ts...>{})), out(memory.take<result>(n), n) {
        std::fill_n(out.data(), n, result{});
    }

    auto expression() const {
        return std::apply([](const auto&... t) { return X::expression(t...); }, in);
    }

  private:
    template <std::size_t... K>
    std::tuple<vec<Ts>...> place_inputs(index_t n, std::uint64_t seed, std::index_sequence<K...>) {
        // Braced initialization runs left to right: the inputs take their places in order.
        return std::tuple<vec<Ts>...>{place_input<Ts>(n, seed * 16 + K)...};
    }
    template <class T>
    vec<T> place_input(index_t n, std::uint64_t seed) {
        T* p = memory.take<T>(n);
        fill_random(p, n, seed);
        return vec<T>(p, n);
    }
};

namespace detail {
// The one workspace alive: the benchmarks run in registration order (size, expression, round, variant), so
// keeping only the latest bounds the memory to one expression at one size.
inline std::shared_ptr<void> current_workspace;
inline const void* current_kind = nullptr;
inline index_t current_n = -1;
inline int current_layout = -1;
} // namespace detail

/// The workspace of X at size n placed for round `layout`, made anew when any of them changed.
template <class X>
workspace<X>& workspace_for(index_t n, int layout) {
    static const char kind = 0;
    if (detail::current_kind != &kind || detail::current_n != n || detail::current_layout != layout) {
        detail::current_workspace.reset();
        std::uint64_t seed = 0;
        for (const char* c = X::id; *c; ++c) seed = seed * 131 + static_cast<unsigned char>(*c);
        detail::current_workspace = std::make_shared<workspace<X>>(n, seed, layout);
        detail::current_kind = &kind;
        detail::current_n = n;
        detail::current_layout = layout;
    }
    return *static_cast<workspace<X>*>(detail::current_workspace.get());
}

inline int thread_count() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

/// Eigen::ThreadPoolDevice over all cores, made once: the device has a thread per core, its pool one fewer,
/// because mixt::assign computes pieces of the pass on the calling thread too (eval/assign.hpp, run_on_pool). With a pool
/// thread per core as well, the pool's idle thread spins for work on a core that the caller is computing on
/// (E10 at 262144 on 2 cores: 0.99x of one thread with a pool of 2, 1.87x with a pool of 1).
inline const Eigen::ThreadPoolDevice& thread_pool_device() {
    static Eigen::ThreadPool pool(std::max(1, thread_count() - 1));
    static const Eigen::ThreadPoolDevice device(&pool, thread_count());
    return device;
}

// --- The variants ------------------------------------------------------------------------------------------

/// The result a baseline writes: the workspace's, or the check's own tensor.
template <class T>
struct tensor_ref : vec<T> {
    tensor_ref(vec<T>& v) : vec<T>(v) {}
    tensor_ref(tensor<T>& t) : vec<T>(t.data(), t.size()) {}
};

template <class X>
void run_hand_loop(const workspace<X>& w, tensor_ref<typename X::result> r) {
    std::apply([&](const auto&... t) { X::hand_loop(r.size(), r.data(), t.data()...); }, w.in);
}
template <class X>
void run_eigen_cast(const workspace<X>& w, tensor_ref<typename X::result> r) {
    std::apply([&](const auto&... t) { X::eigen_cast(r, t...); }, w.in);
}
template <class X>
void run_eigen_unfused(workspace<X>& w, tensor_ref<typename X::result> r) {
    std::apply([&](const auto&... t) { X::eigen_unfused(w.temps, r, t...); }, w.in);
}

template <class X>
std::string name_of(const char* variant) {
    return std::string("BM_") + variant + "/" + X::id;
}

/// Registers `body` as variant `variant` of X at size n in round `round` (whose placement of the arrays it uses).
template <class X, class F>
void add(const char* variant, index_t n, int round, F body) {
    benchmark::RegisterBenchmark(name_of<X>(variant).c_str(),
                                 [body, round](benchmark::State& state) {
                                     auto& w = workspace_for<X>(state.range(0), round);
                                     body(state, w, w.expression());
                                 })
        ->Arg(n)
        ->UseRealTime() // the thread-pool variant works on other threads; GB/s are per wall-clock second
        ->Unit(benchmark::kMicrosecond);
}

/// The single-threaded variants, in the order of the first round; a row with a compute floor (issue 43: a hand
/// loop doing only the row's arithmetic in registers, `compute_floor(n, r, in...)`) has a sixth.
inline constexpr int single_thread_variants = 5;
template <class X>
inline constexpr bool has_compute_floor_v = requires { &X::compute_floor; };
template <class X>
void run_compute_floor(const workspace<X>& w, tensor_ref<typename X::result> r) {
    if constexpr (has_compute_floor_v<X>)
        std::apply([&](const auto&... t) { X::compute_floor(r.size(), r.data(), t.data()...); }, w.in);
}

/// Registers variant v (0 to single_thread_variants - 1: mixt, hand_loop, eigen_cast, eigen_unfused, traffic) of
/// X at size n in round `round`.
template <class X>
void register_variant(int v, index_t n, int round) {
    using mixt::bench::run_baseline;
    switch (v) {
    case 0: add<X>("mixt", n, round, [](auto& s, auto& w, const auto& e) { mixt::bench::run_fused(s, w.out, e); }); break;
    case 1:
        add<X>("hand_loop", n, round,
               [](auto& s, auto& w, const auto& e) { run_baseline(s, e, [&] { run_hand_loop(w, w.out); }); });
        break;
    case 2:
        add<X>("eigen_cast", n, round,
               [](auto& s, auto& w, const auto& e) { run_baseline(s, e, [&] { run_eigen_cast(w, w.out); }); });
        break;
    case 3:
        add<X>("eigen_unfused", n, round,
               [](auto& s, auto& w, const auto& e) { run_baseline(s, e, [&] { run_eigen_unfused(w, w.out); }); });
        break;
    case 4:
        add<X>("traffic", n, round, [](auto& s, auto& w, const auto& e) {
            run_baseline(s, e, [&] { mixt::bench::traffic_pass(w.out, e); });
        });
        break;
    default:
        if constexpr (has_compute_floor_v<X>)
            add<X>("compute_floor", n, round,
                   [](auto& s, auto& w, const auto& e) { run_baseline(s, e, [&] { run_compute_floor(w, w.out); }); });
    }
}

/// How many times each benchmark is registered (mixt-bench --mixt_rounds). Each round is one Google Benchmark
/// run under the same name; the report takes the median over them.
inline int rounds = 1;

/// Registers the six variants of X at size n, `rounds` times:
///   - the single-threaded variants in turn, round after round, so that a drift of the machine's speed over
///     seconds (other tenants, frequency, memory placement) reaches them alike instead of whichever ran
///     during it; each round starts one variant further (round r runs variant r first), so each variant
///     follows each other one equally often;
///   - then the rounds of mixt_threads, after them: on a 2-core Xeon a single-threaded pass right after it,
///     while the machine still ran as with both cores busy, measured up to 25% faster (E2 at 16M elements:
///     traffic 27.2 against 21.4 GB/s, mixt 24.0 against 21.1), which favoured whichever variant came next.
template <class X>
void register_benchmarks(index_t n) {
    constexpr int variants = single_thread_variants + (has_compute_floor_v<X> ? 1 : 0);
    for (int round = 0; round < rounds; ++round)
        for (int k = 0; k < variants; ++k) register_variant<X>((round + k) % variants, n, round);
    for (int round = 0; round < rounds; ++round)
        add<X>("mixt_threads", n, round,
               [](auto& s, auto& w, const auto& e) { mixt::bench::run_fused(s, w.out, e, thread_pool_device()); });
}

/// The result dtype's name and the expression, for the JSON context and the report: `i8 + f16 * f32 -> f32`.
template <class X>
void describe() {
    using E = decltype(std::declval<const workspace<X>&>().expression());
    static_assert(std::is_same_v<mixt::value_t<E>, typename X::result>,
                  "mixt-bench: the result dtype written in the suite differs from the lattice's");
    benchmark::AddCustomContext(std::string("mixt_") + X::id,
                                std::string(X::text) + " -> " +
                                    std::string(mixt::short_name(mixt::dtype_of_v<typename X::result>)) + " (" +
                                    std::to_string(mixt::bench::bytes_per_element_v<E>) + " bytes/element)");
}

// --- The check: every variant computes what mixt computes -----------------------------------------------

template <class T>
std::pair<double, double> as_pair(const T& x) {
    if constexpr (mixt::detail::is_complex_v<T>)
        return {static_cast<double>(x.real()), static_cast<double>(x.imag())};
    else
        return {mixt::convert<double>(x), 0.0};
}

// Largest difference relative to max(1, |reference|); 0 when equal everywhere.
template <class T>
double max_difference(const tensor<T>& got, const tensor<T>& want) {
    double worst = 0;
    for (index_t i = 0; i < want.size(); ++i) {
        const auto [gr, gi] = as_pair(got(i));
        const auto [wr, wi] = as_pair(want(i));
        const double scale = std::max(1.0, std::abs(wr) + std::abs(wi));
        const double d = (std::abs(gr - wr) + std::abs(gi - wi)) / scale;
        worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
    return worst;
}

/// Computes every variant of X at a small size (with a loop tail) and compares it with `mixt::eval`: mixt's
/// fused, threaded and unfused paths and the hand loop must be exact; Eigen may differ by a rounding of the
/// result type (its vectorized exp, its half arithmetic). Prints one line when `verbose` or on a failure.
template <class X>
bool check(bool verbose) {
    const index_t n = 1003;
    workspace<X> w(n, 7, 0);
    const auto e = w.expression();
    const tensor<typename X::result> want = mixt::eval(e);
    // One rounding of the result type (bf16: 2^-8, f16: 2^-11), or none for the other types.
    using R = typename X::result;
    const double eigen_tolerance = std::is_same_v<R, bf16> ? 0x1p-7 : std::is_same_v<R, f16> ? 0x1p-10 : 0x1p-10;

    struct outcome {
        const char* variant;
        double difference;
        double tolerance;
    };
    tensor<R> r = zero_tensor<R>(n);
    auto measure = [&](const char* variant, double tolerance, auto compute) {
        r.setConstant(R{});
        compute();
        return outcome{variant, max_difference(r, want), tolerance};
    };
    const outcome outcomes[] = {
        measure("mixt_threads", 0, [&] { mixt::assign(r, e, thread_pool_device()); }),
        measure("mixt_unfused", 0, [&] { r = mixt::bench::eval_unfused(e); }),
        // Transcendental functions may differ by 2 ulp of their node's type between mixt's vector code and
        // the C library (E10's exp of a half: 2^-10 relative); everything else must be exact.
        measure("hand_loop", std::string_view(X::id) == "E10" ? 0x1p-10 : 0.0, [&] { run_hand_loop(w, r); }),
        measure("eigen_cast", eigen_tolerance, [&] { run_eigen_cast(w, r); }),
        measure("eigen_unfused", eigen_tolerance, [&] { run_eigen_unfused(w, r); }),
        has_compute_floor_v<X> ? measure("compute_floor", std::string_view(X::id) == "E10" ? 0x1p-10 : 0.0,
                                         [&] { run_compute_floor(w, r); })
                               : outcome{"compute_floor", 0, 0},
    };
    bool ok = true;
    std::string line = std::string(X::id) + " " + X::text + ":";
    for (const auto& o : outcomes) {
        if (!has_compute_floor_v<X> && std::string_view(o.variant) == "compute_floor") continue;
        ok = ok && o.difference <= o.tolerance;
        char buf[96];
        std::snprintf(buf, sizeof buf, " %s %s", o.variant,
                      o.difference == 0 ? "exact" : (o.difference <= o.tolerance ? "close" : "WRONG"));
        line += buf;
        if (o.difference != 0) {
            std::snprintf(buf, sizeof buf, " (%.3g)", o.difference);
            line += buf;
        }
    }
    if (verbose || !ok) std::fprintf(ok ? stdout : stderr, "%s\n", line.c_str());
    return ok;
}

/// Does `a` for each expression of a group, in order.
template <class... Xs>
bool run_group(action a, index_t n) {
    bool ok = true;
    (
        [&] {
            switch (a) {
            case action::describe: describe<Xs>(); break;
            case action::register_benchmarks: register_benchmarks<Xs>(n); break;
            case action::check: ok = check<Xs>(n != 0) && ok; break;
            }
        }(),
        ...);
    return ok;
}

} // namespace mixt_suite

#endif // MIXT_BENCH_SUITE_HPP
