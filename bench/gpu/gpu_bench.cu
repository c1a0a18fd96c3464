// mixt-gpu-bench: E1-E12 of the suite on an NVIDIA GPU at 2^26 elements (MIXT_GPU_BENCH_N to change it).
// Variants, each timed on the same device arrays:
//   mixt        mixt::assign(out, e, gpu_device): mixt's own kernel (include/mixt/eval/gpu.hpp);
//   eigen_cast  the Eigen Tensor expression with .cast<>() on the same GpuDevice (Eigen's executor);
//   hand        a hand-written kernel: V elements per thread, 16 bytes of the widest operand in one access, CUDA's own
//               conversions, nvcc's default -fmad;
//   copy        cudaMemcpyAsync device to device of the result's bytes (read and write: 2x the bytes).
// GB/s count every input element once and the result once (the suite's traffic count). Before any timing,
// mixt's result is compared with the CPU's (mixt::eval on the DefaultDevice) exactly, under the NaN contract;
// eigen_cast and hand are compared too (within 1e-6 relative; E10's, which round CUDA's expf to f16, within
// one f16 ulp) and marked where they differ. Prints a Markdown table and writes it to --out FILE.
// Exit status: 0 after a run, 0 with one line when there is no CUDA device (the report skips the table), 1 when
// mixt's result is wrong.

#define EIGEN_USE_GPU

#include <mixt/mixt.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

namespace {

using index_t = Eigen::Index;
using f16 = Eigen::half;
using bf16 = Eigen::bfloat16;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

template <class T>
using dmap = Eigen::TensorMap<Eigen::Tensor<T, 1>>;
template <class T>
using cmap = Eigen::TensorMap<const Eigen::Tensor<const T, 1>>;

void check_cuda(cudaError_t err, const char* what) {
    if (err != cudaSuccess) {
        std::fprintf(stderr, "mixt-gpu-bench: %s: %s\n", what, cudaGetErrorString(err));
        std::exit(2);
    }
}

template <class T>
struct device_array {
    T* p = nullptr;
    index_t n = 0;
    explicit device_array(index_t size) : n(size) {
        check_cuda(cudaMalloc(reinterpret_cast<void**>(&p), bytes()), "cudaMalloc");
    }
    device_array(const device_array&) = delete;
    device_array& operator=(const device_array&) = delete;
    ~device_array() { cudaFree(p); }
    std::size_t bytes() const { return sizeof(T) * static_cast<std::size_t>(n); }
    void upload(const T* h) { check_cuda(cudaMemcpy(p, h, bytes(), cudaMemcpyHostToDevice), "upload"); }
    void upload(const std::vector<T>& h) { upload(h.data()); }
    std::vector<T> download() const {
        std::vector<T> h(static_cast<std::size_t>(n));
        check_cuda(cudaMemcpy(h.data(), p, bytes(), cudaMemcpyDeviceToHost), "download");
        return h;
    }
    dmap<T> map() const { return {p, n}; }
    cmap<T> view() const { return {p, n}; }
};

// Deterministic inputs of every magnitude (a few NaNs and infinities in the float ones).
template <class T>
std::vector<T> make(index_t n, std::uint64_t seed) {
    std::vector<T> v(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) {
        std::uint64_t x = (seed * 1000003 + static_cast<std::uint64_t>(i)) * 0x9e3779b97f4a7c15ull;
        x ^= x >> 29;
        T& t = v[static_cast<std::size_t>(i)];
        if constexpr (std::is_integral_v<T>) {
            t = static_cast<T>(x);
        } else if constexpr (mixt::detail::is_complex_v<T>) {
            using C = typename T::value_type;
            t = T(static_cast<C>(static_cast<std::int16_t>(x) % 2000) / C(64), static_cast<C>(static_cast<std::int16_t>(x >> 32) % 2000) / C(64));
        } else {
            float f = static_cast<float>(static_cast<std::int32_t>(x) % 100000) / 4096.0f;
            if (x % 997 == 0) f = std::numeric_limits<float>::quiet_NaN();
            if (x % 991 == 0) f = -std::numeric_limits<float>::infinity();
            t = static_cast<T>(f);
        }
    }
    return v;
}

// --- The hand-written kernel: V elements per thread, one access per operand ------------------------------

template <class T, int V>
struct alignas(sizeof(T) * V) pack { // one access of V elements (at most 16 bytes)
    T v[V];
};

// Two and three operands (the suite's rows): every operand's V elements loaded as whole packs first.
template <int V, class R, class F, class A, class B>
__global__ void hand_kernel(R* r, index_t n, F f, const A* a, const B* b) {
    const index_t chunks = n / V;
    const index_t first = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const index_t step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t c = first; c < chunks; c += step) {
        const pack<A, V> pa = *reinterpret_cast<const pack<A, V>*>(a + c * V);
        const pack<B, V> pb = *reinterpret_cast<const pack<B, V>*>(b + c * V);
        pack<R, V> out;
#pragma unroll
        for (int j = 0; j < V; ++j) out.v[j] = f(pa.v[j], pb.v[j]);
        *reinterpret_cast<pack<R, V>*>(r + c * V) = out;
    }
    const index_t t = chunks * V + first;
    if (t < n) r[t] = f(a[t], b[t]);
}
template <int V, class R, class F, class A, class B, class C>
__global__ void hand_kernel(R* r, index_t n, F f, const A* a, const B* b, const C* c3) {
    const index_t chunks = n / V;
    const index_t first = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const index_t step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t c = first; c < chunks; c += step) {
        const pack<A, V> pa = *reinterpret_cast<const pack<A, V>*>(a + c * V);
        const pack<B, V> pb = *reinterpret_cast<const pack<B, V>*>(b + c * V);
        const pack<C, V> pc = *reinterpret_cast<const pack<C, V>*>(c3 + c * V);
        pack<R, V> out;
#pragma unroll
        for (int j = 0; j < V; ++j) out.v[j] = f(pa.v[j], pb.v[j], pc.v[j]);
        *reinterpret_cast<pack<R, V>*>(r + c * V) = out;
    }
    const index_t t = chunks * V + first;
    if (t < n) r[t] = f(a[t], b[t], c3[t]);
}

// Elements per thread: mixt's rule for its own kernel (16 bytes of the widest operand), so that the two
// kernels differ in their code, not in their shape.
template <class R, class... T>
constexpr int hand_lanes() {
    return mixt::detail::gpu::lanes_for_size(std::max({sizeof(R), sizeof(T)...}));
}

// --- The rows ---------------------------------------------------------------------------------------------

__device__ __forceinline__ float hf(f16 x) { return static_cast<float>(x); }
__device__ __forceinline__ float bf(bf16 x) { return static_cast<float>(x); }

struct e1 {
    static constexpr const char* id = "E1";
    static constexpr const char* text = "i8 + f32";
    using inputs = std::tuple<std::int8_t, float>;
    using result = float;
    static auto expression(const auto& a, const auto& b) { return mixt::lazy(a) + b; }
    static auto eigen(const auto& a, const auto& b) { return a.template cast<float>() + b; }
    struct hand {
        __device__ float operator()(std::int8_t a, float b) const { return static_cast<float>(a) + b; }
    };
};
struct e2 {
    static constexpr const char* id = "E2";
    static constexpr const char* text = "u8 * f32 + f32";
    using inputs = std::tuple<std::uint8_t, float, float>;
    using result = float;
    static auto expression(const auto& a, const auto& b, const auto& c) { return mixt::lazy(a) * b + c; }
    static auto eigen(const auto& a, const auto& b, const auto& c) { return a.template cast<float>() * b + c; }
    struct hand {
        __device__ float operator()(std::uint8_t a, float b, float c) const { return static_cast<float>(a) * b + c; }
    };
};
struct e3 {
    static constexpr const char* id = "E3";
    static constexpr const char* text = "i8 + f16 * f32";
    using inputs = std::tuple<std::int8_t, f16, float>;
    using result = float;
    static auto expression(const auto& a, const auto& b, const auto& c) { return mixt::lazy(a) + mixt::lazy(b) * c; }
    static auto eigen(const auto& a, const auto& b, const auto& c) { return a.template cast<float>() + b.template cast<float>() * c; }
    struct hand {
        __device__ float operator()(std::int8_t a, f16 b, float c) const { return static_cast<float>(a) + hf(b) * c; }
    };
};
struct e4 {
    static constexpr const char* id = "E4";
    static constexpr const char* text = "bf16 * bf16 + f32";
    using inputs = std::tuple<bf16, bf16, float>;
    using result = float;
    static auto expression(const auto& a, const auto& b, const auto& c) { return mixt::lazy(a) * b + c; }
    static auto eigen(const auto& a, const auto& b, const auto& c) { return (a * b).template cast<float>() + c; }
    struct hand {
        __device__ float operator()(bf16 a, bf16 b, float c) const { return bf(static_cast<bf16>(bf(a) * bf(b))) + c; }
    };
};
struct e5 {
    static constexpr const char* id = "E5";
    static constexpr const char* text = "f16 + f16";
    using inputs = std::tuple<f16, f16>;
    using result = f16;
    static auto expression(const auto& a, const auto& b) { return mixt::lazy(a) + b; }
    static auto eigen(const auto& a, const auto& b) { return a + b; }
    struct hand {
        __device__ f16 operator()(f16 a, f16 b) const { return static_cast<f16>(hf(a) + hf(b)); }
    };
};
struct e6 {
    static constexpr const char* id = "E6";
    static constexpr const char* text = "i32 + f64";
    using inputs = std::tuple<std::int32_t, double>;
    using result = double;
    static auto expression(const auto& a, const auto& b) { return mixt::lazy(a) + b; }
    static auto eigen(const auto& a, const auto& b) { return a.template cast<double>() + b; }
    struct hand {
        __device__ double operator()(std::int32_t a, double b) const { return static_cast<double>(a) + b; }
    };
};
struct e7 {
    static constexpr const char* id = "E7";
    static constexpr const char* text = "f32 * 0.5 + i16";
    using inputs = std::tuple<float, std::int16_t>;
    using result = float;
    static auto expression(const auto& a, const auto& b) { return mixt::lazy(a) * 0.5 + b; }
    static auto eigen(const auto& a, const auto& b) { return a * 0.5f + b.template cast<float>(); }
    struct hand {
        __device__ float operator()(float a, std::int16_t b) const { return a * 0.5f + static_cast<float>(b); }
    };
};
struct e8 {
    static constexpr const char* id = "E8";
    static constexpr const char* text = "u8 + i8";
    using inputs = std::tuple<std::uint8_t, std::int8_t>;
    using result = std::int16_t;
    static auto expression(const auto& a, const auto& b) { return mixt::lazy(a) + b; }
    static auto eigen(const auto& a, const auto& b) { return a.template cast<std::int16_t>() + b.template cast<std::int16_t>(); }
    struct hand {
        __device__ std::int16_t operator()(std::uint8_t a, std::int8_t b) const { return static_cast<std::int16_t>(a + b); }
    };
};
struct e9 {
    static constexpr const char* id = "E9";
    static constexpr const char* text = "where(f32 > 0, f16, bf16)";
    using inputs = std::tuple<float, f16, bf16>;
    using result = float;
    static auto expression(const auto& a, const auto& b, const auto& c) { return mixt::where(mixt::lazy(a) > 0, b, c); }
    static auto eigen(const auto& a, const auto& b, const auto& c) {
        return (a > a.constant(0.0f)).select(b.template cast<float>(), c.template cast<float>());
    }
    struct hand {
        __device__ float operator()(float a, f16 b, bf16 c) const { return a > 0.0f ? hf(b) : bf(c); }
    };
};
struct e10 {
    static constexpr const char* id = "E10";
    static constexpr const char* text = "exp(f16) * bf16";
    using inputs = std::tuple<f16, bf16>;
    using result = float;
    static auto expression(const auto& a, const auto& b) { return mixt::exp(mixt::lazy(a)) * b; }
    static auto eigen(const auto& a, const auto& b) { return a.exp().template cast<float>() * b.template cast<float>(); }
    struct hand {
        __device__ float operator()(f16 a, bf16 b) const { return hf(static_cast<f16>(::expf(hf(a)))) * bf(b); }
    };
};
struct e11 {
    static constexpr const char* id = "E11";
    static constexpr const char* text = "c64 * f32 + c128";
    using inputs = std::tuple<c64, float, c128>;
    using result = c128;
    static auto expression(const auto& a, const auto& b, const auto& c) { return mixt::lazy(a) * b + c; }
    static auto eigen(const auto& a, const auto& b, const auto& c) {
        return (a * b.template cast<c64>()).template cast<c128>() + c;
    }
    struct hand {
        __device__ c128 operator()(c64 a, float b, c128 c) const {
            return c128(static_cast<double>(a.real() * b) + c.real(), static_cast<double>(a.imag() * b) + c.imag());
        }
    };
};
struct e12 {
    static constexpr const char* id = "E12";
    static constexpr const char* text = "i64 + u32";
    using inputs = std::tuple<std::int64_t, std::uint32_t>;
    using result = std::int64_t;
    static auto expression(const auto& a, const auto& b) { return mixt::lazy(a) + b; }
    static auto eigen(const auto& a, const auto& b) { return a + b.template cast<std::int64_t>(); }
    struct hand {
        __device__ std::int64_t operator()(std::int64_t a, std::uint32_t b) const { return a + static_cast<std::int64_t>(b); }
    };
};

// --- Comparing and timing ---------------------------------------------------------------------------------

template <class T>
double as_double(const T& x) {
    if constexpr (mixt::detail::is_complex_v<T>) return std::abs(c128(x.real(), x.imag()));
    else return static_cast<double>(x);
}

template <class T>
bool is_nan_value(const T& x) {
    if constexpr (mixt::detail::is_complex_v<T>) return std::isnan(x.real()) || std::isnan(x.imag());
    else if constexpr (std::is_integral_v<T>) return false;
    else return std::isnan(static_cast<double>(x));
}

template <class T>
bool same_bits(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Elements of `got` that differ from `want`: bit for bit, NaN matching NaN; within `rel` relatively if rel > 0.
template <class T>
index_t mismatches(const std::vector<T>& got, const std::vector<T>& want, double rel) {
    index_t bad = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (is_nan_value(got[i]) && is_nan_value(want[i])) continue;
        if (same_bits(got[i], want[i])) continue;
        if (rel > 0) {
            if constexpr (mixt::detail::is_complex_v<T>) {
                const double d = std::abs(c128(got[i].real() - want[i].real(), got[i].imag() - want[i].imag()));
                if (d <= rel * std::abs(c128(want[i].real(), want[i].imag()))) continue;
            } else {
                // One f16 ulp of exp either side (E10): relative, with an absolute floor for subnormal f16 values
                // (times a bf16 of at most 25 here), and exp's overflow boundary (65504 or inf) either way.
                const double g = as_double(got[i]), w = as_double(want[i]);
                if (g == w || std::abs(g - w) <= rel * std::abs(w) + 0x1p-18) continue;
                if (std::isinf(g) != std::isinf(w)) continue;
            }
        }
        ++bad;
    }
    return bad;
}

/// Median seconds per call of f over `rounds` rounds of `reps` calls, timed with CUDA events on the stream.
double time_on(cudaStream_t stream, const std::function<void()>& f, int rounds, int reps) {
    cudaEvent_t start, stop;
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
    f(); // warm up
    check_cuda(cudaStreamSynchronize(stream), "warm-up");
    std::vector<double> t;
    for (int r = 0; r < rounds; ++r) {
        check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
        for (int k = 0; k < reps; ++k) f();
        check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
        check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        t.push_back(static_cast<double>(ms) * 1e-3 / reps);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct row_result {
    std::string id, text;
    double mixt = 0, eigen = 0, hand = 0, copy = 0; // GB/s
    std::string notes;
    bool mixt_ok = true;
};

template <class T>
index_t elements(index_t n) { // one per input type: builds the tuple of device arrays in place
    return n;
}

template <class X>
row_result run_row(index_t n, const Eigen::GpuDevice& device, int rounds, int reps) {
    using R = typename X::result;
    return [&]<class... T>(std::tuple<T...>*) {
        row_result out;
        out.id = X::id;
        out.text = X::text;
        const auto host = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::tuple<std::vector<T>...>{make<T>(n, I + 1)...}; // seeds 1, 2, 3
        }(std::index_sequence_for<T...>{});
        // The CPU's result: mixt::eval on the DefaultDevice.
        std::vector<R> want(static_cast<std::size_t>(n));
        std::apply([&](const auto&... h) {
            dmap<R> w(want.data(), n);
            mixt::assign(w, X::expression(cmap<T>(h.data(), n)...));
        }, host);
        std::tuple<device_array<T>...> dev(elements<T>(n)...);
        [&]<std::size_t... I>(std::index_sequence<I...>) { (std::get<I>(dev).upload(std::get<I>(host)), ...); }(std::index_sequence_for<T...>{});
        device_array<R> r(n), copy_src(n);
        const double bytes = static_cast<double>(n) * static_cast<double>((sizeof(T) + ... + sizeof(R)));
        const auto maps = std::apply([&](const auto&... d) { return std::make_tuple(d.view()...); }, dev);
        auto run_mixt = [&] { std::apply([&](const auto&... m) { mixt::assign(r.map(), X::expression(m...), device); }, maps); };
        auto run_eigen = [&] { std::apply([&](const auto&... m) { r.map().device(device) = X::eigen(m...); }, maps); };
        constexpr int V = hand_lanes<R, T...>();
        const unsigned blocks = mixt::detail::gpu::blocks_for(n / V, 256); // one pack per thread, as mixt
        auto run_hand = [&] {
            std::apply([&](const auto&... d) { hand_kernel<V><<<blocks, 256, 0, device.stream()>>>(r.p, n, typename X::hand{}, d.p...); }, dev);
        };
        // E10's eigen_cast and hand kernels round CUDA's f32 expf to f16: within one f16 ulp of exp.
        const double rel = std::string_view(X::id) == "E10" ? 0x1p-9 : 1e-6;
        // Correctness first: mixt exactly (under the NaN contract; f16 functions are correctly rounded on
        // every device), the others reported.
        run_mixt();
        check_cuda(cudaStreamSynchronize(device.stream()), "mixt");
        const index_t bad = mismatches(r.download(), want, 0.0);
        if (bad != 0) {
            out.mixt_ok = false;
            out.notes += "mixt WRONG in " + std::to_string(bad) + " elements; ";
        }
        run_eigen();
        check_cuda(cudaStreamSynchronize(device.stream()), "eigen_cast");
        if (const index_t e = mismatches(r.download(), want, rel); e != 0)
            out.notes += "eigen_cast differs in " + std::to_string(e) + "; ";
        run_hand();
        check_cuda(cudaStreamSynchronize(device.stream()), "hand");
        if (const index_t e = mismatches(r.download(), want, rel); e != 0)
            out.notes += "hand differs in " + std::to_string(e) + "; ";
        const cudaStream_t stream = device.stream();
        out.mixt = bytes / time_on(stream, run_mixt, rounds, reps) * 1e-9;
        out.eigen = bytes / time_on(stream, run_eigen, rounds, reps) * 1e-9;
        out.hand = bytes / time_on(stream, run_hand, rounds, reps) * 1e-9;
        const double copy_s = time_on(stream, [&] {
            check_cuda(cudaMemcpyAsync(r.p, copy_src.p, r.bytes(), cudaMemcpyDeviceToDevice, stream), "copy");
        }, rounds, reps);
        out.copy = 2.0 * static_cast<double>(r.bytes()) / copy_s * 1e-9;
        return out;
    }(static_cast<typename X::inputs*>(nullptr));
}

// --- B1-B4 and R1-R6: broadcasting and reductions at the suite's shapes ----------------------------------

// Finite values of every magnitude (a sum of a NaN would check nothing).
template <class T>
std::vector<T> make_finite(index_t n, std::uint64_t seed) {
    std::vector<T> v = make<T>(n, seed);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
        for (index_t i = 0; i < n; ++i)
            if (!std::isfinite(static_cast<float>(v[static_cast<std::size_t>(i)]))) v[static_cast<std::size_t>(i)] = T(0.5f);
    return v;
}

template <class T, int R>
using rm_tensor = Eigen::Tensor<T, R, Eigen::RowMajor>;
template <class T, int R>
using rm_map = Eigen::TensorMap<Eigen::Tensor<T, R, Eigen::RowMajor>>;
template <class T, int R>
using rm_cmap = Eigen::TensorMap<const Eigen::Tensor<const T, R, Eigen::RowMajor>>;
template <class T, int R>
rm_tensor<T, R> shaped(std::uint64_t seed, const Eigen::DSizes<index_t, R>& dims) {
    rm_tensor<T, R> t(dims);
    const auto v = make_finite<T>(t.size(), seed);
    std::copy(v.begin(), v.end(), t.data());
    return t;
}
using d1 = Eigen::DSizes<index_t, 1>;
using d2 = Eigen::DSizes<index_t, 2>;
using d3 = Eigen::DSizes<index_t, 3>;
using ax1 = Eigen::array<index_t, 1>;
using ax2 = Eigen::array<index_t, 2>;
using ax3 = Eigen::array<index_t, 3>;

struct b1 {
    static constexpr const char* id = "B1";
    static constexpr const char* text = "(u8 / 255 - mean) / std, [1080, 1920, 3] and [3]";
    static auto inputs() {
        auto mean = shaped<float, 1>(3, d1(3)), sd = shaped<float, 1>(4, d1(3));
        for (int c = 0; c < 3; ++c) sd(c) = 0.25f + 0.125f * static_cast<float>(c);
        return std::make_tuple(shaped<std::uint8_t, 3>(2, d3(1080, 1920, 3)), mean, sd);
    }
    static auto expression(const auto& img, const auto& mean, const auto& sd) { return (mixt::lazy(img) / 255 - mean) / sd; }
    static auto eigen(const auto& img, const auto& mean, const auto& sd) {
        const ax3 b{1080, 1920, 1};
        return (img.template cast<float>() / 255.0f - mean.reshape(ax3{1, 1, 3}).broadcast(b)) / sd.reshape(ax3{1, 1, 3}).broadcast(b);
    }
};
struct b2 {
    static constexpr const char* id = "B2";
    static constexpr const char* text = "f32 + f16, [4096, 4096] + [4096]";
    static auto inputs() { return std::make_tuple(shaped<float, 2>(5, d2(4096, 4096)), shaped<f16, 1>(6, d1(4096))); }
    static auto expression(const auto& a, const auto& b) { return mixt::lazy(a) + b; }
    static auto eigen(const auto& a, const auto& b) { return a + b.template cast<float>().reshape(ax2{1, 4096}).broadcast(ax2{4096, 1}); }
};
struct b3 {
    static constexpr const char* id = "B3";
    static constexpr const char* text = "i8 * f16, [4096, 4096] * [4096, 1]";
    static auto inputs() { return std::make_tuple(shaped<std::int8_t, 2>(7, d2(4096, 4096)), shaped<f16, 2>(8, d2(4096, 1))); }
    static auto expression(const auto& a, const auto& b) { return mixt::lazy(a) * b; }
    static auto eigen(const auto& a, const auto& b) { return a.template cast<f16>() * b.broadcast(ax2{1, 4096}); }
};
struct b4 {
    static constexpr const char* id = "B4";
    static constexpr const char* text = "f32 * bf16, [4096, 1] * [1, 4096]";
    static auto inputs() { return std::make_tuple(shaped<float, 2>(9, d2(4096, 1)), shaped<bf16, 2>(10, d2(1, 4096))); }
    static auto expression(const auto& a, const auto& b) { return mixt::lazy(a) * b; }
    static auto eigen(const auto& a, const auto& b) { return a.broadcast(ax2{1, 4096}) * b.template cast<float>().broadcast(ax2{4096, 1}); }
};
struct r1 {
    static constexpr const char* id = "R1";
    static constexpr const char* text = "sum(f16 * bf16), 16M";
    static auto inputs() { return std::make_tuple(shaped<f16, 1>(11, d1(16777216)), shaped<bf16, 1>(12, d1(16777216))); }
    static auto expression(const auto& a, const auto& b) { return mixt::sum(mixt::lazy(a) * b); }
    static auto eigen(const auto& a, const auto& b) { return (a.template cast<float>() * b.template cast<float>()).sum(); }
};
struct r2 {
    static constexpr const char* id = "R2";
    static constexpr const char* text = "mean(u8 image, axes {0, 1}), [1080, 1920, 3]";
    static auto inputs() { return std::make_tuple(shaped<std::uint8_t, 3>(13, d3(1080, 1920, 3))); }
    static auto expression(const auto& img) { return mixt::mean(img, {0, 1}); }
    static auto eigen(const auto& img) { return img.template cast<float>().mean(ax2{0, 1}); }
};
struct r3 {
    static constexpr const char* id = "R3";
    static constexpr const char* text = "sum(i8 * f16 scale, axis 1), [4096, 4096] * [4096, 1]";
    static auto inputs() { return std::make_tuple(shaped<std::int8_t, 2>(14, d2(4096, 4096)), shaped<f16, 2>(15, d2(4096, 1))); }
    static auto expression(const auto& q, const auto& s) { return mixt::sum(mixt::lazy(q) * s, 1); }
    static auto eigen(const auto& q, const auto& s) {
        return (q.template cast<float>() * s.template cast<float>().broadcast(ax2{1, 4096})).sum(ax1{1}).template cast<f16>();
    }
};
struct r4 {
    static constexpr const char* id = "R4";
    static constexpr const char* text = "sum(W_i8 * s_f16 * x_f32, axis 1), [4096, 4096], [4096, 1], [1, 4096]";
    static auto inputs() {
        return std::make_tuple(shaped<std::int8_t, 2>(16, d2(4096, 4096)), shaped<f16, 2>(17, d2(4096, 1)), shaped<float, 2>(18, d2(1, 4096)));
    }
    static auto expression(const auto& w, const auto& s, const auto& x) { return mixt::sum(mixt::lazy(w) * s * x, 1); }
    static auto eigen(const auto& w, const auto& s, const auto& x) {
        return (w.template cast<float>() * s.template cast<float>().broadcast(ax2{1, 4096}) * x.broadcast(ax2{4096, 1})).sum(ax1{1});
    }
};
struct r5 {
    static constexpr const char* id = "R5";
    static constexpr const char* text = "max(abs(f32 - bf16)), 16M";
    static auto inputs() { return std::make_tuple(shaped<float, 1>(19, d1(16777216)), shaped<bf16, 1>(20, d1(16777216))); }
    static auto expression(const auto& a, const auto& b) { return mixt::max(mixt::abs(mixt::lazy(a) - b)); }
    static auto eigen(const auto& a, const auto& b) { return (a - b.template cast<float>()).abs().maximum(); }
};
struct r6 {
    static constexpr const char* id = "R6";
    static constexpr const char* text = "argmax(f16 logits, axis 1), [4096, 4096]";
    static auto inputs() { return std::make_tuple(shaped<f16, 2>(21, d2(4096, 4096))); }
    static auto expression(const auto& x) { return mixt::argmax(x, 1); }
    static auto eigen(const auto& x) { return x.template cast<float>().argmax(1); }
};

/// A row of fixed shapes: mixt's result against the CPU's exactly (the NaN contract), Eigen's (where its GPU
/// executor takes the expression) reported where it differs by more than 1e-3 relative; GB/s of every input
/// element once and the result once, and of a device-to-device copy of the largest input.
template <class X>
row_result run_shaped(const Eigen::GpuDevice& device, int rounds, int reps) {
    row_result out;
    out.id = X::id;
    out.text = X::text;
    const auto host = X::inputs();
    const auto want = std::apply([](const auto&... h) { return mixt::eval(X::expression(h...)); }, host);
    using W = std::remove_cvref_t<decltype(want)>;
    using R = typename W::Scalar;
    constexpr int RO = W::NumDimensions;
    const auto dev = std::apply([](const auto&... h) {
        return std::make_tuple([&] {
            auto d = std::make_unique<device_array<typename std::remove_cvref_t<decltype(h)>::Scalar>>(h.size());
            d->upload(h.data());
            return d;
        }()...);
    }, host);
    const auto maps = [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::make_tuple(rm_cmap<typename std::remove_cvref_t<decltype(std::get<I>(host))>::Scalar,
                                       std::remove_cvref_t<decltype(std::get<I>(host))>::NumDimensions>(
            std::get<I>(dev)->p, std::get<I>(host).dimensions())...);
    }(std::make_index_sequence<std::tuple_size_v<std::remove_cvref_t<decltype(host)>>>{});
    device_array<R> r(want.size());
    rm_map<R, RO> result(r.p, want.dimensions());
    double bytes = static_cast<double>(want.size()) * sizeof(R), largest = 0;
    std::apply([&](const auto&... h) { ((bytes += static_cast<double>(h.size()) * sizeof(typename std::remove_cvref_t<decltype(h)>::Scalar)), ...); }, host);
    std::apply([&](const auto&... h) { ((largest = std::max(largest, static_cast<double>(h.size()) * sizeof(typename std::remove_cvref_t<decltype(h)>::Scalar))), ...); }, host);
    const cudaStream_t stream = device.stream();
    const std::vector<R> want_v(want.data(), want.data() + want.size());
    auto run_mixt = [&] { std::apply([&](const auto&... m) { mixt::assign(result, X::expression(m...), device); }, maps); };
    run_mixt();
    check_cuda(cudaStreamSynchronize(stream), "mixt");
    if (const index_t bad = mismatches(r.download(), want_v, 0.0); bad != 0) {
        out.mixt_ok = false;
        out.notes += "mixt WRONG in " + std::to_string(bad) + " elements; ";
    }
    out.mixt = bytes / time_on(stream, run_mixt, rounds, reps) * 1e-9;
    auto run_eigen = [&] {
        std::apply([&](const auto&... m) {
            if constexpr (std::is_same_v<R, std::int64_t>) // argmax: Eigen's index type
                result.device(device) = X::eigen(m...).template cast<std::int64_t>();
            else
                result.device(device) = X::eigen(m...);
        }, maps);
    };
    run_eigen();
    check_cuda(cudaStreamSynchronize(stream), "eigen_cast");
    if (const index_t e = mismatches(r.download(), want_v, 1e-3); e != 0) out.notes += "eigen_cast differs in " + std::to_string(e) + "; ";
    out.eigen = bytes / time_on(stream, run_eigen, rounds, reps) * 1e-9;
    device_array<unsigned char> a(static_cast<index_t>(largest)), b(static_cast<index_t>(largest));
    const double copy_s = time_on(stream, [&] {
        check_cuda(cudaMemcpyAsync(a.p, b.p, static_cast<std::size_t>(largest), cudaMemcpyDeviceToDevice, stream), "copy");
    }, rounds, reps);
    out.copy = 2.0 * largest / copy_s * 1e-9;
    return out;
}

} // namespace

int main(int argc, char** argv) {
    std::string out_path;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--out" && i + 1 < argc) out_path = argv[++i];
        else if (a == "--help") {
            std::cout << "mixt-gpu-bench [--out FILE.md]: E1-E12 on the GPU (MIXT_GPU_BENCH_N elements, default 2^26)\n";
            return 0;
        }
    }
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        std::cout << "GPU table skipped: no CUDA device ("
                  << (err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0") << ")\n";
        return 0;
    }
    index_t n = index_t{1} << 26;
    if (const char* s = std::getenv("MIXT_GPU_BENCH_N")) n = std::atoll(s);
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    Eigen::GpuStreamDevice stream;
    const Eigen::GpuDevice device(&stream);
    const int rounds = 5, reps = 10;
    std::vector<row_result> rows;
    rows.push_back(run_row<e1>(n, device, rounds, reps));
    rows.push_back(run_row<e2>(n, device, rounds, reps));
    rows.push_back(run_row<e3>(n, device, rounds, reps));
    rows.push_back(run_row<e4>(n, device, rounds, reps));
    rows.push_back(run_row<e5>(n, device, rounds, reps));
    rows.push_back(run_row<e6>(n, device, rounds, reps));
    rows.push_back(run_row<e7>(n, device, rounds, reps));
    rows.push_back(run_row<e8>(n, device, rounds, reps));
    rows.push_back(run_row<e9>(n, device, rounds, reps));
    rows.push_back(run_row<e10>(n, device, rounds, reps));
    rows.push_back(run_row<e11>(n, device, rounds, reps));
    rows.push_back(run_row<e12>(n, device, rounds, reps));
    std::vector<row_result> shaped_rows;
    shaped_rows.push_back(run_shaped<b1>(device, rounds, reps));
    shaped_rows.push_back(run_shaped<b2>(device, rounds, reps));
    shaped_rows.push_back(run_shaped<b3>(device, rounds, reps));
    shaped_rows.push_back(run_shaped<b4>(device, rounds, reps));
    shaped_rows.push_back(run_shaped<r1>(device, rounds, reps));
    shaped_rows.push_back(run_shaped<r2>(device, rounds, reps));
    shaped_rows.push_back(run_shaped<r3>(device, rounds, reps));
    shaped_rows.push_back(run_shaped<r4>(device, rounds, reps));
    shaped_rows.push_back(run_shaped<r5>(device, rounds, reps));
    shaped_rows.push_back(run_shaped<r6>(device, rounds, reps));

    std::ostringstream t;
    t << "GPU: " << prop.name << ", " << n << " elements, GB/s (inputs once + result once), median of " << rounds
      << " rounds of " << reps << " calls\n\n";
    t << "| id | expression | mixt | eigen_cast | hand | copy | mixt/copy | mixt/eigen | mixt/hand | notes |\n";
    t << "|---|---|---|---|---|---|---|---|---|---|\n";
    bool ok = true;
    char buf[256];
    for (const auto& r : rows) {
        std::snprintf(buf, sizeof buf, "| %s | `%s` | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %s |\n", r.id.c_str(),
                      r.text.c_str(), r.mixt, r.eigen, r.hand, r.copy, r.mixt / r.copy, r.mixt / r.eigen, r.mixt / r.hand,
                      r.notes.empty() ? "" : r.notes.c_str());
        t << buf;
        ok = ok && r.mixt_ok;
    }
    t << "\nB1-B4 (broadcasting) and R1-R6 (reductions) at the suite's shapes: GB/s of every input element once and "
         "the result once; copy: a device-to-device copy of the largest input\n\n";
    t << "| id | expression | mixt | eigen_cast | copy | mixt/copy | mixt/eigen | notes |\n";
    t << "|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : shaped_rows) {
        std::snprintf(buf, sizeof buf, "| %s | `%s` | %.0f | %.0f | %.0f | %.2f | %.2f | %s |\n", r.id.c_str(), r.text.c_str(),
                      r.mixt, r.eigen, r.copy, r.mixt / r.copy, r.mixt / r.eigen, r.notes.empty() ? "" : r.notes.c_str());
        t << buf;
        ok = ok && r.mixt_ok;
    }
    std::cout << t.str();
    if (!out_path.empty()) std::ofstream(out_path) << t.str();
    return ok ? 0 : 1;
}
