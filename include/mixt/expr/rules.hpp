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

#include <type_traits>

#include <boost/mp11/list.hpp>

#include "mixt/dtype/dtype.hpp"
#include "mixt/expr/functors.hpp"
#include "mixt/lattice/promote.hpp"

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
} // namespace operation_error

namespace detail {
template <class Operation, class Node, bool Ok>
struct require_kind {
    using type = Node;
};
template <class Operation, class Node>
struct require_kind<Operation, Node, false> : operation_error::not_defined_for_dtype<Operation, Node> {};
template <class Operation, class Node, bool Ok>
using require_kind_t = typename require_kind<Operation, Node, Ok>::type;

template <class... Ns>
using list = boost::mp11::mp_list<Ns...>;

// Rule 1 with a kind restriction: `Allowed<Node>` says whether the join's kind has the operation.
template <class Operation, template <class> class Allowed>
struct join_rule {
    template <class Policy, class... Nodes>
    struct rule {
        using join = checked_join_t<Operation, Policy, Nodes...>;
        using result = require_kind_t<Operation, join, Allowed<join>::value>;
        using operands = list<std::conditional_t<true, result, Nodes>...>;
    };
};
template <class N>
struct any_kind : std::true_type {};
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
        struct rule {                                                                                          \
            using result = to_inexact_t<checked_join_t<NAME, Policy, Nodes...>>;                               \
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
    struct rule {
        using join = checked_join_t<compare_op, Policy, A, B>;
        using operands = detail::list<detail::require_kind_t<compare_op, join, !(Ordered && detail::is_complex_node<join>)>,
                                      join>;
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
    template <class Policy, class B, class E>
    struct rule {
        static constexpr bool keep_base =
            (detail::is_float_node<B> || detail::is_complex_node<B>) && (detail::is_int_node<E> || detail::is_bool_node<E>);
        using join = std::conditional_t<keep_base, B, checked_join_t<pow, Policy, B, E>>;
        using operands = detail::list<join, std::conditional_t<keep_base, E, join>>;
        using result = join;
    };
};

// Rule 6.
struct where {
    static constexpr const char* name = "where";
    using fn = detail::where_fn;
    template <class Policy, class C, class X, class Y>
    struct rule {
        using result = checked_join_t<where, Policy, X, Y>;
        using operands = detail::list<dtypes::bool_, result, result>;
    };
};

/// `mixt::cast<T>(e)`: an explicit conversion, with mixt::convert's semantics.
template <class Target>
struct cast {
    static constexpr const char* name = "cast";
    using fn = detail::identity_fn;
    template <class Policy, class Node>
    struct rule {
        using operands = detail::list<Target>;
        using result = Target;
    };
};
} // namespace op

} // namespace mixt

#endif // MIXT_EXPR_RULES_HPP
