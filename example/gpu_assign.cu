// mixt on an Eigen::GpuDevice, built with nvcc: one kernel over device-accessible memory.
#define EIGEN_USE_GPU // before the first include
#include <mixt/mixt.hpp>

#include <cstdint>

int main() {
    const int n = 1 << 20;
    std::int8_t* a;
    Eigen::half* b;
    float* r;
    if (cudaMallocManaged(&a, n) != cudaSuccess) return 77; // no GPU: the test is skipped
    cudaMallocManaged(&b, 2 * n), cudaMallocManaged(&r, 4 * n);
    for (int i = 0; i < n; ++i) a[i] = -3, b[i] = Eigen::half(0.5f);
    Eigen::GpuStreamDevice stream;
    Eigen::GpuDevice gpu(&stream);
    Eigen::TensorMap<Eigen::Tensor<std::int8_t, 1>> ta(a, n);
    Eigen::TensorMap<Eigen::Tensor<Eigen::half, 1>> tb(b, n);
    Eigen::TensorMap<Eigen::Tensor<float, 1>> tr(r, n);
    mixt::assign(tr, mixt::lazy(ta) + tb * mixt::strong(4.0f), gpu); // i8 + f16 * f32 is f32: one kernel
    gpu.synchronize(); // assign returns before the kernel is done
    return r[n - 1] == -1.0f ? 0 : 1;
}
