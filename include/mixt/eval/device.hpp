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

/// Whether this compile emits the passes that run on Device: all of them, but in nvcc's device pass
/// (__CUDA_ARCH__) those of the CPU devices. That pass parses a .cu file's host functions too and instantiates
/// the templates they call, though it emits none of them; the CPU's passes (run_fused, run_strided, the
/// reductions' reduce_operand, Eigen's executor on a CPU device) launch no kernel, so leaving them to the host
/// pass keeps the set of kernels the same in both passes, as CUDA requires, and spares the device pass the
/// larger part of its front end's work on a file that evaluates on the host as well as on the GPU.
template <class Device>
inline constexpr bool passes_compiled_for_v =
#if defined(__CUDA_ARCH__)
    !cpu_device_v<Device>;
#else
    true;
#endif

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
