#ifndef MIXT_EVAL_ASSIGN_HPP
#define MIXT_EVAL_ASSIGN_HPP

// Evaluation: `eval(e)` returns a new array of `value_t<E>` (an Eigen::Tensor, or an Eigen::Array when every
// operand is a Dense object); `assign(dst, e [, device])` writes into an existing one (a tensor, a map, a view
// of a tensor, a Dense object). Both check first, then run one pass over memory:
//   1. at compile time: the ranks agree, the layouts of rank 2 or more agree, and the expression's dtype
//      promotes implicitly to the destination's under the policy (an int8 result may go into a float tensor;
//      a float result into an int tensor needs mixt::cast);
//   2. at run time, before the first write: the operands' shapes broadcast (NumPy's rule) to the destination's
//      shape (mixt::shape_error prints both), every literal fits (mixt::overflow_error), and the destination
//      overlaps no operand but one that is the very same view (mixt::aliasing_error; `assign(a, lazy(a) + 1)`
//      is fine).
//
//     Eigen::Tensor<float, 2> r = mixt::eval(mixt::lazy(a_i8) + b_f16 * c_f32 + 2);
//     mixt::assign(r, mixt::lazy(a_i8) * 0.5, thread_pool_device);
//     mixt::assign(r.chip(0, 0), mixt::lazy(bias_f16) + 1);   // a row of r: [w] into r's [h, w]

#include <algorithm>
#include <cstddef>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/errors.hpp"
#include "mixt/eval/check.hpp"
#include "mixt/eval/fused.hpp"
#include "mixt/eval/gpu.hpp"
#include "mixt/eval/gpu_reduce.hpp"
#include "mixt/eval/lower.hpp"
#include "mixt/eval/plan.hpp"
#include "mixt/eval/pool.hpp"
#include "mixt/eval/reduce.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/eval/strided.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/lattice/promote.hpp"
#include "mixt/simd/arch.hpp"

namespace mixt {

// The template arguments name the expression's dtype, the destination's dtype and the policy.
namespace assignment_error {
template <class ExprDtype, class DstDtype, class Policy>
struct not_implicitly_convertible {
    static_assert(sizeof(ExprDtype) == 0,
                  "mixt: assign: the expression's dtype does not promote implicitly to the destination's dtype under "
                  "this policy (they are the arguments of the template being instantiated); write "
                  "mixt::assign(dst, mixt::cast<T>(e)) to convert explicitly");
    using type = void;
};
template <class ExprDtype, class ResultDtype, class Policy>
struct not_implicitly_evaluable {
    static_assert(sizeof(ExprDtype) == 0,
                  "mixt: eval<T>: the expression's dtype does not promote implicitly to T under this policy (they are "
                  "the arguments of the template being instantiated); write mixt::eval<T>(mixt::cast<T>(e)) to "
                  "convert explicitly");
    using type = void;
};
} // namespace assignment_error

namespace detail {
template <class Policy, class From, class To>
constexpr bool assignable() {
    if constexpr (has_promotion_v<From, To, Policy>)
        return std::is_same_v<join_t<Policy, From, To>, To>;
    else
        return false;
}
template <class Policy, class From, class To, bool Ok = assignable<Policy, From, To>()>
struct check_assignable : std::true_type {};
// Whether D can be written: a view that is writable, or anything else (the other checks of assign).
template <class D>
constexpr bool writable_destination() {
    if constexpr (has_view_v<D>)
        return writable_view<D>::value;
    else
        return true;
}
template <class D>
inline constexpr bool writable_destination_v = writable_destination<D>();
template <class Policy, class From, class To>
struct check_assignable<Policy, From, To, false> : assignment_error::not_implicitly_convertible<From, To, Policy> {};
template <class Policy, class From, class To, bool Ok = assignable<Policy, From, To>()>
struct check_evaluable : std::true_type {};
template <class Policy, class From, class To>
struct check_evaluable<Policy, From, To, false> : assignment_error::not_implicitly_evaluable<From, To, Policy> {};

#if defined(EIGEN_USE_THREADS)
/// A pass on a ThreadPoolDevice: [0, n) in pieces of multiples of 64 elements (run_in_pieces, pool.hpp).
/// `threads` > 1 (run_fused runs a one-thread pass itself).
template <class D, class K>
void run_on_pool(D* dst, const K& kernel, Eigen::Index n, pass_options options, const Eigen::ThreadPoolDevice& device,
                 int threads) {
    eigen_assert(threads > 1);
    run_in_pieces(n, 64, device, threads,
                  [&](Eigen::Index first, Eigen::Index last) { run_kernel(dst, kernel, first, last, options); });
}

/// A strided pass on a ThreadPoolDevice: its runs [0, items) in pieces (run_in_pieces; each thread stages in
/// its own buffers).
template <class Pass>
void run_items_on_pool(const Pass& pass, Eigen::Index items, const Eigen::ThreadPoolDevice& device, int threads) {
    run_in_pieces(items, 1, device, threads, [&](Eigen::Index first, Eigen::Index last) { pass.run(first, last); });
}
#endif

/// The flat executor: the fused loop over elements [0, n) of dst, on the threads and with the stores the plan
/// decided (decide_pass).
template <class D, class E, class Device>
void run_fused(D* dst, Eigen::Index n, const E& e, const Device& device, const pass_decision& pass) {
    if constexpr (is_thread_pool_device_v<Device>) {
#if defined(EIGEN_USE_THREADS)
        if (pass.threads > 1) {
            run_on_pool(dst, make_kernel<D>(e), n, pass.options, device, pass.threads);
            return;
        }
#endif
    }
    (void)device;
    if (pass.options.stream || pass.options.prefetch != prefetch_kind::none) {
        run_kernel(dst, make_kernel<D>(e), 0, n, pass.options);
    } else {
        // The kernel's values as arguments, in registers (run_range_of says why). The kernel of this branch
        // has no address taken: it lives in registers and is never stored.
        const auto kernel = make_kernel<D>(e);
        using K = std::remove_const_t<decltype(kernel)>;
        std::apply([&](const auto&... a) { run_range_of<prefetch_kind::none, false, D, K>(dst, 0, n, a...); }, kernel_args(kernel));
    }
}

/// The runs executor: the fused loop over the runs of the plan's iteration space (strided.hpp), on the calling
/// thread, or in pieces of runs on a thread pool.
template <class D, class E, int R, std::size_t M, class Device>
void run_strided(view_pointer_t<D> dst, const elementwise_plan<R, M>& plan, const E& e, const Device& device) {
    using P = strided_pass_of<D, E, R>;
    const auto views = leaf_views_of(e);
    const P pass = std::apply(
        [&](const auto&... v) {
            return P{dst, {v.data...}, *plan.space, *plan.runs, kernel_args(make_kernel<stage_t<D>>(e)), plan.pass.options};
        },
        views);
    const index_t items = plan.runs->plan.items;
    if constexpr (is_thread_pool_device_v<Device>) {
#if defined(EIGEN_USE_THREADS)
        if (plan.pass.threads > 1) {
            run_items_on_pool(pass, items, device, plan.pass.threads);
            return;
        }
#endif
    }
    (void)device;
    pass.run(0, items);
}

template <class Dst, class E, class Device>
void run_through_temporary(Dst& dst, const E& e, const Device& device);

/// The one switch: runs an elementwise plan (plan_elementwise, plan_flat) with the executor of its route.
template <class Dst, class E, class Device, int R, std::size_t M>
void execute(Dst& dst, const E& e, const Device& device, const elementwise_plan<R, M>& plan) {
    if constexpr (!passes_compiled_for_v<Device>) {
        (void)dst, (void)e, (void)device, (void)plan; // (nvcc's device pass: device.hpp)
    } else {
        using D = std::remove_cvref_t<Dst>;
        using DstScalar = std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>;
        constexpr route fixed = static_route<D, E, Device>();
        static_assert(R == array_traits<D>::rank && M == boost::mp11::mp_size<leaf_list_t<E>>::value + 1);
        static_assert(fixed != route::eigen || !packed_memory_v<D>,
                      "mixt: assign: a packed destination is written by mixt's CPU passes, which take expressions whose "
                      "operands are all arrays in memory (tensors, maps, chips, slices, strides, Dense objects, packed "
                      "arrays), evaluated on the CPU (DefaultDevice, ThreadPoolDevice)");
        static_assert(fixed != route::eigen || eigen_tensor<D>,
                      "mixt: assign: a Dense destination takes expressions whose operands are all arrays in memory "
                      "(tensors, maps, chips, slices, strides, Dense objects), evaluated on the CPU "
                      "(DefaultDevice, ThreadPoolDevice)");
        // The flat route first, out of the switch: the common case takes one predicted branch, not an indirect jump.
        if (plan.path == route::flat) {
            if constexpr (fixed == route::runs && !any_packed_v<D, E>) {
                if constexpr (is_tensor_or_map<D>::value)
                    run_fused(dst.data(), plan.elements, e, device, plan.pass);
                else if constexpr (has_view_v<D>)
                    run_fused(destination_view(dst).data, plan.elements, e, device, plan.pass);
            }
            return;
        }
        switch (plan.path) {
        case route::nothing:
            return;
        case route::through_temporary:
            // (Only where a destination or a leaf has no view, which also makes the route Eigen's: no other
            // instantiation copies through Eigen's executor.)
            if constexpr (fixed == route::eigen && !packed_memory_v<D>) // (a packed one: the error above)
                run_through_temporary(dst, e, device);
            else
                throw std::logic_error("mixt: internal: a temporary planned for an expression of arrays in memory");
            return;
        case route::flat: // (above)
            return;
        case route::runs:
            if constexpr (fixed == route::runs)
                run_strided<view_element_t<D>>(destination_view(dst).data, plan, e, device);
            return;
        case route::gpu:
            if constexpr (fixed == route::gpu)
                gpu::run(destination_view(dst).data, *plan.space, e, device); // mixt's own kernel (gpu.hpp)
            return;
        case route::eigen:
            if constexpr (fixed == route::eigen && eigen_tensor<D> && !packed_memory_v<D>) {
                constexpr int RD = array_traits<D>::rank;
                dst.device(device) = lower_to<DstScalar, array_traits<D>::layout, E, RD>(e, shape_of(dst));
            }
            return;
        default:
            throw std::logic_error(std::string("mixt: internal: route ") + name(plan.path) + " planned for an elementwise pass");
        }
    }
}

/// The elementwise pass of e into dst once every check has passed (eval's into its new result, a temporary's, a
/// reduction's result stretched into its destination): planned (plan_of), then executed.
template <class Dst, class E, class Device>
void run_checked(Dst& dst, const E& e, const Device& device) {
    using D = std::remove_cvref_t<Dst>;
    checked c = checked::views;
    if constexpr (flat_candidate_v<D, E> && cpu_device_v<Device>)
        if (same_shape_leaves(dst, e)) c = checked::flat;
    execute(dst, e, device, plan_of(dst, e, device, c));
}

/// The executor of route::reduce_into_destination (reduces_into_destination decided it): the reduction r
/// written straight into dst's memory. Every check (the shapes included) comes before the first write.
template <class Dst, class Red, class Device>
void reduce_into_destination(Dst& dst, const Red& r, const Device& device) {
    constexpr int R = Red::rank;
    const auto v = destination_view(dst);
    // A result that broadcasts to dst (a [1, n] sum into [m, n]) goes into a tensor of its own shape, then
    // stretched into dst by an elementwise pass.
    // (Constructed only then: a tensor of rank 0 allocates its one element as it is constructed.)
    std::optional<reduction_tensor_t<Red>> own;
    reduce_into(r, device, [&](const shape_t<R>& shape) {
        if (shape == v.dims) return v.data;
        if (!broadcasts_to(shape, v.dims)) throw_destination_shape("assign", v.dims, shape);
        own.emplace(to_dsizes<R>(shape));
        return own->data();
    });
    // (A leaf that owns the tensor: the same elementwise pass as assign's for a reduction it materializes.)
    if (own) run_checked(dst, leaf<typename Red::policy, reduction_tensor_t<Red>>{{}, std::move(*own)}, device);
}

/// The pass through a temporary, for a destination and an operand that may share memory without both being
/// views (check_assign): the expression into a new tensor of the destination's shape and dtype, then that
/// tensor copied into the destination, so that every operand is read before the first write.
template <class Dst, class E, class Device>
void run_through_temporary(Dst& dst, const E& e, const Device& device) {
    using D = std::remove_cvref_t<Dst>;
    using DstScalar = std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>;
    constexpr int R = array_traits<D>::rank;
    if constexpr (!cpu_device_v<Device> || eigen_dense<D>) {
        (void)dst;
        (void)e;
        (void)device;
        throw aliasing_error("mixt: assign: the destination may share memory with an operand and has no memory view "
                             "(or an operand is an Eigen expression over the destination's memory); on this device, "
                             "evaluate into a separate tensor first");
    } else {
        Eigen::Tensor<DstScalar, R, array_traits<D>::layout == static_cast<int>(Eigen::RowMajor) ? Eigen::RowMajor
                                                                                               : Eigen::ColMajor>
            temporary(to_dsizes<R>(shape_of(dst)));
        run_checked(temporary, e, device);
        dst.device(device) = temporary;
    }
}

// Whether every leaf of E is a Dense object (eval then returns a Dense Array); false for a leafless E, and for
// one whose arrays are all inside reductions (`sum(t, 1) * 2`: a reduction's result is a tensor).
template <class E>
struct all_dense : std::false_type {};
template <class P, class X>
struct all_dense<leaf<P, X>> : leaf_is_dense<leaf<P, X>> {};
template <class Op, class... Cs>
struct all_dense<node<Op, Cs...>>
    : std::bool_constant<!boost::mp11::mp_empty<leaf_list_t<node<Op, Cs...>>>::value &&
                         boost::mp11::mp_all_of<leaf_list_t<node<Op, Cs...>>, leaf_is_dense>::value> {};

/// What eval returns for `e` with elements of T: a Dense Array when every operand is a Dense object (of rank 1, a
/// row where the operands are row vectors, else a column; a matrix-shaped array of rank 2 in the operands'
/// order), else an Eigen::Tensor (of Eigen's default layout at rank 0 and 1, where both layouts are the same
/// memory: `Eigen::Tensor<T, 0> r = eval(...)`).
template <class T, class E, class Ex = std::remove_cvref_t<E>>
using eval_result_t = std::conditional_t<
    all_dense<Ex>::value,
    std::conditional_t<Ex::rank == 1,
                       std::conditional_t<orientation_of<Ex>() == 2, Eigen::Array<T, 1, Eigen::Dynamic>,
                                          Eigen::Array<T, Eigen::Dynamic, 1>>,
                       Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic,
                                    Ex::layout == static_cast<int>(Eigen::RowMajor) ? Eigen::RowMajor : Eigen::ColMajor>>,
    Eigen::Tensor<T, Ex::rank, result_layout_v<Ex::rank, Ex::layout>>>;

template <class Result, int R>
Result make_result(const shape_t<R>& shape) {
    if constexpr (eigen_dense<Result>) {
        if constexpr (R == 1)
            return Result(shape[0]);
        else
            return Result(shape[0], shape[1]);
    } else {
        return Result(to_dsizes<R>(shape));
    }
}

template <class Result, class E, class Device>
Result eval_into_new(const E& e, const Device& device) {
    constexpr int R = std::remove_cvref_t<E>::rank;
    const auto shape = broadcast_shape(e, "eval");
    check_literals(e);
    Result result = make_result<Result, R>(shape);
    run_checked(result, e, device);
    return result;
}
} // namespace detail

/// Evaluates `e` into `dst` on `device`, in one pass. `dst` has the shape of `e`'s operands broadcast: an
/// Eigen::Tensor or TensorMap, a view of one (`chip`, `slice`, `stride`), or an Eigen Dense object in memory
/// (Array, Matrix, Map, Block, Ref).
template <class Dst, class E, class Device = Eigen::DefaultDevice>
    requires(eigen_array<Dst> && mixt_expression<E>)
void assign(Dst&& dst, const E& e, const Device& device = Device{}) {
    using D = std::remove_cvref_t<Dst>;
    using DstScalar = std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>;
    using Ex = std::remove_cvref_t<E>;
    using policy = detail::policy_or_default<typename Ex::policy>;
    // The expression broadcasts to the destination (NumPy's `out=`), so its rank may be lower.
    constexpr bool rank_fits = Ex::rank <= detail::array_traits<D>::rank;
    // (A layout of -2, row- and column-major operands mixed, is already an error where e was built.)
    constexpr bool same_layout = Ex::rank < 2 || Ex::layout == -2 || Ex::layout == detail::array_traits<D>::layout;
    constexpr bool converts = detail::assignable<policy, typename Ex::tag, tag_of_t<DstScalar>>();
    constexpr bool writable = !(std::is_const_v<std::remove_reference_t<Dst>> && detail::owns_its_elements_v<D>);
    static_assert(rank_fits, "mixt: assign: the expression's rank is higher than the destination's (an expression "
                             "broadcasts to its destination; the destination never stretches)");
    static_assert(same_layout,
                  "mixt: assign: the destination's layout (row- or column-major) differs from the expression's");
    // Instantiated for its error only (the static_assert inside it): no second error after mixt's message.
    static_assert(sizeof(typename detail::check_assignable<policy, typename Ex::tag, tag_of_t<DstScalar>>::type*) > 0);
    static_assert(writable, "mixt: assign: the destination is read-only (a const tensor or Dense object)");
    static_assert(detail::writable_destination_v<D>,
                  "mixt: assign: the destination is read-only (a map of const elements, or a view of a const tensor)");
    // After an error above, nothing below is compiled (it would only add errors of its own).
    constexpr bool valid =
        rank_fits && same_layout && converts && writable && detail::writable_destination_v<D> && detail::well_formed_v<E>;
    if constexpr (!valid) {
        (void)dst;
        (void)e;
        (void)device;
    } else if constexpr (detail::has_reduction_v<E>) {
        if constexpr (detail::gpu_device_v<Device>) {
            // The reductions first, each into device memory of its own (eval/gpu_reduce.hpp), freed on the
            // device's stream after the elementwise pass.
            using G = detail::gpu_reductions<Device>;
            typename G::buffers buffers(device.stream());
            assign(static_cast<Dst&&>(dst), G::materialize(e, device, buffers), device);
        } else {
            // A reduction of dst's dtype, straight into dst's memory where the plan says so; else the reductions
            // first (each into a tensor of its own result's size), then the elementwise pass.
            if (detail::plan_of(dst, e, device).path == route::reduce_into_destination) {
                if constexpr (detail::may_reduce_into_v<D, E>) detail::reduce_into_destination(dst, e, device);
                return;
            }
            assign(static_cast<Dst&&>(dst), detail::materialize(e, device), device);
        }
    } else {
        const detail::checked verdict = detail::check_destination<Device>(dst, e, "assign");
        detail::execute(dst, e, device, detail::plan_of(dst, e, device, verdict));
    }
}

// eval's result is an array in host memory, which a kernel on a GPU cannot write.
#define MIXT_EVAL_ON_GPU_MESSAGE                                                                                     \
    "mixt: eval: the result is allocated in host memory, which a GPU kernel cannot write; on an Eigen::GpuDevice, " \
    "allocate the result on the device and mixt::assign into a TensorMap of it"

/// Evaluates `e` into a new array of `value_t<E>`, in one pass: an Eigen::Tensor of the broadcast shape, or,
/// when every operand is an Eigen Dense object, a Dense Array.
template <class E, class Device = Eigen::DefaultDevice>
    requires mixt_expression<E>
detail::eval_result_t<value_t<E>, E> eval(const E& e, const Device& device = Device{}) {
    using Result = detail::eval_result_t<value_t<E>, E>;
    static_assert(!detail::gpu_device_v<Device>, MIXT_EVAL_ON_GPU_MESSAGE);
    if constexpr (!detail::well_formed_v<E>)
        return Result{}; // after mixt's error where e was built: nothing else to report
    else if constexpr (is_reduction<std::remove_cvref_t<E>>::value)
        return detail::reduce_into_new(e, device);
    else if constexpr (detail::has_reduction_v<E>)
        return detail::eval_into_new<Result>(detail::materialize(e, device), device);
    else
        return detail::eval_into_new<Result>(e, device);
}

/// Evaluates `e` into a new array of dtype T (its storage type), in one pass: `eval<float>(lazy(i8) * 2)`.
/// The result converts to T as `assign` converts it, so T must be a dtype that value_t<E> promotes to (else
/// the same compile error as assign, which suggests mixt::cast). `Eigen::Tensor<float, 1> r = eval(f64_expr)`
/// fails inside Eigen's assignment instead: eval<float> says what is wrong.
template <class T, class E, class Device = Eigen::DefaultDevice>
    requires mixt_expression<E>
detail::eval_result_t<T, E> eval(const E& e, const Device& device = Device{}) {
    using Ex = std::remove_cvref_t<E>;
    using policy = detail::policy_or_default<typename Ex::policy>;
    static_assert(!detail::gpu_device_v<Device>, MIXT_EVAL_ON_GPU_MESSAGE);
    static_assert(sizeof(typename detail::check_evaluable<policy, typename Ex::tag, tag_of_t<T>>::type*) > 0);
    if constexpr (!detail::well_formed_v<E>)
        return detail::eval_result_t<T, E>{}; // after mixt's error where e was built
    else if constexpr (detail::assignable<policy, typename Ex::tag, tag_of_t<T>>() && detail::has_reduction_v<E>)
        return detail::eval_into_new<detail::eval_result_t<T, E>>(detail::materialize(e, device), device);
    else if constexpr (detail::assignable<policy, typename Ex::tag, tag_of_t<T>>())
        return detail::eval_into_new<detail::eval_result_t<T, E>>(e, device);
    else
        return detail::eval_result_t<T, E>{}; // after the error above: nothing else to report
}

} // namespace mixt

#undef MIXT_EVAL_ON_GPU_MESSAGE

#endif // MIXT_EVAL_ASSIGN_HPP
