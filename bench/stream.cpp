// The roofline kernels on f32, as in McCalpin's STREAM: copy (b = a: 8 bytes per element) and triad
// (a = b + s * c: 12 bytes per element). They bound what any variant can reach at each size.
#include "suite.hpp"

namespace mixt_suite {
namespace {

// Not an expression of the suite: only its workspace is used (two inputs, one result).
struct stream_arrays {
    static constexpr const char* id = "stream";
    using inputs = std::tuple<float, float>;
    using result = float;
    struct temps {};
};

void stream_copy(benchmark::State& state, int round) {
    auto& w = workspace_for<stream_arrays>(state.range(0), round);
    const float* a = std::get<0>(w.in).data();
    float* r = w.out.data();
    const index_t n = w.out.size();
    for (auto _ : state) {
        for (index_t i = 0; i < n; ++i) r[i] = a[i];
        benchmark::DoNotOptimize(r);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * n * 8);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

void stream_triad(benchmark::State& state, int round) {
    auto& w = workspace_for<stream_arrays>(state.range(0), round);
    const float* b = std::get<0>(w.in).data();
    const float* c = std::get<1>(w.in).data();
    float* r = w.out.data();
    const index_t n = w.out.size();
    const float s = 3.0f;
    for (auto _ : state) {
        for (index_t i = 0; i < n; ++i) r[i] = b[i] + s * c[i];
        benchmark::DoNotOptimize(r);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * n * 12);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

} // namespace

bool stream(action a, index_t n) {
    if (a == action::register_benchmarks) {
        for (int round = 0; round < rounds; ++round)
            for (auto* b : {benchmark::RegisterBenchmark("BM_stream_copy", stream_copy, round),
                            benchmark::RegisterBenchmark("BM_stream_triad", stream_triad, round)})
                b->Arg(n)->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
    return true;
}

} // namespace mixt_suite
