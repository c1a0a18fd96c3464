#ifndef MIXT_EVAL_PLAN_HPP
#define MIXT_EVAL_PLAN_HPP

// The one place that decides how an evaluation runs, once every check has passed (eval/check.hpp). The plan is a
// value; the executors (the fused loop and its runs, the reductions, the GPU kernel, Eigen's executor) receive
// it and decide nothing:
//   - `choose_route`: which executor runs the pass (the route table of docs/architecture.md);
//   - `decide_pass`: how many threads, streaming stores, software prefetch and fences, from the bytes the pass
//     moves (one formula: elements x (bytes read + bytes written) per element);
//   - `plan_elementwise`: the iteration space of an elementwise pass (dimensions and every operand's strides in
//     the destination's memory order), whether it is one flat run, and how it is cut into runs.
// `mixt::explain` (eval/explain.hpp) prints the same plan as text.

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/eval/check.hpp"
#include "mixt/eval/device.hpp"
#include "mixt/eval/fused.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/eval/strided.hpp"
#include "mixt/expr/expression.hpp"

namespace mixt {

/// Which executor an evaluation takes.
enum class route {
    nothing,                 ///< an empty result: nothing to write
    flat,                    ///< the fused loop over one contiguous run (eval/fused.hpp)
    runs,                    ///< the fused loop over the runs of an iteration space (eval/strided.hpp)
    through_temporary,       ///< into a new tensor, then copied (a destination without a view over an operand)
    reduce_into_destination, ///< a reduction written straight into the destination (eval/reduce.hpp)
    reduce_into_new,         ///< a reduction into a new tensor (eval) or a tensor then stretched (assign)
    reductions_first,        ///< the reductions inside first, each into a tensor, then the elementwise pass
    gpu,                     ///< mixt's GPU kernel (eval/gpu.hpp, eval/gpu_reduce.hpp)
    eigen,                   ///< the expression lowered to Eigen (eval/lower.hpp), run by Eigen's executor
};

inline const char* name(route r) {
    switch (r) {
    case route::nothing: return "nothing";
    case route::flat: return "flat";
    case route::runs: return "runs";
    case route::through_temporary: return "through_temporary";
    case route::reduce_into_destination: return "reduce_into_destination";
    case route::reduce_into_new: return "reduce_into_new";
    case route::reductions_first: return "reductions_first";
    case route::gpu: return "gpu";
    case route::eigen: return "eigen";
    }
    return "?";
}

namespace detail {

/// How a pass uses its device: threads, and its stores and loads (pass_options).
struct pass_decision {
    int threads = 1;
    pass_options options{};
    std::size_t bytes = 0; ///< what the pass moves, the figure every decision is made from
};

/// The one decision of threads, streaming stores and software prefetch, for a pass over `elements` elements
/// that reads `read_bytes` and writes `written_bytes` per element (a reduction counts one byte of work per
/// element as its write), in at most `pieces` pieces: a thread for every min_bytes_per_thread bytes
/// (threads_for) up to the device's threads; streaming stores above streaming_threshold_bytes (`can_stream`:
/// not for reductions, whose results are small); prefetch above prefetch_threshold_bytes where it pays
/// (software_prefetch_pays: not on AMD). Always inlined: GCC returns a pass_decision from a call by storing its
/// members byte by byte and loading them back whole, a store-forwarding stall that cost more than the loop of a
/// 4096-element pass saves (docs/performance-notes.md, "The plan's cost on the flat path").
template <class Device>
MIXT_ALWAYS_INLINE pass_decision decide_pass(index_t elements, std::size_t read_bytes, std::size_t written_bytes, const Device& device,
                          index_t pieces = -1, bool can_stream = true) {
    pass_decision d;
    const std::size_t per_element = read_bytes + written_bytes;
    d.bytes = static_cast<std::size_t>(elements < 0 ? 0 : elements) * per_element;
    d.options = options_for(elements, per_element);
    d.options.stream = d.options.stream && can_stream;
    d.threads = threads_for(d.bytes, device_threads(device));
    if (pieces >= 0) d.threads = static_cast<int>(std::max<index_t>(1, std::min<index_t>(d.threads, pieces)));
    return d;
}

/// decide_pass for a reduction (reduce_plan: `rows` output rows, each a stream of `stream` values) of an operand
/// C: read once, one byte of work an element, no streaming stores (its results are small).
template <class C, class Plan, class Device>
pass_decision decide_reduction_pass(const Plan& plan, const Device& device) {
    return decide_pass(plan.stream * plan.rows, leaf_bytes_v<C>, 1, device, -1, false);
}

/// The strided pass (strided.hpp) of E writing D over R dimensions: its kernel, and its leaves' element types
/// (a type computation without lambdas, which nvcc's front end rejects in an alias template).
template <class D, class K, int R>
struct strided_pass_for {
    template <class... Ts>
    using fn = strided_pass<D, K, R, Ts...>;
};
template <class L>
using leaf_element_t = view_element_t<typename L::eigen_type>;
template <class D, class E, int R>
using strided_pass_of =
    boost::mp11::mp_apply_q<strided_pass_for<D, decltype(make_kernel<stage_t<D>>(std::declval<const E&>())), R>,
                            boost::mp11::mp_transform<leaf_element_t, leaf_list_t<E>>>;

/// Whether each operand of a pass of E into D (the destination first) is packed memory (dtype/packed.hpp).
template <class L>
using leaf_is_packed = packed_memory<std::remove_cvref_t<typename L::eigen_type>>;
template <class D, class E>
inline constexpr auto packed_operands_v = []<class... P>(boost::mp11::mp_list<P...>) {
    return std::array<bool, sizeof...(P) + 1>{packed_memory_v<D>, P::value...};
}(boost::mp11::mp_transform<leaf_is_packed, boost::mp11::mp_rename<leaf_list_t<E>, boost::mp11::mp_list>>{});
/// Whether a pass of E into D reads or writes packed memory.
template <class D, class E>
inline constexpr bool any_packed_v = [] {
    for (const bool b : packed_operands_v<D, E>)
        if (b) return true;
    return false;
}();

/// A part of a plan that only some routes have: a T, or nothing, whose storage is not written until it is set.
/// (std::optional would say the same, but GCC clears the whole of a std::optional's storage where it is
/// constructed, which is the cost this avoids.)
template <class T>
class plan_part {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    union {
        T value_;
    };
    bool set_ = false;

public:
    plan_part() noexcept {}
    plan_part& operator=(const T& v) noexcept {
        std::construct_at(&value_, v);
        set_ = true;
        return *this;
    }
    explicit operator bool() const noexcept { return set_; }
    const T& operator*() const noexcept {
        eigen_assert(set_);
        return value_;
    }
    const T* operator->() const noexcept { return &**this; }
};

/// The plan of an elementwise pass of e into the view `out` (rank R, M operands with the destination first).
/// The space and the runs are set only by the routes that read them, so that a flat plan is a few words to
/// build: as plain members, their arrays (100 to 300 bytes) were cleared on every assign, by `rep stosq` under
/// most of GCC's tunings (docs/performance-notes.md, "The plan's cost on the flat path").
template <int R, std::size_t M>
struct elementwise_plan {
    route path = route::nothing;
    index_t elements = 0;
    plan_part<iteration_space<R, M>> space; ///< route::runs and route::gpu; a flat pass is flat_space(elements)
    plan_part<run_layout<M>> runs;          ///< route::runs: how the space is cut (plan_runs)
    pass_decision pass{};
};

/// The route of an elementwise pass (no reduction inside) into a destination of type D on Device, known at
/// compile time but for flat against runs and an empty result (plan_elementwise decides those).
template <class D, class E, class Device>
constexpr route static_route() {
    if constexpr (fusable_v<E> && has_view_v<D> && gpu_device_v<Device> && !any_packed_v<D, E>)
        return route::gpu;
    else if constexpr (fusable_v<E> && has_view_v<D> && cpu_device_v<Device>)
        return route::runs;
    else
        return route::eigen;
}

/// The plan of the elementwise pass of e into dst (every check passed): its route, iteration space, runs and
/// device use. `through_temporary`: check_assign's verdict.
template <class Dst, class E, class Device>
auto plan_elementwise(const Dst& dst, const E& e, const Device& device, bool through_temporary = false) {
    using D = std::remove_cvref_t<Dst>;
    using DstScalar = std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>;
    constexpr int R = array_traits<D>::rank;
    constexpr std::size_t M = boost::mp11::mp_size<leaf_list_t<E>>::value + 1;
    elementwise_plan<R, M> plan;
    const auto dims = shape_of(dst);
    plan.elements = 1;
    for (const index_t d : dims) plan.elements *= d;
    constexpr route fixed = static_route<D, E, Device>();
    constexpr std::size_t bytes_in = leaf_bytes_v<E>;
    if (through_temporary) {
        plan.path = route::through_temporary;
    } else if (plan.elements == 0) {
        plan.path = route::nothing;
    } else if constexpr (fixed == route::eigen) {
        plan.path = route::eigen;
    } else {
        const auto out = destination_view(const_cast<Dst&>(dst));
        const auto views = leaf_views_of(e);
        std::array<shape_t<R>, M> strides{};
        strides[0] = out.strides;
        std::apply(
            [&](const auto&... v) {
                std::size_t k = 1;
                ((strides[k++] = broadcast_view_from<std::remove_cvref_t<E>::rank, R>(v, out.dims).strides), ...);
            },
            views);
        plan.space = make_space<R, M>(out.dims, strides, array_traits<D>::layout == static_cast<int>(Eigen::RowMajor));
        bool flat = !any_packed_v<D, E>; // (packed memory is read and written through stages)
        for (std::size_t k = 0; k < M; ++k) flat = flat && plan.space->flat(k);
        if constexpr (fixed == route::gpu) {
            plan.path = route::gpu;
        } else if (flat) {
            plan.path = route::flat;
        } else {
            plan.path = route::runs;
            using pass = strided_pass_of<view_element_t<D>, E, R>;
            plan.runs = plan_runs(*plan.space, pass::capacity, packed_operands_v<D, E>, pass::row_rule);
        }
    }
    plan.pass = decide_pass(plan.elements, bytes_in, sizeof(DstScalar), device,
                            plan.path == route::runs ? plan.runs->plan.items : index_t{-1});
    return plan;
}

/// The plan of a flat pass of n elements into a destination of type Dst, for the common case checked without
/// views (check_flat: a tensor or map, every leaf one of its shape).
template <class Dst, class E, class Device>
auto plan_flat(index_t n, const Device& device) {
    using D = std::remove_cvref_t<Dst>;
    elementwise_plan<array_traits<D>::rank, boost::mp11::mp_size<leaf_list_t<E>>::value + 1> plan;
    plan.path = n == 0 ? route::nothing : route::flat;
    plan.elements = n;
    plan.pass = decide_pass(n, leaf_bytes_v<E>, sizeof(std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>),
                            device);
    return plan;
}

/// Whether `assign(dst, r)` of a reduction r of dst's dtype writes straight into dst: dst contiguous in r's
/// layout, and no operand of r (the leaves inside nested reductions included) overlapping it; a leaf that is an
/// Eigen expression counts as overlapping (its memory is not seen).
template <class Dst, class Red>
bool reduces_into_destination(Dst& dst, const Red& r) {
    constexpr int R = Red::rank;
    const auto v = destination_view(dst);
    const auto contiguous = contiguous_strides<R>(v.dims, Red::layout == static_cast<int>(Eigen::RowMajor));
    for (std::size_t d = 0; d != static_cast<std::size_t>(R); ++d)
        if (v.dims[d] > 1 && v.strides[d] != contiguous[d]) return false;
    const auto dst_extent = byte_extent(v); // (not a structured binding: Clang 14 cannot capture one)
    const std::uintptr_t dst_first = dst_extent.first, dst_last = dst_extent.second;
    bool apart = true;
    auto check = [&](const auto& x) {
        const auto o = operand_view_for_overlap(x);
        if constexpr (std::is_same_v<decltype(o), const int>) {
            apart = false;
        } else {
            const auto [first, last] = byte_extent(o);
            apart = apart && (first >= dst_last || dst_first >= last || first == last || dst_first == dst_last);
        }
    };
    for_each_operand(r, check);
    return apart;
}

/// Whether a destination of type D may take the reduction E straight into its memory (reduces_into_destination
/// decides at run time): a reduction at the root, of D's dtype and rank, into a view.
template <class D, class E>
inline constexpr bool may_reduce_into_v = [] {
    using Ex = std::remove_cvref_t<E>;
    if constexpr (is_reduction<Ex>::value && has_view_v<D> && !packed_memory_v<D>)
        return std::is_same_v<std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>, value_t<Ex>> &&
               Ex::rank == array_traits<D>::rank;
    else
        return false;
}();

/// The route of `assign(dst, e)` (or of `eval(e)` where Dst is the new result) with a reduction in e: the
/// GPU's, straight into the destination (reduces_into_destination), into a tensor of its own, or the
/// reductions first and then the elementwise pass.
template <class Dst, class E, class Device>
route choose_reduction_route(Dst& dst, const E& e) {
    using D = std::remove_cvref_t<Dst>;
    if constexpr (gpu_device_v<Device>) {
        (void)dst;
        (void)e;
        return route::gpu;
    } else if constexpr (may_reduce_into_v<D, E>) {
        return reduces_into_destination(dst, e) ? route::reduce_into_destination : route::reductions_first;
    } else {
        (void)dst;
        (void)e;
        return route::reductions_first;
    }
}

/// The one function that chooses how `assign(dst, e, device)` runs, for every expression and device, once every
/// check has passed with the verdict `c`: with a reduction inside, the reduction's route
/// (choose_reduction_route); plain tensors of dst's shape, one flat pass planned without views (plan_flat);
/// otherwise the iteration space's plan (plan_elementwise). `eval(e)` is this plan for its new result, but for a
/// reduction at its root, whose result is allocated by the reduction itself (route reduce_into_new).
template <class Dst, class E, class Device>
auto plan_of(Dst& dst, const E& e, const Device& device, checked c = checked::views) {
    using D = std::remove_cvref_t<Dst>;
    if constexpr (has_reduction_v<E>) {
        elementwise_plan<array_traits<D>::rank, boost::mp11::mp_size<leaf_list_t<E>>::value + 1> plan;
        plan.path = choose_reduction_route<Dst, E, Device>(dst, e);
        (void)c;
        (void)device;
        return plan;
    } else {
        if constexpr (flat_candidate_v<D, E> && cpu_device_v<Device>) {
            if (c == checked::flat) return plan_flat<D, E>(dst.size(), device);
        }
        return plan_elementwise(dst, e, device, c == checked::through_temporary);
    }
}

} // namespace detail

} // namespace mixt

#endif // MIXT_EVAL_PLAN_HPP
