// Microbenchmarks of your own fused expressions with mixt/bench.hpp and Google Benchmark (link
// benchmark::benchmark). The counters bytes_per_second and items_per_second come from the expression's own
// dtypes: here int8 weights (1 byte) times a half scale (2 bytes) plus a float bias (4 bytes), into float
// (4 bytes): 11 bytes per element, whatever variant is timed.
//
// Run without arguments it takes well under a second (a short minimum time, as the example is also a test);
// pass Google Benchmark's flags for real measurements, e.g. --benchmark_min_time=0.5.
#include <mixt/bench.hpp>
#include <mixt/mixt.hpp>

#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <vector>

namespace {

using dequantize_t = decltype(mixt::lazy(std::declval<const Eigen::Tensor<std::int8_t, 1>&>()) *
                                  std::declval<const Eigen::Tensor<Eigen::half, 1>&>() +
                              std::declval<const Eigen::Tensor<float, 1>&>());
static_assert(std::is_same_v<mixt::value_t<dequantize_t>, float>);
static_assert(mixt::bench::bytes_per_element_v<dequantize_t> == 1 + 2 + 4 + 4);

struct inputs {
    Eigen::Tensor<std::int8_t, 1> q;
    Eigen::Tensor<Eigen::half, 1> scale;
    Eigen::Tensor<float, 1> bias;
    explicit inputs(Eigen::Index n) : q(n), scale(n), bias(n) {
        for (Eigen::Index i = 0; i < n; ++i) {
            q(i) = static_cast<std::int8_t>(i % 255 - 127);
            scale(i) = Eigen::half(0.01f * static_cast<float>(i % 7 + 1));
            bias(i) = static_cast<float>(i % 3);
        }
    }
};

// 1. Inside your own benchmark function: run_fused times mixt::assign into a preallocated result.
void BM_dequantize_fused(benchmark::State& state) {
    const inputs in(state.range(0));
    mixt::bench::run_fused(state, mixt::lazy(in.q) * in.scale + in.bias);
}
BENCHMARK(BM_dequantize_fused)->Arg(1 << 12)->Arg(1 << 16);

// 2. A baseline (here idiomatic Eigen) timed with the same expression's counters, so GB/s compare directly.
void BM_dequantize_eigen(benchmark::State& state) {
    const inputs in(state.range(0));
    Eigen::Tensor<float, 1> r(state.range(0));
    mixt::bench::run_baseline(state, mixt::lazy(in.q) * in.scale + in.bias,
                              [&] { r = in.q.cast<float>() * in.scale.cast<float>() + in.bias; });
}
BENCHMARK(BM_dequantize_eigen)->Arg(1 << 12)->Arg(1 << 16);

} // namespace

int main(int argc, char** argv) {
    // 3. Registration that owns the tensors: the callable builds the expression over them. This registers
    //    BM_scale_shift/fused, /unfused (one pass per conversion and per operation, as eager frameworks run
    //    it) and /traffic (the memory-traffic floor: the same bytes moved, no arithmetic).
    const Eigen::Index n = 1 << 16;
    inputs in(n);
    mixt::bench::register_expression(
        "BM_scale_shift", mixt::bench::fused | mixt::bench::unfused | mixt::bench::traffic,
        [](const auto& q, const auto& scale) { return mixt::lazy(q) * scale - 1; }, std::move(in.q),
        std::move(in.scale));

    // The unfused evaluation computes the same values as the fused one.
    const inputs small(1000);
    const auto e = mixt::lazy(small.q) * small.scale + small.bias;
    const Eigen::Tensor<float, 1> fused = mixt::eval(e);
    const Eigen::Tensor<float, 1> unfused = mixt::bench::eval_unfused(e);
    for (Eigen::Index i = 0; i < fused.size(); ++i) {
        if (fused(i) != unfused(i)) {
            std::fprintf(stderr, "bench_example: fused and unfused differ at %ld\n", static_cast<long>(i));
            return 1;
        }
    }
    // A tensor used twice is read once by a fused loop, and counted once.
    if (mixt::bench::bytes_moved(e) != 1000 * 11) return 1;
    if (mixt::bench::bytes_moved(mixt::lazy(small.bias) * small.bias) != 1000 * (4 + 4)) return 1;

    // Quick defaults when run without arguments (as the example test does).
    std::vector<char*> args(argv, argv + argc);
    char quick[] = "--benchmark_min_time=0.01";
    if (argc == 1) args.push_back(quick);
    int count = static_cast<int>(args.size());
    args.push_back(nullptr);
    benchmark::Initialize(&count, args.data());
    if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
