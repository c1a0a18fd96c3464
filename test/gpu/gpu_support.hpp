// Helpers of the GPU tests (gpu_test.cu, gpu_reduce_test.cu): device copies of host tensors, the inputs, and
// the fixture that skips every test without a CUDA device (or driver), saying why.
#ifndef MIXT_TEST_GPU_SUPPORT_HPP
#define MIXT_TEST_GPU_SUPPORT_HPP

#ifndef EIGEN_USE_GPU
#define EIGEN_USE_GPU
#endif
#include <mixt/mixt.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <support/nan_contract.hpp>
#include <memory>
#include <type_traits>

namespace mixt_gpu_test {

constexpr Eigen::Index n = 100003; // not a multiple of any block or vector width

// Whether same(got(i), want(i)) holds for every i < count; the first three elements where it does not are
// reported as `what: element i` and `detail(i)`.
template <class Got, class Want, class Same, class Detail>
void expect_all(const std::string& what, Eigen::Index count, const Got& got, const Want& want, const Same& same,
                const Detail& detail) {
    int wrong = 0;
    for (Eigen::Index i = 0; i < count; ++i)
        if (!same(got(i), want(i)) && ++wrong <= 3) ADD_FAILURE() << what << ": element " << i << detail(i);
    EXPECT_EQ(wrong, 0) << what;
}
// The same result as the DefaultDevice's at every i < count: the same bits, or NaN on both (the NaN contract).
template <class Got, class Want>
void expect_same(const std::string& what, Eigen::Index count, const Got& got, const Want& want) {
    const auto same = [](const auto& g, const auto& w) { return mixt_test::same_result(g, w); };
    expect_all(what, count, got, want, same, [](Eigen::Index) { return " differs from the DefaultDevice's"; });
}

// Device memory of a tensor's shape and layout (a copy of a host tensor, or uninitialized), seen through a TensorMap.
template <class T, int R = 1, int L = Eigen::ColMajor>
class device_tensor {
  public:
    using host_type = Eigen::Tensor<T, R, L>;
    explicit device_tensor(const typename host_type::Dimensions& dims) : dims_(dims) {
        // (one byte at least: cudaMalloc of nothing gives no pointer)
        if (cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes() + 1) != cudaSuccess) throw std::bad_alloc();
    }
    explicit device_tensor(Eigen::Index size)
        requires(R == 1)
        : device_tensor(typename host_type::Dimensions(size)) {}
    explicit device_tensor(const host_type& host) : device_tensor(host.dimensions()) {
        if (host.size() > 0) EXPECT_EQ(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    ~device_tensor() { cudaFree(ptr_); }
    device_tensor(const device_tensor&) = delete;
    device_tensor& operator=(const device_tensor&) = delete;
    Eigen::TensorMap<host_type> map() const { return {ptr_, dims_}; }
    host_type download() const {
        host_type host(dims_);
        if (host.size() > 0) EXPECT_EQ(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
        return host;
    }

  private:
    std::size_t bytes() const { return sizeof(T) * static_cast<std::size_t>(dims_.TotalSize()); }
    T* ptr_ = nullptr;
    typename host_type::Dimensions dims_;
};

template <class T>
Eigen::Tensor<T, 1> make(std::uint64_t seed) {
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        std::uint64_t x = (seed * 1000003 + static_cast<std::uint64_t>(i)) * 0x9e3779b97f4a7c15ull;
        x ^= x >> 29;
        if constexpr (std::is_integral_v<T> || std::is_same_v<T, bool>) {
            t(i) = static_cast<T>(x);
        } else if constexpr (mixt::is_narrow_int_v<T>) {
            t(i) = T(x);
        } else if constexpr (mixt::is_narrow_float_v<T>) {
            t(i) = T::from_bits(static_cast<std::uint8_t>(x)); // every code, specials included
        } else if constexpr (mixt::detail::is_complex_v<T>) {
            using C = typename T::value_type;
            t(i) = T(static_cast<C>(static_cast<std::int16_t>(x) % 2000) / C(64),
                     static_cast<C>(static_cast<std::int16_t>(x >> 32) % 2000) / C(64));
        } else {
            float v = static_cast<float>(static_cast<std::int32_t>(x) % 100000) / 64.0f;
            if (x % 97 == 0) v = std::numeric_limits<float>::quiet_NaN();
            if (x % 89 == 0) v = -std::numeric_limits<float>::infinity();
            t(i) = static_cast<T>(v);
        }
    }
    return t;
}

class gpu : public ::testing::Test {
  protected:
    void SetUp() override {
        int count = 0;
        const cudaError_t err = cudaGetDeviceCount(&count);
        if (err != cudaSuccess)
            GTEST_SKIP() << "no CUDA device: cudaGetDeviceCount failed: " << cudaGetErrorString(err);
        if (count == 0) GTEST_SKIP() << "no CUDA device: cudaGetDeviceCount returned 0";
        stream_ = std::make_unique<Eigen::GpuStreamDevice>();
        device_ = std::make_unique<Eigen::GpuDevice>(stream_.get());
    }

    // Evaluates build(leaves) on the host (DefaultDevice) and on the GPU (the leaves copied to device
    // memory, seen through TensorMaps), and compares every element with `same(got, want)`.
    template <class Same, class Build, class... Ts>
    void compare(const std::string& what, Same same, const char* differs, Build build, const Eigen::Tensor<Ts, 1>&... host) {
        using R = mixt::value_t<decltype(build(host...))>;
        const Eigen::Tensor<R, 1> want = mixt::eval(build(host...));
        const std::tuple<device_tensor<Ts>...> on_device(host...);
        const device_tensor<R> out(n);
        std::apply([&](const auto&... d) { mixt::assign(out.map(), build(d.map()...), *device_); }, on_device);
        device_->synchronize();
        ASSERT_EQ(cudaGetLastError(), cudaSuccess) << what;
        const Eigen::Tensor<R, 1> got = out.download();
        expect_all(what, n, got, want, same, [differs](Eigen::Index) { return differs; });
    }

    // The same result as the DefaultDevice: the same bits, or NaN on both (the NaN contract).
    template <class Build, class... Ts>
    void check(const std::string& what, Build build, const Eigen::Tensor<Ts, 1>&... host) {
        const auto same = [](const auto& got, const auto& want) { return mixt_test::same_result(got, want); };
        compare(what, same, " differs from the DefaultDevice's (other than a NaN's sign or payload)", build, host...);
    }

    // For one transcendental function: CUDA's and glibc's differ by up to `ulps` units in the last place of an
    // f32 or f64 result (CUDA's documented bounds plus glibc's, e.g. powf 4 + 1); an f16 or bf16 result of
    // f32 arithmetic (tanh(i8) is f32) at most 1 ulp apart; complex results within 4 eps normwise.
    template <class Build, class... Ts>
    void check_close(const std::string& what, int ulps, Build build, const Eigen::Tensor<Ts, 1>&... host) {
        const auto near = [ulps](const auto& got, const auto& want) { return close(got, want, ulps); };
        compare(what, near, " is further from the DefaultDevice's than the tolerance", build, host...);
    }

    template <class R>
    static bool close(const R& got, const R& want, int ulps) {
        if constexpr (mixt::detail::is_complex_v<R>) {
            // Normwise, 4 ulp of the component type (the differential test's rule for complex functions).
            using C = typename R::value_type;
            const double gr = static_cast<double>(got.real()), gi = static_cast<double>(got.imag());
            const double wr = static_cast<double>(want.real()), wi = static_cast<double>(want.imag());
            if (std::isnan(wr) || std::isnan(wi) || std::isnan(gr) || std::isnan(gi))
                return (std::isnan(wr) || std::isnan(wi)) == (std::isnan(gr) || std::isnan(gi));
            if (std::isinf(wr) || std::isinf(wi) || std::isinf(gr) || std::isinf(gi)) return got == want;
            const double eps = static_cast<double>(Eigen::NumTraits<C>::epsilon());
            return std::hypot(gr - wr, gi - wi) <=
                   4 * eps * std::max(std::hypot(wr, wi), static_cast<double>((std::numeric_limits<C>::min)()));
        } else {
            const double g = static_cast<double>(got), w = static_cast<double>(want);
            if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
            if (std::isinf(w) || std::isinf(g)) return g == w;
            const bool narrow = std::is_same_v<R, Eigen::half> || std::is_same_v<R, Eigen::bfloat16>;
            const double eps = static_cast<double>(Eigen::NumTraits<R>::epsilon());
            const double tiny = static_cast<double>((std::numeric_limits<R>::min)());
            return std::abs(g - w) <= (narrow ? 1 : ulps) * eps * std::max(std::abs(w), tiny);
        }
    }

    std::unique_ptr<Eigen::GpuStreamDevice> stream_;
    std::unique_ptr<Eigen::GpuDevice> device_;
};

} // namespace mixt_gpu_test

#endif // MIXT_TEST_GPU_SUPPORT_HPP
