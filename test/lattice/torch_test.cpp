// policy::torch (mixt/lattice/policy.hpp, lattice/slots.hpp, the slots of expr/rules.hpp), against
// test/data/promotion_torch.csv (PyTorch's own answers, gen_torch_table.py), read at run time: every cell of
// torch.result_type through the run-time `promote_types` by slot, and of +, *, / through the types expressions
// get (torch_table.hpp), each wrong cell reported. The compile-time counterpart is torch_table_static.cpp.
// Then expressions evaluated under the policy: the cases, with their values.

#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

#include <gtest/gtest.h>

#include "torch_table.hpp"

namespace mixt {
inline void PrintTo(dtype d, std::ostream* os) { *os << name(d); }
} // namespace mixt

namespace {

namespace tt = mixt_test::torch_table;
namespace dt = mixt::dtypes;
using mixt::dtype;
using mixt::operand_slot;
using torch = mixt::policy::torch;

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string show(int d) { return d < 0 ? std::string("none") : std::string(mixt::short_name(static_cast<dtype>(d))); }

// The CSV file, parsed once (about 50 KB: not on the stack).
const tt::table& pytorch_table() {
    static const std::string text = read_file(MIXT_TEST_DATA_DIR "/promotion_torch.csv");
    static const tt::table t = tt::parse(text);
    return t;
}

// PyTorch's answer for operands (kind, name) and a column (result_type, add, mul, div), as a mixt dtype or -1.
int pytorch(std::string_view ka, std::string_view a, std::string_view kb, std::string_view b, std::string_view column) {
    const tt::table& t = pytorch_table();
    const auto ia = tt::operand_index(ka, a), ib = tt::operand_index(kb, b);
    for (std::size_t i = 0; i < t.count; ++i)
        if (ia && ib && t.rows[i].a == *ia && t.rows[i].b == *ib)
            for (std::size_t c = 0; c < 4; ++c)
                if (tt::columns[c] == column) return t.rows[i].expected[c];
    ADD_FAILURE() << "no cell " << ka << ',' << a << ',' << kb << ',' << b << ',' << column;
    return -2;
}

template <class E>
int dtype_of_expr(const E&) {
    return static_cast<int>(mixt::tag_t<E>::value);
}

TEST(torch_table, every_cell_of_pytorchs_table) {
    const tt::table& table = pytorch_table();
    ASSERT_GT(table.count, 0u) << "cannot read " MIXT_TEST_DATA_DIR "/promotion_torch.csv";
    ASSERT_EQ(table.bad_line, 0u);
    ASSERT_EQ(table.count, static_cast<std::size_t>(tt::operand_count * tt::operand_count - 16));
    std::size_t cells = 0;
    for (std::size_t i = 0; i < table.count; ++i) {
        const tt::row& r = table.rows[i];
        // torch.result_type, by the run-time function (called with run-time values here).
        const std::optional<dtype> rt =
            mixt::promote_types(tt::dtype_of(r.a), tt::slot_of(r.a), tt::dtype_of(r.b), tt::slot_of(r.b), torch{});
        EXPECT_EQ(rt ? static_cast<int>(*rt) : -1, r.expected[0])
            << "promotion_torch.csv line " << r.line << ", result_type: mixt " << show(rt ? static_cast<int>(*rt) : -1)
            << ", PyTorch " << show(r.expected[0]);
        for (std::size_t c = 0; c < 4; ++c) {
            const int got = tt::mixt_answers[static_cast<std::size_t>(r.a)][static_cast<std::size_t>(r.b)][c];
            EXPECT_EQ(got, r.expected[c]) << "promotion_torch.csv line " << r.line << ", " << tt::columns[c]
                                          << ": mixt " << show(got) << ", PyTorch " << show(r.expected[c]);
            ++cells;
        }
    }
    EXPECT_EQ(cells, 768u * 4u);
}

// --- Expressions under the policy ------------------------------------------------------------------------------

template <class T, int N>
Eigen::Tensor<T, N> filled(T v) {
    Eigen::Tensor<T, N> t;
    if constexpr (N == 1) t.resize(3);
    t.setConstant(v);
    return t;
}

TEST(torch_expressions, rank_zero_and_literal_operands_take_their_slots) {
    const auto x_i8 = filled<std::int8_t, 1>(3);
    const auto y_f64 = filled<double, 0>(0.25);
    const auto x_f16 = filled<Eigen::half, 1>(Eigen::half(1));
    const auto x_b = filled<bool, 1>(true);
    // The cases; each expected dtype is PyTorch's, from its table.
    auto e1 = mixt::lazy<torch>(x_i8) * y_f64;
    EXPECT_EQ(dtype_of_expr(e1), pytorch("dim", "i8", "zerodim", "f64", "mul"));
    Eigen::Tensor<mixt::value_t<decltype(e1)>, 1> r1 = mixt::eval(e1);
    EXPECT_EQ(static_cast<double>(r1(2)), 0.75);
    auto e2 = mixt::lazy<torch>(x_f16) + y_f64;
    EXPECT_EQ(dtype_of_expr(e2), pytorch("dim", "f16", "zerodim", "f64", "add"));
    Eigen::Tensor<mixt::value_t<decltype(e2)>, 1> r2 = mixt::eval(e2);
    EXPECT_EQ(static_cast<double>(r2(0)), 1.25);
    auto e3 = mixt::lazy<torch>(x_i8) * 2.5;
    EXPECT_EQ(dtype_of_expr(e3), pytorch("dim", "i8", "scalar", "float", "mul"));
    auto e4 = mixt::lazy<torch>(x_b) + 2;
    EXPECT_EQ(dtype_of_expr(e4), pytorch("dim", "b", "scalar", "int", "add"));
    Eigen::Tensor<mixt::value_t<decltype(e4)>, 1> r4 = mixt::eval(e4);
    EXPECT_EQ(static_cast<double>(r4(1)), 3.0);
    // Under the default policy the same expressions keep JAX's types (the slots belong to torch alone).
    EXPECT_EQ(dtype_of_expr(mixt::lazy(x_f16) + y_f64), static_cast<int>(*mixt::promote_types(dtype::float16, dtype::float64)));
    EXPECT_EQ(dtype_of_expr(mixt::lazy(x_i8) * 2.5), static_cast<int>(*mixt::promote_types(dtype::int8, dtype::weak_float)));
}

TEST(torch_expressions, a_sub_expression_of_rank_zero_is_a_zero_dim_operand) {
    const auto x_i8 = filled<std::int8_t, 1>(2);
    const auto y_f64 = filled<double, 0>(0.5);
    const auto v_f64 = filled<double, 1>(0.5);
    // (y * 2.5) is rank 0, f64: it counts as PyTorch's zero-dim tensor would.
    auto e = mixt::lazy<torch>(x_i8) * (mixt::lazy<torch>(y_f64) * 2.5);
    EXPECT_EQ(dtype_of_expr(mixt::lazy<torch>(y_f64) * 2.5), pytorch("zerodim", "f64", "scalar", "float", "mul"));
    EXPECT_EQ(dtype_of_expr(e), pytorch("dim", "i8", "zerodim", "f64", "mul"));
    Eigen::Tensor<mixt::value_t<decltype(e)>, 1> r = mixt::eval(e);
    EXPECT_EQ(static_cast<double>(r(0)), 2.5);
    // A full reduction is rank 0 as well (torch.sum returns a zero-dim tensor).
    auto s = mixt::lazy<torch>(x_i8) * mixt::sum(mixt::lazy<torch>(v_f64));
    EXPECT_EQ(dtype_of_expr(s), pytorch("dim", "i8", "zerodim", "f64", "mul"));
    Eigen::Tensor<mixt::value_t<decltype(s)>, 1> rs = mixt::eval(s);
    EXPECT_EQ(static_cast<double>(rs(1)), 3.0);
}

TEST(torch_expressions, division_of_ints_gives_the_default_float_and_comparisons_bool) {
    const auto a = filled<std::int64_t, 1>(3);
    const auto b = filled<std::int64_t, 1>(2);
    auto q = mixt::lazy<torch>(a) / b;
    EXPECT_EQ(dtype_of_expr(q), pytorch("dim", "i64", "dim", "i64", "div"));
    EXPECT_EQ(dtype_of_expr(mixt::lazy<torch>(a) / 2), pytorch("dim", "i64", "scalar", "int", "div"));
    Eigen::Tensor<mixt::value_t<decltype(q)>, 1> r = mixt::eval(q);
    EXPECT_EQ(static_cast<double>(r(0)), 1.5);
    // Comparisons give bool; the float functions of ints give the default float, as division does.
    EXPECT_EQ(dtype_of_expr(mixt::lazy<torch>(a) < 2.5), static_cast<int>(dtype::bool_));
    EXPECT_EQ(dtype_of_expr(mixt::sqrt(mixt::lazy<torch>(a))), dtype_of_expr(q));
}

TEST(torch_expressions, what_mixt_refuses) {
    using mixt::op::verdict;
    // f16 with a complex operand of a later slot is PyTorch's complex32, which mixt has not.
    EXPECT_EQ((mixt::detail::node_rule<mixt::op::add, torch, tt::operand_t<7>, tt::operand_t<27>>::verdict),
              verdict::no_join);
    EXPECT_EQ(mixt::promote_types(dtype::float16, operand_slot::dimensioned, dtype::complex64, operand_slot::zero_dim,
                                  torch{}),
              std::nullopt);
    const auto r = mixt::slot_join(std::array<dtype, 2>{dtype::float16, dtype::weak_complex},
                                   std::array<operand_slot, 2>{operand_slot::dimensioned, operand_slot::literal},
                                   torch{});
    EXPECT_TRUE(r.no_complex);
    EXPECT_EQ(r.a, dtype::float16);
    // u16, u32, u64 join only themselves.
    EXPECT_EQ(mixt::promote_types(dtype::uint16, dtype::uint16, torch{}), dtype::uint16);
    EXPECT_EQ(mixt::promote_types(dtype::uint16, operand_slot::dimensioned, dtype::weak_int, operand_slot::literal,
                                  torch{}),
              dtype::uint16);
    EXPECT_EQ(mixt::promote_types(dtype::uint32, dtype::int64, torch{}), std::nullopt);
    EXPECT_EQ(mixt::promote_types(dtype::uint64, dtype::float32, torch{}), std::nullopt);
}

TEST(torch_expressions, where_joins_its_branches_by_slot) {
    const auto c = filled<bool, 1>(true);
    const auto x_i8 = filled<std::int8_t, 1>(1);
    auto w = mixt::where(mixt::lazy<torch>(c), x_i8, 0.5);
    EXPECT_EQ(dtype_of_expr(w), pytorch("dim", "i8", "scalar", "float", "result_type"));
    Eigen::Tensor<mixt::value_t<decltype(w)>, 1> r = mixt::eval(w);
    EXPECT_EQ(static_cast<double>(r(0)), 1.0);
}

} // namespace
