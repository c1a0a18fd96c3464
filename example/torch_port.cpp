// Code ported from PyTorch keeps PyTorch's result types under mixt::policy::torch. The PyTorch snippet:
//
//     x = torch.ones((3,), dtype=torch.int8)
//     y1 = torch.tensor(1, dtype=torch.float64)      # a rank-0 tensor
//     out1 = torch.mul(x, y1)                        # float64: a float rank-0 tensor outranks an int tensor
//     y2 = torch.tensor(1, dtype=torch.int64)
//     out2 = torch.mul(x, y2)                        # int8: an int rank-0 tensor does not
//     out3 = torch.mul(x, 1.0)                       # float32: a Python float is the default float
//     out = x * y1 * 0.5                             # float64
#include <mixt/mixt.hpp>

#include <cstdint>
#include <type_traits>

int main() {
    using torch = mixt::policy::torch;
    Eigen::Tensor<std::int8_t, 1> x(3);
    x.setConstant(1);
    Eigen::Tensor<double, 0> y1;
    y1() = 1.0;
    Eigen::Tensor<std::int64_t, 0> y2;
    y2() = 1;

    auto out1 = mixt::lazy<torch>(x) * y1;
    auto out2 = mixt::lazy<torch>(x) * y2;
    auto out3 = mixt::lazy<torch>(x) * 1.0;
    auto out = mixt::lazy<torch>(x) * y1 * 0.5;
    static_assert(std::is_same_v<mixt::value_t<decltype(out1)>, double>);
    static_assert(std::is_same_v<mixt::value_t<decltype(out2)>, std::int8_t>);
    static_assert(std::is_same_v<mixt::value_t<decltype(out3)>, float>);
    static_assert(std::is_same_v<mixt::value_t<decltype(out)>, double>);
    // Under the default policy (JAX's rules) the same expressions are f64, i64, f64 and f64.
    static_assert(std::is_same_v<mixt::value_t<decltype(mixt::lazy(x) * y2)>, std::int64_t>);

    Eigen::Tensor<double, 1> r = mixt::eval(out);
    Eigen::Tensor<std::int8_t, 1> r2 = mixt::eval(out2);
    Eigen::Tensor<float, 1> r3 = mixt::eval(out3);
    return r(2) == 0.5 && r2(0) == 1 && r3(1) == 1.0f ? 0 : 1;
}
