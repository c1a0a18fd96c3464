// A microbenchmark of your own: counters from the expression's dtypes (1 + 2 + 4 bytes read, 4 written).
#include <mixt/bench.hpp>
#include <mixt/mixt.hpp>

#include <cstdint>

static void BM_dequantize(benchmark::State& state) {
    Eigen::Tensor<std::int8_t, 1> q(state.range(0));
    Eigen::Tensor<Eigen::half, 1> scale(state.range(0));
    Eigen::Tensor<float, 1> bias(state.range(0));
    q.setZero(), scale.setZero(), bias.setZero();
    mixt::bench::run_fused(state, mixt::lazy(q) * scale + bias); // mixt::assign into a preallocated result
}
BENCHMARK(BM_dequantize)->Arg(1 << 16)->MinTime(0.01); // a short run: the example is also a test
BENCHMARK_MAIN();
