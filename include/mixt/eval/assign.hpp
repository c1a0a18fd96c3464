#ifndef MIXT_EVAL_ASSIGN_HPP
#define MIXT_EVAL_ASSIGN_HPP

// Evaluation: `eval(e)` returns a new Eigen::Tensor of `value_t<E>`; `assign(dst, e [, device])` writes into an
// existing tensor or map. Both check first, then run one pass over memory:
//   1. at compile time: the ranks and layouts agree, and the expression's dtype promotes implicitly to the
//      destination's under the policy (an int8 result may go into a float tensor; a float result into an int
//      tensor needs mixt::cast);
//   2. at run time, before the first write: every operand has the destination's shape (mixt::shape_error
//      prints both), every literal fits (mixt::overflow_error), and the destination does not partially overlap
//      an operand (mixt::aliasing_error; the very same elements, as in `assign(a, lazy(a) + 1)`, are fine).
//
//     Eigen::Tensor<float, 2> r = mixt::eval(mixt::lazy(a_i8) + b_f16 * c_f32 + 2);
//     mixt::assign(r, mixt::lazy(a_i8) * 0.5, thread_pool_device);

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/eval/errors.hpp"
#include "mixt/eval/fused.hpp"
#include "mixt/eval/lower.hpp"
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
    static constexpr bool value = false;
};
template <class ExprDtype, class ResultDtype, class Policy>
struct not_implicitly_evaluable {
    static_assert(sizeof(ExprDtype) == 0,
                  "mixt: eval<T>: the expression's dtype does not promote implicitly to T under this policy (they are "
                  "the arguments of the template being instantiated); write mixt::eval<T>(mixt::cast<T>(e)) to "
                  "convert explicitly");
    static constexpr bool value = false;
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
template <class Policy, class From, class To>
struct check_assignable<Policy, From, To, false> : assignment_error::not_implicitly_convertible<From, To, Policy> {};
template <class Policy, class From, class To, bool Ok = assignable<Policy, From, To>()>
struct check_evaluable : std::true_type {};
template <class Policy, class From, class To>
struct check_evaluable<Policy, From, To, false> : assignment_error::not_implicitly_evaluable<From, To, Policy> {};

[[noreturn]] MIXT_COLD inline void throw_partial_overlap(const char* what) {
    throw aliasing_error(std::string("mixt: ") + what +
                         ": the destination partially overlaps an operand of a different element width or "
                         "offset; evaluate into a separate tensor first");
}

template <class Dst, class E>
void check_before_write(const Dst& dst, const E& e, const char* what) {
    const auto dst_dims = dimensions_of(dst);
    const auto* dst_begin = reinterpret_cast<const unsigned char*>(dst.data());
    const auto* dst_end = dst_begin + static_cast<std::size_t>(dst_dims.TotalSize()) * sizeof(*dst.data());
    auto check_leaf = [&](const auto& x) {
        const auto dims = dimensions_of(x);
        if (!Eigen::dimensions_match(dims, dst_dims)) throw_shape_mismatch(what, "the destination", dst_dims, dims);
        if constexpr (requires { x.data(); }) {
            using S = std::remove_cvref_t<decltype(*x.data())>;
            const auto* b = reinterpret_cast<const unsigned char*>(x.data());
            const auto* end = b + static_cast<std::size_t>(dims.TotalSize()) * sizeof(S);
            const bool overlap = b != nullptr && dst_begin != nullptr && b < dst_end && dst_begin < end;
            if (overlap && !(b == dst_begin && sizeof(S) == sizeof(*dst.data()))) throw_partial_overlap(what);
        }
    };
    for_each_leaf(e, check_leaf);
    check_literals(e);
}

template <class Device>
inline constexpr bool is_thread_pool_device_v =
#if defined(EIGEN_USE_THREADS)
    std::is_same_v<Device, Eigen::ThreadPoolDevice>;
#else
    false;
#endif

#if defined(EIGEN_USE_THREADS)
/// How many pieces run_on_pool cuts a pass into per thread.
inline constexpr int pieces_per_thread = 4;

/// A pass on a ThreadPoolDevice: [0, n) in pieces_per_thread * `threads` contiguous pieces (multiples of 64
/// elements but the last), which the calling thread and `threads - 1` tasks on the pool take in turn from a
/// shared counter until none is left; the caller then waits for the pieces being computed, not for tasks that
/// have not started (a task that starts late finds no piece and only touches the shared state, which it keeps
/// alive). The caller computes instead of sleeping on a barrier while the pool works, as Eigen's parallelFor
/// does when it makes more blocks than threads: waking a sleeping thread costs tens of microseconds on a
/// virtual machine, which is most of a pass over 256K elements of f16 (0.5 MiB). Taking pieces in turn rather
/// than one range per thread keeps both cores' work when one of them runs slower: on the shared 2-core machine
/// of the benchmarks, `exp(f16) * bf16` at 262144 elements went in and out of 1.0x of one thread with fixed
/// halves (the pass waited for the slow half) over minutes. `threads` > 1 (run_fused runs a one-thread pass
/// itself); a pass of one piece (n <= 64, say) runs on the calling thread alone.
template <class D, class K>
void run_on_pool(D* dst, const K& kernel, Eigen::Index n, pass_options options, const Eigen::ThreadPoolDevice& device,
                 int threads) {
    eigen_assert(threads > 1);
    const Eigen::Index wanted = static_cast<Eigen::Index>(threads) * pieces_per_thread;
    const Eigen::Index piece = ((n + wanted - 1) / wanted + 63) & ~Eigen::Index{63};
    const auto pieces = static_cast<int>((n + piece - 1) / piece);
    if (pieces <= 1) {
        run_kernel(dst, kernel, 0, n, options);
        return;
    }
    struct shared_state {
        std::atomic<int> next{0};
        std::atomic<int> done{0};
    };
    const auto state = std::make_shared<shared_state>();
    // Computes pieces until none is left; `kernel` and `dst` are only touched for a piece that was taken, which
    // the caller waits for.
    const auto work = [state, &kernel, dst, n, piece, pieces, options] {
        for (int p; (p = state->next.fetch_add(1, std::memory_order_relaxed)) < pieces;) {
            const Eigen::Index first = p * piece, last = std::min(n, first + piece);
            run_kernel(dst, kernel, first, last, options);
            state->done.fetch_add(1, std::memory_order_release);
        }
    };
    for (int t = 1; t < std::min(threads, pieces); ++t) device.enqueueNoNotification(work);
    work();
    while (state->done.load(std::memory_order_acquire) < pieces) std::this_thread::yield();
}
#endif

template <class D, class E, class Device>
void run_fused(D* dst, Eigen::Index n, const E& e, const Device& device) {
    const pass_options options = options_for(n, leaf_bytes_v<E> + sizeof(D));
    if constexpr (is_thread_pool_device_v<Device>) {
        // A thread for every min_bytes_per_thread the pass moves, up to the device's threads (threads_for).
        const int threads = threads_for(static_cast<std::size_t>(n) * (leaf_bytes_v<E> + sizeof(D)), device.numThreads());
        if (threads > 1) {
            run_on_pool(dst, make_kernel<D>(e), n, options, device, threads);
            return;
        }
    }
    if (options.stream || options.prefetch) {
        run_kernel(dst, make_kernel<D>(e), 0, n, options);
    } else {
        // The kernel's values as arguments, in registers (run_range_of says why). The kernel of this branch
        // has no address taken: it lives in registers and is never stored.
        const auto kernel = make_kernel<D>(e);
        using K = std::remove_const_t<decltype(kernel)>;
        std::apply([&](const auto&... a) { run_range_of<false, false, D, K>(dst, 0, n, a...); }, kernel_args(kernel));
    }
}

template <class E>
using eval_tensor_t = Eigen::Tensor<value_t<E>, std::remove_cvref_t<E>::rank,
                                    std::remove_cvref_t<E>::layout == static_cast<int>(Eigen::RowMajor) ? Eigen::RowMajor
                                                                                                        : Eigen::ColMajor>;
// The pass itself, once check_before_write has passed: the fused loop where it applies, else Eigen's executor
// over the lowered expression.
template <class Dst, class E, class Device>
void run_checked(Dst& dst, const E& e, const Device& device) {
    using D = std::remove_cvref_t<Dst>;
    using DstScalar = typename Eigen::internal::traits<D>::Scalar;
    if constexpr (fusable_v<E> && is_plain_tensor<D>::value &&
                  (std::is_same_v<Device, Eigen::DefaultDevice> || is_thread_pool_device_v<Device>))
        run_fused(dst.data(), dst.size(), e, device);
    else
        dst.device(device) = lower_as<DstScalar>(e, first_leaf(e));
}
} // namespace detail

/// Evaluates `e` into `dst` (an Eigen::Tensor or TensorMap of the same shape) on `device`, in one pass.
template <class Dst, class E, class Device = Eigen::DefaultDevice>
    requires(eigen_tensor<Dst> && mixt_expression<E>)
void assign(Dst&& dst, const E& e, const Device& device = Device{}) {
    using D = std::remove_cvref_t<Dst>;
    using DstScalar = typename Eigen::internal::traits<D>::Scalar;
    using Ex = std::remove_cvref_t<E>;
    using policy = detail::policy_or_default<typename Ex::policy>;
    static_assert(Ex::rank == Eigen::internal::traits<D>::NumDimensions,
                  "mixt: assign: the destination's rank differs from the expression's");
    static_assert(Ex::layout == static_cast<int>(Eigen::internal::traits<D>::Layout),
                  "mixt: assign: the destination's layout (row- or column-major) differs from the expression's");
    static_assert(detail::check_assignable<policy, typename Ex::tag, tag_of_t<DstScalar>>::value);
    detail::check_before_write(dst, e, "assign");
    detail::run_checked(dst, e, device);
}

/// Evaluates `e` into a new Eigen::Tensor of `value_t<E>`, in one pass.
template <class E, class Device = Eigen::DefaultDevice>
    requires mixt_expression<E>
detail::eval_tensor_t<E> eval(const E& e, const Device& device = Device{}) {
    detail::check_operand_shapes(e, "eval");
    detail::eval_tensor_t<E> result(detail::dimensions_of(detail::first_leaf(e)));
    detail::check_before_write(result, e, "eval");
    detail::run_checked(result, e, device);
    return result;
}

/// Evaluates `e` into a new Eigen::Tensor of dtype T (its storage type), in one pass: `eval<float>(lazy(i8) * 2)`.
/// The result converts to T as `assign` converts it, so T must be a dtype that value_t<E> promotes to (else
/// the same compile error as assign, which suggests mixt::cast). `Eigen::Tensor<float, 1> r = eval(f64_expr)`
/// fails inside Eigen's assignment instead: eval<float> says what is wrong.
template <class T, class E, class Device = Eigen::DefaultDevice>
    requires mixt_expression<E>
Eigen::Tensor<T, std::remove_cvref_t<E>::rank, detail::eval_tensor_t<E>::Layout> eval(const E& e,
                                                                                       const Device& device = Device{}) {
    using Ex = std::remove_cvref_t<E>;
    using policy = detail::policy_or_default<typename Ex::policy>;
    static_assert(detail::check_evaluable<policy, typename Ex::tag, tag_of_t<T>>::value);
    detail::check_operand_shapes(e, "eval");
    Eigen::Tensor<T, Ex::rank, detail::eval_tensor_t<E>::Layout> result(detail::dimensions_of(detail::first_leaf(e)));
    detail::check_before_write(result, e, "eval");
    detail::run_checked(result, e, device);
    return result;
}

} // namespace mixt

#endif // MIXT_EVAL_ASSIGN_HPP
