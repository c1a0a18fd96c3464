// mixt::explain: the plan an assign or eval would run, as text, without writing anything.
#include <mixt/mixt.hpp>

#include <cstdint>
#include <iostream>
#include <string>

int main() {
    Eigen::Tensor<std::uint8_t, 2, Eigen::RowMajor> img(480, 640);
    Eigen::Tensor<float, 1> scale(640); // one value per column, broadcast along the rows
    Eigen::Tensor<float, 2, Eigen::RowMajor> out(480, 640);
    const std::string plan = mixt::explain(out, mixt::lazy(img) * scale + 1.0f);
    std::cout << plan; // these lines, then "loop: 16-lane (AVX-512)" (AVX2: 8-lane), "threads: 1", "stores: plain"
    const std::string expected = "route: runs\n"
                                 "result: float32 [480, 640]\n"
                                 "space: dims [480, 640], strides dst [640, 1] op1 [640, 1] op2 [0, 1]\n"
                                 "runs: 480 of 640 elements, staged operands 0\n";
    return plan.rfind(expected, 0) == 0 && plan.find("\nthreads: 1\n") != std::string::npos ? 0 : 1;
}
