#ifndef MIXT_EVAL_GPU_REDUCE_HPP
#define MIXT_EVAL_GPU_REDUCE_HPP

// Reductions on an Eigen::GpuDevice (nvcc with EIGEN_USE_GPU): `assign(dst, e, gpu_device)` where e holds
// sum, max, argmax, ... of arrays in device memory. Each reduction follows the CPU's plan (eval/reduce.hpp,
// make_reduce_plan: output rows, a stream of the reduced axes then the columns per row, P lanes, blocks,
// super-blocks) and combines the same values in the same order, so its result is the CPU's bit for bit (under
// the NaN contract), whatever the GPU or the number of its threads. One pass over the operands' memory, in
// three kernels on the device's stream:
//   1. lanes_kernel, one thread per (output row, block, lane): lane p of a block folds stream elements
//      p, p + P, ... of the block in order, each computed by the expression's device nodes (gpu.hpp), and
//      writes the lane (consecutive threads read consecutive stream elements);
//   2. super_kernel, one thread per (row, super-block, column): each block's lanes of that column combined in
//      order (the CPU's end of a block), pushed onto a pairwise stack; the stack's result per super-block.
//      Where a row's stream is short (fewer than 4 elements per lane: a reduction over an axis of a few
//      elements), the lanes would take more memory than the operand; stream_super_kernel then computes each
//      column's lanes itself, block after block, in the same order, and kernel 1 and its buffer are skipped;
//   3. result_kernel, one thread per (row, column): the row's super-blocks pushed onto a pairwise stack, the
//      result converted to the reduction's dtype (mean divided, argmax's index) and stored.
// A reduction inside a larger expression (`x - max(x, 1)`) is evaluated first into device memory of its own,
// then the elementwise kernel runs over it; that memory is allocated and freed on the stream
// (cudaMallocAsync/cudaFreeAsync), so nothing waits for the GPU.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mixt/eval/gpu.hpp"
#include "mixt/eval/reduce_plan.hpp"

namespace mixt::detail {

/// For assign: `buffers` (device memory freed on the stream) and `materialize(e, device, buffers)` (e with its
/// reductions evaluated into them) for a GPU device; defined only where nvcc compiles with EIGEN_USE_GPU.
template <class Device>
struct gpu_reductions;

namespace gpu {

/// A pairwise stack of one column's partial results, in a thread's registers and local memory (the CPU's
/// pairwise_stack, one column).
template <class Op>
struct local_stack {
    using lane = typename Op::lane;
    lane entries[64];
    int levels[64];
    int size = 0;
    MIXT_GPU_FUNC void push(lane v) {
        int level = 0;
        while (size > 0 && levels[size - 1] == level) {
            v = Op::combine(entries[size - 1], v);
            --size;
            ++level;
        }
        entries[size] = v;
        levels[size++] = level;
    }
    MIXT_GPU_FUNC lane finish() const {
        if (size == 0) return Op::identity();
        lane out = entries[size - 1];
        for (int e = size - 2; e >= 0; --e) out = Op::combine(entries[e], out);
        return out;
    }
};

/// What the kernels know of a plan: the output rows' dimensions (memory order) and the result's strides
/// along them, the box's dimensions, and the stream's geometry.
template <int N>
struct reduce_desc {
    int n_row = 0, box_rank = 1;
    index_t row_dims[N];
    index_t out_row_stride[N];
    index_t box_dims[N];
    index_t stream = 0, block = 0, P = 32, columns = 1, nblocks = 0, rows = 0, supers = 0, blocks_per_super = 1;
    MIXT_GPU_FUNC index_t lane_items() const { return rows * nblocks * P; }
    MIXT_GPU_FUNC index_t super_items() const { return rows * supers * columns; }
    MIXT_GPU_FUNC index_t result_items() const { return rows * columns; }
    /// Whether the lanes hold fewer than 4 stream elements each on average (a row's stream shorter than a
    /// block, over few reduced elements): the second kernel then computes them itself (super_from_stream).
    MIXT_GPU_FUNC bool short_lanes() const { return lane_items() > 0 && lane_items() * 4 > rows * stream; }
};

/// A plan as the kernels read it: one iteration space for the device nodes (the output rows' dimensions, then
/// the box's; operand 0, the stream, unused) and the descriptor.
template <int R, std::size_t M>
struct reduce_launch {
    static constexpr int N = static_cast<int>(iteration_space<R, M>::max_dims);
    iteration_space<R, M> space{};
    reduce_desc<N> desc{};
};
template <int R, int RO, std::size_t L>
reduce_launch<R, L + 1> make_reduce_launch(const reduce_plan<R, RO, L>& plan) {
    constexpr std::size_t M = L + 1;
    reduce_launch<R, M> out;
    auto& space = out.space;
    auto& d = out.desc;
    // The row axes and the box's dimensions are different axes of more than one element (or one dimension
    // of one element): at most max(R, 1) in all.
    space.rank = plan.n_row_axes + plan.box.rank;
    eigen_assert(space.rank <= (reduce_launch<R, M>::N));
    d.n_row = plan.n_row_axes;
    d.box_rank = plan.box.rank;
    for (int a = 0; a < plan.n_row_axes; ++a) {
        const auto ax = static_cast<std::size_t>(plan.row_axes[static_cast<std::size_t>(a)]);
        space.dims[static_cast<std::size_t>(a)] = plan.S[ax];
        for (std::size_t k = 0; k < L; ++k) space.strides[k + 1][static_cast<std::size_t>(a)] = plan.leaf_strides[k][ax];
        d.row_dims[a] = plan.S[ax];
        d.out_row_stride[a] = plan.out_stride[ax];
    }
    for (int j = 0; j < plan.box.rank; ++j) {
        const auto at = static_cast<std::size_t>(plan.n_row_axes + j);
        space.dims[at] = plan.box.dims[static_cast<std::size_t>(j)];
        for (std::size_t o = 0; o < M; ++o) space.strides[o][at] = plan.box.strides[o][static_cast<std::size_t>(j)];
        d.box_dims[j] = plan.box.dims[static_cast<std::size_t>(j)];
    }
    d.stream = plan.stream;
    d.block = plan.shape.block;
    d.P = plan.shape.P;
    d.columns = plan.columns;
    d.rows = plan.rows;
    d.nblocks = plan.stream == 0 ? 0 : (plan.stream + plan.shape.block - 1) / plan.shape.block;
    d.supers = plan.supers;
    d.blocks_per_super = plan.super / plan.shape.block;
    return out;
}

/// Reduction `r` of `c` (arrays, no reduction inside) made ready for the kernels: its plan, what the kernels read
/// of it, and the operand's device nodes; the reduction's kind, accumulator, result and lane types. Both the GPU
/// (reduce_operand below) and test/eval/gpu_reduce_test.cpp, which runs the kernels' items on the host, start here.
template <class Red, class Plan, class Launch, class Kn>
struct bound_reduction {
    static constexpr reduce_kind kind = Red::kind;
    using accumulator = typename Red::accumulator_type;
    using result = value_t<Red>;
    using op = reduce_op<kind, accumulator>;
    using lane = typename op::lane;
    Plan plan;
    Launch launch;
    Kn nodes;
};
/// Throws every error of the reduction (make_reduce_plan) before anything runs.
template <class Red, class C>
auto bind_reduction(const Red& r, const C& c) {
    constexpr int R = std::remove_cvref_t<C>::rank;
    const auto plan = make_reduce_plan(r, c);
    const auto launch = make_reduce_launch(plan);
    constexpr std::size_t M = std::tuple_size_v<std::remove_cvref_t<decltype(plan.leaf_strides)>> + 1;
    binder<R, M> b{launch.space};
    const auto nodes = b.of(make_kernel_tree<typename Red::accumulator_type>(c));
    return bound_reduction<Red, std::remove_const_t<decltype(plan)>, std::remove_const_t<decltype(launch)>,
                           std::remove_const_t<decltype(nodes)>>{plan, launch, nodes};
}

/// Lane `item` of the first kernel (item = (row * nblocks + block) * P + lane): lane p of a block folds stream
/// elements p, p + P, ... of the block in order, each computed by the device nodes k.
template <class Op, class Kn, int N>
MIXT_GPU_FUNC typename Op::lane lane_of(const Kn& k, const reduce_desc<N>& d, index_t item) {
    using lane = typename Op::lane;
    const index_t p = item % d.P, t = item / d.P;
    const index_t b = t % d.nblocks;
    index_t row = t / d.nblocks;
    grid_at<N> g;
    g.rank = d.n_row + d.box_rank;
    for (int a = d.n_row - 1; a >= 0; --a) {
        g.idx[a] = row % d.row_dims[a];
        row /= d.row_dims[a];
    }
    lane l = Op::identity();
    const index_t first = b * d.block + p;
    const index_t count = first >= d.stream ? 0 : std::min(d.block / d.P, (d.stream - first + d.P - 1) / d.P);
    // Unrolled, so that a thread has many loads in flight (the folds of a lane depend on each other, the loads
    // do not): a lane of a 32-lane stream reads 128 elements 32 apart.
#if defined(__CUDA_ARCH__)
#pragma unroll 16
#endif
    for (index_t r = 0; r < count; ++r) {
        const index_t s = first + r * d.P;
        index_t rest = s;
        for (int j = d.box_rank - 1; j > 0; --j) {
            g.idx[d.n_row + j] = rest % d.box_dims[j];
            rest /= d.box_dims[j];
        }
        g.idx[d.n_row] = rest;
        if constexpr (Op::indexed)
            l = Op::combine(l, Op::from(k.at(g), d.columns == 1 ? s : s / d.columns));
        else
            l = Op::combine(l, Op::from(k.at(g), 0));
    }
    return l;
}

/// Item (row * supers + super) * columns + column of the second kernel: each block's lanes of that column
/// combined in order (the CPU's end of a block) and pushed onto a pairwise stack, whose result it is. Lane i of
/// the first kernel's numbering is lane_at(i): read from its buffer (super_of) or computed here
/// (super_from_stream), the same values either way.
template <class Op, int N, class LaneAt>
MIXT_GPU_FUNC typename Op::lane fold_super(const reduce_desc<N>& d, index_t item, const LaneAt& lane_at) {
    using lane = typename Op::lane;
    const index_t m = d.P / d.columns;
    const index_t c = item % d.columns, t = item / d.columns;
    const index_t sb = t % d.supers, row = t / d.supers;
    local_stack<Op> st;
    const index_t b_end = std::min(d.nblocks, (sb + 1) * d.blocks_per_super);
    for (index_t b = sb * d.blocks_per_super; b < b_end; ++b) {
        const index_t first = (row * d.nblocks + b) * d.P + c;
        lane v = lane_at(first);
        for (index_t j = 1; j < m; ++j) v = Op::combine(v, lane_at(first + j * d.columns));
        st.push(v);
    }
    return st.finish();
}

/// The second kernel's item over the first kernel's buffer of lanes.
template <class Op, int N>
MIXT_GPU_FUNC typename Op::lane super_of(const typename Op::lane* lanes, const reduce_desc<N>& d, index_t item) {
    return fold_super<Op>(d, item, [lanes](index_t i) { return lanes[i]; });
}

/// The second kernel's item with each lane computed by lane_of (for short_lanes(), where the buffer would
/// outweigh the operand).
template <class Op, class Kn, int N>
MIXT_GPU_FUNC typename Op::lane super_from_stream(const Kn& k, const reduce_desc<N>& d, index_t item) {
    return fold_super<Op>(d, item, [&k, &d](index_t i) { return lane_of<Op>(k, d, i); });
}

/// Item row * columns + column of the third kernel: the row's super-blocks pushed onto a pairwise stack, the
/// result in T; and its offset in the result.
template <reduce_kind K, class A, class Op, class T, int N>
MIXT_GPU_FUNC T result_of(const typename Op::lane* partial, const reduce_desc<N>& d, index_t count, index_t item,
                          index_t& offset) {
    const index_t c = item % d.columns, row = item / d.columns;
    local_stack<Op> st;
    for (index_t sb = 0; sb < d.supers; ++sb) st.push(partial[(row * d.supers + sb) * d.columns + c]);
    index_t off = 0, rest = row;
    for (int a = d.n_row - 1; a >= 0; --a) {
        off += (rest % d.row_dims[a]) * d.out_row_stride[a];
        rest /= d.row_dims[a];
    }
    offset = off + c;
    return reduce_result<K, A, T>(st.finish(), count);
}

} // namespace gpu

#if defined(EIGEN_USE_GPU) && defined(__CUDACC__)
namespace gpu {

template <class Op, class Kn, int N>
__global__ void lanes_kernel(typename Op::lane* lanes, Kn k, reduce_desc<N> d) {
    const index_t items = d.lane_items(), step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t item = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; item < items; item += step)
        lanes[item] = lane_of<Op>(k, d, item);
}

template <class Op, int N>
__global__ void super_kernel(const typename Op::lane* lanes, typename Op::lane* partial, reduce_desc<N> d) {
    const index_t items = d.super_items(), step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t item = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; item < items; item += step)
        partial[item] = super_of<Op>(lanes, d, item);
}

template <class Op, class Kn, int N>
__global__ void stream_super_kernel(Kn k, typename Op::lane* partial, reduce_desc<N> d) {
    const index_t items = d.super_items(), step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t item = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; item < items; item += step)
        partial[item] = super_from_stream<Op>(k, d, item);
}

template <reduce_kind K, class A, class Op, class T, int N>
__global__ void result_kernel(const typename Op::lane* partial, T* out, reduce_desc<N> d, index_t count) {
    const index_t items = d.result_items(), step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t item = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; item < items; item += step) {
        index_t offset = 0;
        const T v = result_of<K, A, Op, T>(partial, d, count, item, offset);
        out[offset] = v;
    }
}

[[noreturn]] inline void throw_cuda_error(const char* what, cudaError_t err) {
    throw std::runtime_error(std::string("mixt: assign: ") + what + ": " + cudaGetErrorString(err));
}

/// Device memory allocated on a stream, freed on it when this goes out of scope (after the kernels that use
/// it, in the stream's order).
class stream_buffers {
  public:
    explicit stream_buffers(cudaStream_t stream) : stream_(stream) {}
    stream_buffers(const stream_buffers&) = delete;
    stream_buffers& operator=(const stream_buffers&) = delete;
    ~stream_buffers() {
        for (void* p : owned_) cudaFreeAsync(p, stream_);
    }
    template <class T>
    T* allocate(index_t count) {
        void* p = nullptr;
        const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(count > 0 ? count : 1);
        owned_.reserve(owned_.size() + 1); // no allocation after cudaMallocAsync: nothing to leak if this throws
        if (const cudaError_t err = cudaMallocAsync(&p, bytes, stream_); err != cudaSuccess)
            throw_cuda_error("device memory for a reduction", err);
        owned_.push_back(p);
        return static_cast<T*>(p);
    }

  private:
    cudaStream_t stream_;
    std::vector<void*> owned_;
};

/// The result of reduction `r` of `c` (arrays in device memory, no reduction inside), in device memory that
/// `buffers` owns, contiguous in the result's layout; and the result's shape.
template <class Red, class C>
std::pair<value_t<Red>*, shape_t<Red::rank>> reduce_operand(const Red& r, const C& c, const Eigen::GpuDevice& device,
                                                            stream_buffers& buffers) {
    const auto job = bind_reduction(r, c); // every error is thrown here, before any launch
    using J = std::remove_const_t<decltype(job)>;
    using Op = typename J::op;
    using lane = typename J::lane;
    using T = typename J::result;
    constexpr int N = std::remove_cvref_t<decltype(job.launch)>::N;
    constexpr int threads = 256;
    const auto& plan = job.plan;
    const auto& d = job.launch.desc;
    T* const out = buffers.allocate<T>(plan.outputs);
    if (plan.outputs == 0) return {out, plan.out_shape};

    const cudaStream_t stream = device.stream();
    (void)cudaGetLastError(); // an earlier, unrelated error would otherwise be reported as this launch's
    lane* const partial = buffers.allocate<lane>(d.super_items());
    using Kn = std::remove_const_t<decltype(job.nodes)>;
    if (plan.supers > 0 && d.short_lanes()) {
        stream_super_kernel<Op, Kn, N><<<blocks_for(d.super_items(), threads), threads, 0, stream>>>(job.nodes, partial, d);
    } else if (plan.supers > 0) {
        lane* const lanes = buffers.allocate<lane>(d.lane_items());
        lanes_kernel<Op, Kn, N><<<blocks_for(d.lane_items(), threads), threads, 0, stream>>>(lanes, job.nodes, d);
        super_kernel<Op, N><<<blocks_for(d.super_items(), threads), threads, 0, stream>>>(lanes, partial, d);
    }
    result_kernel<J::kind, typename J::accumulator, Op, T, N>
        <<<blocks_for(d.result_items(), threads), threads, 0, stream>>>(partial, out, d, plan.reduced_count);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) throw_launch_error(err);
    return {out, plan.out_shape};
}

template <class E>
auto materialize(const E& e, const Eigen::GpuDevice& device, stream_buffers& buffers);

/// Reduction r evaluated into device memory that `buffers` owns, as a leaf over it.
template <reduce_kind K, class C, std::size_t N, bool Keep, bool Given>
auto reduce_into_device(const reduction<K, C, N, Keep, Given>& r, const Eigen::GpuDevice& device, stream_buffers& buffers) {
    using Red = reduction<K, C, N, Keep, Given>;
    using T = value_t<Red>;
    static_assert(fusable_v<typename Red::child_type>,
                  "mixt: assign: on an Eigen::GpuDevice, a reduction's operands must be arrays in device memory "
                  "(TensorMaps and their chips, slices and strides), not Eigen expressions");
    constexpr int RO = Red::rank;
    using map_t = Eigen::TensorMap<Eigen::Tensor<T, RO, Red::layout == static_cast<int>(Eigen::RowMajor) ? Eigen::RowMajor : Eigen::ColMajor>>;
    if constexpr (!fusable_v<typename Red::child_type>) {
        (void)r, (void)device, (void)buffers; // (the error above)
        return leaf<typename Red::policy, map_t>{{}, map_t(static_cast<T*>(nullptr), to_dsizes<RO>(shape_t<RO>{}))};
    } else {
        const auto [p, shape] = [&] {
            if constexpr (has_reduction_v<typename Red::child_type>)
                return reduce_operand(r, materialize(r.child, device, buffers), device, buffers);
            else
                return reduce_operand(r, r.child, device, buffers);
        }();
        return leaf<typename Red::policy, map_t>{{}, map_t(p, to_dsizes<RO>(shape))};
    }
}

/// `e` with every reduction in it replaced by a leaf over its result in device memory (owned by `buffers`).
template <class E>
auto materialize(const E& e, const Eigen::GpuDevice& device, stream_buffers& buffers) {
    return replace_reductions(e, [&](const auto& r) { return reduce_into_device(r, device, buffers); });
}

} // namespace gpu

template <>
struct gpu_reductions<Eigen::GpuDevice> {
    using buffers = gpu::stream_buffers;
    template <class E>
    static auto materialize(const E& e, const Eigen::GpuDevice& device, buffers& b) {
        return gpu::materialize(e, device, b);
    }
};
#endif

} // namespace mixt::detail

#endif // MIXT_EVAL_GPU_REDUCE_HPP
