#ifndef MIXT_EXPR_REDUCE_HPP
#define MIXT_EXPR_REDUCE_HPP

// Reductions: `sum`, `prod`, `mean`, `min`, `max`, `argmin`, `argmax`, `any`, `all` over all axes or a set of
// axes (with `keepdims`), and `dot`. Each takes a mixt expression or an Eigen array and returns an expression
// (a `reduction` node), which `eval` and `assign` evaluate (eval/reduce.hpp) and which may be an operand of
// further elementwise work: `mixt::lazy(x) - mixt::max(x, {1}, mixt::keepdims)`.
//
// Result and accumulator dtypes are JAX's (jax/_src/numpy/reductions.py), derived from the policy's default
// int and float (what it stores `i*` and `f*` as), so every policy has them without a table:
//   - sum, prod: bool and integers narrower than the default int give the default int (signed) or the
//     unsigned int of its width; f16 and bf16 accumulate in f32 and return f16/bf16; the rest keep their dtype.
//     Integers wrap in the result's dtype. `sum<T>(x)` converts every element to T first, returns T, and
//     accumulates in T (f32 for f16/bf16; bools add as `or` and multiply as `and`, as JAX's).
//   - mean: bool and integers of up to 32 bits give f32, 64-bit integers the default float; f16/bf16 are
//     computed in f32 and return f16/bf16. Integers of up to 32 bits are summed exactly (in 64 bits), the sum
//     divided by the count in double (exact below 2^53), and the quotient rounded to f32.
//   - min, max: the operand's dtype; NaN propagates; -0 < +0. Complex values compare lexicographically.
//   - argmin, argmax: the default int; the index of the first extreme element (a NaN counts as the extreme);
//     complex operands are rejected, as JAX rejects them.
//   - any, all: bool (an element is true when it is not zero).
// The reduced extent may be empty: sum gives 0, prod 1, any false, all true, mean NaN; min, max, argmin and
// argmax throw mixt::shape_error before anything is written.
//
// Axes are a tensor's logical axes (negative ones count from the last). argmin and argmax over all axes give
// the index into the operand flattened in its layout's order (row-major: NumPy's and JAX's flat index).

#include <array>
#include <concepts>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "mixt/dtype/dtype.hpp"
#include "mixt/dtype/storage.hpp"
#include "mixt/errors.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/expr/operators.hpp"
#include "mixt/lattice/promote.hpp"

namespace mixt {

/// What a reduction computes.
enum class reduce_kind : unsigned char { sum, prod, mean, min, max, argmin, argmax, any, all };

constexpr std::string_view reduce_name(reduce_kind k) {
    constexpr std::string_view names[] = {"sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all"};
    return names[static_cast<std::size_t>(k)];
}

/// Keeps the reduced axes as axes of size 1: `mixt::sum(x, {1}, mixt::keepdims)` is [n, 1] for an [n, m] x.
struct keepdims_t {};
inline constexpr keepdims_t keepdims{};

/// The dtypes of a reduction: what it returns and what it accumulates in.
struct reduce_dtypes {
    dtype result;
    dtype accumulator;
};

namespace detail {
constexpr dtype unsigned_of_bits(int bits) {
    return bits <= 8 ? dtype::uint8 : bits <= 16 ? dtype::uint16 : bits <= 32 ? dtype::uint32 : dtype::uint64;
}
constexpr bool is_half_dtype(dtype d) { return d == dtype::float16 || d == dtype::bfloat16; }
// The floats narrower than 32 bits accumulate in f32 (f16, bf16, and the float8/6/4 formats); the integers of 4
// and 2 bits in i32, the same value modulo 2^n (their sums and products wrap at the end, as any int's do).
constexpr dtype accumulator_of(dtype d) {
    if (is_half_dtype(d) || is_small_float(d)) return dtype::float32;
    if (is_small(d)) return dtype::int32; // int4, uint4, int2, uint2
    return d;
}
constexpr bool is_integer_kind(dtype d) {
    return kind(d) == dtype_kind::signed_int || kind(d) == dtype_kind::unsigned_int;
}
} // namespace detail

/// The dtypes of reduction `k` of an operand of dtype `in` (strong, classic), for a policy whose default int
/// and float are `default_int` and `default_float`; `given`: the dtype was chosen by the caller (`sum<T>`), and
/// `in` is it.
constexpr reduce_dtypes reduce_types(reduce_kind k, dtype in, dtype default_int, dtype default_float, bool given) {
    using detail::accumulator_of;
    switch (k) {
    case reduce_kind::sum:
    case reduce_kind::prod: {
        dtype r = in;
        if (!given) {
            const int width = info(default_int).bits;
            if (kind(in) == dtype_kind::boolean)
                r = default_int;
            else if (kind(in) == dtype_kind::signed_int && info(in).bits < width)
                r = default_int;
            else if (kind(in) == dtype_kind::unsigned_int && info(in).bits < width)
                r = detail::unsigned_of_bits(width);
        }
        return {r, accumulator_of(r)};
    }
    case reduce_kind::mean: {
        if (kind(in) == dtype_kind::boolean || detail::is_integer_kind(in)) {
            if (info(in).bits <= 32)
                return {dtype::float32, kind(in) == dtype_kind::signed_int ? dtype::int64 : dtype::uint64};
            return {default_float, default_float};
        }
        return {in, accumulator_of(in)};
    }
    case reduce_kind::min:
    case reduce_kind::max: return {in, accumulator_of(in)};
    case reduce_kind::argmin:
    case reduce_kind::argmax: return {default_int, accumulator_of(in)};
    case reduce_kind::any:
    case reduce_kind::all: return {dtype::bool_, dtype::bool_};
    }
    return {in, in};
}

namespace reduction_error {
/// argmin/argmax of a complex operand (JAX rejects it too: complex numbers have no order).
template <class Dtype>
struct complex_has_no_order {
    static_assert(sizeof(Dtype) == 0, "mixt: argmin/argmax: the operand is complex (the template argument), which "
                                      "has no order; reduce its real part or its abs");
    using type = void;
};
/// mean<T> with an integer or bool T.
template <class Dtype>
struct mean_needs_an_inexact_dtype {
    static_assert(sizeof(Dtype) == 0, "mixt: mean<T>: T (the template argument) must be a floating or complex dtype");
    using type = void;
};
/// A reduction of an expression without arrays (`sum(mixt::strong(2))`).
template <class Expr>
struct operand_has_no_array {
    static_assert(sizeof(Expr) == 0, "mixt: a reduction's operand must contain an array (a tensor or Dense object)");
    using type = void;
};
/// More axes than the operand has.
template <std::size_t Axes, int Rank>
struct more_axes_than_the_operand_has {
    static_assert(Axes == 0, "mixt: a reduction names more axes (first argument) than its operand's rank (second)");
    using type = void;
};
/// A reduction whose operand chose no policy, joining an expression of a policy other than the default.
template <class Policy>
struct reduction_typed_under_default_policy {
    static_assert(sizeof(Policy) == 0,
                  "mixt: a reduction of an operand without a policy was typed under default_policy but joins an "
                  "expression of another policy (the template argument): write mixt::lazy<Policy>(x) inside it");
    using type = void;
};
} // namespace reduction_error

/// A reduction of C over N of its axes; `Keep`: keepdims; `Given`: the dtype was chosen (C is then a cast).
template <reduce_kind K, class C, std::size_t N, bool Keep, bool Given>
struct reduction : expression<reduction<K, C, N, Keep, Given>> {
    using child_type = std::remove_cvref_t<C>;
    using policy = typename child_type::policy;
    using input_dtype = tag_of_t<value_t<child_type>>;
    static constexpr reduce_kind kind = K;
    static constexpr std::size_t axis_count = N;
    static constexpr bool keep = Keep;
    static constexpr reduce_dtypes types = reduce_types(
        K, input_dtype::value, materialize_t<dtypes::weak_int, detail::policy_or_default<policy>>::value,
        materialize_t<dtypes::weak_float, detail::policy_or_default<policy>>::value, Given);
    using tag = dtype_tag<types.result>;
    using value_type = storage_t<tag>;
    /// The type elements are converted to and accumulated in.
    using accumulator_type = storage_t<dtype_tag<types.accumulator>>;
    static constexpr int rank = Keep ? child_type::rank : child_type::rank - static_cast<int>(N);
    static constexpr int layout = child_type::layout;

    C child;
    /// The reduced axes: distinct, increasing, each below the operand's rank.
    std::array<int, N> axes;
};

namespace detail {
/// Whether reduction K of C is refused (an error in make_reduction): mean<T> of a bool or integer T, argmin or
/// argmax of a complex operand.
template <reduce_kind K, bool Given, class Cx>
inline constexpr bool refused_reduction_v =
    (K == reduce_kind::mean && Given &&
     (kind(tag_of_t<value_t<Cx>>::value) == dtype_kind::boolean || is_integer_kind(tag_of_t<value_t<Cx>>::value))) ||
    ((K == reduce_kind::argmin || K == reduce_kind::argmax) && kind(tag_of_t<value_t<Cx>>::value) == dtype_kind::complex);

template <reduce_kind K, class C, std::size_t N, bool Keep, bool Given>
struct well_formed<reduction<K, C, N, Keep, Given>>
    : std::bool_constant<well_formed<std::remove_cvref_t<C>>::value && !refused_reduction_v<K, Given, std::remove_cvref_t<C>>> {};
} // namespace detail

template <class T>
struct is_reduction : std::false_type {};
template <reduce_kind K, class C, std::size_t N, bool Keep, bool Given>
struct is_reduction<reduction<K, C, N, Keep, Given>> : std::true_type {};

namespace detail {
/// Whether an expression has a reduction anywhere in it.
template <class E>
struct has_reduction : std::false_type {};
template <reduce_kind K, class C, std::size_t N, bool Keep, bool Given>
struct has_reduction<reduction<K, C, N, Keep, Given>> : std::true_type {};
template <class Op, class... Cs>
struct has_reduction<node<Op, Cs...>> : std::bool_constant<(has_reduction<std::remove_cvref_t<Cs>>::value || ...)> {};
template <class E>
inline constexpr bool has_reduction_v = has_reduction<std::remove_cvref_t<E>>::value;

// A reduction typed under default_policy (its operand chose none) in a node of another policy: its dtypes
// may differ there (sum(i8) is i64 under jax, i32 under jax_x32).
template <class Policy, reduce_kind K, class C, std::size_t N, bool Keep, bool Given>
    requires(!std::is_void_v<Policy> && !std::is_same_v<Policy, default_policy> &&
             std::is_void_v<typename std::remove_cvref_t<C>::policy>)
struct check_typed_alike<Policy, reduction<K, C, N, Keep, Given>> {
    using type = typename reduction_error::reduction_typed_under_default_policy<Policy>::type;
};

[[noreturn]] inline void throw_bad_axis(std::string_view what, int axis, int rank, bool repeated) {
    throw shape_error("mixt: " + std::string(what) + ": axis " + std::to_string(axis) +
                      (repeated ? " is named twice" : " is out of range") + " for an operand of rank " +
                      std::to_string(rank));
}

/// The axes `given` normalized (negative ones from the end), sorted; a bad or repeated axis throws.
template <std::size_t N>
std::array<int, N> normalize_axes(const std::array<int, N>& given, int rank, std::string_view what) {
    std::array<int, N> a{};
    for (std::size_t i = 0; i < N; ++i) {
        const int ax = given[i] < 0 ? given[i] + rank : given[i];
        if (ax < 0 || ax >= rank) throw_bad_axis(what, given[i], rank, false);
        a[i] = ax;
    }
    for (std::size_t i = 1; i < N; ++i)
        for (std::size_t j = i; j > 0 && a[j - 1] > a[j]; --j) std::swap(a[j - 1], a[j]);
    for (std::size_t i = 1; i < N; ++i)
        if (a[i] == a[i - 1]) throw_bad_axis(what, a[i], rank, true);
    return a;
}

template <reduce_kind K, bool Keep, bool Given, class X, std::size_t N>
auto make_reduction(X&& x, const std::array<int, N>& axes) {
    using C = operand_t<X>;
    using Cx = std::remove_cvref_t<C>;
    constexpr int R = Cx::rank;
    if constexpr (R < 0) {
        static_assert(std::is_void_v<typename reduction_error::operand_has_no_array<Cx>::type>);
        return 0;
    } else if constexpr (static_cast<int>(N) > R) {
        static_assert(std::is_void_v<typename reduction_error::more_axes_than_the_operand_has<N, R>::type>);
        return 0;
    } else {
        // A refused reduction of an operand with arrays is still returned, after its error: well_formed is false
        // for it, so that evaluating it compiles nothing more.
        if constexpr (refused_reduction_v<K, Given, Cx> && K == reduce_kind::mean)
            static_assert(std::is_void_v<typename reduction_error::mean_needs_an_inexact_dtype<tag_of_t<value_t<Cx>>>::type>);
        else if constexpr (refused_reduction_v<K, Given, Cx>)
            static_assert(std::is_void_v<typename reduction_error::complex_has_no_order<tag_of_t<value_t<Cx>>>::type>);
        return reduction<K, C, N, Keep, Given>{
            {}, as_operand(static_cast<X&&>(x)), normalize_axes<N>(axes, R, reduce_name(K))};
    }
}

template <int R>
constexpr std::array<int, static_cast<std::size_t>(R)> all_axes() {
    std::array<int, static_cast<std::size_t>(R)> a{};
    for (int i = 0; i < R; ++i) a[static_cast<std::size_t>(i)] = i;
    return a;
}

template <class X>
inline constexpr int operand_rank_v = std::remove_cvref_t<operand_t<X>>::rank;

template <std::size_t N>
constexpr std::array<int, N> to_axis_array(const int (&a)[N]) {
    std::array<int, N> r{};
    for (std::size_t i = 0; i < N; ++i) r[i] = a[i];
    return r;
}

// The operand of sum<T>/prod<T>/mean<T>: x converted to T (JAX converts before it reduces).
template <class T, class X>
decltype(auto) given_dtype_operand(X&& x) {
    if constexpr (std::is_void_v<T>)
        return static_cast<X&&>(x);
    else
        return cast<T>(static_cast<X&&>(x));
}

template <class T>
concept reducible = mixt_expression<T> || eigen_array<T>;
} // namespace detail

// The reductions over all axes, over one axis (an integer), over a set of axes (`{0, 2}`), each with `keepdims`.
// (`{}` is no set of axes: it matches no overload, rather than converting to axis 0.)
// sum, prod and mean take an optional dtype: `mixt::sum<float>(x)`.
#define MIXT_REDUCTION_WITH_DTYPE(NAME, KIND)                                                                        \
    template <class T = void, class X>                                                                               \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x) {                                                                                               \
        return detail::make_reduction<KIND, false, !std::is_void_v<T>>(                                              \
            detail::given_dtype_operand<T>(static_cast<X&&>(x)), detail::all_axes<detail::operand_rank_v<X>>());     \
    }                                                                                                                \
    template <class T = void, class X>                                                                               \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, keepdims_t) {                                                                                   \
        return detail::make_reduction<KIND, true, !std::is_void_v<T>>(                                               \
            detail::given_dtype_operand<T>(static_cast<X&&>(x)), detail::all_axes<detail::operand_rank_v<X>>());     \
    }                                                                                                                \
    template <class T = void, class X, std::integral I>                                                              \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, I axis) {                                                                                     \
        return detail::make_reduction<KIND, false, !std::is_void_v<T>>(                                              \
            detail::given_dtype_operand<T>(static_cast<X&&>(x)), std::array<int, 1>{static_cast<int>(axis)});                         \
    }                                                                                                                \
    template <class T = void, class X, std::integral I>                                                              \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, I axis, keepdims_t) {                                                                         \
        return detail::make_reduction<KIND, true, !std::is_void_v<T>>(                                               \
            detail::given_dtype_operand<T>(static_cast<X&&>(x)), std::array<int, 1>{static_cast<int>(axis)});                         \
    }                                                                                                                \
    template <class T = void, class X, std::size_t N>                                                                \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, const int (&axes)[N]) {                                                                         \
        return detail::make_reduction<KIND, false, !std::is_void_v<T>>(                                              \
            detail::given_dtype_operand<T>(static_cast<X&&>(x)), detail::to_axis_array(axes));                      \
    }                                                                                                                \
    template <class T = void, class X, std::size_t N>                                                                \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, const int (&axes)[N], keepdims_t) {                                                             \
        return detail::make_reduction<KIND, true, !std::is_void_v<T>>(                                               \
            detail::given_dtype_operand<T>(static_cast<X&&>(x)), detail::to_axis_array(axes));                      \
    }

/// The sum of the elements (over all axes, one axis or a set of them): `sum(x)`, `sum(x, 1)`, `sum(x, {0, 1})`.
MIXT_REDUCTION_WITH_DTYPE(sum, reduce_kind::sum)
/// The product of the elements.
MIXT_REDUCTION_WITH_DTYPE(prod, reduce_kind::prod)

/// The mean of the elements; `mean<T>` needs a floating or complex T.
MIXT_REDUCTION_WITH_DTYPE(mean, reduce_kind::mean)
#undef MIXT_REDUCTION_WITH_DTYPE

#define MIXT_REDUCTION(NAME, KIND)                                                                                   \
    template <class X>                                                                                               \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x) {                                                                                               \
        return detail::make_reduction<KIND, false, false>(static_cast<X&&>(x),                                       \
                                                          detail::all_axes<detail::operand_rank_v<X>>());            \
    }                                                                                                                \
    template <class X>                                                                                               \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, keepdims_t) {                                                                                   \
        return detail::make_reduction<KIND, true, false>(static_cast<X&&>(x),                                        \
                                                         detail::all_axes<detail::operand_rank_v<X>>());             \
    }                                                                                                                \
    template <class X, std::integral I>                                                                              \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, I axis) {                                                                                     \
        return detail::make_reduction<KIND, false, false>(static_cast<X&&>(x), std::array<int, 1>{static_cast<int>(axis)});           \
    }                                                                                                                \
    template <class X, std::integral I>                                                                              \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, I axis, keepdims_t) {                                                                         \
        return detail::make_reduction<KIND, true, false>(static_cast<X&&>(x), std::array<int, 1>{static_cast<int>(axis)});            \
    }

#define MIXT_REDUCTION_AXES(NAME, KIND)                                                                              \
    template <class X, std::size_t N>                                                                                \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, const int (&axes)[N]) {                                                                         \
        return detail::make_reduction<KIND, false, false>(static_cast<X&&>(x), detail::to_axis_array(axes));        \
    }                                                                                                                \
    template <class X, std::size_t N>                                                                                \
        requires detail::reducible<X>                                                                                \
    auto NAME(X&& x, const int (&axes)[N], keepdims_t) {                                                             \
        return detail::make_reduction<KIND, true, false>(static_cast<X&&>(x), detail::to_axis_array(axes));         \
    }

/// The smallest element (NaN if any is NaN).
MIXT_REDUCTION(min, reduce_kind::min)
MIXT_REDUCTION_AXES(min, reduce_kind::min)
/// The largest element (NaN if any is NaN).
MIXT_REDUCTION(max, reduce_kind::max)
MIXT_REDUCTION_AXES(max, reduce_kind::max)
/// Whether any element is not zero.
MIXT_REDUCTION(any, reduce_kind::any)
MIXT_REDUCTION_AXES(any, reduce_kind::any)
/// Whether every element is not zero.
MIXT_REDUCTION(all, reduce_kind::all)
MIXT_REDUCTION_AXES(all, reduce_kind::all)
/// The index of the first smallest element along one axis, or in the flattened operand.
MIXT_REDUCTION(argmin, reduce_kind::argmin)
/// The index of the first largest element along one axis, or in the flattened operand.
MIXT_REDUCTION(argmax, reduce_kind::argmax)
#undef MIXT_REDUCTION
#undef MIXT_REDUCTION_AXES

namespace detail {
/// The length of a rank-1 operand of dot where it is known before evaluation: an array's size, an
/// expression's broadcast length (1 for literals alone); -1 where it is not (a leaf that is an Eigen tensor
/// expression, a reduction), which evaluation checks as `a * b`.
template <class E>
long long dot_length(const E& e) {
    if constexpr (requires { e.size(); }) {
        return static_cast<long long>(e.size());
    } else if constexpr (requires { e.x; }) {
        return dot_length(e.x);
    } else if constexpr (requires { e.children; }) {
        long long n = 1;
        bool known = true;
        std::apply(
            [&](const auto&... c) {
                (
                    [&] {
                        const long long k = dot_length(c);
                        if (k < 0) known = false;
                        else if (k != 1) n = k;
                    }(),
                    ...);
            },
            e.children);
        return known ? n : -1;
    } else if constexpr (requires { e.value; }) {
        return 1;
    } else {
        return -1;
    }
}
} // namespace detail

/// The dot product of two rank-1 operands of any dtypes: `sum(a * b)` in the product's dtype (f16/bf16
/// accumulate in f32; integers wrap in their own dtype, as JAX's dot does). Operands of different lengths
/// (arrays, or expressions over arrays) throw mixt::shape_error, as JAX raises: a length-1 operand is not
/// broadcast.
template <class A, class B>
    requires(detail::reducible<A> && detail::reducible<B>)
auto dot(A&& a, B&& b) {
    const long long la = detail::dot_length(a), lb = detail::dot_length(b);
    if (la >= 0 && lb >= 0 && la != lb)
        throw shape_error("mixt: dot: the operands have " + std::to_string(la) + " and " + std::to_string(lb) +
                          " elements");
    auto product = detail::make_node<op::multiply>(static_cast<A&&>(a), static_cast<B&&>(b));
    using P = decltype(product);
    static_assert(P::rank == 1, "mixt: dot: both operands must have rank 1");
    return detail::make_reduction<reduce_kind::sum, false, true>(std::move(product), std::array<int, 1>{0});
}

} // namespace mixt

#endif // MIXT_EXPR_REDUCE_HPP
