// mixt/eval/explain.hpp and the plan (eval/plan.hpp): explain prints the route and decisions the evaluation
// takes, after the same checks; the route table of docs/architecture.md names the route explain prints for each
// of its expressions.

#include <mixt/mixt.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using index_t = Eigen::Index;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string route_of(const std::string& plan) {
    const auto end = plan.find('\n');
    return plan.rfind("route: ", 0) == 0 ? plan.substr(7, end - 7) : "(no route line)";
}

// The expressions of docs/architecture.md's route table, by the name its rows give them.
std::map<std::string, std::function<std::string()>> table_expressions() {
    static Eigen::Tensor<float, 2, Eigen::RowMajor> t(6, 40), x(6, 40);
    static Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> a(6, 40);
    static Eigen::Tensor<float, 1> row(40), y(6), g(5), empty(0);
    static Eigen::Tensor<float, 2, Eigen::RowMajor> wide(6, 8);
    return {
        {"same_shape", [] { return mixt::explain(t, mixt::lazy(a) + x); }},
        {"broadcast_row", [] { return mixt::explain(t, mixt::lazy(a) * row); }},
        {"reverse_over_operand", [] { return mixt::explain(g.reverse(Eigen::array<bool, 1>{true}), mixt::lazy(g) * 2); }},
        {"sum_into_y", [] { return mixt::explain(y, mixt::sum(mixt::lazy(x), 1)); }},
        {"eval_sum", [] { return mixt::explain(mixt::sum(mixt::lazy(x), 1)); }},
        {"sum_then_scale", [] { return mixt::explain(y, mixt::sum(mixt::lazy(x), 1) * 2); }},
        {"expression_leaf", [] { return mixt::explain(t, mixt::lazy(x * 2.f) + 1); }},
        {"empty", [] { return mixt::explain(empty, mixt::lazy(empty) + 1); }},
    };
}

TEST(explain, the_route_table_of_the_architecture_document_is_what_explain_prints) {
    std::ifstream in(std::string(MIXT_TEST_DATA_DIR) + "/../../docs/architecture.md");
    ASSERT_TRUE(in) << "docs/architecture.md not found";
    std::stringstream text;
    text << in.rdbuf();
    const std::string doc = text.str();
    const auto begin = doc.find("<!-- routes:begin -->"), end = doc.find("<!-- routes:end -->");
    ASSERT_NE(begin, std::string::npos);
    ASSERT_NE(end, std::string::npos);
    const std::string table = doc.substr(begin, end - begin);
    // A row: | ... (`name`) ... | `route` |
    const std::regex row_re(R"(\(`([a-z_]+)`\)[^\n]*\|\s*`([a-z_]+)`\s*\|)");
    auto expressions = table_expressions();
    int rows = 0;
    for (std::sregex_iterator it(table.begin(), table.end(), row_re), stop; it != stop; ++it) {
        const std::string key = (*it)[1], route = (*it)[2];
        if (key == "gpu") continue; // explain of a GpuDevice needs nvcc (test/gpu)
        ++rows;
        const auto found = expressions.find(key);
        ASSERT_NE(found, expressions.end()) << "the table's expression " << key << " is not in this test";
        EXPECT_EQ(route_of(found->second()), route) << key << ":\n" << found->second();
        expressions.erase(found);
    }
    EXPECT_GE(rows, 8);
    EXPECT_TRUE(expressions.empty()) << "an expression of this test has no row in the table";
}

TEST(explain, a_broadcast_pass_shows_its_space_runs_and_device_use) {
    Eigen::Tensor<std::uint8_t, 2, Eigen::RowMajor> img(480, 640);
    Eigen::Tensor<float, 1> scale(640);
    Eigen::Tensor<float, 2, Eigen::RowMajor> out(480, 640);
    const std::string plan = mixt::explain(out, mixt::lazy(img) * scale + 1.0f);
    EXPECT_THAT(plan, StartsWith("route: runs\nresult: float32 [480, 640]\n"
                                 "space: dims [480, 640], strides dst [640, 1] op1 [640, 1] op2 [0, 1]\n"
                                 "runs: 480 of 640 elements, staged operands 0\n"));
    EXPECT_THAT(plan, HasSubstr("\nloop: "));
    EXPECT_THAT(plan, HasSubstr("\nthreads: 1\nstores: plain\n"));
    // A column of a row-major tensor: strided, so staged.
    Eigen::Tensor<float, 2, Eigen::RowMajor> m(300, 7);
    Eigen::Tensor<float, 1> col(300);
    const std::string staged = mixt::explain(col, mixt::lazy(m.chip(3, 1)) * 2);
    EXPECT_THAT(staged, StartsWith("route: runs\nresult: float32 [300]\nspace: dims [300], strides dst [1] op1 [7]\n"));
    EXPECT_THAT(staged, HasSubstr("staged operands 1\n"));
    // Every operand of the destination's shape: one merged flat run.
    EXPECT_THAT(mixt::explain(out, mixt::lazy(img) * 2.0f),
                StartsWith("route: flat\nresult: float32 [480, 640]\nspace: dims [307200], strides dst [1] op1 [1]\n"));
}

TEST(explain, a_reduction_shows_its_strategy_and_lanes) {
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(1000, 4), wide(20, 5000);
    Eigen::Tensor<float, 1> y(1000);
    EXPECT_THAT(mixt::explain(y, mixt::sum(mixt::lazy(x), 1)),
                StartsWith("route: reduce_into_destination\nresult: float32 [1000]\nreduction: sum, result float32 "
                           "[1000], strategy short_rows_across, rows 1000, stream 4, columns 1"));
    EXPECT_THAT(mixt::explain(mixt::sum(mixt::lazy(wide), 1)),
                HasSubstr("strategy streams, rows 20, stream 5000, columns 1, lanes 32"));
    EXPECT_THAT(mixt::explain(mixt::mean(mixt::lazy(wide), 0)), HasSubstr("rows 1, stream 100000, columns 5000"));
}

TEST(explain, eval_never_goes_through_a_temporary) {
    // eval writes a new result, which no operand can overlap: an Eigen expression leaf is Eigen's route, not a
    // temporary's (assign into the leaf's own tensor would take the temporary).
    Eigen::Tensor<float, 1> g(5);
    const auto e = mixt::lazy(g.reverse(Eigen::array<bool, 1>{true})) * 2;
    EXPECT_THAT(mixt::explain(e), StartsWith("route: eigen\nresult: float32 [5]\n"));
    EXPECT_THAT(mixt::explain(g, e), StartsWith("route: through_temporary\n"));
    EXPECT_EQ(mixt::explain(g, e).find("loop:"), std::string::npos);
}

TEST(explain, checks_as_assign_does_and_writes_nothing) {
    Eigen::Tensor<std::uint8_t, 1> u(4);
    u.setConstant(9);
    Eigen::Tensor<std::uint8_t, 1> five(5);
    EXPECT_THROW((void)mixt::explain(u, mixt::lazy(five) + 1), mixt::shape_error);
    EXPECT_THROW((void)mixt::explain(u, mixt::lazy(u) + 300), mixt::overflow_error);
    Eigen::TensorMap<Eigen::Tensor<std::uint8_t, 1>> tail(u.data() + 1, 3), head(u.data(), 3);
    EXPECT_THROW((void)mixt::explain(tail, mixt::lazy(head) + 1), mixt::aliasing_error);
    EXPECT_THAT(mixt::explain(u, mixt::lazy(u) + 1), StartsWith("route: flat\n"));
    for (index_t i = 0; i < 4; ++i) EXPECT_EQ(u(i), 9);
}

#if defined(EIGEN_USE_THREADS)
#endif

} // namespace
