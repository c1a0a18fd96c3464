#ifndef MIXT_EXPR_EXPRESSION_HPP
#define MIXT_EXPR_EXPRESSION_HPP

// The lazy expression nodes. Building an expression computes its types and nothing else:
//   - leaf: an Eigen tensor, map, ref or tensor expression, or a Dense object in memory (eigen_dense) (lvalues
//     held by const reference, rvalues moved in);
//   - literal: a C++ arithmetic value, weak by kind (`2` is `i*`, `0.5` is `f*`);
//   - scalar: a typed (strong) scalar made with `mixt::strong(x)`;
//   - node<Op, Children...>: an operation, whose types come from `Op::rule` (expr/rules.hpp).
// Every expression has `tag` (its lattice node, possibly weak), `value_type` (the C++ type its elements are
// computed in: the tag materialized under the policy), `policy`, `rank` and `layout` (-1 for scalars). Operands
// of different shapes broadcast as NumPy's do; the shapes are checked when the expression is evaluated.
//
// Policies. A leaf made with `lazy<P>(t)` chose P; a leaf made with `lazy(t)`, a plain Eigen operand, a literal
// and a scalar chose none (`policy` is void). An expression's policy is the one its leaves chose (two different
// ones are a compile error), `default_policy` if none did. `lazy<P>(e)` on an expression chooses P for the
// whole of it: every leaf of e without a policy gets P, and the nodes above are typed again. A sub-expression
// without a policy is typed under `default_policy` when it is built; joining an expression of another policy,
// it must type the same under that policy, or compilation stops with a message that says where to put
// `lazy<P>`.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
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

/// An Eigen Dense object whose elements lie in memory at fixed strides: `Array`, `Matrix`, `Map` (with any
/// `Stride`), `Block` (`row()`, `col()`, `block()`, `segment()`), `Ref`, and `.array()`/`.matrix()` of those.
/// Vectors (one dimension fixed to 1 at compile time) are rank 1, the others rank 2 in their storage order.
namespace detail {
template <class D>
std::true_type is_dense_base(const Eigen::DenseBase<D>*);
std::false_type is_dense_base(const void*);
template <class D>
std::true_type is_array_base(const Eigen::ArrayBase<D>*);
std::false_type is_array_base(const void*);
} // namespace detail
template <class T>
concept eigen_dense = decltype(detail::is_dense_base(std::declval<std::remove_cvref_t<T>*>()))::value &&
                      (static_cast<unsigned>(std::remove_cvref_t<T>::Flags) & Eigen::DirectAccessBit) != 0;

/// What mixt takes as an array operand: an Eigen tensor (or tensor expression) or a Dense object in memory.
template <class T>
concept eigen_array = eigen_tensor<T> || eigen_dense<T>;

/// C++ values that become weak literals.
template <class T>
concept weak_scalar = (std::is_arithmetic_v<std::remove_cvref_t<T>> && !std::is_same_v<std::remove_cvref_t<T>, bool>) ||
                      detail::is_complex_v<std::remove_cvref_t<T>>;

namespace detail {
// Lvalues are held by const reference, rvalues by value (moved in).
template <class T>
using closure_t = std::conditional_t<std::is_lvalue_reference_v<T>, const std::remove_reference_t<T>&,
                                     std::remove_cvref_t<T>>;

// The rank and layout of an array operand: a tensor's own; a Dense vector is rank 1, any other Dense object
// rank 2 in its storage order.
template <class X>
struct array_traits {
    static constexpr int rank = Eigen::internal::traits<X>::NumDimensions;
    static constexpr int layout = static_cast<int>(Eigen::internal::traits<X>::Layout);
};
template <class X>
    requires eigen_dense<X>
struct array_traits<X> {
    static constexpr int rank = X::IsVectorAtCompileTime ? 1 : 2;
    static constexpr int layout = X::IsRowMajor ? static_cast<int>(Eigen::RowMajor) : static_cast<int>(Eigen::ColMajor);
};

/// An Eigen Dense vector's orientation, from its type: 1 a column vector (VectorXf, ArrayXf, `m.col(j)`), 2 a row
/// vector (RowVectorXf, `m.row(i)`); 0 for anything else.
template <class X>
constexpr int dense_orientation() {
    if constexpr (eigen_dense<X>) {
        if constexpr (X::IsVectorAtCompileTime)
            return X::ColsAtCompileTime == 1 ? 1 : 2;
        else
            return 0;
    } else {
        return 0;
    }
}

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

/// A tensor operand. `Policy` is the policy chosen with `lazy<Policy>(t)`, void if none was.
template <class Policy, class E>
struct leaf : expression<leaf<Policy, E>> {
    using eigen_type = std::remove_cvref_t<E>;
    using policy = Policy;
    // A map of read-only memory (`TensorMap<Tensor<const T, N>>`) has the scalar `const T`; its dtype is T's.
    using value_type = std::remove_const_t<typename Eigen::internal::traits<eigen_type>::Scalar>;
    static constexpr bool expression_dtype = is_storage_type_v<value_type>;
    static_assert(is_storage_type_v<value_type>,
                  "mixt: a leaf's scalar type must be the storage type of one of mixt's 30 concrete dtypes (bool, "
                  "the fixed-width integers, Eigen::bfloat16, Eigen::half, float, double, std::complex<float|double>, "
                  "mixt::float8_* / float6_* / float4_e2m1fn, mixt::int4 / uint4 / int2 / uint2)");
    // (f32 for a scalar type that is not a dtype, so that nothing else fails after the message above)
    using tag = tag_of_t<std::conditional_t<expression_dtype, value_type, float>>;
    static constexpr int rank = detail::array_traits<eigen_type>::rank;
    static constexpr int layout = detail::array_traits<eigen_type>::layout;
    /// An Eigen Dense vector's orientation (detail::orientation_v): 1 a column vector, 2 a row vector, else 0.
    static constexpr int orientation = detail::dense_orientation<eigen_type>();
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
// An operand's slot (lattice/slots.hpp), which a policy with `slots` types it by: a literal, else by rank.
template <class E>
inline constexpr operand_slot slot_of_v = E::rank >= 1 ? operand_slot::dimensioned : operand_slot::zero_dim;
template <class T>
inline constexpr operand_slot slot_of_v<literal<T>> = operand_slot::literal;

// The rule of `Op` over children `Cs` (without cv-ref) under `Policy`: `rule` and `verdict` (expr/rules.hpp).
template <class Op, class Policy, class... Cs>
using node_rule = rule_in_slots<Op, Policy, slots<slot_of_v<Cs>...>, typename Cs::tag...>;
} // namespace detail

namespace policy_error {
/// The error of an expression whose operands have different policies (the template's arguments).
template <class... Policies>
struct two_policies_in_one_expression {
    static_assert(sizeof...(Policies) == 0,
                  "mixt: an expression mixes two promotion policies; choose one (mixt::lazy<Policy>(x) on every "
                  "leaf, or cast explicitly)");
    using type = void;
};
} // namespace policy_error

namespace detail {
// The policy of a node: its operands' one policy (void where none has one). Two policies are an error,
// reported by a template of its own; the node then takes the first, so that nothing else fails after it
// (Clang gives every member of a template whose instantiation failed the type int).
template <class... Ps>
struct common_policy {
    using non_void = boost::mp11::mp_remove<boost::mp11::mp_unique<boost::mp11::mp_list<Ps...>>, void>;
    using check = typename std::conditional_t<(boost::mp11::mp_size<non_void>::value <= 1), std::type_identity<void>,
                                              boost::mp11::mp_rename<non_void, policy_error::two_policies_in_one_expression>>::type;
    using type = boost::mp11::mp_eval_if_c<boost::mp11::mp_empty<non_void>::value, void, boost::mp11::mp_front,
                                           non_void>;
};
template <class... Ps>
using common_policy_t = typename common_policy<Ps...>::type;

/// A rule's error (a template to instantiate: its `type` stops compilation with mixt's message), or none.
template <class Rule>
struct rule_error {
    using type = std::type_identity<void>;
};
template <class Rule>
    requires requires { typename Rule::error; }
struct rule_error<Rule> {
    using type = typename Rule::error;
};
template <class Rule>
using rule_error_t = typename rule_error<Rule>::type;

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

// Broadcasting: a node's rank is its highest operand rank (-1, a scalar, when every operand is one).
template <int... Rs>
constexpr int max_rank() {
    int r = -1;
    ((r = Rs > r ? Rs : r), ...);
    return r;
}
// The Dense vectors' orientations among an expression's operands (1 column, 2 row, 3 both; 0 none): eval of
// Dense vectors of rank 1 returns a row where they are all rows.
template <class E>
constexpr int orientation_of() {
    if constexpr (requires { E::orientation; })
        return E::orientation;
    else
        return 0;
}

// A node's layout: the one its operands of rank 2 or more share (-2 when they differ: a compile error). Rank 0
// and 1 operands are laid out alike either way; they give the layout only where no operand has a higher rank
// (their common one, else column-major, Eigen's default). Scalars have none (-1).
template <class... Cs>
constexpr int common_layout() {
    constexpr int ranks[] = {Cs::rank..., -1};
    constexpr int layouts[] = {Cs::layout..., -1};
    int strong = -1, weak = -1;
    bool strong_ok = true, weak_ok = true;
    for (std::size_t i = 0; i + 1 < sizeof(ranks) / sizeof(int); ++i) {
        if (layouts[i] < 0) continue;
        int& l = ranks[i] >= 2 ? strong : weak;
        bool& ok = ranks[i] >= 2 ? strong_ok : weak_ok;
        if (l >= 0 && l != layouts[i]) ok = false;
        l = layouts[i];
    }
    if (!strong_ok) return -2;
    if (strong >= 0) return strong;
    if (!weak_ok) return static_cast<int>(Eigen::ColMajor);
    return weak;
}
} // namespace detail

template <class Op, class... Cs>
struct node;

// Errors of choosing policies. The template arguments name the policies and, for a sub-expression, its operation
// and its operands' dtypes.
namespace policy_error {
template <class Requested, class Chosen>
struct conflicting_policies {
    static_assert(sizeof(Requested) == 0,
                  "mixt: an expression mixes two promotion policies: mixt::lazy<Policy>(e) asks for one (the first "
                  "argument of the template being instantiated) where a leaf of e chose another (the second); "
                  "choose one, on the whole expression (mixt::lazy<Policy>(e)) or on every leaf (mixt::lazy<Policy>(t))");
    using type = void;
};
template <class Policy, class Expression>
struct no_tensor_leaf {
    static_assert(sizeof(Policy) == 0,
                  "mixt: mixt::lazy<Policy>(e) needs a tensor leaf in e to carry the policy, and e has only literals "
                  "and mixt::strong scalars (the policy and e are the arguments of the template being "
                  "instantiated); choose the policy on the expression they join");
    using type = void;
};
template <class Policy, class Operation, class... Nodes>
struct subexpression_typed_under_default_policy {
    static_assert(sizeof(Policy) == 0,
                  "mixt: a sub-expression without a policy of its own was typed under the default policy and types "
                  "differently under the policy of the expression it joins (that policy, the operation and its "
                  "operands' dtypes are the arguments of the template being instantiated); choose the policy on the "
                  "sub-expression too (mixt::lazy<Policy>(sub)) or on the whole expression (mixt::lazy<Policy>(e))");
    using type = void;
};
} // namespace policy_error

namespace detail {
// A child without a policy (`lazy(a) + b`, `strong(x) * 2`) of a node of policy `Policy` was typed under
// `default_policy`; its values are right only if every node in it has the same types under `Policy`.
template <class Policy, class C>
struct check_typed_alike {
    using type = void;
};
template <class Policy, class Op, class... Cs>
    requires(!std::is_void_v<Policy> && !std::is_same_v<Policy, default_policy> &&
             std::is_void_v<typename node<Op, Cs...>::policy>)
struct check_typed_alike<Policy, node<Op, Cs...>> {
    using here = node<Op, Cs...>;
    using rule = typename node_rule<Op, Policy, std::remove_cvref_t<Cs>...>::rule;
    static constexpr bool same =
        std::is_same_v<typename rule::result, typename here::tag> &&
        std::is_same_v<result_storage_t<typename rule::result, Policy>, typename here::value_type> &&
        std::is_same_v<storage_list_t<Policy, typename rule::operands>, typename here::operand_types>;
    // Where the operation is not defined under Policy at all, its own error (which names the operation, the
    // dtypes and the policy) is the one reported.
    static constexpr bool defined = node_rule<Op, Policy, std::remove_cvref_t<Cs>...>::verdict == ::mixt::op::verdict::defined;
    using type = boost::mp11::mp_list<
        typename rule_error_t<rule>::type,
        typename std::conditional_t<same || !defined, std::type_identity<void>,
                                    policy_error::subexpression_typed_under_default_policy<
                                        Policy, Op, typename std::remove_cvref_t<Cs>::tag...>>::type,
        typename check_typed_alike<Policy, std::remove_cvref_t<Cs>>::type...>;
};
} // namespace detail

template <class Op, class... Cs>
struct node : expression<node<Op, Cs...>> {
    // Two policies are reported here, not inside the alias below (Clang makes an alias whose substitution
    // failed int, and errors follow).
    using policy_check = typename detail::common_policy<typename std::remove_cvref_t<Cs>::policy...>::check;
    using policy = detail::common_policy_t<typename std::remove_cvref_t<Cs>::policy...>;
    using rule = typename detail::node_rule<Op, detail::policy_or_default<policy>, std::remove_cvref_t<Cs>...>::rule;
    // The rule's error, where the operation is not defined for its operands (rules.hpp, defined_join).
    using rule_check = typename detail::rule_error_t<rule>::type;
    using tag = typename rule::result;
    using value_type = result_storage_t<tag, detail::policy_or_default<policy>>;
    /// The C++ types the children's values are converted to before `Op::fn` runs.
    using operand_types = detail::storage_list_t<detail::policy_or_default<policy>, typename rule::operands>;
    /// Operands broadcast as NumPy's do (aligned at their last dimension), so the rank is the highest.
    static constexpr int rank = detail::max_rank<std::remove_cvref_t<Cs>::rank...>();
    /// The Dense vectors' orientations among the operands (1 column, 2 row, 3 both).
    static constexpr int orientation = (0 | ... | detail::orientation_of<std::remove_cvref_t<Cs>>());
    static constexpr int layout = detail::common_layout<std::remove_cvref_t<Cs>...>();
    static_assert(layout != -2, "mixt: the operands of an expression mix row-major and column-major arrays of rank 2 "
                                "or more (mixt::eval one of them into the other layout first)");
    // Instantiated for its errors only (the type is always a list of voids).
    static_assert(boost::mp11::mp_size<boost::mp11::mp_list<
                      typename detail::check_typed_alike<policy, std::remove_cvref_t<Cs>>::type...>>::value ==
                  sizeof...(Cs));
    std::tuple<Cs...> children;
};

/// The C++ type an expression's elements have: `value_t<decltype(lazy(i8) + f16)>` is `Eigen::half`.
template <class E>
using value_t = typename std::remove_cvref_t<E>::value_type;
/// The lattice node of an expression (weak for `lazy(u64) + lazy(i64)`, which is `f*`).
template <class E>
using tag_t = typename std::remove_cvref_t<E>::tag;

namespace detail {
/// Whether E was built without a compile error: false where an operation is not defined for its operands'
/// dtypes or where row- and column-major operands of rank 2 meet (node), or where a reduction is refused
/// (expr/reduce.hpp). mixt's message is then already given; eval, assign and to_eigen compile nothing more for
/// E, so that it stays the only error.
template <class E>
struct well_formed : std::true_type {};
template <class Op, class... Cs>
struct well_formed<node<Op, Cs...>>
    : std::bool_constant<common_layout<std::remove_cvref_t<Cs>...>() != -2 &&
                         node_rule<Op, policy_or_default<common_policy_t<typename std::remove_cvref_t<Cs>::policy...>>,
                                   std::remove_cvref_t<Cs>...>::verdict == ::mixt::op::verdict::defined &&
                         (well_formed<std::remove_cvref_t<Cs>>::value && ...)> {};
template <class E>
inline constexpr bool well_formed_v = well_formed<std::remove_cvref_t<E>>::value;

// The two walks over an expression's leaves, depth-first and left to right (the order of kernel_args'
// pointers, of leaf_views_of and of the GPU's device nodes); literals, scalars and reductions have none.
// The questions asked of the leaves' types (bytes per element, whether there is one, whether every one is
// fusable, plain, Dense) are folds over leaf_list_t; the values (views, pointers, checks) come from
// map_leaves and visit_leaves.
template <class E>
struct leaf_list {
    using type = boost::mp11::mp_list<>;
};
template <class P, class X>
struct leaf_list<leaf<P, X>> {
    using type = boost::mp11::mp_list<leaf<P, X>>;
};
template <class Op, class... Cs>
struct leaf_list<node<Op, Cs...>> {
    using type = boost::mp11::mp_append<typename leaf_list<std::remove_cvref_t<Cs>>::type...>;
};
template <class E>
using leaf_list_t = typename leaf_list<std::remove_cvref_t<E>>::type;

/// f(l) for every leaf l of e, in leaf_list_t's order.
template <class E, class F>
void visit_leaves(const E&, const F&) {}
template <class P, class X, class F>
void visit_leaves(const leaf<P, X>& l, const F& f) {
    f(l);
}
template <class Op, class... Cs, class F>
void visit_leaves(const node<Op, Cs...>& n, const F& f) {
    std::apply([&](const auto&... c) { (visit_leaves(c, f), ...); }, n.children);
}

/// The tuple of f(l) for the leaves l of e, in leaf_list_t's order.
template <class E, class F>
std::tuple<> map_leaves(const E&, const F&) {
    return {};
}
template <class P, class X, class F>
auto map_leaves(const leaf<P, X>& l, const F& f) {
    return std::tuple<std::invoke_result_t<const F&, const leaf<P, X>&>>(f(l));
}
template <class Op, class... Cs, class F>
auto map_leaves(const node<Op, Cs...>& n, const F& f) {
    return std::apply([&](const auto&... c) { return std::tuple_cat(map_leaves(c, f)...); }, n.children);
}

template <class... Ls>
constexpr std::size_t element_bytes(boost::mp11::mp_list<Ls...>) {
    return (std::size_t{0} + ... + sizeof(value_t<Ls>));
}
} // namespace detail

/// Bytes an evaluation reads per element: the sum of the leaves' element sizes (literals are free). With
/// `sizeof(value_t<E>)` written per element, this is the memory traffic of one fused pass.
template <class E>
inline constexpr std::size_t leaf_bytes_v = detail::element_bytes(detail::leaf_list_t<E>{});

namespace detail {
template <class E>
struct has_leaf : std::bool_constant<!boost::mp11::mp_empty<leaf_list_t<E>>::value> {};

// with_policy<Policy>(e): e, whose leaves chose no policy, with `Policy` on every leaf and its nodes typed again.
// As an operator holds its operands: what an rvalue e holds by value is moved out of it, what an lvalue e holds by
// value is referred to, and what e refers to is still referred to. Literals, scalars and sub-expressions without
// leaves are kept as they are (node checks that they type the same under `Policy`).
template <class Policy, class E>
struct with_policy_impl;

template <class Policy, class E>
constexpr auto with_policy(E&& e) {
    return with_policy_impl<Policy, std::remove_cvref_t<E>>::apply(static_cast<E&&>(e));
}

// The child that replaces a child of type `C`, reached as `Fwd` (a reference of the parent's value category).
template <class Policy, class C, class Fwd, bool = has_leaf<std::remove_cvref_t<C>>::value>
struct child_with_policy {
    using type = C;
    static constexpr C apply(Fwd&& c) { return static_cast<Fwd&&>(c); }
};
template <class Policy, class C, class Fwd>
struct child_with_policy<Policy, C, Fwd, true> {
    using type = decltype(with_policy<Policy>(std::declval<Fwd>()));
    static constexpr type apply(Fwd&& c) { return with_policy<Policy>(static_cast<Fwd&&>(c)); }
};

template <class Policy, class X>
struct with_policy_impl<Policy, leaf<void, X>> {
    template <class E>
    static constexpr auto apply(E&& l) {
        if constexpr (std::is_lvalue_reference_v<E> && !std::is_reference_v<X>)
            return leaf<Policy, const X&>{{}, l.x};
        else
            return leaf<Policy, X>{{}, static_cast<E&&>(l).x};
    }
};

template <class Policy, class Op, class... Cs>
struct with_policy_impl<Policy, node<Op, Cs...>> {
    template <class E, std::size_t... I>
    static constexpr auto rebuild(E&& n, std::index_sequence<I...>) {
        return node<Op, typename child_with_policy<Policy, Cs,
                                                   decltype(std::get<I>(static_cast<E&&>(n).children))>::type...>{
            {},
            {child_with_policy<Policy, Cs, decltype(std::get<I>(static_cast<E&&>(n).children))>::apply(
                std::get<I>(static_cast<E&&>(n).children))...}};
    }
    template <class E>
    static constexpr auto apply(E&& n) {
        return rebuild(static_cast<E&&>(n), std::index_sequence_for<Cs...>{});
    }
};
} // namespace detail

/// Starts a mixt expression from an Eigen tensor (any rank or layout, a map, a ref or a tensor expression) or
/// an Eigen Dense object in memory (an Array, Matrix, Map, Block or Ref: eigen_dense):
/// `auto e = mixt::lazy(a) + b * c;`. `lazy<Policy>(t)` chooses the promotion policy of every expression the
/// leaf joins: `mixt::lazy<mixt::policy::jax_x32>(a) + b`; without one, the leaf takes the policy of the
/// expression it joins (`default_policy` if none is chosen).
template <class Policy = void, class X>
    requires eigen_array<X>
constexpr leaf<Policy, detail::closure_t<X&&>> lazy(X&& x) {
    return {{}, static_cast<X&&>(x)};
}
/// Chooses the policy of a whole expression: `mixt::lazy<mixt::policy::jax_x32>(mixt::lazy(u32) + i32)` is
/// `i32` (`i64` under `jax`). Every leaf without a policy gets `Policy`; a leaf that chose another one is a
/// compile error. `lazy(e)`, or `lazy<P>(e)` where e's policy already is P, returns e itself.
template <class Policy = void, class X>
    requires mixt_expression<X>
constexpr decltype(auto) lazy(X&& x) {
    using chosen = typename std::remove_cvref_t<X>::policy;
    if constexpr (std::is_void_v<Policy> || std::is_same_v<Policy, chosen>) {
        return static_cast<X&&>(x);
    } else if constexpr (!std::is_void_v<chosen>) {
        static_assert(std::is_void_v<typename policy_error::conflicting_policies<Policy, chosen>::type>);
        return static_cast<X&&>(x);
    } else if constexpr (!detail::has_leaf<std::remove_cvref_t<X>>::value) {
        static_assert(std::is_void_v<typename policy_error::no_tensor_leaf<Policy, std::remove_cvref_t<X>>::type>);
        return static_cast<X&&>(x);
    } else {
        return detail::with_policy<Policy>(static_cast<X&&>(x));
    }
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
    requires eigen_array<X>
struct operand_impl<X> {
    using type = leaf<void, closure_t<X>>;
};
template <class X>
using operand_t = typename operand_impl<X&&>::type;

template <class X>
constexpr operand_t<X> as_operand(X&& x) {
    if constexpr (mixt_expression<X>)
        return static_cast<X&&>(x);
    else if constexpr (eigen_array<X>)
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
concept operand = mixt_expression<T> || eigen_array<T> || weak_scalar<T>;

} // namespace mixt

#endif // MIXT_EXPR_EXPRESSION_HPP
