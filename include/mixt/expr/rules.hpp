#ifndef MIXT_EXPR_RULES_HPP
#define MIXT_EXPR_RULES_HPP

// The per-operation result rules of jax.numpy, over lattice nodes. Each operation is a class with
//   - `name`: what error messages call it;
//   - `fn`: the per-element functor (expr/functors.hpp);
//   - `rule<Policy, Nodes...>`: `operands`, the nodes the children's values are converted to before `fn` runs,
//     and `result`, the node of the value `fn` returns (weak nodes stay weak, so a later join sees them).
// The rules:
//   1. `+ - * minimum maximum clip & | ^ << >> % floor_divide`: the join of the operands.
//   2. true division and float functions (`sqrt exp log sin cos tanh`): the join, then "to inexact": bool and
//      integers up to 32 bits -> f32, 64-bit integers -> f64, `i*` -> `f*`; floats and complex unchanged.
//   3. comparisons: operands converted to their join, result `bool`.
//   4. `abs`, `real`, `imag`: complex -> the real type of the same width (c64 -> f32); others unchanged.
//   5. `pow`: a float or complex base with an integer or bool exponent keeps the base type (the exponent is
//      not converted); otherwise the join.
//   6. `where(c, x, y)`: `c` is converted to bool, the branches to their join.
//   7. Operations a kind does not have are compile errors that name the operation and the dtype: `-` and the
//      arithmetic of `%`, `//` on bool; `%`, `//`, `<`, `<=`, `>`, `>=` on complex; bitwise operations on
//      floats; shifts on bool; `&& || !` on anything but bool.
//
// Whether a rule is defined is one SFINAE-friendly predicate, `op::defined_v<Op, Policy, Nodes...>` (and why
// not, `op::verdict_v`); `Op::rule` asks it and, where it is false, names the error for its reason
// (`Op::rule::error`, which the expression's node instantiates to stop compilation with mixt's message; the
// rule's types are then placeholders), so the predicate and the hard error cannot disagree:
//
//     using namespace mixt::dtypes;
//     static_assert(mixt::op::defined_v<mixt::op::add, mixt::policy::jax, i8, u8>);
//     static_assert(!mixt::op::defined_v<mixt::op::subtract, mixt::policy::jax, bool_, bool_>); // cast first

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/mp11/list.hpp>

#include "mixt/dtype/dtype.hpp"
#include "mixt/expr/functors.hpp"
#include "mixt/lattice/promote.hpp"
#include "mixt/lattice/slots.hpp"

namespace mixt {

namespace detail {
template <class Node>
constexpr dtype_kind node_kind() {
    static_assert(is_dtype_tag_v<Node>, "mixt: expressions compute on built-in dtypes only");
    return kind(Node::value);
}
template <class Node>
inline constexpr bool is_bool_node = node_kind<Node>() == dtype_kind::boolean;
template <class Node>
inline constexpr bool is_int_node =
    node_kind<Node>() == dtype_kind::signed_int || node_kind<Node>() == dtype_kind::unsigned_int;
template <class Node>
inline constexpr bool is_float_node = node_kind<Node>() == dtype_kind::floating;
template <class Node>
inline constexpr bool is_complex_node = node_kind<Node>() == dtype_kind::complex;

template <class Node>
struct to_inexact_impl {
    using type = Node;
};
template <class Node>
    requires(is_bool_node<Node> || is_int_node<Node>)
struct to_inexact_impl<Node> {
    using type = std::conditional_t<std::is_same_v<Node, dtypes::weak_int>, dtypes::weak_float,
                                    std::conditional_t<info(Node::value).bits == 64, dtypes::f64, dtypes::f32>>;
};

template <class Node>
struct real_part_impl {
    using type = Node;
};
template <>
struct real_part_impl<dtypes::c64> {
    using type = dtypes::f32;
};
template <>
struct real_part_impl<dtypes::c128> {
    using type = dtypes::f64;
};
template <>
struct real_part_impl<dtypes::weak_complex> {
    using type = dtypes::weak_float;
};

// Rule 2 under a policy: `default_float` (policy::torch) stores every bool and integer result as `f*` does.
template <class Policy, class Node>
struct to_inexact_under {
    using type = typename to_inexact_impl<Node>::type;
};
template <class Policy, class Node>
    requires(inexact_rule_v<Policy> == inexact_rule::default_float) && (is_dtype_tag_v<Node>) &&
            (is_bool_node<Node> || is_int_node<Node>)
struct to_inexact_under<Policy, Node> {
    using type = materialize_t<dtypes::weak_float, Policy>;
};
} // namespace detail

/// `to_inexact_t<i16>` is `f32`, `to_inexact_t<u64>` is `f64`, `to_inexact_t<i*>` is `f*`.
template <class Node>
using to_inexact_t = typename detail::to_inexact_impl<Node>::type;
/// `real_part_t<c64>` is `f32`; a real node is its own real part.
template <class Node>
using real_part_t = typename detail::real_part_impl<Node>::type;

// Operation-level errors; the template arguments name the operation and the dtype.
namespace operation_error {
template <class Operation, class Node>
struct not_defined_for_dtype {
    static_assert(sizeof(Operation) == 0, "mixt: this operation is not defined for this dtype (the operation and "
                                          "the dtype are the arguments of the template being instantiated); "
                                          "cast first with mixt::cast<T>(x)");
    using type = void;
};
template <class Operation, class... Nodes>
struct not_a_built_in_dtype {
    static_assert(sizeof(Operation) == 0, "mixt: expressions compute on built-in dtypes only");
    using type = void;
};
} // namespace operation_error

namespace op {
/// Whether an operation is defined for its operand nodes under a policy, and if not, why not: what
/// `verdict_v` says, and which error `Op::rule` stops compilation with.
enum class verdict : unsigned char {
    defined,      ///< the rule has a result
    no_join,      ///< the operands have no join under the policy (promotion_error::*)
    not_built_in, ///< the rule needs the kind of a node that is not one of mixt's dtypes (a user's own node)
    not_for_kind, ///< the join's kind does not have the operation (operation_error::not_defined_for_dtype)
};
} // namespace op

namespace detail {
template <class... Ns>
using list = boost::mp11::mp_list<Ns...>;

template <class Policy, class... Nodes>
inline constexpr bool joins_v = fold_join<Policy, Nodes...>() >= 0;

// A kind restriction: `Allowed<Node>::value` says whether the node's kind has the operation. `any_kind` asks
// nothing of the node (a user's own node passes); the others, `any_dtype` included, read its kind, which
// needs a built-in dtype.
template <class N>
struct any_kind : std::true_type {};
template <class N>
struct any_dtype : std::true_type {};
template <class N>
struct not_bool : std::bool_constant<!is_bool_node<N>> {};
template <class N>
struct real_non_bool : std::bool_constant<is_int_node<N> || is_float_node<N>> {};
template <class N>
struct real_kind : std::bool_constant<!is_complex_node<N>> {};
template <class N>
struct int_or_bool : std::bool_constant<is_int_node<N> || is_bool_node<N>> {};
template <class N>
struct int_only : std::bool_constant<is_int_node<N>> {};
template <class N>
struct bool_only : std::bool_constant<is_bool_node<N>> {};

// Reads the kind only where `Allowed` needs it, so that a node without one gives a verdict, not an error.
template <template <class> class Allowed, class Node>
constexpr op::verdict kind_verdict() {
    if constexpr (std::is_same_v<Allowed<Node>, any_kind<Node>>)
        return op::verdict::defined;
    else if constexpr (!is_dtype_tag_v<Node>)
        return op::verdict::not_built_in;
    else
        return Allowed<Node>::value ? op::verdict::defined : op::verdict::not_for_kind;
}

// The verdict of an operation that computes in the join of `Nodes` (rules 1, 2, 3, 6).
template <template <class> class Allowed, class Policy, class... Nodes>
constexpr op::verdict join_verdict() {
    if constexpr (!joins_v<Policy, Nodes...>)
        return op::verdict::no_join;
    else
        return kind_verdict<Allowed, join_t<Policy, Nodes...>>();
}

// The join of `Nodes` where the verdict `V` is `defined`. Elsewhere `error` is the error for V's reason (a
// template whose instantiation stops compilation with mixt's message, naming the operation and the dtypes),
// which the expression's node instantiates (node::rule_check), and the node is a valid one all the same (the
// join where there is one, else bool), so that nothing else fails after the error. The error is only named
// here, not instantiated: Clang gives every member of a template whose instantiation failed the type int,
// which would make errors follow.
template <class Operation, class Policy, op::verdict V, class... Nodes>
struct defined_join {
    using error = std::type_identity<void>;
    using type = join_t<Policy, Nodes...>;
};
template <class Operation, class Policy, class... Nodes>
struct defined_join<Operation, Policy, op::verdict::no_join, Nodes...> {
    using error = typename checked_join<Operation, Policy, Nodes...>::error; // names the operation, the dtypes, the policy
    using type = typename checked_join<Operation, Policy, Nodes...>::node;
};
template <class Operation, class Policy, class... Nodes>
struct defined_join<Operation, Policy, op::verdict::not_built_in, Nodes...> {
    using error = ::mixt::operation_error::not_a_built_in_dtype<Operation, Nodes...>;
    using type = dtypes::bool_;
};
template <class Operation, class Policy, class... Nodes>
struct defined_join<Operation, Policy, op::verdict::not_for_kind, Nodes...> {
    using error = ::mixt::operation_error::not_defined_for_dtype<Operation, join_t<Policy, Nodes...>>;
    using type = join_t<Policy, Nodes...>;
};

// Rule 1 with a kind restriction.
template <class Operation, template <class> class Allowed>
struct join_rule {
    template <class Policy, class... Nodes>
    static constexpr op::verdict verdict_for() {
        return join_verdict<Allowed, Policy, Nodes...>();
    }
    template <class Policy, class... Nodes>
    struct rule {
        using checked = defined_join<Operation, Policy, verdict_for<Policy, Nodes...>(), Nodes...>;
        using error = typename checked::error;
        using result = typename checked::type;
        using operands = list<std::conditional_t<true, result, Nodes>...>;
    };
};

// Rule 5: whether pow keeps its base (a float or complex base, an integer or bool exponent).
template <class B, class E>
constexpr bool pow_keeps_base() {
    if constexpr (is_dtype_tag_v<B> && is_dtype_tag_v<E>)
        return (is_float_node<B> || is_complex_node<B>) && (is_int_node<E> || is_bool_node<E>);
    else
        return false;
}
} // namespace detail

namespace op {
#define MIXT_DETAIL_JOIN_OP(NAME, TEXT, FN, ALLOWED)                                                           \
    struct NAME : detail::join_rule<NAME, detail::ALLOWED> {                                                   \
        static constexpr const char* name = TEXT;                                                              \
        using fn = detail::FN;                                                                                 \
    };
MIXT_DETAIL_JOIN_OP(add, "operator+", add_fn, any_kind)
MIXT_DETAIL_JOIN_OP(subtract, "operator-", sub_fn, not_bool)
MIXT_DETAIL_JOIN_OP(multiply, "operator*", mul_fn, any_kind)
MIXT_DETAIL_JOIN_OP(floor_divide, "floor_divide", floor_divide_fn, real_non_bool)
MIXT_DETAIL_JOIN_OP(modulo, "operator%", mod_fn, real_non_bool)
MIXT_DETAIL_JOIN_OP(minimum, "minimum", minimum_fn, any_kind)
MIXT_DETAIL_JOIN_OP(maximum, "maximum", maximum_fn, any_kind)
MIXT_DETAIL_JOIN_OP(clip, "clip", clip_fn, any_kind)
MIXT_DETAIL_JOIN_OP(bit_and, "operator&", bit_and_fn, int_or_bool)
MIXT_DETAIL_JOIN_OP(bit_or, "operator|", bit_or_fn, int_or_bool)
MIXT_DETAIL_JOIN_OP(bit_xor, "operator^", bit_xor_fn, int_or_bool)
MIXT_DETAIL_JOIN_OP(shift_left, "operator<<", shift_left_fn, int_only)
MIXT_DETAIL_JOIN_OP(shift_right, "operator>>", shift_right_fn, int_only)
MIXT_DETAIL_JOIN_OP(logical_and, "operator&&", logical_and_fn, bool_only)
MIXT_DETAIL_JOIN_OP(logical_or, "operator||", logical_or_fn, bool_only)
// Unary operations keep their operand's node.
MIXT_DETAIL_JOIN_OP(negate, "unary operator-", neg_fn, not_bool)
MIXT_DETAIL_JOIN_OP(bit_not, "operator~", bit_not_fn, int_or_bool)
MIXT_DETAIL_JOIN_OP(logical_not, "operator!", logical_not_fn, bool_only)
MIXT_DETAIL_JOIN_OP(conj, "conj", conj_fn, any_kind)
#undef MIXT_DETAIL_JOIN_OP

// Rule 2.
#define MIXT_DETAIL_INEXACT_OP(NAME, TEXT, FN)                                                                 \
    struct NAME {                                                                                              \
        static constexpr const char* name = TEXT;                                                              \
        using fn = detail::FN;                                                                                 \
        template <class Policy, class... Nodes>                                                                \
        static constexpr verdict verdict_for() {                                                               \
            return detail::join_verdict<detail::any_dtype, Policy, Nodes...>();                                \
        }                                                                                                      \
        template <class Policy, class... Nodes>                                                                \
        struct rule {                                                                                          \
            static constexpr verdict v = verdict_for<Policy, Nodes...>();                                      \
            using error = typename detail::defined_join<NAME, Policy, v, Nodes...>::error;                    \
            using join = typename detail::defined_join<NAME, Policy, v, Nodes...>::type;                      \
            using result = typename detail::to_inexact_under<Policy, join>::type;                                       \
            using operands = detail::list<std::conditional_t<true, result, Nodes>...>;                         \
        };                                                                                                     \
    };
MIXT_DETAIL_INEXACT_OP(divide, "operator/", div_fn)
MIXT_DETAIL_INEXACT_OP(sqrt, "sqrt", sqrt_fn)
MIXT_DETAIL_INEXACT_OP(exp, "exp", exp_fn)
MIXT_DETAIL_INEXACT_OP(log, "log", log_fn)
MIXT_DETAIL_INEXACT_OP(sin, "sin", sin_fn)
MIXT_DETAIL_INEXACT_OP(cos, "cos", cos_fn)
MIXT_DETAIL_INEXACT_OP(tanh, "tanh", tanh_fn)
#undef MIXT_DETAIL_INEXACT_OP

// Rule 3.
template <class Fn, bool Ordered>
struct compare_op {
    static constexpr const char* name = Ordered ? "ordered comparison" : "equality comparison";
    using fn = Fn;
    template <class Policy, class A, class B>
    static constexpr verdict verdict_for() {
        if constexpr (Ordered)
            return detail::join_verdict<detail::real_kind, Policy, A, B>();
        else
            return detail::join_verdict<detail::any_kind, Policy, A, B>();
    }
    template <class Policy, class A, class B>
    struct rule {
        using error = typename detail::defined_join<compare_op, Policy, verdict_for<Policy, A, B>(), A, B>::error;
        using join = typename detail::defined_join<compare_op, Policy, verdict_for<Policy, A, B>(), A, B>::type;
        using operands = detail::list<join, join>;
        using result = dtypes::bool_;
    };
};
using equal = compare_op<detail::equal_fn, false>;
using not_equal = compare_op<detail::not_equal_fn, false>;
using less = compare_op<detail::less_fn, true>;
using less_equal = compare_op<detail::less_equal_fn, true>;
using greater = compare_op<detail::greater_fn, true>;
using greater_equal = compare_op<detail::greater_equal_fn, true>;

// Rule 4.
#define MIXT_DETAIL_REAL_OP(NAME, TEXT, FN)                                                                    \
    struct NAME {                                                                                              \
        static constexpr const char* name = TEXT;                                                              \
        using fn = detail::FN;                                                                                 \
        template <class Policy, class Node>                                                                    \
        static constexpr verdict verdict_for() {                                                               \
            return verdict::defined;                                                                           \
        }                                                                                                      \
        template <class Policy, class Node>                                                                    \
        struct rule {                                                                                          \
            using operands = detail::list<Node>;                                                               \
            using result = real_part_t<Node>;                                                                  \
        };                                                                                                     \
    };
MIXT_DETAIL_REAL_OP(abs, "abs", abs_fn)
MIXT_DETAIL_REAL_OP(real, "real", real_fn)
MIXT_DETAIL_REAL_OP(imag, "imag", imag_fn)
#undef MIXT_DETAIL_REAL_OP

// Rule 5.
struct pow {
    static constexpr const char* name = "pow";
    using fn = detail::pow_fn;
    // The operands must join even where the base is kept, as under jax_strict, where `f32 ** i32` has no join.
    template <class Policy, class B, class E>
    static constexpr verdict verdict_for() {
        if constexpr (!detail::joins_v<Policy, B, E>)
            return verdict::no_join;
        else if constexpr (!is_dtype_tag_v<B> || !is_dtype_tag_v<E>)
            return verdict::not_built_in;
        else
            return verdict::defined;
    }
    template <class Policy, class B, class E>
    struct rule {
        static constexpr bool keep_base = detail::pow_keeps_base<B, E>();
        using error = typename detail::defined_join<pow, Policy, verdict_for<Policy, B, E>(), B, E>::error;
        using join =
            std::conditional_t<keep_base, B, typename detail::defined_join<pow, Policy, verdict_for<Policy, B, E>(), B, E>::type>;
        using operands = detail::list<join, std::conditional_t<keep_base, E, join>>;
        using result = join;
    };
};

// Rule 6.
struct where {
    static constexpr const char* name = "where";
    using fn = detail::where_fn;
    template <class Policy, class C, class X, class Y>
    static constexpr verdict verdict_for() {
        return detail::join_verdict<detail::any_kind, Policy, X, Y>();
    }
    template <class Policy, class C, class X, class Y>
    struct rule {
        using error = typename detail::defined_join<where, Policy, verdict_for<Policy, C, X, Y>(), X, Y>::error;
        using result = typename detail::defined_join<where, Policy, verdict_for<Policy, C, X, Y>(), X, Y>::type;
        using operands = detail::list<dtypes::bool_, result, result>;
    };
};

/// `mixt::cast<T>(e)`: an explicit conversion, with mixt::convert's semantics.
template <class Target>
struct cast {
    static constexpr const char* name = "cast";
    using fn = detail::identity_fn;
    template <class Policy, class Node>
    static constexpr verdict verdict_for() {
        return verdict::defined;
    }
    template <class Policy, class Node>
    struct rule {
        using operands = detail::list<Target>;
        using result = Target;
    };
};

/// Whether `Op` is defined for operand nodes (tags) `Nodes...` under `Policy`, and if not, why not; not a
/// compile error for any nodes:
///
///     static_assert(mixt::op::verdict_v<mixt::op::add, mixt::policy::jax_strict, mixt::dtypes::i8, mixt::dtypes::i16>
///                   == mixt::op::verdict::no_join);
template <class Op, class Policy, class... Nodes>
inline constexpr verdict verdict_v = Op::template verdict_for<Policy, Nodes...>();

/// Whether `Op::rule<Policy, Nodes...>` is defined (has a result), for SFINAE and tests. False where the
/// operands have no join under the policy or where the join's kind does not have the operation; those are
/// the cells where an expression stops compilation with mixt's message instead (`Op::rule::error`).
///
///     static_assert(!mixt::op::defined_v<mixt::op::less, mixt::policy::jax, mixt::dtypes::c64, mixt::dtypes::c64>);
///     static_assert(mixt::op::defined_v<mixt::op::equal, mixt::policy::jax, mixt::dtypes::c64, mixt::dtypes::c64>);
template <class Op, class Policy, class... Nodes>
inline constexpr bool defined_v = verdict_v<Op, Policy, Nodes...> == verdict::defined;
} // namespace op

namespace promotion_error {
/// Under a policy with `slots`, a float array met a complex operand of a later slot, and the policy has no
/// complex of that float's precision (`torch`: f16, whose complex is PyTorch's complex32).
template <class Operation, class Float, class Complex, class Policy>
struct no_complex_of_float {
    static_assert(sizeof(Float) == 0,
                  "mixt: a float array with a complex operand of rank 0 or a literal gives the complex dtype of the "
                  "float's precision under this policy, and mixt has none for this float (PyTorch's complex32 for "
                  "float16); the operation, the two dtypes and the policy are the arguments of the template being "
                  "instantiated. Cast the float array first: mixt::cast<float>(x)");
    using type = void;
};
} // namespace promotion_error

namespace detail {
/// The slots of an operation's operands, in order (lattice/slots.hpp).
template <operand_slot... S>
struct slots {};

// The operands that take part in promotion start here: where's condition is converted to bool, not joined.
template <class Op>
inline constexpr std::size_t promoted_from = 0;
template <>
inline constexpr std::size_t promoted_from<op::where> = 1;

template <class Op, class Policy, class Nodes>
struct apply_rule;
template <class Op, class Policy, class... Nodes>
struct apply_rule<Op, Policy, list<Nodes...>> {
    using rule = typename Op::template rule<Policy, Nodes...>;
    static constexpr op::verdict verdict = op::verdict_v<Op, Policy, Nodes...>;
};

/// The rule of `Op` over operand nodes in slots, what an expression's node applies: `Op::rule` over the nodes
/// themselves, or, under a policy with `slot_rule::by_category`, over the slot join of the promoted operands
/// (each replaced by it). `rule` has the members of `Op::rule`; `verdict` is `op::verdict_v`'s.
template <class Op, class Policy, class Slots, class... Nodes>
struct rule_in_slots : apply_rule<Op, Policy, list<Nodes...>> {};

template <class Op, class Policy, operand_slot... S, class... Nodes>
    requires(slot_rule_v<Policy> == slot_rule::by_category)
struct rule_in_slots<Op, Policy, slots<S...>, Nodes...> {
    static constexpr std::size_t first = promoted_from<Op>;
    static constexpr std::size_t n = sizeof...(Nodes) - first;
    static constexpr slot_join_result joined = [] {
        constexpr std::array<dtype, sizeof...(Nodes)> all_dtypes{Nodes::value...};
        constexpr std::array<operand_slot, sizeof...(Nodes)> all_slots{S...};
        std::array<dtype, n> ds{};
        std::array<operand_slot, n> ss{};
        for (std::size_t i = 0; i < n; ++i) {
            ds[i] = all_dtypes[first + i];
            ss[i] = all_slots[first + i];
        }
        return slot_join(ds, ss, Policy{});
    }();
    // Where there is no slot join, a rule that reports it, with placeholder types (nothing else fails after).
    struct no_join_rule {
        using error = std::conditional_t<
            joined.no_complex,
            promotion_error::no_complex_of_float<Op, dtype_tag<joined.a>, dtype_tag<joined.b>, Policy>,
            promotion_error::no_implicit_promotion<Op, dtype_tag<joined.a>, dtype_tag<joined.b>, Policy>>;
        using result = dtypes::f32;
        using operands = list<std::conditional_t<true, dtypes::f32, Nodes>...>;
    };
    template <std::size_t... I>
    static auto effective(std::index_sequence<I...>)
        -> list<std::conditional_t<(I >= first), dtype_tag<joined.result.value_or(dtype::float32)>, Nodes>...>;
    using applied = apply_rule<Op, Policy, decltype(effective(std::index_sequence_for<Nodes...>{}))>;
    using rule = std::conditional_t<joined.result.has_value(), typename applied::rule, no_join_rule>;
    static constexpr op::verdict verdict = joined.result ? applied::verdict : op::verdict::no_join;
};
} // namespace detail

} // namespace mixt

#endif // MIXT_EXPR_RULES_HPP
