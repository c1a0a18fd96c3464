#ifndef MIXT_LATTICE_PROMOTE_HPP
#define MIXT_LATTICE_PROMOTE_HPP

// The promotion traits, at compile time and at run time, all read from `lattice<Policy>::table`.
//
//   promote_t<A, B, ...>            the join of C++ types or tags; a policy may appear anywhere in the list
//                                   (default `policy::jax`). With only C++ types in, the result is a C++
//                                   type (a weak join is stored as the policy's default width); with any tag
//                                   in, the result is the joined tag. No `::type` where there is no join.
//   has_promotion_v<A, B, ...>      whether promote_t is defined.
//   join_t<Policy, Nodes...>        the join of nodes of a policy (what expressions use per node).
//   promote_types(a, b [, policy])  the same at run time over `mixt::dtype`, constexpr.
//
// Example:
//     static_assert(std::is_same_v<mixt::promote_t<std::int8_t, std::uint8_t, Eigen::half>, Eigen::half>);
//     static_assert(std::is_same_v<mixt::promote_t<mixt::dtypes::i8, mixt::dtypes::weak_int>, mixt::dtypes::i8>);
//     static_assert(mixt::promote_types(mixt::dtype::bfloat16, mixt::dtype::float16) == mixt::dtype::float32);

#include <concepts>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

#include <boost/hana/contains.hpp>
#include <boost/hana/find.hpp>
#include <boost/hana/optional.hpp>
#include <boost/mp11/algorithm.hpp>

#include "mixt/dtype/dtype.hpp"
#include "mixt/dtype/storage.hpp"
#include "mixt/lattice/lattice.hpp"
#include "mixt/lattice/policy.hpp"

namespace mixt {

namespace detail {
// A type argument names a node directly (a tag, or a user's own node) or through its storage type.
template <class Policy, class T>
struct node_of_impl {};
template <class Policy, class T>
    requires(lattice<Policy>::template contains<T>)
struct node_of_impl<Policy, T> {
    using type = T;
};
template <class Policy, class T>
    requires(!lattice<Policy>::template contains<T> && is_storage_type_v<T> &&
             lattice<Policy>::template contains<tag_of_t<T>>)
struct node_of_impl<Policy, T> {
    using type = tag_of_t<T>;
};
template <class Policy, class T>
using node_of_t = typename node_of_impl<Policy, T>::type;
template <class Policy, class T>
struct node_or_void {
    using type = void;
};
template <class Policy, class T>
    requires requires { typename node_of_t<Policy, T>; }
struct node_or_void<Policy, T> {
    using type = node_of_t<Policy, T>;
};
template <class Policy, class T>
using node_or_void_t = typename node_or_void<Policy, T>::type;

template <class Policy, class T>
inline constexpr bool is_node_arg_v = lattice<Policy>::template contains<T>;

// Folds the join left to right. Returns the row of the result, or -1 - k where k is the position of the
// first argument that cannot be joined with what precedes it.
template <class Policy, class... Ts>
constexpr int fold_join() {
    static_assert(check_lattice_v<Policy>, "mixt: the policy is not a lattice (see the error above)");
    using L = lattice<Policy>;
    constexpr std::size_t rows[] = {L::template index_of<node_or_void_t<Policy, Ts>>...};
    if (rows[0] >= L::size) return -1;
    int acc = static_cast<int>(rows[0]);
    for (std::size_t k = 1; k < sizeof...(Ts); ++k) {
        if (rows[k] >= L::size) return -1 - static_cast<int>(k);
        acc = L::join(static_cast<std::size_t>(acc), rows[k]);
        if (acc < 0) return -1 - static_cast<int>(k);
    }
    return acc;
}

template <class Policy, class Node>
struct materialize_impl {
    using type = Node;
};
template <class Policy, class Node>
    requires(decltype(boost::hana::contains(Policy::weak_types, boost::hana::type_c<Node>))::value)
struct materialize_impl<Policy, Node> {
    using type = typename decltype(+boost::hana::find(Policy::weak_types, boost::hana::type_c<Node>).value())::type;
};

template <class Policy, class... Ts>
struct promote_in {};
template <class Policy, class... Ts>
using fold_node_t = typename lattice<Policy>::template node_at<static_cast<std::size_t>(fold_join<Policy, Ts...>())>;
// `type` comes from the base class: where the joined node has no storage type (a user's own node, or a weak node
// the policy does not materialize), promote_t over C++ types is then undefined (SFINAE), not ill-formed.
template <class Policy, class... Ts>
    requires(sizeof...(Ts) > 0 && fold_join<Policy, Ts...>() >= 0)
struct promote_in<Policy, Ts...>
    : std::conditional_t<(is_node_arg_v<Policy, Ts> || ...), std::type_identity<fold_node_t<Policy, Ts...>>,
                         storage_impl<typename materialize_impl<Policy, fold_node_t<Policy, Ts...>>::type>> {
    using node = fold_node_t<Policy, Ts...>;
};

template <class T>
using is_policy_q = std::bool_constant<is_policy_v<T>>;

template <class Policies>
struct pick_policy {
    static_assert(boost::mp11::mp_size<Policies>::value == 1, "mixt: promote_t takes at most one policy");
    using type = boost::mp11::mp_front<Policies>;
};
template <>
struct pick_policy<boost::mp11::mp_list<>> {
    using type = default_policy;
};

template <class Policy, class List>
struct promote_list;
template <class Policy, class... Ts>
struct promote_list<Policy, boost::mp11::mp_list<Ts...>> : promote_in<Policy, Ts...> {};

template <class... Ts>
struct promote_impl
    : promote_list<typename pick_policy<boost::mp11::mp_copy_if<boost::mp11::mp_list<Ts...>, is_policy_q>>::type,
                   boost::mp11::mp_remove_if<boost::mp11::mp_list<Ts...>, is_policy_q>> {};
} // namespace detail

/// The promoted type of C++ types or tags (see the top of this header). Ill-formed where there is no join.
template <class... Ts>
using promote_t = typename detail::promote_impl<Ts...>::type;

template <class... Ts>
inline constexpr bool has_promotion_v = requires { typename detail::promote_impl<Ts...>::type; };

/// The join of nodes of a policy, always a node (weak results stay weak): `join_t<policy::jax, u64, i64>` is `f*`.
template <class Policy, class... Nodes>
using join_t = typename detail::promote_in<Policy, Nodes...>::node;

/// The concrete node a weak node is stored as under a policy (`i*` -> `i64` in `jax`, `i32` in `jax_x32`);
/// a concrete node is its own.
template <class Node, class Policy = default_policy>
using materialize_t = typename detail::materialize_impl<Policy, Node>::type;

/// The C++ type a result of node `Node` is stored in under `Policy`: `storage_t` of `materialize_t`.
template <class Node, class Policy = default_policy>
using result_storage_t = storage_t<materialize_t<Node, Policy>>;

// The names of these templates and their arguments are what the compiler prints when an expression asks for
// a promotion the policy does not define: read the operation, the two dtypes and the policy from them.
namespace promotion_error {
template <class Operation, class A, class B, class Policy>
struct no_implicit_promotion {
    static_assert(sizeof(A) == 0,
                  "mixt: input dtypes have no available implicit dtype promotion path under this policy (operation, "
                  "dtypes and policy are the arguments of the template being instantiated). Try explicitly casting an input to the desired type: mixt::cast<T>(x)");
    using type = void;
};
template <class Operation, class A, class B, class Policy>
struct small_float_promotion {
    static_assert(sizeof(A) == 0,
                  "mixt: no implicit promotion path between these dtypes: to avoid unintended promotion, 8-bit and "
                  "smaller floats do not support implicit promotion (operation, dtypes and policy are the arguments "
                  "of the template being instantiated). Cast explicitly: mixt::cast<T>(x)");
    using type = void;
};
template <class Operation, class A, class Policy>
struct not_a_node {
    static_assert(sizeof(A) == 0, "mixt: this dtype is not a node of the policy, so it has no implicit promotion "
                                  "(operation, dtype and policy are the arguments of the "
                                  "template being instantiated). Cast explicitly: mixt::cast<T>(x)");
    using type = void;
};
} // namespace promotion_error

namespace detail {
template <class Node>
constexpr bool is_small_float_node() {
    if constexpr (is_dtype_tag_v<Node>)
        return is_small_float(Node::value);
    else
        return false;
}

template <class Operation, class Policy, class... Ts>
struct checked_join {
    static constexpr int r = fold_join<Policy, Ts...>();
    static constexpr std::size_t bad = r >= 0 ? 0 : static_cast<std::size_t>(-1 - r);
    using args = boost::mp11::mp_list<Ts...>;
    template <std::size_t K>
    using arg_node = node_or_void_t<Policy, boost::mp11::mp_at_c<args, K>>;
    // The error where there is no join, as a type (named, not instantiated: whoever reports it instantiates
    // `error::type`, outside this class, so that a failed instantiation does not spoil this one under Clang).
    static constexpr auto report() {
        using bad_arg = boost::mp11::mp_at_c<args, bad>;
        if constexpr (r >= 0) {
            return std::type_identity<std::type_identity<void>>{};
        } else if constexpr (std::is_void_v<arg_node<bad>>) {
            return std::type_identity<promotion_error::not_a_node<Operation, bad_arg, Policy>>{};
        } else {
            // The join of everything before the failing argument is what it could not be joined with.
            using before = typename promote_list<Policy, boost::mp11::mp_take_c<args, bad>>::node;
            if constexpr (is_small_float_node<before>() || is_small_float_node<arg_node<bad>>())
                return std::type_identity<promotion_error::small_float_promotion<Operation, before, arg_node<bad>, Policy>>{};
            else
                return std::type_identity<promotion_error::no_implicit_promotion<Operation, before, arg_node<bad>, Policy>>{};
        }
    }
    using error = typename decltype(report())::type;
    // Where there is no join, a valid node all the same (f32), so that nothing else fails after the error.
    struct no_node {
        using node = dtypes::f32;
    };
    using node = typename std::conditional_t<(r >= 0), promote_in<Policy, Ts...>, no_node>::node;
};
template <class Operation, class Policy, class... Ts>
struct checked_join_reported {
    using check = typename checked_join<Operation, Policy, Ts...>::error::type;
    using node = typename checked_join<Operation, Policy, Ts...>::node;
};
} // namespace detail

/// `join_t` for entry points that need the join to exist: where it does not, compilation stops with a
/// message that names `Operation`, the two dtypes that do not join, and the policy.
template <class Operation, class Policy, class... Nodes>
using checked_join_t = typename detail::checked_join_reported<Operation, Policy, Nodes...>::node;

/// The built-in policies by name, for run-time use (the mixt-lattice tool).
enum class policy_id : unsigned char { jax, jax_x32, jax_strict, array_api, torch, megengine };

constexpr std::optional<policy_id> parse_policy(std::string_view s) {
    if (s == policy::jax::name) return policy_id::jax;
    if (s == policy::jax_x32::name) return policy_id::jax_x32;
    if (s == policy::jax_strict::name) return policy_id::jax_strict;
    if (s == policy::array_api::name) return policy_id::array_api;
    if (s == policy::torch::name) return policy_id::torch;
    if (s == policy::megengine::name) return policy_id::megengine;
    return std::nullopt;
}

/// Calls `f(Policy{})` with the built-in policy `id` names.
template <class F>
constexpr decltype(auto) visit_policy(policy_id id, F&& f) {
    switch (id) {
    case policy_id::jax_x32: return static_cast<F&&>(f)(policy::jax_x32{});
    case policy_id::jax_strict: return static_cast<F&&>(f)(policy::jax_strict{});
    case policy_id::array_api: return static_cast<F&&>(f)(policy::array_api{});
    case policy_id::torch: return static_cast<F&&>(f)(policy::torch{});
    case policy_id::megengine: return static_cast<F&&>(f)(policy::megengine{});
    case policy_id::jax: break;
    }
    return static_cast<F&&>(f)(policy::jax{});
}

/// The join of two dtypes at run time, from the same table as `promote_t`; empty where there is none.
/// `promote_types(dtype::uint64, dtype::int64) == dtype::weak_float`.
template <class Policy = default_policy>
    requires is_policy_v<Policy>
constexpr std::optional<dtype> promote_types(dtype a, dtype b, Policy = {}) {
    static_assert(check_lattice_v<Policy>, "mixt: the policy is not a lattice (see the error above)");
    using L = lattice<Policy>;
    const int ra = L::dtype_rows[static_cast<std::size_t>(a)];
    const int rb = L::dtype_rows[static_cast<std::size_t>(b)];
    if (ra < 0 || rb < 0) return std::nullopt;
    const int j = L::join(static_cast<std::size_t>(ra), static_cast<std::size_t>(rb));
    if (j < 0 || L::node_dtypes[static_cast<std::size_t>(j)] < 0) return std::nullopt;
    return static_cast<dtype>(L::node_dtypes[static_cast<std::size_t>(j)]);
}

// A template, so that a translation unit derives the built-in policies' tables only where it calls this.
template <std::same_as<policy_id> Id>
constexpr std::optional<dtype> promote_types(dtype a, dtype b, Id p) {
    return visit_policy(p, [&](auto pol) { return promote_types(a, b, pol); });
}

} // namespace mixt

#endif // MIXT_LATTICE_PROMOTE_HPP
