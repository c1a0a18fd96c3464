// The result dtype of every binary operation over every pair of the 18 classic dtypes, against the table
// gen_result_table.py derives from test/data/promotion_jax_numpy.csv and the spec's per-operation rules.
// result_table_static.cpp checks the same cells at compile time; this file reports every wrong cell in one
// run, by operation and pair.
//
// Per cell (see result_table.hpp):
//   - `mixt::op::defined_v<Op, policy::jax, A, B>` says defined exactly where the generator does, for every
//     cell (the predicate `Op::rule` asks before it stops compilation with mixt's message);
//   - `Op::rule<policy::jax, A, B>::result` is the expected node where the operation is defined, and where it
//     is not, mixt's reason (`op::verdict_v`) is the generator's;
//   - the join mixt uses agrees with the CSV, and where the generator says "undefined", it is undefined for
//     the same reason (no join, or a join of a kind the operation does not have);
//   - a real expression (`lazy(a) + lazy(b)`, `lazy(a) + 2`, `mixt::pow(0.5, lazy(b))`, ...) has the
//     expected tag and value_t (weak results stored as i64 / f64 / c128).

#include "result_table.hpp"

#include <cstddef>
#include <string>

#include <boost/mp11/algorithm.hpp>
#include <gtest/gtest.h>

namespace {

namespace rt = mixt_test::result_table;

std::string text(int v) {
    if (v >= 0) return std::string(rt::node_names[static_cast<std::size_t>(v)]);
    if (v == rt::kind) return "undefined (kind)";
    if (v == rt::no_join) return "undefined (no join)";
    if (v == rt::not_built_in) return "undefined (not a built-in dtype)";
    return "no expression (two literals)";
}

std::string yes_no(int v) { return v ? "true" : "false"; }

// Every cell of `got` equals `want`; each wrong cell is its own failure, named by operation and pair.
template <class Case>
void expect_table(std::string_view what, const rt::int_table& want, const rt::int_table& got,
                  std::string (*show)(int) = text) {
    int wrong = 0;
    for (std::size_t i = 0; i < rt::node_count; ++i)
        for (std::size_t j = 0; j < rt::node_count; ++j)
            if (want[i][j] != got[i][j]) {
                ++wrong;
                ADD_FAILURE() << Case::name << " (" << Case::spelling << ") with a: " << rt::node_names[i]
                              << ", b: " << rt::node_names[j] << ": " << what << " is " << show(got[i][j])
                              << ", expected " << show(want[i][j]);
            }
    EXPECT_EQ(wrong, 0) << Case::name << ": " << what;
}

TEST(result_table, covers_every_operation_and_pair) {
    EXPECT_EQ(boost::mp11::mp_size<rt::cases>::value, 22u);
    EXPECT_EQ(rt::node_count, 18u);
    // The table has undefined cells of both kinds of reason only where expected: jax joins every pair.
    int defined = 0, kind = 0, no_join = 0;
    boost::mp11::mp_for_each<rt::cases>([&](auto c) {
        for (const auto& row : decltype(c)::cells)
            for (const auto& cell : row) {
                defined += cell.result >= 0;
                kind += cell.result == rt::kind;
                no_join += cell.result == rt::no_join;
            }
    });
    EXPECT_EQ(defined + kind + no_join, 22 * 18 * 18);
    EXPECT_EQ(no_join, 0);
    EXPECT_GT(kind, 0);
}

TEST(result_table, defined_exactly_where_the_spec_says) {
    int defined = 0;
    boost::mp11::mp_for_each<rt::cases>([&](auto c) {
        using Case = decltype(c);
        expect_table<Case>("mixt::op::defined_v<Op, jax, A, B>", rt::expected_defined<Case>(),
                           rt::mixt_tables<Case>::defined, yes_no);
        for (const auto& row : rt::mixt_tables<Case>::defined)
            for (int d : row) defined += d;
    });
    // Both answers occur, so neither a predicate that is always true nor one always false passes.
    EXPECT_GT(defined, 0);
    EXPECT_LT(defined, 22 * 18 * 18);
}

TEST(result_table, rule_result_matches_spec) {
    boost::mp11::mp_for_each<rt::cases>([](auto c) {
        using Case = decltype(c);
        expect_table<Case>("Op::rule<jax, A, B>::result", rt::expected_result<Case>(),
                     rt::mixt_tables<Case>::rule);
    });
}

TEST(result_table, join_and_reason_for_undefined_cells) {
    boost::mp11::mp_for_each<rt::cases>([](auto c) {
        using Case = decltype(c);
        expect_table<Case>("join_t<jax, A, B>", rt::expected_join<Case>(), rt::mixt_tables<Case>::join);
        // An operation undefined for a kind: the operands do join (has_promotion_v), so only the operation's
        // own restriction can make it undefined.
        for (std::size_t i = 0; i < rt::node_count; ++i)
            for (std::size_t j = 0; j < rt::node_count; ++j)
                if (Case::cells[i][j].result == rt::kind) {
                    EXPECT_GE(rt::mixt_tables<Case>::join[i][j], 0)
                        << Case::name << "(" << rt::node_names[i] << ", " << rt::node_names[j] << ")";
                }
    });
}

TEST(result_table, expression_dtype_matches_spec) {
    boost::mp11::mp_for_each<rt::cases>([](auto c) {
        using Case = decltype(c);
        expect_table<Case>("tag_t of the expression", rt::expected_expression<Case>(),
                     rt::mixt_tables<Case>::expression);
        for (std::size_t i = 0; i < rt::node_count; ++i)
            for (std::size_t j = 0; j < rt::node_count; ++j)
                EXPECT_EQ(rt::mixt_tables<Case>::expression_value_ok[i][j], 1)
                    << Case::spelling << " with a: " << rt::node_names[i] << ", b: " << rt::node_names[j]
                    << ": value_t is not the storage type of "
                    << text(rt::expected_result<Case>()[i][j]);
    });
}

} // namespace
