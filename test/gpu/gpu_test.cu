// Mixed-dtype expressions evaluated on an Eigen::GpuDevice, over TensorMaps of cudaMalloc'd memory, equal
// the DefaultDevice's results bit for bit: the same per-element code (expr/functors.hpp, mixt::convert)
// compiled as device code. The run-time checks (literal ranges, shapes) happen on the host before the
// kernel is launched. Without a CUDA device (or driver) every test is skipped, saying why.
//
// Built with nvcc only when CMake finds a CUDA compiler (test/gpu/CMakeLists.txt), with -fmad=false: by
// default nvcc contracts a product feeding a sum into one fused multiply-add, which rounds once where mixt
// rounds each node's result to its dtype (and where the CPU does), so bit-for-bit equality needs it off.

#define EIGEN_USE_GPU

#include <mixt/mixt.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace {

constexpr Eigen::Index n = 100003; // not a multiple of any block or vector width

// Device memory holding a copy of a host tensor, seen through a TensorMap.
template <class T>
class device_tensor {
  public:
    explicit device_tensor(Eigen::Index size) : size_(size) {
        if (cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()) != cudaSuccess) throw std::bad_alloc();
    }
    explicit device_tensor(const Eigen::Tensor<T, 1>& host) : device_tensor(host.size()) {
        EXPECT_EQ(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    ~device_tensor() { cudaFree(ptr_); }
    device_tensor(const device_tensor&) = delete;
    device_tensor& operator=(const device_tensor&) = delete;
    Eigen::TensorMap<Eigen::Tensor<T, 1>> map() const { return {ptr_, size_}; }
    Eigen::Tensor<T, 1> download() const {
        Eigen::Tensor<T, 1> host(size_);
        EXPECT_EQ(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
        return host;
    }

  private:
    std::size_t bytes() const { return sizeof(T) * static_cast<std::size_t>(size_); }
    T* ptr_ = nullptr;
    Eigen::Index size_;
};

template <class T>
Eigen::Tensor<T, 1> make(std::uint64_t seed) {
    Eigen::Tensor<T, 1> t(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        std::uint64_t x = (seed * 1000003 + static_cast<std::uint64_t>(i)) * 0x9e3779b97f4a7c15ull;
        x ^= x >> 29;
        if constexpr (std::is_integral_v<T> || std::is_same_v<T, bool>) {
            t(i) = static_cast<T>(x);
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
    // memory, seen through TensorMaps), and compares the bits.
    template <class Build, class... Ts>
    void check(const std::string& what, Build build, const Eigen::Tensor<Ts, 1>&... host) {
        using R = mixt::value_t<decltype(build(host...))>;
        const Eigen::Tensor<R, 1> want = mixt::eval(build(host...));
        const std::tuple<device_tensor<Ts>...> on_device(host...);
        const device_tensor<R> out(n);
        std::apply([&](const auto&... d) { mixt::assign(out.map(), build(d.map()...), *device_); }, on_device);
        device_->synchronize();
        ASSERT_EQ(cudaGetLastError(), cudaSuccess) << what;
        const Eigen::Tensor<R, 1> got = out.download();
        int wrong = 0;
        for (Eigen::Index i = 0; i < n; ++i)
            if (std::memcmp(&got(i), &want(i), sizeof(R)) != 0 && ++wrong <= 3)
                ADD_FAILURE() << what << ": element " << i << " differs from the DefaultDevice's";
        EXPECT_EQ(wrong, 0) << what;
    }

    std::unique_ptr<Eigen::GpuStreamDevice> stream_;
    std::unique_ptr<Eigen::GpuDevice> device_;
};

TEST_F(gpu, mixed_arithmetic) {
    const auto i8 = make<std::int8_t>(1);
    const auto u8 = make<std::uint8_t>(2);
    const auto f16 = make<Eigen::half>(3);
    const auto f32 = make<float>(4);
    const auto bf16 = make<Eigen::bfloat16>(5);
    const auto i16 = make<std::int16_t>(6);
    check("(i8 + u8) * f16 - 1", [](const auto& a, const auto& b, const auto& c) { return (mixt::lazy(a) + b) * c - 1; },
          i8, u8, f16);
    check("clip(bf16 * f32, -1, 1) / i8", [](const auto& a, const auto& b, const auto& c) {
        return mixt::clip(mixt::lazy(a) * b, -1, 1) / c;
    }, bf16, f32, i8);
    check("where(f32 > 0, i16, f32 * 0.5)", [](const auto& a, const auto& b) {
        return mixt::where(mixt::lazy(a) > 0, b, mixt::lazy(a) * 0.5);
    }, f32, i16);
    check("minimum(f16, bf16) + maximum(i8, u8)", [](const auto& a, const auto& b, const auto& c, const auto& d) {
        return mixt::minimum(mixt::lazy(a), b) + mixt::maximum(mixt::lazy(c), d);
    }, f16, bf16, i8, u8);
}

TEST_F(gpu, integer_semantics_without_undefined_behaviour) {
    const auto i32 = make<std::int32_t>(7);
    const auto i8 = make<std::int8_t>(8);
    const auto u8 = make<std::uint8_t>(9);
    const auto u64 = make<std::uint64_t>(10);
    const auto i64 = make<std::int64_t>(11);
    // floor_divide and % with zero and INT_MIN / -1 among the operands; shifts by any count; wrapping.
    check("floor_divide(i32, i8) + i32 % i8", [](const auto& a, const auto& b) {
        return mixt::floor_divide(mixt::lazy(a), b) + mixt::lazy(a) % b;
    }, i32, i8);
    check("(i8 << u8) ^ (i8 >> u8)", [](const auto& a, const auto& b) {
        return (mixt::lazy(a) << b) ^ (mixt::lazy(a) >> b);
    }, i8, u8);
    check("i64 * i64 - abs(i64)", [](const auto& a) { return mixt::lazy(a) * a - mixt::abs(a); }, i64);
    check("u64 + i64 (f*, stored as f64)", [](const auto& a, const auto& b) { return mixt::lazy(a) + b; }, u64, i64);
    check("pow(i8, u8 % 9)", [](const auto& a, const auto& b) { return mixt::pow(mixt::lazy(a), mixt::lazy(b) % 9); }, i8, u8);
}

TEST_F(gpu, conversions_and_literal_comparisons) {
    const auto f32 = make<float>(12);
    const auto u8 = make<std::uint8_t>(13);
    const auto f64 = make<double>(14);
    // Saturating float -> int casts with NaN -> 0, and exact comparisons with out-of-range literals.
    check("cast<i32>(f32 * 1e6) + cast<u8>(f32)", [](const auto& a) {
        return mixt::cast<std::int32_t>(mixt::lazy(a) * 1e6f) + mixt::cast<std::uint8_t>(a);
    }, f32);
    check("(u8 < 300) & (u8 > -1) & (u8 != 1000)", [](const auto& a) {
        return (mixt::lazy(a) < 300) & (mixt::lazy(a) > -1) & (mixt::lazy(a) != 1000);
    }, u8);
    check("f64 == 9007199254740993 | f64 < 0.5", [](const auto& a) {
        return (mixt::lazy(a) == 9007199254740993) | (mixt::lazy(a) < 0.5);
    }, f64);
    check("cast<f16>(f64) + cast<bf16>(u8)", [](const auto& a, const auto& b) {
        return mixt::cast<Eigen::half>(a) * mixt::cast<Eigen::bfloat16>(b);
    }, f64, u8);
}

TEST_F(gpu, errors_before_the_kernel) {
    const auto u8 = make<std::uint8_t>(15);
    const device_tensor<std::uint8_t> a(u8);
    const device_tensor<std::uint8_t> out(n);
    EXPECT_THROW(mixt::assign(out.map(), mixt::lazy(a.map()) + 300, *device_), mixt::overflow_error);
    const device_tensor<std::uint8_t> shorter(n - 1);
    EXPECT_THROW(mixt::assign(shorter.map(), mixt::lazy(a.map()) + 1, *device_), mixt::shape_error);
}

} // namespace
