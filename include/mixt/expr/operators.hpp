#ifndef MIXT_EXPR_OPERATORS_HPP
#define MIXT_EXPR_OPERATORS_HPP

// The operators and functions that build expressions. An operator is mixt's as soon as one operand is a mixt
// expression; the other may be a mixt expression, an Eigen tensor or Dense object, or a C++ value (a weak
// literal). With `using namespace mixt::operators;` the operators also apply to two plain Eigen tensors, or two
// Dense arrays, whose scalar types differ, so same-dtype Eigen code keeps Eigen's own operators.
//
//     auto e = mixt::lazy(a_i8) + b_f16 * c_f32 + 2;   // f32
//     auto m = mixt::where(x > 0, x, 0.5 * x);           // leaky ReLU, in x's dtype

#include <type_traits>

#include "mixt/expr/expression.hpp"
#include "mixt/expr/rules.hpp"

namespace mixt {

namespace detail {
template <class A, class B>
concept mixt_binary_operands = operand<A> && operand<B> && (mixt_expression<A> || mixt_expression<B>);

template <class A, class B>
concept different_scalars = !std::is_same_v<typename Eigen::internal::traits<std::remove_cvref_t<A>>::Scalar,
                                            typename Eigen::internal::traits<std::remove_cvref_t<B>>::Scalar>;
template <class T>
concept dense_array = eigen_dense<T> && decltype(is_array_base(std::declval<std::remove_cvref_t<T>*>()))::value;
// Two Dense arrays whose scalars Eigen itself does not combine (it does complex with real): Eigen's member
// operators would stop at a static assertion; mixt's are a better match (no conversion to the base class), so
// they are chosen. Matrices are left to Eigen (`*` is its matrix product), as is a Dense with a tensor.
template <class A, class B>
concept eigen_combines = requires {
    typename Eigen::ScalarBinaryOpTraits<typename Eigen::internal::traits<std::remove_cvref_t<A>>::Scalar,
                                         typename Eigen::internal::traits<std::remove_cvref_t<B>>::Scalar>::ReturnType;
};
template <class A, class B>
concept mixed_eigen_operands = ((eigen_tensor<A> && eigen_tensor<B>) ||
                                (dense_array<A> && dense_array<B> && !eigen_combines<A, B>)) &&
                               different_scalars<A, B>;
} // namespace detail

#define MIXT_DETAIL_BINARY_OPERATOR(SYMBOL, OP)                                                                \
    template <class A, class B>                                                                                \
        requires detail::mixt_binary_operands<A, B>                                                            \
    constexpr auto operator SYMBOL(A&& a, B&& b) {                                                             \
        return detail::make_node<OP>(static_cast<A&&>(a), static_cast<B&&>(b));                                \
    }                                                                                                          \
    namespace operators {                                                                                      \
    template <class A, class B>                                                                                \
        requires detail::mixed_eigen_operands<A, B>                                                            \
    constexpr auto operator SYMBOL(A&& a, B&& b) {                                                             \
        return detail::make_node<OP>(static_cast<A&&>(a), static_cast<B&&>(b));                                \
    }                                                                                                          \
    }

MIXT_DETAIL_BINARY_OPERATOR(+, op::add)
MIXT_DETAIL_BINARY_OPERATOR(-, op::subtract)
MIXT_DETAIL_BINARY_OPERATOR(*, op::multiply)
MIXT_DETAIL_BINARY_OPERATOR(/, op::divide)
MIXT_DETAIL_BINARY_OPERATOR(%, op::modulo)
MIXT_DETAIL_BINARY_OPERATOR(==, op::equal)
MIXT_DETAIL_BINARY_OPERATOR(!=, op::not_equal)
MIXT_DETAIL_BINARY_OPERATOR(<, op::less)
MIXT_DETAIL_BINARY_OPERATOR(<=, op::less_equal)
MIXT_DETAIL_BINARY_OPERATOR(>, op::greater)
MIXT_DETAIL_BINARY_OPERATOR(>=, op::greater_equal)
MIXT_DETAIL_BINARY_OPERATOR(&&, op::logical_and)
MIXT_DETAIL_BINARY_OPERATOR(||, op::logical_or)
MIXT_DETAIL_BINARY_OPERATOR(&, op::bit_and)
MIXT_DETAIL_BINARY_OPERATOR(|, op::bit_or)
MIXT_DETAIL_BINARY_OPERATOR(^, op::bit_xor)
MIXT_DETAIL_BINARY_OPERATOR(<<, op::shift_left)
MIXT_DETAIL_BINARY_OPERATOR(>>, op::shift_right)
#undef MIXT_DETAIL_BINARY_OPERATOR

#define MIXT_DETAIL_UNARY_OPERATOR(SYMBOL, OP)                                                                 \
    template <class A>                                                                                         \
        requires mixt_expression<A>                                                                            \
    constexpr auto operator SYMBOL(A&& a) {                                                                    \
        return detail::make_node<OP>(static_cast<A&&>(a));                                                     \
    }
MIXT_DETAIL_UNARY_OPERATOR(-, op::negate)
MIXT_DETAIL_UNARY_OPERATOR(~, op::bit_not)
MIXT_DETAIL_UNARY_OPERATOR(!, op::logical_not)
#undef MIXT_DETAIL_UNARY_OPERATOR

// Functions accept mixt expressions and Eigen tensors; binary ones also C++ values, as long as one argument
// is not a C++ value.
#define MIXT_DETAIL_UNARY_FUNCTION(NAME, OP)                                                                   \
    template <class A>                                                                                         \
        requires(mixt_expression<A> || eigen_array<A>)                                                        \
    constexpr auto NAME(A&& a) {                                                                               \
        return detail::make_node<OP>(static_cast<A&&>(a));                                                     \
    }
MIXT_DETAIL_UNARY_FUNCTION(abs, op::abs)
MIXT_DETAIL_UNARY_FUNCTION(sqrt, op::sqrt)
MIXT_DETAIL_UNARY_FUNCTION(exp, op::exp)
MIXT_DETAIL_UNARY_FUNCTION(log, op::log)
MIXT_DETAIL_UNARY_FUNCTION(sin, op::sin)
MIXT_DETAIL_UNARY_FUNCTION(cos, op::cos)
MIXT_DETAIL_UNARY_FUNCTION(tanh, op::tanh)
MIXT_DETAIL_UNARY_FUNCTION(real, op::real)
MIXT_DETAIL_UNARY_FUNCTION(imag, op::imag)
MIXT_DETAIL_UNARY_FUNCTION(conj, op::conj)
#undef MIXT_DETAIL_UNARY_FUNCTION

namespace detail {
template <class... Xs>
concept function_operands = (operand<Xs> && ...) && ((mixt_expression<Xs> || eigen_array<Xs>) || ...);
}

#define MIXT_DETAIL_BINARY_FUNCTION(NAME, OP)                                                                  \
    template <class A, class B>                                                                                \
        requires detail::function_operands<A, B>                                                               \
    constexpr auto NAME(A&& a, B&& b) {                                                                        \
        return detail::make_node<OP>(static_cast<A&&>(a), static_cast<B&&>(b));                                \
    }
MIXT_DETAIL_BINARY_FUNCTION(pow, op::pow)
MIXT_DETAIL_BINARY_FUNCTION(minimum, op::minimum)
MIXT_DETAIL_BINARY_FUNCTION(maximum, op::maximum)
MIXT_DETAIL_BINARY_FUNCTION(floor_divide, op::floor_divide)
#undef MIXT_DETAIL_BINARY_FUNCTION

/// `where(c, x, y)`: x where c is true, else y; c is converted to bool, x and y joined.
template <class C, class X, class Y>
    requires detail::function_operands<C, X, Y>
constexpr auto where(C&& c, X&& x, Y&& y) {
    return detail::make_node<op::where>(static_cast<C&&>(c), static_cast<X&&>(x), static_cast<Y&&>(y));
}

/// `clip(x, lo, hi)`: `minimum(maximum(x, lo), hi)` in the join of all three.
template <class X, class L, class H>
    requires detail::function_operands<X, L, H>
constexpr auto clip(X&& x, L&& lo, H&& hi) {
    return detail::make_node<op::clip>(static_cast<X&&>(x), static_cast<L&&>(lo), static_cast<H&&>(hi));
}

/// An explicit conversion to `T` (a storage type or a concrete tag), with mixt::convert's semantics.
template <class T, class A>
    requires(mixt_expression<A> || eigen_array<A>)
constexpr auto cast(A&& a) {
    using target = typename std::conditional_t<is_dtype_tag_v<T>, std::type_identity<T>, detail::tag_of_impl<T>>::type;
    return detail::make_node<op::cast<target>>(static_cast<A&&>(a));
}

} // namespace mixt

#endif // MIXT_EXPR_OPERATORS_HPP
