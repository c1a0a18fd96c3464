#ifndef MIXT_EVAL_LOWER_HPP
#define MIXT_EVAL_LOWER_HPP

// Lowering a mixt expression to an ordinary Eigen tensor expression, with the conversions where the lattice
// puts them. This is the reference path of evaluation, the one that runs on any Eigen device (a thread pool,
// a GPU), and the bridge to the rest of Eigen:
//
//     auto lowered = mixt::to_eigen(mixt::lazy(a_i8) + b_f32);   // an Eigen expression of float
//     Eigen::Tensor<float, 0> total = lowered.sum();
//
// Every functor here is EIGEN_DEVICE_FUNC and calls only the per-element code of expr/functors.hpp and
// mixt::convert, so the same expression compiles as device code.

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/dtype/convert.hpp"
#include "mixt/errors.hpp"
#include "mixt/eval/check.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/literal.hpp"
#include "mixt/expr/reduce.hpp"
#include "mixt/expr/rules.hpp"
#include "mixt/simd/arch.hpp"

namespace mixt {

namespace detail {
template <class S, class From>
struct convert_functor {
    EIGEN_DEVICE_FUNC S operator()(const From& x) const { return mixt::convert<S>(x); }
};
template <class S, class Ignored>
struct constant_functor {
    S value;
    EIGEN_DEVICE_FUNC S operator()(const Ignored&) const { return value; }
};
// A float or double that GCC can neither fuse with the operation consuming it nor vectorize through: the
// products of a lowered expression. Eigen's executor runs mixt's functors in a scalar loop, which GCC
// vectorizes itself, and GCC 12's vectorizer drops the __builtin_assoc_barrier that keeps a product from being
// fused into a multiply-add elsewhere (expr/functors.hpp, rounded). An empty asm statement that takes and gives
// back the value in its register keeps it (the loop stays scalar, as Eigen would run it without packet ops).
// Clang's default does not fuse across statements, and device code has nvcc's -fmad instead.
template <class T>
EIGEN_DEVICE_FUNC T product_barrier(T v) {
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__)
        __asm__("" : "+x"(v));
#elif defined(__aarch64__)
        __asm__("" : "+w"(v));
#else
        __asm__("" : "+m"(v));
#endif
    }
#endif
    return v;
}

template <class Fn, class R>
struct apply_functor {
    template <class... Args>
    EIGEN_DEVICE_FUNC R operator()(const Args&... args) const {
        if constexpr (std::is_same_v<Fn, mul_fn>)
            return product_barrier(static_cast<R>(Fn{}(args...)));
        else
            return static_cast<R>(Fn{}(args...));
    }
};

} // namespace detail

namespace detail {
// The first leaf of the highest rank (the operand whose shape is the expression's when nothing broadcasts).
template <class P, class E>
const auto& first_leaf(const leaf<P, E>& l) {
    return l.x;
}
template <class Op, class... Cs>
const auto& first_leaf(const node<Op, Cs...>& n) {
    constexpr std::size_t k = [] {
        constexpr int ranks[] = {std::remove_cvref_t<Cs>::rank...};
        std::size_t i = 0;
        for (std::size_t j = 1; j < sizeof...(Cs); ++j)
            if (ranks[j] > ranks[i]) i = j;
        return i;
    }();
    return first_leaf(std::get<k>(n.children));
}

template <class X>
auto dimensions_of(const X& x) {
    const auto s = shape_of(x);
    Eigen::DSizes<Eigen::Index, array_traits<X>::rank> d;
    for (std::size_t i = 0; i < s.size(); ++i) d[static_cast<Eigen::Index>(i)] = s[i];
    return d;
}

namespace lowering_error {
template <class DenseOperand>
struct dense_operand {
    static_assert(sizeof(DenseOperand) == 0,
                  "mixt: to_eigen, and evaluation on devices other than DefaultDevice and ThreadPoolDevice, take Eigen "
                  "tensors; a Dense operand (the argument of the template being instantiated) is evaluated by "
                  "mixt::eval and mixt::assign on the CPU; for the rest, wrap its memory in an Eigen::TensorMap");
    static constexpr bool value = false;
    using type = void;
};
/// to_eigen of min or max of complex values (Eigen's reducers have no order for them).
template <class Complex>
struct complex_extreme {
    static_assert(sizeof(Complex) == 0, "mixt: to_eigen: Eigen's min/max reducers do not order complex values (the "
                                        "template argument); evaluate the reduction with mixt::eval");
    using type = void;
};
/// to_eigen of an expression with a reduction in it (the template's argument).
template <class Expression>
struct reduction_operand {
    static_assert(sizeof(Expression) == 0,
                  "mixt: to_eigen lowers a reduction only at the root of an expression (the template's argument has "
                  "one inside); evaluate the inner reduction with mixt::eval first");
    using type = void;
};
} // namespace lowering_error

template <class L>
using leaf_is_dense = std::bool_constant<eigen_dense<typename L::eigen_type>>;
template <class L>
using leaf_eigen_type = typename L::eigen_type;
/// The Eigen type of the first leaf of E that is a Dense object, void if none is.
template <class E>
using first_dense_leaf_t = boost::mp11::mp_front<boost::mp11::mp_push_back<
    boost::mp11::mp_transform<leaf_eigen_type, boost::mp11::mp_copy_if<leaf_list_t<E>, leaf_is_dense>>, void>>;

/// What lowering needs besides the tree: the shape of the result, and an operand of the highest rank (`ref`),
/// broadcast to it, to give literals a shape.
template <int R, class Ref, int Layout>
struct lowering {
    static constexpr int layout = Layout;
    Eigen::DSizes<Eigen::Index, R> dims;
    const Ref& ref;
};

/// The Eigen expression of an array operand broadcast to the result's shape: reshaped to the result's rank
/// (leading dimensions of size 1) and broadcast (Eigen's broadcast reads straight through where nothing
/// stretches).
template <int Layout, int R, class X>
auto broadcast_operand(const X& x, const Eigen::DSizes<Eigen::Index, R>& dims) {
    if constexpr (eigen_dense<X>) {
        static_assert(lowering_error::dense_operand<X>::value);
        return 0;
    } else if constexpr (array_traits<X>::rank <= 1 && array_traits<X>::layout != Layout) {
        // Rank 0 and 1 are laid out alike either way; Eigen wants one layout in an expression.
        return broadcast_operand<Layout>(x.swap_layout(), dims);
    } else {
        constexpr int r = array_traits<X>::rank;
        if constexpr (R == 0) {
            return x.reshape(dims); // rank 0 into rank 0: the same element
        } else {
            const auto own = shape_of(x);
            Eigen::DSizes<Eigen::Index, R> shape;
            Eigen::array<Eigen::Index, R> factors;
            for (int d = 0; d < R; ++d) {
                shape[d] = d < R - r ? 1 : own[static_cast<std::size_t>(d - (R - r))];
                factors[static_cast<std::size_t>(d)] = shape[d] == dims[d] ? 1 : dims[d];
            }
            // A tensor or map is mapped again at the result's rank (leading 1s) rather than reshaped: Eigen 3.4's
            // block evaluation of a broadcast reshape of complex elements writes past its buffer (a map of
            // complex elements has no block access, as a tensor has none), and Eigen's broadcast wants no
            // dimension of size 0, which the map gives as 1 stretched 0 times (nothing is read).
            if constexpr (is_tensor_or_map<X>::value) {
                for (int d = 0; d < R; ++d) {
                    if (shape[d] == 0) {
                        shape[d] = 1;
                        factors[static_cast<std::size_t>(d)] = 0;
                    }
                }
                using T = typename Eigen::internal::traits<X>::Scalar;
                constexpr int layout = array_traits<X>::layout;
                using mapped = Eigen::TensorMap<const Eigen::Tensor<std::add_const_t<T>, R, layout>>;
                return mapped(x.data(), shape).broadcast(factors);
            } else if constexpr (r == R) {
                // The op itself, not x.broadcast(): an Eigen broadcast (`t.broadcast(b)` as a leaf) has an
                // accessor named broadcast() that hides TensorBase's.
                return Eigen::TensorBroadcastingOp<const decltype(factors), const X>(x, factors);
            } else {
                return x.reshape(shape).broadcast(factors);
            }
        }
    }
}

template <class S, class E, class Low>
decltype(auto) lower_as(const E& e, const Low& low);
template <class O, class E, class Low>
auto lower_compute(const E& e, const Low& low);

template <class P, class E, class Low>
auto lower_impl(const leaf<P, E>& l, const Low& low) {
    return broadcast_operand<Low::layout>(l.x, low.dims);
}
template <class V, class Low>
auto lower_impl(const literal<V>& l, const Low& low) {
    const auto ref = broadcast_operand<Low::layout>(low.ref, low.dims);
    using R = typename Eigen::internal::traits<decltype(ref)>::Scalar;
    return ref.unaryExpr(constant_functor<V, R>{l.value});
}
template <class T, class Low>
auto lower_impl(const scalar<T>& s, const Low& low) {
    const auto ref = broadcast_operand<Low::layout>(low.ref, low.dims);
    using R = typename Eigen::internal::traits<decltype(ref)>::Scalar;
    return ref.unaryExpr(constant_functor<T, R>{s.value});
}
template <class Op, class... Cs, class Low>
auto lower_impl(const node<Op, Cs...>& n, const Low& low) {
    using N = node<Op, Cs...>;
    using ops = typename N::operand_types;
    using R = typename N::value_type;
    if constexpr (literal_compare_v<N>) {
        const literal_compare_parts<N> parts(n);
        return lower_as<typename decltype(parts)::join>(parts.array, low).unaryExpr(parts.compare);
    } else {
        // The operation in its compute type C: R itself, or for a narrow dtype f32 or i32, the result converted
        // back (dtype/storage.hpp, narrow_compute_t; the kernel tree does the same, eval/kernel.hpp).
        using C = narrow_compute_t<R>;
        auto computed = [&] {
            if constexpr (sizeof...(Cs) == 1) {
                return lower_compute<boost::mp11::mp_at_c<ops, 0>>(std::get<0>(n.children), low)
                    .unaryExpr(apply_functor<typename Op::fn, C>{});
            } else if constexpr (sizeof...(Cs) == 2) {
                return lower_compute<boost::mp11::mp_at_c<ops, 0>>(std::get<0>(n.children), low)
                    .binaryExpr(lower_compute<boost::mp11::mp_at_c<ops, 1>>(std::get<1>(n.children), low),
                                apply_functor<typename Op::fn, C>{});
            } else if constexpr (std::is_same_v<Op, op::where>) {
                return lower_as<bool>(std::get<0>(n.children), low)
                    .select(lower_compute<R>(std::get<1>(n.children), low), lower_compute<R>(std::get<2>(n.children), low));
            } else {
                static_assert(std::is_same_v<Op, op::clip>);
                return lower_compute<R>(std::get<0>(n.children), low)
                    .binaryExpr(lower_compute<R>(std::get<1>(n.children), low), apply_functor<maximum_fn, C>{})
                    .binaryExpr(lower_compute<R>(std::get<2>(n.children), low), apply_functor<minimum_fn, C>{});
            }
        }();
        if constexpr (std::is_same_v<C, R>)
            return computed;
        else
            return computed.unaryExpr(convert_functor<R, C>{});
    }
}

template <class S, class E, class Low>
decltype(auto) lower_as(const E& e, const Low& low) {
    using V = value_t<E>;
    if constexpr (is_literal_v<E>) {
        const auto ref = broadcast_operand<Low::layout>(low.ref, low.dims);
        using R = typename Eigen::internal::traits<decltype(ref)>::Scalar;
        return ref.unaryExpr(constant_functor<S, R>{mixt::convert<S>(e.value)});
    } else if constexpr (std::is_same_v<S, V>) {
        return lower_impl(e, low);
    } else {
        return lower_impl(e, low).unaryExpr(convert_functor<S, V>{});
    }
}

/// `e` lowered as O, then widened to O's compute type (a narrow O's f32 or i32; a literal rounded to O first).
template <class O, class E, class Low>
auto lower_compute(const E& e, const Low& low) {
    using C = narrow_compute_t<O>;
    if constexpr (std::is_same_v<C, O>) {
        return lower_as<O>(e, low);
    } else if constexpr (is_literal_v<E>) {
        const auto ref = broadcast_operand<Low::layout>(low.ref, low.dims);
        using Ref = typename Eigen::internal::traits<decltype(ref)>::Scalar;
        return ref.unaryExpr(constant_functor<C, Ref>{mixt::convert<C>(mixt::convert<O>(e.value))});
    } else {
        return lower_as<O>(e, low).unaryExpr(convert_functor<C, O>{});
    }
}

// The left operand: lower_to's root, over a constant of the result's shape.
struct first_operand_functor {
    template <class A, class B>
    EIGEN_DEVICE_FUNC A operator()(const A& a, const B&) const {
        return a;
    }
};

/// The lowering of `e` to an Eigen expression of S with the result's shape `dims` (broadcast_shape). Its root
/// pairs the expression with a constant (a nullary expression, which has no block access), so Eigen evaluates
/// it element by element as it evaluates any cwise expression of tensors, not in blocks as it would once a
/// broadcast is in the tree: block evaluation allocates scratch memory on every assignment, and Eigen 3.4's
/// block broadcasting of complex elements writes past its buffer. Where nothing stretches, Eigen's broadcast
/// reads straight through.
template <class S, int Layout = -1, class E, int R = std::remove_cvref_t<E>::rank>
auto lower_to(const E& e, const shape_t<R>& dims) {
    // The layout of the result: the expression's (column-major where it has none), or the destination's.
    constexpr int layout = Layout >= 0 ? Layout
                           : std::remove_cvref_t<E>::layout == static_cast<int>(Eigen::RowMajor)
                               ? static_cast<int>(Eigen::RowMajor)
                               : static_cast<int>(Eigen::ColMajor);
    const auto& ref = first_leaf(e);
    const lowering<R, std::remove_cvref_t<decltype(ref)>, layout> low{to_dsizes<R>(dims), ref};
    // The constant is of the result's shape, made over one broadcast operand (a small type, unlike the
    // lowered expression's).
    const auto shape_of_result = broadcast_operand<layout>(ref, low.dims);
    using R0 = std::remove_const_t<typename Eigen::internal::traits<decltype(shape_of_result)>::Scalar>;
    return lower_as<S>(e, low).binaryExpr(shape_of_result.constant(R0{}), first_operand_functor{});
}
} // namespace detail

namespace detail {
[[noreturn]] MIXT_COLD inline void throw_lowered_empty_reduction(std::string_view what) {
    throw shape_error("mixt: to_eigen: " + std::string(what) + " of an empty set of elements is undefined");
}

/// A reduction at the root whose operand has no reduction and no Dense leaf (to_eigen lowers those).
template <class E>
struct lowerable_reduction : std::false_type {};
template <reduce_kind K, class C, std::size_t N, bool Keep, bool Given>
struct lowerable_reduction<reduction<K, C, N, Keep, Given>>
    : std::bool_constant<!has_reduction_v<C> && std::is_void_v<first_dense_leaf_t<C>>> {};

/// to_eigen of a reduction at the root: the operand lowered in the accumulator's dtype, then Eigen's reducer
/// over the same axes (NaN-propagating for min and max), converted to the result's dtype. The results are
/// Eigen's: its sums add in its own order (within the same bound as mixt's, not equal bit for bit), the sign of
/// a zero min or max is its, and its argmin/argmax do not take a NaN for the extreme.
template <class Red>
auto lower_reduction(const Red& r) {
    using C = typename Red::child_type;
    constexpr int R = C::rank;
    constexpr reduce_kind K = Red::kind;
    using A = typename Red::accumulator_type;
    using T = value_t<Red>;
    const std::string what(reduce_name(K));
    const auto dims = broadcast_shape(r.child, ("to_eigen of " + what).c_str());
    check_literals(r.child);
    Eigen::array<Eigen::Index, Red::axis_count> axes{};
    Eigen::Index count = 1;
    for (std::size_t i = 0; i < Red::axis_count; ++i) {
        axes[i] = r.axes[i];
        count *= dims[static_cast<std::size_t>(r.axes[i])];
    }
    if (count == 0 && (K == reduce_kind::min || K == reduce_kind::max || K == reduce_kind::argmin || K == reduce_kind::argmax))
        throw_lowered_empty_reduction(what);
    // Integers are reduced as unsigned integers of at least 32 bits (Eigen's reducers use `+=` and `*=`: a signed
    // or narrow one would overflow as an int, which is undefined): the same result modulo 2^n, converted back.
    using L = std::conditional_t<is_int_v<A> && (K == reduce_kind::sum || K == reduce_kind::prod || K == reduce_kind::mean),
                                 std::conditional_t<(sizeof(A) < 4), std::uint32_t, std::make_unsigned_t<
                                     std::conditional_t<is_int_v<A>, A, int>>>,
                                 A>;
    const auto x = lower_to<L>(r.child, dims);
    // The result's dimensions with keepdims: the reduced ones of size 1.
    Eigen::DSizes<Eigen::Index, Red::rank> out{};
    if constexpr (Red::keep) {
        for (int d = 0; d < R; ++d) out[d] = dims[static_cast<std::size_t>(d)];
        for (std::size_t i = 0; i < Red::axis_count; ++i) out[r.axes[i]] = 1;
    }
    const auto shaped = [&](const auto& reduced) {
        if constexpr (Red::keep)
            return reduced.reshape(out);
        else
            return reduced;
    };
    if constexpr ((K == reduce_kind::min || K == reduce_kind::max) && is_complex_v<A>) {
        static_assert(sizeof(typename lowering_error::complex_extreme<A>::type*) > 0);
        return 0;
    } else if constexpr (K == reduce_kind::sum)
        return shaped(x.sum(axes).template cast<A>().template cast<T>());
    else if constexpr (K == reduce_kind::prod)
        return shaped(x.prod(axes).template cast<A>().template cast<T>());
    else if constexpr (K == reduce_kind::mean && is_int_v<A>)
        return shaped((x.sum(axes).template cast<A>().template cast<double>() / static_cast<double>(count)).template cast<T>());
    else if constexpr (K == reduce_kind::mean && is_complex_v<A>)
        return shaped((x.sum(axes) / A(static_cast<typename A::value_type>(count))).template cast<T>());
    else if constexpr (K == reduce_kind::mean)
        return shaped((x.sum(axes) / static_cast<A>(count)).template cast<T>());
    else if constexpr (K == reduce_kind::min)
        return shaped(x.template minimum<decltype(axes), Eigen::PropagateNaN>(axes).template cast<T>());
    else if constexpr (K == reduce_kind::max)
        return shaped(x.template maximum<decltype(axes), Eigen::PropagateNaN>(axes).template cast<T>());
    else if constexpr (K == reduce_kind::any)
        return shaped(x.any(axes));
    else if constexpr (K == reduce_kind::all)
        return shaped(x.all(axes));
    else if constexpr (Red::axis_count == 1 && R > 1 && K == reduce_kind::argmin) // along one axis
        return shaped(x.argmin(axes[0]).template cast<T>());
    else if constexpr (Red::axis_count == 1 && R > 1)
        return shaped(x.argmax(axes[0]).template cast<T>());
    else if constexpr (K == reduce_kind::argmin) // over all axes: the flat index in the layout's order
        return shaped(x.argmin().template cast<T>());
    else
        return shaped(x.argmax().template cast<T>());
}
} // namespace detail

/// An ordinary Eigen tensor expression of `value_t<E>` that computes `e` element by element, converting where
/// the lattice says, its operands broadcast to the expression's shape. It refers to `e`'s operands: keep them
/// alive while it is used. Checks first, as eval does: operands whose shapes do not broadcast throw
/// mixt::shape_error, a literal that does not fit mixt::overflow_error.
template <class E>
    requires mixt_expression<E>
auto to_eigen(const E& e) {
    if constexpr (!detail::well_formed_v<E>) {
        return 0; // after mixt's error where e was built (expression.hpp, well_formed): nothing else to report
    } else if constexpr (detail::lowerable_reduction<std::remove_cvref_t<E>>::value) {
        return detail::lower_reduction(e);
    } else if constexpr (detail::has_reduction_v<E>) {
        static_assert(sizeof(typename detail::lowering_error::reduction_operand<std::remove_cvref_t<E>>::type*) > 0);
        return 0;
    } else if constexpr (!std::is_void_v<detail::first_dense_leaf_t<E>>) {
        // Stops here, before anything is lowered: mixt's message and no other error.
        static_assert(sizeof(typename detail::lowering_error::dense_operand<detail::first_dense_leaf_t<E>>::type*) > 0);
        return 0;
    } else {
        const auto dims = detail::broadcast_shape(e, "to_eigen");
        check_literals(e);
        return detail::lower_to<value_t<E>>(e, dims);
    }
}

} // namespace mixt

#endif // MIXT_EVAL_LOWER_HPP
