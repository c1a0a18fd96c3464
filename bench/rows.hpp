// The machinery of the suite's rows that own their arrays at fixed full sizes (B1-B6 in shapes.cpp, R1-R6 in
// reductions.cpp): each row is a struct X with `id`, `text`, `result` and a `data` type that owns its arrays
// (`data(bool small)`), builds `expression()`, writes into `out` (or has `assign(device)`), and has the
// variants hand_loop, eigen_cast and traffic and `bytes()`/`elements()`/`result_data()`. rows_action<Xs...>
// describes, registers or checks them: the variants mixt, mixt_threads, hand_loop, eigen_cast and traffic, in
// the same rounds and order as the E rows.
#ifndef MIXT_BENCH_ROWS_HPP
#define MIXT_BENCH_ROWS_HPP

#include "suite.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace mixt_suite::rows {

template <class T, int R>
using row_major = Eigen::Tensor<T, R, Eigen::RowMajor>;
using a2 = Eigen::array<index_t, 2>;

template <class T, class A>
void fill(A& a, std::uint64_t seed) {
    fill_random(a.data(), a.size(), seed);
}

template <class To, class From>
To bits_of(From x) {
    // The low bytes of x's representation (or x's, widened): no arithmetic, only the load and the store.
    To t{};
    std::memcpy(&t, &x, std::min(sizeof(To), sizeof(From)));
    return t;
}

// The floor of a run of n elements from same-length sources: as mixt::bench's traffic pass (the sources' bits
// xor-ed, no arithmetic), with streaming stores straight from the registers where the build has them, as mixt
// writes at these sizes.
template <class R, class... Ls>
void floor_run(R* dst, index_t n, const Ls*... src) {
#if MIXT_BENCH_VECTOR_FLOOR
    mixt::bench::detail::traffic_streamed(dst, n, src...);
#else
    mixt::bench::detail::traffic_pass(dst, n, src...);
#endif
}

// Reads n elements of p once (a sum of their bits) so a traffic pass reads an operand it does not combine.
template <class T>
std::uint32_t read_all(const T* p, index_t n) {
    std::uint32_t s = 0;
    for (index_t i = 0; i < n; ++i) s += bits_of<std::uint32_t>(p[i]);
    return s;
}

// Reads the n bytes at p once (a sum of their 8-byte words, vectorized): the traffic of an operand that a
// reduction reads.
inline std::uint64_t read_bytes(const void* p, std::size_t n) {
    std::uint64_t s[8] = {};
    const auto* b = static_cast<const unsigned char*>(p);
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 8; ++k) {
            std::uint64_t w;
            std::memcpy(&w, b + i + 8 * k, 8);
            s[k] += w;
        }
    std::uint64_t t = 0;
    for (; i < n; ++i) t += b[i];
    for (int k = 0; k < 8; ++k) t += s[k];
    return t;
}

template <class D>
void assign_result(D& d, const Eigen::ThreadPoolDevice* device) {
    if constexpr (requires { d.assign(device); }) {
        d.assign(device);
    } else if (device) {
        mixt::assign(d.out, d.expression(), *device);
    } else {
        mixt::assign(d.out, d.expression());
    }
}

template <class D>
std::vector<double> values_of(const D& d) {
    std::vector<double> v;
    if constexpr (requires { d.block(); }) {
        for (const float x : d.block()) v.push_back(static_cast<double>(x));
    } else {
        for (index_t i = 0; i < d.elements(); ++i) v.push_back(mixt::convert<double>(d.result_data()[i]));
    }
    return v;
}

// The one row's arrays alive (rows run in registration order).
inline std::shared_ptr<void> current_data;
inline const void* current_row = nullptr;

template <class X>
typename X::data& data_for() {
    static const char row = 0;
    if (current_row != &row) {
        current_data.reset();
        current_data = std::make_shared<typename X::data>(false);
        current_row = &row;
    }
    return *static_cast<typename X::data*>(current_data.get());
}

template <class X, class F>
void add_row(const char* variant, F body) {
    benchmark::RegisterBenchmark((std::string("BM_") + variant + "/" + X::id).c_str(),
                                 [body](benchmark::State& state) {
                                     auto& d = data_for<X>();
                                     body(d);
                                     for (auto _ : state) {
                                         body(d);
                                         benchmark::ClobberMemory();
                                     }
                                     state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * d.bytes());
                                     state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * d.elements());
                                 })
        ->Arg(X::full_elements)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
}

template <class X>
void register_row() {
    using D = typename X::data;
    const auto variant = [](int v) {
        switch (v) {
        case 0: add_row<X>("mixt", [](D& d) { assign_result(d, nullptr); }); break;
        case 1: add_row<X>("hand_loop", [](D& d) { d.hand_loop(); }); break;
        case 2: add_row<X>("eigen_cast", [](D& d) { d.eigen_cast(); }); break;
        case 3: add_row<X>("traffic", [](D& d) { d.traffic(); }); break;
        default:
            if constexpr (requires(D& d) { d.compute_floor(); }) add_row<X>("compute_floor", [](D& d) { d.compute_floor(); });
        }
    };
    // A row that states its compute floor (a hand loop doing only the conversions and arithmetic, in registers)
    // runs it as a fifth variant.
    constexpr int variants = requires(D& d) { d.compute_floor(); } ? 5 : 4;
    for (int round = 0; round < rounds; ++round)
        for (int k = 0; k < variants; ++k) variant((round + k) % variants);
    for (int round = 0; round < rounds; ++round)
        add_row<X>("mixt_threads", [](D& d) { assign_result(d, &thread_pool_device()); });
}

// How close a variant must come to mixt's values (relative, or absolute below 1): the hand loop exactly and
// Eigen within a rounding, unless the row says otherwise (a reduction's hand loop sums in another order).
template <class X>
constexpr double hand_tolerance() {
    if constexpr (requires { X::hand_tolerance; })
        return X::hand_tolerance;
    else
        return 0;
}
template <class X>
constexpr double eigen_tolerance() {
    if constexpr (requires { X::eigen_tolerance; })
        return X::eigen_tolerance;
    else
        return std::is_same_v<typename X::result, f16> ? 0x1p-10 : 0x1p-20;
}

// Whether the row's variants must write mixt's bytes exactly (the narrow dtypes: a NaN code or a -0 compares
// by its bits, not its value), instead of its values within the tolerances above.
template <class X>
constexpr bool bit_exact() {
    if constexpr (requires { X::bit_exact; })
        return X::bit_exact;
    else
        return false;
}

template <class D>
std::vector<unsigned char> bytes_of(const D& d) {
    const auto* p = reinterpret_cast<const unsigned char*>(d.result_data());
    return std::vector<unsigned char>(p, p + static_cast<std::size_t>(d.elements()) * sizeof(*d.result_data()));
}

// Every variant computes what mixt computes, at a small size (within the tolerances above, or bit for bit).
template <class X>
bool check_row(bool verbose) {
    typename X::data d(true);
    assign_result(d, nullptr);
    const auto want = values_of(d);
    std::vector<unsigned char> want_bytes;
    if constexpr (bit_exact<X>()) want_bytes = bytes_of(d);
    std::string line = std::string(X::id) + " " + X::text + ":";
    bool ok = true;
    const auto compare = [&](const char* variant, double tolerance, auto run) {
        run();
        const auto got = values_of(d);
        double worst = 0;
        for (std::size_t i = 0; i < want.size(); ++i) {
            const double e = std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i]));
            worst = std::max(worst, std::isnan(e) ? INFINITY : e);
        }
        if constexpr (bit_exact<X>()) {
            const bool same = bytes_of(d) == want_bytes;
            ok = ok && same;
            line += std::string(" ") + variant + (same ? " bit-exact" : " WRONG");
            return;
        }
        ok = ok && worst <= tolerance;
        line += std::string(" ") + variant + (worst == 0 ? " exact" : worst <= tolerance ? " close" : " WRONG");
    };
    compare("mixt_threads", 0, [&] { assign_result(d, &thread_pool_device()); });
    compare("hand_loop", hand_tolerance<X>(), [&] { d.hand_loop(); });
    compare("eigen_cast", eigen_tolerance<X>(), [&] { d.eigen_cast(); });
    if constexpr (requires { d.compute_floor(); }) compare("compute_floor", hand_tolerance<X>(), [&] { d.compute_floor(); });
    if (verbose || !ok) std::fprintf(ok ? stdout : stderr, "%s\n", line.c_str());
    return ok;
}

template <class X>
void describe_row() {
    typename X::data d(true);
    using E = decltype(d.expression());
    static_assert(std::is_same_v<mixt::value_t<E>, typename X::result>,
                  "mixt-bench: the result dtype written in the suite differs from the lattice's");
    benchmark::AddCustomContext(std::string("mixt_") + X::id,
                                std::string(X::text) + " -> " +
                                    std::string(mixt::short_name(mixt::dtype_of_v<typename X::result>)));
}

template <class X, index_t Full>
struct sized : X {
    static constexpr index_t full_elements = Full;
};

template <class... Xs>
bool rows_action(action a, bool verbose) {
    bool ok = true;
    (
        [&] {
            switch (a) {
            case action::describe: describe_row<Xs>(); break;
            case action::register_benchmarks: register_row<Xs>(); break;
            case action::check: ok = check_row<Xs>(verbose) && ok; break;
            }
        }(),
        ...);
    return ok;
}

} // namespace mixt_suite::rows

#endif // MIXT_BENCH_ROWS_HPP
