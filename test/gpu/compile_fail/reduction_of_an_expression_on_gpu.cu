// A mixt reduction on an Eigen::GpuDevice whose operand is an Eigen expression (a reshape), not an array in
// device memory: the GPU's reduction kernels read arrays through pointers and strides. Expected: mixt's
// static_assert.
#define EIGEN_USE_GPU
#include <mixt/mixt.hpp>

void reduce_on_gpu(const Eigen::GpuDevice& gpu, float* out, const Eigen::half* x) {
    Eigen::TensorMap<Eigen::Tensor<float, 0>> r(out);
    const Eigen::TensorMap<const Eigen::Tensor<Eigen::half, 1>> m(x, 64);
    mixt::assign(r, mixt::sum(m.reshape(Eigen::array<Eigen::Index, 2>{8, 8})), gpu);
}
