#ifndef MIXT_EVAL_EXPLAIN_HPP
#define MIXT_EVAL_EXPLAIN_HPP

// `mixt::explain(dst, e [, device])` and `mixt::explain(e [, device])`: the plan that `assign(dst, e, device)`
// or `eval(e, device)` would run, as text, after the same checks (a check that fails throws the same error) and
// without writing anything. One `key: value` line each:
//   route      the executor (mixt::route: flat, runs, through_temporary, reduce_into_destination, ...)
//   result     the destination's dtype and shape
//   space      the iteration space: dimensions in the destination's memory order, innermost last, and each
//              operand's strides in elements (the destination first; 0 where an operand is broadcast)
//   runs       how a `runs` pass is cut: runs, elements per run, the operands staged (copied) per run
//   loop       the fused loop the kernel compiles to on this target, and its SIMD width
//   threads    the threads the pass takes (decide_pass)
//   stores     streaming stores, software prefetch (of the destination's lines, and of the inputs')
//   reduction  for a reduction at the root: kind, strategy, output rows, stream per row, columns, lanes,
//              block and super-block sizes, tasks
// The route and the decisions are the ones the evaluation takes (eval/plan.hpp); the lines are for a reader.

#include <sstream>
#include <string>
#include <type_traits>

#include "mixt/eval/assign.hpp"
#include "mixt/eval/plan.hpp"
#include "mixt/eval/reduce.hpp"

namespace mixt {

namespace detail {

// A pass's software prefetch as the "stores" line says it (streaming stores ask for no lines: run_range_of).
inline const char* prefetch_text(const pass_options& o) {
    switch (o.prefetch) {
    case prefetch_kind::stores: return o.stream ? "" : ", prefetch ahead of the stores";
    case prefetch_kind::loads_and_stores: return o.stream ? ", prefetch of inputs" : ", prefetch of inputs and ahead of the stores";
    default: return "";
    }
}

template <class T, int R>
std::string result_text(const shape_t<R>& dims) {
    return std::string(name(dtype_of_v<T>)) + " " + shape_text(dims);
}

template <class D, class K>
std::string loop_text() {
    if constexpr (wide_loop_v<D, K>)
        return "16-lane (AVX-512)";
    else if constexpr (word_loop_v<D, K>)
        return "32-lane words (AVX-512)";
    else if constexpr (block_loop_v<false, D, K>)
        return "blocks of 64 elements (vectorized by the compiler)";
    else if constexpr (simd::avx2)
        return "8-lane (AVX2)";
    else
        return "8-lane portable batches";
}

template <std::size_t N>
std::string dims_text(const std::array<index_t, N>& a, int rank) {
    std::ostringstream s;
    s << '[';
    for (int d = 0; d < rank; ++d) s << (d ? ", " : "") << a[static_cast<std::size_t>(d)];
    s << ']';
    return s.str();
}

template <class D, class E, int R, std::size_t M>
void explain_pass(std::ostringstream& out, const elementwise_plan<R, M>& plan) {
    out << "route: " << name(plan.path) << '\n';
    if (plan.path == route::flat || plan.path == route::runs || plan.path == route::gpu) {
        const iteration_space<R, M> space = plan.space ? *plan.space : flat_space<R, M>(plan.elements);
        out << "space: dims " << dims_text(space.dims, space.rank) << ", strides";
        for (std::size_t k = 0; k < M; ++k)
            out << (k ? " " : " dst ") << (k ? "op" + std::to_string(k) + " " : "")
                << dims_text(space.strides[k], space.rank);
        out << '\n';
    }
    if (plan.path == route::runs) {
        std::size_t staged = 0, per_row = 0;
        for (std::size_t k = 0; k < M; ++k) {
            const bool once = k > 0 && k <= 64 && ((plan.runs->per_row >> (k - 1)) & 1) != 0;
            per_row += once ? 1 : 0;
            staged += plan.runs->direct[k] || once ? 0 : 1;
        }
        const run_plan& r = plan.runs->plan;
        out << "runs: " << r.items << " of " << (r.rows > 1 ? r.rows * plan.space->inner() : r.piece)
            << " elements, staged operands " << staged;
        if (per_row > 0) out << ", operands read once per row " << per_row;
        out << '\n';
    }
    if constexpr (static_route<D, E, Eigen::DefaultDevice>() == route::runs)
        if (plan.path == route::flat || plan.path == route::runs)
            out << "loop: " << loop_text<std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>,
                                     decltype(make_kernel<std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>>(
                                         std::declval<const E&>()))>()
            << '\n';
    out << "threads: " << plan.pass.threads << '\n';
    out << "stores: " << (plan.pass.options.stream ? "streaming" : "plain")
        << prefetch_text(plan.pass.options) << '\n';
}

template <class Red, class Device>
void explain_reduction(std::ostringstream& out, const Red& r, const Device& device) {
    using C = typename Red::child_type;
    out << "reduction: " << reduce_name(Red::kind);
    if constexpr (fusable_v<C> && !has_reduction_v<C>) {
        const auto planned = plan_reduction(r, r.child, device);
        const auto& plan = planned.layout;
        const pass_decision& pass = planned.pass;
        out << ", result " << result_text<value_t<Red>, Red::rank>(plan.out_shape) << ", strategy "
            << name(planned.strategy) << ", rows " << plan.rows << ", stream "
            << plan.stream << ", columns " << plan.columns << ", lanes " << plan.shape.P << ", block " << plan.shape.block;
        if (planned.blocks_side_by_side > 1) out << " (" << planned.blocks_side_by_side << " side by side)";
        out << ", super-block " << plan.super << ", tasks " << plan.rows * plan.per_row << '\n';
        out << "threads: " << pass.threads << '\n';
        out << "stores: plain" << (pass.options.prefetch == prefetch_kind::loads_and_stores ? ", prefetch" : "")
            << (planned.ahead_end ? ", scans prefetch ahead to the array's end" : "")
            << (planned.rows_ahead ? ", short rows prefetched ahead" : "") << '\n';
    } else {
        out << ", its operand evaluated first (it holds a reduction or an Eigen expression)\n";
    }
}

} // namespace detail

namespace detail {
/// explain of an elementwise pass (no reduction inside) into dst with the checks' verdict c.
template <class Dst, class E, class Device>
std::string explain_elementwise(Dst& dst, const E& e, const Device& device, checked c) {
    using D = std::remove_cvref_t<Dst>;
    using DstScalar = std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>;
    const auto plan = plan_of(dst, e, device, c);
    std::ostringstream pass;
    explain_pass<D, E>(pass, plan);
    const std::string text = pass.str();
    const auto first_line = text.find('\n') + 1;
    return text.substr(0, first_line) + "result: " + result_text<DstScalar, array_traits<D>::rank>(shape_of(dst)) +
           "\n" + text.substr(first_line);
}
} // namespace detail

/// The plan of `assign(dst, e, device)` as text (the header's lines), after the same checks; nothing is written.
/// For an expression with reductions inside, the route alone: the reductions' own checks are made as they run.
template <class Dst, class E, class Device = Eigen::DefaultDevice>
    requires(eigen_array<Dst> && mixt_expression<E>)
std::string explain(Dst&& dst, const E& e, const Device& device = Device{}) {
    using D = std::remove_cvref_t<Dst>;
    using DstScalar = std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>;
    if constexpr (detail::has_reduction_v<E>) {
        std::ostringstream out;
        out << "route: " << name(detail::plan_of(dst, e, device).path) << '\n';
        out << "result: " << detail::result_text<DstScalar, detail::array_traits<D>::rank>(detail::shape_of(dst)) << '\n';
        if constexpr (is_reduction<std::remove_cvref_t<E>>::value) detail::explain_reduction(out, e, device);
        return out.str();
    } else {
        return detail::explain_elementwise(dst, e, device, detail::check_destination<Device>(dst, e, "explain"));
    }
}

/// The plan of `eval(e, device)` as text: that of e into a new result of its shape, checked as eval checks.
template <class E, class Device = Eigen::DefaultDevice>
    requires mixt_expression<E>
std::string explain(const E& e, const Device& device = Device{}) {
    using Ex = std::remove_cvref_t<E>;
    using Result = detail::eval_result_t<value_t<E>, E>;
    constexpr int R = Ex::rank;
    if constexpr (is_reduction<Ex>::value) {
        std::ostringstream out;
        out << "route: " << name(route::reduce_into_new) << '\n';
        detail::explain_reduction(out, e, device);
        return out.str();
    } else if constexpr (detail::has_reduction_v<E>) {
        return std::string("route: ") + name(route::reductions_first) + "\n";
    } else {
        Result result = detail::make_result<Result, R>(detail::broadcast_shape(e, "explain"));
        check_literals(e);
        detail::checked c = detail::checked::views; // a new result overlaps nothing
        if constexpr (detail::flat_candidate_v<Result, E> && detail::cpu_device_v<Device>)
            if (detail::same_shape_leaves(result, e)) c = detail::checked::flat;
        return detail::explain_elementwise(result, e, device, c);
    }
}

} // namespace mixt

#endif // MIXT_EVAL_EXPLAIN_HPP
