// Compile-only: `policy::torch` reproduces test/data/promotion_torch.csv (PyTorch's own answers, written by
// gen_torch_table.py) cell by cell, at compile time. The file is embedded at configure time
// (test/lattice/lattice.cmake, mixt_test/promotion_torch.hpp) and parsed here by torch_table.hpp, which also
// holds mixt's answers: promote_types by slot (torch.result_type) and the rules an expression's node applies to
// the operands a mixt expression holds (a rank-1 leaf, a rank-0 leaf, a literal) for +, * and /. Every operand
// pair a node of `+` can be built for is also built as a node, and its tag compared. A wrong cell stops
// compilation in `wrong_cell<Line, Column>`: the 1-based line of the file and the column (1 result_type, 2 add,
// 3 mul, 4 div).

#include <cstddef>
#include <type_traits>
#include <utility>

#include <mixt_test/promotion_torch.hpp>

#include "torch_table.hpp"

namespace {

namespace tt = mixt_test::torch_table;

constexpr tt::table table = tt::parse(mixt_test::promotion_torch_csv);
static_assert(table.bad_line == 0, "mixt test: promotion_torch.csv has a line that is not a well-formed row");
// Every pair of operands but two Python scalars, once each.
static_assert(table.count == tt::operand_count * tt::operand_count - 16,
              "mixt test: promotion_torch.csv must have one row per pair of operands (two scalars excepted)");

// -1 when every cell agrees, else `row * 4 + column`.
constexpr long first_wrong_cell() {
    for (std::size_t i = 0; i < table.count; ++i) {
        const tt::row& r = table.rows[i];
        for (std::size_t c = 0; c < 4; ++c)
            if (tt::mixt_answers[static_cast<std::size_t>(r.a)][static_cast<std::size_t>(r.b)][c] != r.expected[c])
                return static_cast<long>(i * 4 + c);
    }
    return -1;
}

template <long Line, long Column>
struct wrong_cell {
    static_assert(Line < 0, "mixt test: policy::torch disagrees with promotion_torch.csv at the cell named by the "
                            "arguments of wrong_cell<line, column>");
    static constexpr bool ok = true;
};
template <long Cell>
constexpr bool check() {
    if constexpr (Cell < 0)
        return true;
    else
        return wrong_cell<static_cast<long>(table.rows[static_cast<std::size_t>(Cell / 4)].line), Cell % 4 + 1>::ok;
}
static_assert(check<first_wrong_cell()>());

// The same answers through whole expression nodes, for the cells where `+` compiles: node<add, A, B>::tag.
template <int A, int B>
constexpr bool node_agrees() {
    constexpr int expected = tt::mixt_answers[A][B][1];
    if constexpr (expected < 0 || (A >= 24 && B >= 24))
        return true;
    else
        return std::is_same_v<typename mixt::node<mixt::op::add, tt::operand_t<A>, tt::operand_t<B>>::tag,
                              mixt::dtype_tag<static_cast<mixt::dtype>(expected)>>;
}
template <std::size_t... I>
constexpr bool every_node_agrees(std::index_sequence<I...>) {
    return (node_agrees<static_cast<int>(I / tt::operand_count), static_cast<int>(I % tt::operand_count)>() && ...);
}
static_assert(every_node_agrees(std::make_index_sequence<tt::operand_count * tt::operand_count>{}));

} // namespace
