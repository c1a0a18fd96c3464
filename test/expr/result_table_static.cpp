// Compile-only: every cell of the generated result table (gen_result_table.py: the CSV plus the spec's
// per-operation rules) holds for mixt at compile time: whether the operation is defined
// (`mixt::op::defined_v`, for defined and undefined cells alike), `Op::rule<policy::jax, A, B>::result` or
// the reason it is undefined, the join, and the tag and value_t of a real expression. A wrong cell stops
// compilation in `wrong_cell<Case, Table, A, B, Expected, Got>`: the operation, which table, the two dtypes,
// and the expected and actual value: 1 or 0 for `defined`, else a node as an index into
// `mixt_test::result_table::nodes` (-1: undefined for the kind, -2: no join, -4: not a built-in dtype).
// result_table_test.cpp reports the same cells at run time, all of them in one run.

#include "result_table.hpp"

#include <cstddef>

#include <boost/mp11/algorithm.hpp>

namespace {

namespace mp = boost::mp11;
namespace rt = mixt_test::result_table;

enum class which { defined, rule, join, expression, expression_value_type };

template <class Case, which Table, class A, class B, int Expected, int Got>
struct wrong_cell {
    static_assert(Expected == Got, "mixt test: a cell of the result table is wrong (operation, table, the two "
                                   "dtypes, expected and actual value are the template arguments)");
    static constexpr bool value = Expected == Got;
};

constexpr std::size_t first_mismatch(const rt::int_table& want, const rt::int_table& got) {
    for (std::size_t k = 0; k < rt::cell_count; ++k)
        if (want[k / rt::node_count][k % rt::node_count] != got[k / rt::node_count][k % rt::node_count]) return k;
    return rt::cell_count;
}

template <class Case, which Table, const rt::int_table& Want, const rt::int_table& Got>
constexpr bool check() {
    constexpr std::size_t k = first_mismatch(Want, Got);
    if constexpr (k == rt::cell_count) {
        return true;
    } else {
        constexpr std::size_t i = k / rt::node_count, j = k % rt::node_count;
        return wrong_cell<Case, Table, mp::mp_at_c<rt::nodes, i>, mp::mp_at_c<rt::nodes, j>, Want[i][j],
                          Got[i][j]>::value;
    }
}

template <class Case>
struct expected {
    static constexpr rt::int_table defined = rt::expected_defined<Case>();
    static constexpr rt::int_table result = rt::expected_result<Case>();
    static constexpr rt::int_table join = rt::expected_join<Case>();
    static constexpr rt::int_table expression = rt::expected_expression<Case>();
    static constexpr rt::int_table all_ok = [] {
        rt::int_table t{};
        for (auto& row : t)
            for (auto& c : row) c = 1;
        return t;
    }();
};

template <class Case>
constexpr bool check_case() {
    using got = rt::mixt_tables<Case>;
    return check<Case, which::defined, expected<Case>::defined, got::defined>() &&
           check<Case, which::rule, expected<Case>::result, got::rule>() &&
           check<Case, which::join, expected<Case>::join, got::join>() &&
           check<Case, which::expression, expected<Case>::expression, got::expression>() &&
           check<Case, which::expression_value_type, expected<Case>::all_ok, got::expression_value_ok>();
}

template <class... Cases>
constexpr bool check_all(mp::mp_list<Cases...>) {
    return (check_case<Cases>() && ...);
}
static_assert(check_all(rt::cases{}));

} // namespace
