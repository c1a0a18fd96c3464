// Evaluation: into a new tensor or existing storage, on a thread pool, or lowered to an Eigen expression; and
// mixt::explain, the plan an assign would run, as text, without writing anything.
#define EIGEN_USE_THREADS // before the first include, for Eigen::ThreadPoolDevice
#include <mixt/mixt.hpp>

#include <cstdint>
#include <iostream>
#include <string>

int main() {
    Eigen::Tensor<std::int8_t, 2> a(64, 64);
    Eigen::Tensor<float, 2> b(64, 64);
    a.setConstant(3);
    b.setConstant(0.5f);
    const auto e = mixt::lazy(a) * b + 1; // f32; nothing is computed yet

    Eigen::Tensor<float, 2> r = mixt::eval(e); // a new tensor of value_t<decltype(e)>
    auto r64 = mixt::eval<double>(e);          // of a dtype that value_t promotes to
    mixt::assign(r, e);                        // into existing storage: a tensor, map, view or Dense object
    Eigen::ThreadPool pool(1);                 // for N cores: a pool of N - 1 threads
    Eigen::ThreadPoolDevice device(&pool, 2);  // and a device of N (the caller computes too)
    mixt::assign(r, e, device);
    Eigen::Tensor<float, 0> total = mixt::to_eigen(e).sum(); // an ordinary Eigen expression

    Eigen::Tensor<float, 1> scale(64); // one value per column: constant along each column, a run in memory
    const std::string plan = mixt::explain(r, mixt::lazy(a) * scale + 1);
    std::cout << plan; // these lines, then "loop: 16-lane (AVX-512)" (AVX2: 8-lane), "threads: 1", "stores: plain"
    const bool planned = plan.rfind("route: runs\n"
                                    "result: float32 [64, 64]\n"
                                    "space: dims [64, 64], strides dst [64, 1] op1 [64, 1] op2 [1, 0]\n"
                                    "runs: 64 of 64 elements, staged operands 1\n", 0) == 0;
    return planned && r(63, 63) == 2.5f && r64(0, 0) == 2.5 && total() == 2.5f * 64 * 64 ? 0 : 1;
}
