#ifndef MIXT_EVAL_DEVICE_HPP
#define MIXT_EVAL_DEVICE_HPP

// The kinds of Eigen device an evaluation runs on, classified once: the calling thread (DefaultDevice), a
// thread pool (ThreadPoolDevice, where EIGEN_USE_THREADS makes it exist), a GPU (GpuDevice, where nvcc compiles
// with EIGEN_USE_GPU), or any other device (Eigen's own executor runs the lowered expression there).

#include <type_traits>

#include <unsupported/Eigen/CXX11/Tensor>

namespace mixt::detail {

/// Whether a device is Eigen's ThreadPoolDevice (only where EIGEN_USE_THREADS makes it exist).
template <class Device>
inline constexpr bool is_thread_pool_device_v =
#if defined(EIGEN_USE_THREADS)
    std::is_same_v<Device, Eigen::ThreadPoolDevice>;
#else
    false;
#endif

/// Whether a device is Eigen's GpuDevice with mixt's kernels compiled for it (nvcc and EIGEN_USE_GPU).
template <class Device>
inline constexpr bool gpu_device_v =
#if defined(EIGEN_USE_GPU) && defined(__CUDACC__)
    std::is_same_v<Device, Eigen::GpuDevice>;
#else
    false;
#endif

/// Whether mixt's CPU loops run on a device: the calling thread or a thread pool.
template <class Device>
inline constexpr bool cpu_device_v = std::is_same_v<Device, Eigen::DefaultDevice> || is_thread_pool_device_v<Device>;

/// The threads a device offers a pass (1 but on a thread pool).
template <class Device>
int device_threads(const Device& device) {
    if constexpr (is_thread_pool_device_v<Device>) {
        return device.numThreads();
    } else {
        (void)device;
        return 1;
    }
}

} // namespace mixt::detail

#endif // MIXT_EVAL_DEVICE_HPP
