#ifndef MIXT_EXPR_EXPRESSION_HPP
#define MIXT_EXPR_EXPRESSION_HPP

// The lazy expression nodes. Building an expression computes its types and nothing else:
//   - leaf: an Eigen tensor, map, ref or tensor expression (lvalues held by const reference, rvalues moved in);
//   - literal: a C++ arithmetic value, weak by kind (`2` is `i*`, `0.5` is `f*`);
//   - scalar: a typed (strong) scalar made with `mixt::strong(x)`;
//   - node<Op, Children...>: an operation, whose types come from `Op::rule` (expr/rules.hpp).
// Every expression has `tag` (its lattice node, possibly weak), `value_type` (the C++ type its elements are
// computed in: the tag materialized under the policy), `policy` (void for literals and for plain Eigen operands,
// which take the policy of the expression they join), `rank` and `layout` (-1 for scalars).

#include <cstdint>
#include <complex>
#include <tuple>
#include <type_traits>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/dtype/storage.hpp"
#include "mixt/expr/rules.hpp"
#include "mixt/lattice/promote.hpp"

namespace mixt {

/// The CRTP base of every mixt expression.
template <class Derived>
struct expression {
    constexpr const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

template <class T>
concept mixt_expression = std::is_base_of_v<expression<std::remove_cvref_t<T>>, std::remove_cvref_t<T>>;

/// Any Eigen tensor, map, ref or tensor expression.
template <class T>
concept eigen_tensor =
    std::is_base_of_v<Eigen::TensorBase<std::remove_cvref_t<T>, Eigen::ReadOnlyAccessors>, std::remove_cvref_t<T>>;

/// C++ values that become weak literals.
template <class T>
concept weak_scalar = (std::is_arithmetic_v<std::remove_cvref_t<T>> && !std::is_same_v<std::remove_cvref_t<T>, bool>) ||
                      detail::is_complex_v<std::remove_cvref_t<T>>;

namespace detail {
// Lvalues are held by const reference, rvalues by value (moved in).
template <class T>
using closure_t = std::conditional_t<std::is_lvalue_reference_v<T>, const std::remove_reference_t<T>&,
                                     std::remove_cvref_t<T>>;

template <class T>
struct literal_value_impl;
template <class T>
    requires std::is_integral_v<T>
struct literal_value_impl<T> {
    using type = std::conditional_t<std::is_unsigned_v<T> && sizeof(T) == 8, std::uint64_t, std::int64_t>;
};
template <std::floating_point T>
struct literal_value_impl<T> {
    using type = double;
};
template <class T>
struct literal_value_impl<std::complex<T>> {
    using type = std::complex<double>;
};
} // namespace detail

template <class Policy, class E>
struct leaf : expression<leaf<Policy, E>> {
    using eigen_type = std::remove_cvref_t<E>;
    using policy = Policy;
    // A map of read-only memory (`TensorMap<Tensor<const T, N>>`) has the scalar `const T`; its dtype is T's.
    using value_type = std::remove_const_t<typename Eigen::internal::traits<eigen_type>::Scalar>;
    static_assert(is_storage_type_v<value_type>,
                  "mixt: a leaf's scalar type must be one of mixt's 15 concrete dtypes (bool, the fixed-width "
                  "integers, Eigen::bfloat16, Eigen::half, float, double, std::complex<float|double>)");
    using tag = tag_of_t<value_type>;
    static constexpr int rank = Eigen::internal::traits<eigen_type>::NumDimensions;
    static constexpr int layout = static_cast<int>(Eigen::internal::traits<eigen_type>::Layout);
    E x;
};

/// A weak literal; the value is kept at full width (int64/uint64, double, complex<double>) until the
/// expression is checked and evaluated, where it is converted (range-checked) to the type it joins.
template <class T>
struct literal : expression<literal<T>> {
    using policy = void;
    using value_type = T;
    using tag = literal_tag_t<T>;
    static constexpr int rank = -1;
    static constexpr int layout = -1;
    T value;
};

/// A typed scalar: `strong(std::int8_t{3})` joins as `i8`, not as `i*`.
template <class T>
struct scalar : expression<scalar<T>> {
    using policy = void;
    using value_type = T;
    using tag = tag_of_t<T>;
    static constexpr int rank = -1;
    static constexpr int layout = -1;
    T value;
};

namespace detail {
template <class... Ps>
struct common_policy {
    using non_void = boost::mp11::mp_remove<boost::mp11::mp_unique<boost::mp11::mp_list<Ps...>>, void>;
    static_assert(boost::mp11::mp_size<non_void>::value <= 1,
                  "mixt: an expression mixes two promotion policies; choose one (mixt::lazy<Policy>(x) on every "
                  "leaf, or cast explicitly)");
    using type = boost::mp11::mp_eval_if_c<boost::mp11::mp_empty<non_void>::value, void, boost::mp11::mp_front,
                                           non_void>;
};
template <class... Ps>
using common_policy_t = typename common_policy<Ps...>::type;

template <class P>
using policy_or_default = std::conditional_t<std::is_void_v<P>, default_policy, P>;

template <class Policy, class Nodes>
struct storage_list;
template <class Policy, class... Nodes>
struct storage_list<Policy, boost::mp11::mp_list<Nodes...>> {
    using type = boost::mp11::mp_list<result_storage_t<Nodes, Policy>...>;
};
template <class Policy, class Nodes>
using storage_list_t = typename storage_list<Policy, Nodes>::type;

template <int... Rs>
constexpr int common_rank() {
    int r = -1;
    bool ok = true;
    ((Rs < 0 ? void() : (r >= 0 && r != Rs ? void(ok = false) : void(r = Rs))), ...);
    return ok ? r : -2;
}
} // namespace detail

template <class Op, class... Cs>
struct node : expression<node<Op, Cs...>> {
    using policy = detail::common_policy_t<typename std::remove_cvref_t<Cs>::policy...>;
    using rule = typename Op::template rule<detail::policy_or_default<policy>, typename std::remove_cvref_t<Cs>::tag...>;
    using tag = typename rule::result;
    using value_type = result_storage_t<tag, detail::policy_or_default<policy>>;
    /// The C++ types the children's values are converted to before `Op::fn` runs.
    using operand_types = detail::storage_list_t<detail::policy_or_default<policy>, typename rule::operands>;
    static constexpr int rank = detail::common_rank<std::remove_cvref_t<Cs>::rank...>();
    static_assert(rank != -2, "mixt: the operands of an expression have different ranks (mixt does not broadcast yet)");
    static constexpr int layout = detail::common_rank<std::remove_cvref_t<Cs>::layout...>();
    static_assert(layout != -2, "mixt: the operands of an expression mix row-major and column-major tensors");
    std::tuple<Cs...> children;
};

/// The C++ type an expression's elements have: `value_t<decltype(lazy(i8) + f16)>` is `Eigen::half`.
template <class E>
using value_t = typename std::remove_cvref_t<E>::value_type;
/// The lattice node of an expression (weak for `lazy(u64) + lazy(i64)`, which is `f*`).
template <class E>
using tag_t = typename std::remove_cvref_t<E>::tag;

namespace detail {
template <class E>
struct leaf_bytes : std::integral_constant<std::size_t, 0> {};
template <class P, class X>
struct leaf_bytes<leaf<P, X>> : std::integral_constant<std::size_t, sizeof(value_t<leaf<P, X>>)> {};
template <class Op, class... Cs>
struct leaf_bytes<node<Op, Cs...>>
    : std::integral_constant<std::size_t, (0 + ... + leaf_bytes<std::remove_cvref_t<Cs>>::value)> {};
} // namespace detail

/// Bytes an evaluation reads per element: the sum of the leaves' element sizes (literals are free). With
/// `sizeof(value_t<E>)` written per element, this is the memory traffic of one fused pass.
template <class E>
inline constexpr std::size_t leaf_bytes_v = detail::leaf_bytes<std::remove_cvref_t<E>>::value;

/// Starts a mixt expression from an Eigen tensor (any rank or layout, a map, a ref or a tensor expression)
/// under `Policy`: `auto e = mixt::lazy(a) + b * c;`. A mixt expression is passed through.
template <class Policy = default_policy, class X>
    requires eigen_tensor<X>
constexpr leaf<Policy, detail::closure_t<X&&>> lazy(X&& x) {
    return {{}, static_cast<X&&>(x)};
}
template <class Policy = default_policy, class X>
    requires mixt_expression<X>
constexpr X&& lazy(X&& x) {
    return static_cast<X&&>(x);
}

/// A typed scalar: `lazy(a_i8) + strong(std::int16_t{3})` is `i16`.
template <class T>
    requires is_storage_type_v<T>
constexpr scalar<T> strong(T x) {
    return {{}, x};
}

namespace detail {
// What an operand of an operator becomes: expressions as they are (held by reference if lvalues), Eigen tensors
// as policy-less leaves, C++ values as weak literals.
template <class X>
struct operand_impl {
    using type = literal<typename literal_value_impl<std::remove_cvref_t<X>>::type>;
};
template <class X>
    requires mixt_expression<X>
struct operand_impl<X> {
    using type = closure_t<X>;
};
template <class X>
    requires eigen_tensor<X>
struct operand_impl<X> {
    using type = leaf<void, closure_t<X>>;
};
template <class X>
using operand_t = typename operand_impl<X&&>::type;

template <class X>
constexpr operand_t<X> as_operand(X&& x) {
    if constexpr (mixt_expression<X>)
        return static_cast<X&&>(x);
    else if constexpr (eigen_tensor<X>)
        return {{}, static_cast<X&&>(x)};
    else
        return {{}, static_cast<typename operand_t<X>::value_type>(x)};
}

template <class Op, class... Xs>
constexpr node<Op, operand_t<Xs>...> make_node(Xs&&... xs) {
    return {{}, {as_operand(static_cast<Xs&&>(xs))...}};
}
} // namespace detail

template <class T>
concept operand = mixt_expression<T> || eigen_tensor<T> || weak_scalar<T>;

} // namespace mixt

#endif // MIXT_EXPR_EXPRESSION_HPP
