// mixt::eval on an Eigen::GpuDevice: its result would be host memory written by a kernel. Expected: mixt's
// static_assert, saying to assign into a TensorMap of device memory.
#define EIGEN_USE_GPU
#include <mixt/mixt.hpp>

Eigen::Tensor<float, 1> eval_on_gpu(const Eigen::GpuDevice& gpu, const float* x, const Eigen::half* y) {
    const Eigen::TensorMap<const Eigen::Tensor<float, 1>> a(x, 64);
    const Eigen::TensorMap<const Eigen::Tensor<Eigen::half, 1>> b(y, 64);
    return mixt::eval(mixt::lazy(a) + b, gpu);
}
