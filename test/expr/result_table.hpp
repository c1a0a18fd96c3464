#ifndef MIXT_TEST_EXPR_RESULT_TABLE_HPP
#define MIXT_TEST_EXPR_RESULT_TABLE_HPP

// What mixt says for every cell of the generated result table (mixt_test/result_table.hpp, written by
// gen_result_table.py from the CSV and the spec's rules), computed at compile time in the table's own
// encoding so that result_table_static.cpp can static_assert it and result_table_test.cpp can report every
// wrong cell in one run.
//
// Per cell, each an index into `nodes` (or the generator's `kind` / `no_join`) unless said otherwise:
//   - defined: `mixt::op::defined_v<Op, policy::jax, A, B>`, 1 or 0, for every cell: the SFINAE-friendly
//     predicate that `Op::rule` itself asks before it stops compilation with mixt's message, so a pair mixt
//     wrongly accepts (or rejects) shows up here;
//   - rule: `Op::rule<policy::jax, A, B>::result` where mixt's predicate says the operation is defined, else
//     the reason it gives (`op::verdict_v`: `kind`, `no_join`, or `not_built_in`), for every cell; the
//     compile-fail tests check the message of each reason on representative cells;
//   - join: `join_t<policy::jax, A, B>` where `has_promotion_v<A, B, policy::jax>`, else `no_join`, for every
//     cell: an undefined cell must be undefined for the reason the generator gives;
//   - expression: the tag of a real expression, `lazy(a) op lazy(b)`, with a C++ literal for a weak operand
//     (`2`, `0.5`, `std::complex<double>`), where mixt says the operation is defined (elsewhere the reason,
//     as for rule); `not_applicable` when both operands are weak. `expr_value_ok` says whether its value_t is
//     the storage type of the expected node, weak nodes stored at 64 bits.

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <unsupported/Eigen/CXX11/Tensor>

#include <mixt/dtype/storage.hpp>
#include <mixt/expr/expression.hpp>
#include <mixt/expr/operators.hpp>
#include <mixt/expr/rules.hpp>
#include <mixt/lattice/promote.hpp>
#include <mixt_test/result_table.hpp>

namespace mixt_test::result_table {

namespace mp = boost::mp11;
using jax = mixt::policy::jax;

inline constexpr int not_applicable = -3;
/// mixt's third reason for an undefined cell, which the generator never gives: a node that is not a dtype.
inline constexpr int not_built_in = -4;
inline constexpr std::size_t cell_count = node_count * node_count;
using int_table = std::array<std::array<int, node_count>, node_count>;

template <class Tag>
inline constexpr int index_of = static_cast<int>(mp::mp_find<nodes, Tag>::value);

template <class Tag>
inline constexpr bool is_weak_node = std::is_same_v<Tag, mixt::dtypes::weak_int> ||
                                     std::is_same_v<Tag, mixt::dtypes::weak_float> ||
                                     std::is_same_v<Tag, mixt::dtypes::weak_complex>;

// The storage of a result node in JAX's 64-bit mode: weak results take the default width (spec/lattice.md).
template <class Tag>
struct expected_storage {
    using type = mixt::storage_t<Tag>;
};
template <>
struct expected_storage<mixt::dtypes::weak_int> {
    using type = std::int64_t;
};
template <>
struct expected_storage<mixt::dtypes::weak_float> {
    using type = double;
};
template <>
struct expected_storage<mixt::dtypes::weak_complex> {
    using type = std::complex<double>;
};

// The operand an expression is built from: a const lvalue tensor for a concrete node, a C++ literal for a
// weak one.
template <class Tag>
struct operand_of {
    using type = decltype(mixt::lazy(std::declval<const Eigen::Tensor<mixt::storage_t<Tag>, 1>&>()));
};
template <>
struct operand_of<mixt::dtypes::weak_int> {
    using type = int;
};
template <>
struct operand_of<mixt::dtypes::weak_float> {
    using type = double;
};
template <>
struct operand_of<mixt::dtypes::weak_complex> {
    using type = std::complex<double>;
};

// mixt's reason for an undefined cell, in the generator's encoding.
constexpr int reason_code(mixt::op::verdict v) {
    switch (v) {
    case mixt::op::verdict::not_for_kind: return kind;
    case mixt::op::verdict::no_join: return no_join;
    case mixt::op::verdict::not_built_in: return not_built_in;
    case mixt::op::verdict::defined: break;
    }
    return 0;
}

template <class Case, std::size_t I, std::size_t J>
struct cell_facts {
    using A = mp::mp_at_c<nodes, I>;
    using B = mp::mp_at_c<nodes, J>;
    static constexpr cell expected = Case::cells[I][J];
    // Only mixt's own predicate decides what is instantiated below: a rule or an expression it rejects would
    // stop compilation, one it accepts compiles whatever the generator says, and the tables show the difference.
    static constexpr mixt::op::verdict verdict = mixt::op::verdict_v<typename Case::op, jax, A, B>;
    static constexpr bool defined = mixt::op::defined_v<typename Case::op, jax, A, B>;

    static constexpr int rule() {
        if constexpr (defined)
            return index_of<typename Case::op::template rule<jax, A, B>::result>;
        else
            return reason_code(verdict);
    }
    static constexpr int join() {
        if constexpr (mixt::has_promotion_v<A, B, jax>)
            return index_of<mixt::join_t<jax, A, B>>;
        else
            return no_join;
    }
    template <class X = A> // deferred: only cells with an expression name it
    using expression_type = decltype(Case::build(std::declval<typename operand_of<X>::type>(),
                                                 std::declval<typename operand_of<B>::type>()));
    static constexpr bool has_expression = defined && !(is_weak_node<A> && is_weak_node<B>);
    static constexpr int expression() {
        if constexpr (has_expression)
            return index_of<mixt::tag_t<expression_type<>>>;
        else
            return defined ? not_applicable : reason_code(verdict);
    }
    static constexpr bool expression_value_ok() {
        if constexpr (has_expression && expected.result >= 0)
            return std::is_same_v<mixt::value_t<expression_type<>>,
                                  typename expected_storage<mp::mp_at_c<nodes, expected.result>>::type>;
        else
            return true;
    }
};

template <class Case, template <class, std::size_t, std::size_t> class F, class Seq = std::make_index_sequence<cell_count>>
struct tabulate;
template <class Case, template <class, std::size_t, std::size_t> class F, std::size_t... K>
struct tabulate<Case, F, std::index_sequence<K...>> {
    static constexpr int_table value = [] {
        constexpr int flat[] = {F<Case, K / node_count, K % node_count>::value...};
        int_table t{};
        for (std::size_t k = 0; k < cell_count; ++k) t[k / node_count][k % node_count] = flat[k];
        return t;
    }();
};

template <class Case, std::size_t I, std::size_t J>
struct defined_of {
    static constexpr int value = cell_facts<Case, I, J>::defined ? 1 : 0;
};
template <class Case, std::size_t I, std::size_t J>
struct rule_of {
    static constexpr int value = cell_facts<Case, I, J>::rule();
};
template <class Case, std::size_t I, std::size_t J>
struct join_of {
    static constexpr int value = cell_facts<Case, I, J>::join();
};
template <class Case, std::size_t I, std::size_t J>
struct expression_of {
    static constexpr int value = cell_facts<Case, I, J>::expression();
};
template <class Case, std::size_t I, std::size_t J>
struct expression_value_ok_of {
    static constexpr int value = cell_facts<Case, I, J>::expression_value_ok() ? 1 : 0;
};

/// mixt's answers for one operation, cell by cell.
template <class Case>
struct mixt_tables {
    static constexpr int_table defined = tabulate<Case, defined_of>::value;
    static constexpr int_table rule = tabulate<Case, rule_of>::value;
    static constexpr int_table join = tabulate<Case, join_of>::value;
    static constexpr int_table expression = tabulate<Case, expression_of>::value;
    static constexpr int_table expression_value_ok = tabulate<Case, expression_value_ok_of>::value;
};

/// The generator's answers in the same shape.
template <class Case>
constexpr int_table expected_defined() {
    int_table t{};
    for (std::size_t i = 0; i < node_count; ++i)
        for (std::size_t j = 0; j < node_count; ++j) t[i][j] = Case::cells[i][j].result >= 0 ? 1 : 0;
    return t;
}
template <class Case>
constexpr int_table expected_result() {
    int_table t{};
    for (std::size_t i = 0; i < node_count; ++i)
        for (std::size_t j = 0; j < node_count; ++j) t[i][j] = Case::cells[i][j].result;
    return t;
}
template <class Case>
constexpr int_table expected_join() {
    int_table t{};
    for (std::size_t i = 0; i < node_count; ++i)
        for (std::size_t j = 0; j < node_count; ++j) t[i][j] = Case::cells[i][j].join;
    return t;
}
template <class Case>
constexpr int_table expected_expression() {
    int_table t = expected_result<Case>();
    for (std::size_t i = 0; i < node_count; ++i)
        for (std::size_t j = 0; j < node_count; ++j)
            if (t[i][j] >= 0 && node_names[i].ends_with('*') && node_names[j].ends_with('*')) t[i][j] = not_applicable;
    return t;
}

} // namespace mixt_test::result_table

#endif // MIXT_TEST_EXPR_RESULT_TABLE_HPP
