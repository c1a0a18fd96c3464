#ifndef MIXT_TEST_LATTICE_TORCH_TABLE_HPP
#define MIXT_TEST_LATTICE_TORCH_TABLE_HPP

// test/data/promotion_torch.csv (gen_torch_table.py: PyTorch's own answers) read by a constexpr parser, and
// mixt's answers for the same cells under `policy::torch`, from the expression typing itself: the operands are
// the types a mixt expression holds (a leaf of a rank-1 tensor, a leaf of a rank-0 tensor, a C++ literal), and
// the result is the rule an expression's node applies (`detail::node_rule`, the slots included). PyTorch's
// Python bool is `mixt::strong(true)` (a C++ bool is not a literal in mixt; a bool of rank 0 types alike, as
// bool is the lowest category). torch_table_static.cpp compares them at compile time, torch_test.cpp at run time.

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <mixt/mixt.hpp>

namespace mixt_test::torch_table {

using torch = mixt::policy::torch;
using mixt::dtype;
using mixt::operand_slot;

/// PyTorch's dtypes in the table, by their mixt short names, and its four kinds of Python scalar.
inline constexpr std::array<std::string_view, 12> dtype_names = {"b",   "u8",  "i8",  "i16", "i32", "i64",
                                                                 "bf16", "f16", "f32", "f64", "c64", "c128"};
inline constexpr std::array<std::string_view, 4> scalar_names = {"bool", "int", "float", "complex"};
/// Operands: 0-11 rank-1 tensors, 12-23 rank-0 tensors, 24-27 Python scalars, in the order of the names above.
inline constexpr int operand_count = 28;

constexpr std::optional<int> operand_index(std::string_view kind, std::string_view name) {
    const auto find = [&](const auto& names) -> int {
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == name) return static_cast<int>(i);
        return -1;
    };
    int i = -1;
    if (kind == "dim" && (i = find(dtype_names)) >= 0) return i;
    if (kind == "zerodim" && (i = find(dtype_names)) >= 0) return 12 + i;
    if (kind == "scalar" && (i = find(scalar_names)) >= 0) return 24 + i;
    return std::nullopt;
}

constexpr operand_slot slot_of(int i) {
    return i < 12 ? operand_slot::dimensioned : i < 24 ? operand_slot::zero_dim : operand_slot::literal;
}
/// The dtype of operand i: a tensor's own; a Python scalar's weak dtype (bool for a bool).
constexpr dtype dtype_of(int i) {
    if (i < 24) return *mixt::parse_dtype(dtype_names[static_cast<std::size_t>(i % 12)]);
    constexpr std::array<dtype, 4> scalars = {dtype::bool_, dtype::weak_int, dtype::weak_float, dtype::weak_complex};
    return scalars[static_cast<std::size_t>(i - 24)];
}

/// The mixt operand type of operand I.
template <int I>
struct operand {
    using value = mixt::storage_t<mixt::dtype_tag<dtype_of(I)>>;
    using type = mixt::leaf<torch, const Eigen::Tensor<value, I < 12 ? 1 : 0>&>;
};
template <>
struct operand<24> {
    using type = mixt::scalar<bool>;
};
template <>
struct operand<25> {
    using type = mixt::literal<std::int64_t>;
};
template <>
struct operand<26> {
    using type = mixt::literal<double>;
};
template <>
struct operand<27> {
    using type = mixt::literal<std::complex<double>>;
};
template <int I>
using operand_t = typename operand<I>::type;

/// The operations of the table's columns after result_type.
using ops = boost::mp11::mp_list<mixt::op::add, mixt::op::multiply, mixt::op::divide>;
inline constexpr std::array<std::string_view, 4> columns = {"result_type", "add", "mul", "div"};

/// mixt's result of `Op` over operands A and B: the dtype, or -1 where the expression does not compile.
template <class Op, int A, int B>
constexpr int typed_result() {
    using rule = mixt::detail::node_rule<Op, torch, operand_t<A>, operand_t<B>>;
    if constexpr (rule::verdict == mixt::op::verdict::defined)
        return static_cast<int>(rule::rule::result::value);
    else
        return -1;
}

/// mixt's answers for every pair of operands: [a][b][column], -1 for none; column 0 is promote_types by slot.
using answers = std::array<std::array<std::array<int, 4>, operand_count>, operand_count>;
template <int A, std::size_t... B>
constexpr void fill_row(answers& t, std::index_sequence<B...>) {
    ((t[A][B] = {[] {
          const auto r = mixt::promote_types(dtype_of(A), slot_of(A), dtype_of(static_cast<int>(B)),
                                             slot_of(static_cast<int>(B)), torch{});
          return r ? static_cast<int>(*r) : -1;
      }(),
                 typed_result<mixt::op::add, A, static_cast<int>(B)>(),
                 typed_result<mixt::op::multiply, A, static_cast<int>(B)>(),
                 typed_result<mixt::op::divide, A, static_cast<int>(B)>()}),
     ...);
}
template <std::size_t... A>
constexpr answers make_answers(std::index_sequence<A...>) {
    answers t{};
    (fill_row<static_cast<int>(A)>(t, std::make_index_sequence<operand_count>{}), ...);
    return t;
}
inline constexpr answers mixt_answers = make_answers(std::make_index_sequence<operand_count>{});

/// One row of the CSV file.
struct row {
    std::size_t line = 0; ///< 1-based line of the file
    int a = -1, b = -1;   ///< operand indices
    /// PyTorch's result for result_type, +, *, /: a dtype mixt has, or -1 (PyTorch's error, or complex32, which
    /// mixt has not: `policy::torch` refuses those cells).
    std::array<int, 4> expected{};
    bool valid = false;
};

inline constexpr std::size_t max_rows = 800;
struct table {
    std::array<row, max_rows> rows{};
    std::size_t count = 0;
    std::size_t bad_line = 0; ///< the first line that is not a well-formed row (0: none)
};

constexpr int expected_of(std::string_view cell, bool& ok) {
    if (cell == "error" || cell == "c32") return -1;
    const auto d = mixt::parse_dtype(cell);
    if (!d) ok = false;
    return d ? static_cast<int>(*d) : -1;
}

constexpr table parse(std::string_view text) {
    table t;
    std::size_t line_no = 0;
    while (!text.empty()) {
        const std::size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
        ++line_no;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
        if (line.empty() || line.front() == '#') continue;
        std::array<std::string_view, 8> f{};
        std::size_t n = 0;
        for (std::string_view rest = line; n < f.size();) {
            const std::size_t comma = rest.find(',');
            f[n++] = rest.substr(0, comma);
            if (comma == std::string_view::npos) {
                rest = {};
                break;
            }
            rest = rest.substr(comma + 1);
        }
        row r;
        r.line = line_no;
        bool ok = n == 8 && t.count < max_rows;
        const auto a = operand_index(f[0], f[1]);
        const auto b = operand_index(f[2], f[3]);
        ok = ok && a && b;
        for (std::size_t c = 0; c < 4; ++c) r.expected[c] = expected_of(f[4 + c], ok);
        if (!ok) {
            if (t.bad_line == 0) t.bad_line = line_no;
            continue;
        }
        r.a = *a;
        r.b = *b;
        r.valid = true;
        t.rows[t.count++] = r;
    }
    return t;
}

} // namespace mixt_test::torch_table

#endif // MIXT_TEST_LATTICE_TORCH_TABLE_HPP
