// A mixt reduction assigned on an Eigen::GpuDevice: mixt's reductions run on the CPU, which cannot read the
// device's arrays. Expected: mixt's static_assert, naming to_eigen.
#define EIGEN_USE_GPU
#include <mixt/mixt.hpp>

void reduce_on_gpu(const Eigen::GpuDevice& gpu, float* out, const Eigen::half* x) {
    Eigen::TensorMap<Eigen::Tensor<float, 0>> r(out);
    const Eigen::TensorMap<const Eigen::Tensor<Eigen::half, 1>> m(x, 64);
    mixt::assign(r, mixt::sum(m), gpu);
}
