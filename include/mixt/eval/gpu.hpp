#ifndef MIXT_EVAL_GPU_HPP
#define MIXT_EVAL_GPU_HPP

// mixt's own kernel for `assign(dst, e, gpu_device)` (an Eigen::GpuDevice, on its stream), where every leaf
// and the destination are arrays in memory (fusable_v). Compiled only by nvcc with EIGEN_USE_GPU defined;
// elsewhere this header declares that no device is a GPU.
//
// The kernel reads the same data as the CPU's strided pass: the iteration space (space.hpp: dimensions in
// memory order, merged where every operand allows, one stride per operand and dimension, 0 on a broadcast
// dimension) and the expression's kernel tree (eval/kernel.hpp). From them `binder` makes a tree of device
// nodes holding pointers, strides and converted literal values; each node computes its element with the per-element
// functors of expr/functors.hpp, so the GPU's results are the CPU's (under the NaN contract; products are
// rounded on their own, __fmul_rn, whatever -fmad says). Three kernels, each launched with one item per
// thread (grid-stride loops only beyond CUDA's largest grid):
//   - flat_vector_kernel, where every operand is one contiguous run and every pointer is 16-byte aligned:
//     each thread loads V consecutive elements of each leaf, V = 16 bytes of the widest operand (one 16-byte
//     load; a narrower leaf's V elements in one narrower load), computes them, and stores V results the same
//     way; the n % V last elements one per thread;
//   - flat_kernel, the same one element per thread (misaligned pointers);
//   - strided_kernel, for broadcast and strided operands or destinations: the element's index in the space
//     is split into one index per dimension, and each operand's offset is its strides' dot product with it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "mixt/eval/device.hpp"
#include "mixt/eval/kernel.hpp"
#include "mixt/eval/lower.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/functors.hpp"

namespace mixt::detail {

/// Whether assign runs mixt's GPU kernel on a Device: an Eigen::GpuDevice, where nvcc compiles the program
/// with EIGEN_USE_GPU.
// The device nodes below are host functions too (and compile without nvcc), so that a test can run the GPU's
// per-element and reduction logic on the CPU (test/eval/gpu_reduce_test.cpp); the kernels need nvcc.
#if defined(__CUDACC__)
#define MIXT_GPU_FUNC __host__ __device__ __forceinline__
#else
#define MIXT_GPU_FUNC inline
#endif
#if defined(__CUDA_ARCH__) // nvcc's device pass (its host pass and host compilers warn of an unknown pragma)
#define MIXT_GPU_UNROLL _Pragma("unroll")
#else
#define MIXT_GPU_UNROLL
#endif

namespace gpu {

#if defined(__CUDACC__)
using unit16 = ::uint4;
using unit8 = ::uint2;
#else
struct alignas(16) unit16 {
    unsigned v[4];
};
struct alignas(8) unit8 {
    unsigned v[2];
};
#endif

/// V values of T, in registers.
template <class T, int V>
struct lanes {
    T v[V];
};

/// The element a kernel computes: at flat index i of every operand (flat kernels), or at index idx[d] along
/// each of the space's `rank` dimensions (strided_kernel).
struct flat_at {
    index_t i;
};
template <int N>
struct grid_at {
    index_t idx[N];
    int rank;
};

// The widest unsigned type of at most 16 bytes that divides `bytes`.
template <int Bytes>
using load_unit_t = std::conditional_t<
    Bytes % 16 == 0, unit16,
    std::conditional_t<Bytes % 8 == 0, unit8,
                       std::conditional_t<Bytes % 4 == 0, unsigned, std::conditional_t<Bytes % 2 == 0, unsigned short, unsigned char>>>>;

/// The V elements at p (aligned to the load unit), in as few loads as the unit allows.
template <int V, class T>
MIXT_GPU_FUNC lanes<T, V> load_lanes(const T* p) {
    constexpr int bytes = V * static_cast<int>(sizeof(T));
    using U = load_unit_t<bytes>;
    constexpr int units = bytes / static_cast<int>(sizeof(U));
    U u[units];
MIXT_GPU_UNROLL
    for (int k = 0; k < units; ++k) u[k] = reinterpret_cast<const U*>(p)[k];
    lanes<T, V> r;
    memcpy(static_cast<void*>(r.v), u, bytes);
    return r;
}
template <int V, class T>
MIXT_GPU_FUNC void store_lanes(T* p, const lanes<T, V>& r) {
    constexpr int bytes = V * static_cast<int>(sizeof(T));
    using U = load_unit_t<bytes>;
    constexpr int units = bytes / static_cast<int>(sizeof(U));
    U u[units];
    memcpy(u, static_cast<const void*>(r.v), bytes);
MIXT_GPU_UNROLL
    for (int k = 0; k < units; ++k) reinterpret_cast<U*>(p)[k] = u[k];
}

/// An array operand: its elements' address and its stride along each dimension of the space (in elements).
template <class T, int N>
struct leaf_node {
    using value_type = T;
    const T* p;
    index_t stride[N];
    MIXT_GPU_FUNC T at(flat_at a) const { return p[a.i]; }
    MIXT_GPU_FUNC T at(const grid_at<N>& g) const {
        index_t offset = 0;
        for (int d = 0; d < g.rank; ++d) offset += g.idx[d] * stride[d];
        return p[offset];
    }
    template <int V>
    MIXT_GPU_FUNC lanes<T, V> lanes_at(index_t i) const { return load_lanes<V>(p + i); }
};

/// A literal, converted to its operand type on the host.
template <class T>
struct const_node {
    using value_type = T;
    T s;
    template <class At>
    MIXT_GPU_FUNC T at(const At&) const { return s; }
    template <int V>
    MIXT_GPU_FUNC lanes<T, V> lanes_at(index_t) const {
        lanes<T, V> r;
MIXT_GPU_UNROLL
        for (int k = 0; k < V; ++k) r.v[k] = s;
        return r;
    }
};

/// A node's value converted to S (mixt::convert: the CPU's conversion, bit for bit).
template <class S, class K>
struct convert_node {
    using value_type = S;
    K k;
    template <class At>
    MIXT_GPU_FUNC S at(const At& a) const { return mixt::convert<S>(k.at(a)); }
    template <int V>
    MIXT_GPU_FUNC lanes<S, V> lanes_at(index_t i) const {
        const auto x = k.template lanes_at<V>(i);
        lanes<S, V> r;
MIXT_GPU_UNROLL
        for (int j = 0; j < V; ++j) r.v[j] = mixt::convert<S>(x.v[j]);
        return r;
    }
};

/// An operation of one, two or three operands computing R (expr/functors.hpp).
template <class Fn, class R, class... Ks>
struct op_node;
template <class Fn, class R, class K0>
struct op_node<Fn, R, K0> {
    using value_type = R;
    K0 k0;
    template <class At>
    MIXT_GPU_FUNC R at(const At& a) const { return static_cast<R>(Fn{}(k0.at(a))); }
    template <int V>
    MIXT_GPU_FUNC lanes<R, V> lanes_at(index_t i) const {
        const auto x = k0.template lanes_at<V>(i);
        lanes<R, V> r;
MIXT_GPU_UNROLL
        for (int j = 0; j < V; ++j) r.v[j] = static_cast<R>(Fn{}(x.v[j]));
        return r;
    }
};
template <class Fn, class R, class K0, class K1>
struct op_node<Fn, R, K0, K1> {
    using value_type = R;
    K0 k0;
    K1 k1;
    template <class At>
    MIXT_GPU_FUNC R at(const At& a) const { return static_cast<R>(Fn{}(k0.at(a), k1.at(a))); }
    template <int V>
    MIXT_GPU_FUNC lanes<R, V> lanes_at(index_t i) const {
        const auto x = k0.template lanes_at<V>(i);
        const auto y = k1.template lanes_at<V>(i);
        lanes<R, V> r;
MIXT_GPU_UNROLL
        for (int j = 0; j < V; ++j) r.v[j] = static_cast<R>(Fn{}(x.v[j], y.v[j]));
        return r;
    }
};
template <class Fn, class R, class K0, class K1, class K2>
struct op_node<Fn, R, K0, K1, K2> {
    using value_type = R;
    K0 k0;
    K1 k1;
    K2 k2;
    template <class At>
    MIXT_GPU_FUNC R at(const At& a) const { return static_cast<R>(Fn{}(k0.at(a), k1.at(a), k2.at(a))); }
    template <int V>
    MIXT_GPU_FUNC lanes<R, V> lanes_at(index_t i) const {
        const auto x = k0.template lanes_at<V>(i);
        const auto y = k1.template lanes_at<V>(i);
        const auto z = k2.template lanes_at<V>(i);
        lanes<R, V> r;
MIXT_GPU_UNROLL
        for (int j = 0; j < V; ++j) r.v[j] = static_cast<R>(Fn{}(x.v[j], y.v[j], z.v[j]));
        return r;
    }
};

/// An array compared with a literal (literal_compare_functor: in the join where the literal fits it, else by
/// exact value).
template <class F, class K>
struct compare_node {
    using value_type = bool;
    K k;
    F f;
    template <class At>
    MIXT_GPU_FUNC bool at(const At& a) const { return f(k.at(a)); }
    template <int V>
    MIXT_GPU_FUNC lanes<bool, V> lanes_at(index_t i) const {
        const auto x = k.template lanes_at<V>(i);
        lanes<bool, V> r;
MIXT_GPU_UNROLL
        for (int j = 0; j < V; ++j) r.v[j] = f(x.v[j]);
        return r;
    }
};

/// The largest element size among a tree's array operands.
template <class K>
struct widest_leaf {
    static constexpr std::size_t value = 1;
};
template <class T, int N>
struct widest_leaf<leaf_node<T, N>> {
    static constexpr std::size_t value = sizeof(T);
};
template <class S, class K>
struct widest_leaf<convert_node<S, K>> : widest_leaf<K> {};
template <class F, class K>
struct widest_leaf<compare_node<F, K>> : widest_leaf<K> {};
template <class Fn, class R, class... Ks>
struct widest_leaf<op_node<Fn, R, Ks...>> {
    static constexpr std::size_t value = std::max({std::size_t{1}, widest_leaf<Ks>::value...});
};

/// Elements per thread of a kernel whose widest operand has `wide` bytes: 16 bytes of the widest (one 16-byte
/// access), at least one. Every access of a warp then covers one contiguous span of memory (a narrower operand
/// takes a narrower access: 4 bytes of i8 beside 16 of f32). (mixt-gpu-bench's hand kernels take the same.)
constexpr int lanes_for_size(std::size_t wide) {
    return wide >= 16 ? 1 : static_cast<int>(16 / wide);
}
/// Elements per thread of flat_vector_kernel writing D.
template <class D, class K>
constexpr int lanes_per_thread() {
    return lanes_for_size(std::max(sizeof(D), widest_leaf<K>::value));
}

/// The device nodes of a kernel tree (eval/kernel.hpp) over an iteration space of M operands (the destination
/// first, then the tree's arrays in order): each array gets its strides from the space.
template <int R, std::size_t M>
struct binder {
    static constexpr int N = static_cast<int>(iteration_space<R, M>::max_dims);
    const iteration_space<R, M>& space;
    std::size_t next = 1; // operand 0 is the destination

    template <class T>
    leaf_node<T, N> of(const ktree::array<T>& a) {
        leaf_node<T, N> k{a.p, {}};
        for (int d = 0; d < N; ++d) k.stride[d] = space.strides[next][static_cast<std::size_t>(d)];
        ++next;
        return k;
    }
    template <class T>
    const_node<T> of(const ktree::constant<T>& c) { return {c.value}; }
    template <class S, class K>
    auto of(const ktree::convert<S, K>& c) {
        auto k = of(c.k);
        return convert_node<S, decltype(k)>{k};
    }
    template <class F, class K>
    auto of(const ktree::compare<F, K>& c) {
        auto k = of(c.k);
        return compare_node<F, decltype(k)>{k, c.f};
    }
    template <class Fn, class Rt, class... Ks>
    auto of(const ktree::op<Fn, Rt, Ks...>& o) {
        static_assert(sizeof...(Ks) >= 1 && sizeof...(Ks) <= 3, "mixt: the GPU kernel takes operations of 1 to 3 operands");
        // Braced initialization: the operands are bound left to right, the order of the space's operands.
        return std::apply([&](const auto&... c) { return op_node<Fn, Rt, decltype(of(c))...>{of(c)...}; }, o.ks);
    }
};

} // namespace gpu

#if defined(EIGEN_USE_GPU) && defined(__CUDACC__)

namespace gpu {

template <class D, class K, int V>
__global__ void flat_vector_kernel(D* dst, K k, index_t chunks, index_t n) {
    const index_t first = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const index_t step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t c = first; c < chunks; c += step) store_lanes<V>(dst + c * V, k.template lanes_at<V>(c * V));
    const index_t t = chunks * V + first; // the last n % V elements
    if (t < n) dst[t] = k.at(flat_at{t});
}

template <class D, class K>
__global__ void flat_kernel(D* dst, K k, index_t n) {
    const index_t step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) dst[i] = k.at(flat_at{i});
}

/// The space as strided_kernel reads it: dimensions (memory order, outermost first) and the destination's strides.
template <int N>
struct space_desc {
    index_t dims[N];
    index_t dst_stride[N];
    int rank;
};

template <class D, class K, int N>
__global__ void strided_kernel(D* dst, K k, space_desc<N> s, index_t total) {
    const index_t step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
        grid_at<N> g;
        g.rank = s.rank;
        index_t rest = i, offset = 0;
        for (int d = s.rank - 1; d >= 0; --d) {
            g.idx[d] = rest % s.dims[d];
            rest /= s.dims[d];
            offset += g.idx[d] * s.dst_stride[d];
        }
        dst[offset] = k.at(g);
    }
}

[[noreturn]] inline void throw_launch_error(cudaError_t err) {
    throw std::runtime_error(std::string("mixt: assign: the GPU kernel did not launch: ") + cudaGetErrorString(err));
}

/// Blocks of `threads` for `work` items: one item per thread (a grid of that many blocks keeps more loads in
/// flight than a grid sized to the multiprocessors whose threads loop), within CUDA's limit on a grid.
inline unsigned blocks_for(index_t work, int threads) {
    const index_t needed = (work + threads - 1) / threads;
    return static_cast<unsigned>(std::clamp<index_t>(needed, 1, index_t{0x7fffffff}));
}

/// Runs `e` into the destination of the iteration space (operand 0, at dst) on the device's stream. The
/// launch is asynchronous, as Eigen's device assignments are: synchronize the device before reading dst.
template <class D, int R, std::size_t M, class E>
void run(D* dst, const iteration_space<R, M>& space, const E& e, const Eigen::GpuDevice& device) {
    constexpr int threads = 256;
    index_t total = 1;
    for (int d = 0; d < space.rank; ++d) total *= space.dims[static_cast<std::size_t>(d)];
    if (total == 0) return;
    const auto tree = make_kernel_tree<D>(e);
    static_assert(ktree::array_count_v<std::remove_const_t<decltype(tree)>> + 1 == M,
                  "mixt: the GPU kernel's arrays are the iteration space's operands");
    binder<R, M> b{space};
    const auto k = b.of(tree);
    using K = std::remove_const_t<decltype(k)>;
    (void)cudaGetLastError(); // an earlier, unrelated error would otherwise be reported as this launch's
    bool flat = true, aligned = reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
    for (std::size_t o = 0; o < M; ++o) flat = flat && space.flat(o);
    const auto views = leaf_views_of(e);
    std::apply([&](const auto&... v) { ((aligned = aligned && reinterpret_cast<std::uintptr_t>(v.data) % 16 == 0), ...); }, views);
    if (flat && aligned) {
        constexpr int V = lanes_per_thread<D, K>();
        const index_t chunks = total / V;
        flat_vector_kernel<D, K, V><<<blocks_for(chunks, threads), threads, 0, device.stream()>>>(
            dst, k, chunks, total);
    } else if (flat) {
        flat_kernel<D, K><<<blocks_for(total, threads), threads, 0, device.stream()>>>(dst, k, total);
    } else {
        constexpr int N = binder<R, M>::N;
        space_desc<N> s{};
        s.rank = space.rank;
        for (int d = 0; d < N; ++d) {
            s.dims[d] = space.dims[static_cast<std::size_t>(d)];
            s.dst_stride[d] = space.strides[0][static_cast<std::size_t>(d)];
        }
        strided_kernel<D, K, N><<<blocks_for(total, threads), threads, 0, device.stream()>>>(dst, k, s, total);
    }
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) throw_launch_error(err);
}

} // namespace gpu
#else
namespace gpu {
// Declared for assign's discarded branch; only nvcc with EIGEN_USE_GPU defines it.
template <class D, int R, std::size_t M, class E, class Device>
void run(D* dst, const iteration_space<R, M>& space, const E& e, const Device& device);
} // namespace gpu
#endif

} // namespace mixt::detail

#endif // MIXT_EVAL_GPU_HPP
