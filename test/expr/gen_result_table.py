#!/usr/bin/env python3
"""Generates the expected result dtype of every binary operation over every pair of the 18 classic dtypes.

    gen_result_table.py <promotion_jax_numpy.csv> <output header>

The expectation is derived from two sources only, both independent of mixt's headers:
  1. the published join table (test/data/promotion_jax_numpy.csv, a copy of spec/promotion_jax_numpy.csv);
  2. the per-operation rules of spec/lattice.md, written again below (to_inexact for `/`, comparisons give
     bool, pow keeps a float base with an integer exponent), plus the kind restrictions mixt documents where
     the spec is silent (expr/rules.hpp, rule 7).
The output is a C++ header (namespace mixt_test::result_table) that expr/result_table_test.cpp and
expr/result_table_static.cpp compare with `Op::rule<policy::jax, A, B>::result` and with the dtype of real
expressions.
"""

import csv
import sys

# The vocabulary: short name -> (mixt::dtype enumerator, mixt::dtypes tag, kind, bits, weak).
NODES = {
    "b": ("bool_", "bool_", "bool", 8, False),
    "u8": ("uint8", "u8", "uint", 8, False),
    "u16": ("uint16", "u16", "uint", 16, False),
    "u32": ("uint32", "u32", "uint", 32, False),
    "u64": ("uint64", "u64", "uint", 64, False),
    "i8": ("int8", "i8", "int", 8, False),
    "i16": ("int16", "i16", "int", 16, False),
    "i32": ("int32", "i32", "int", 32, False),
    "i64": ("int64", "i64", "int", 64, False),
    "bf16": ("bfloat16", "bf16", "float", 16, False),
    "f16": ("float16", "f16", "float", 16, False),
    "f32": ("float32", "f32", "float", 32, False),
    "f64": ("float64", "f64", "float", 64, False),
    "c64": ("complex64", "c64", "complex", 64, False),
    "c128": ("complex128", "c128", "complex", 128, False),
    "i*": ("weak_int", "weak_int", "int", 0, True),
    "f*": ("weak_float", "weak_float", "float", 0, True),
    "c*": ("weak_complex", "weak_complex", "complex", 0, True),
}


def kind(n):
    k = NODES[n][2]
    return "int" if k == "uint" else k


def to_inexact(n):
    """spec/lattice.md: bool and integers up to 32 bits -> f32, 64-bit integers -> f64, i* -> f*."""
    if n == "i*":
        return "f*"
    if kind(n) in ("bool", "int"):
        return "f64" if NODES[n][3] == 64 else "f32"
    return n


def join_rule(allowed):
    def rule(table, a, b):
        j = table[a][b]
        if j is None:
            return None, "no_join"
        if kind(j) not in allowed:
            return None, "kind"
        return j, "defined"
    return rule


ANY = ("bool", "int", "float", "complex")


def divide(table, a, b):
    j = table[a][b]
    return (None, "no_join") if j is None else (to_inexact(j), "defined")


def compare(ordered):
    def rule(table, a, b):
        j = table[a][b]
        if j is None:
            return None, "no_join"
        if ordered and kind(j) == "complex":
            return None, "kind"
        return "b", "defined"
    return rule


def power(table, a, b):
    # A float (or complex) base with an integer (or bool) exponent keeps the base's dtype.
    if kind(a) in ("float", "complex") and kind(b) in ("int", "bool"):
        return a, "defined"
    j = table[a][b]
    return (None, "no_join") if j is None else (j, "defined")


# (case name, mixt operation type, how an expression spells it, rule)
OPS = [
    ("add", "mixt::op::add", "{a} + {b}", join_rule(ANY)),
    ("subtract", "mixt::op::subtract", "{a} - {b}", join_rule(("int", "float", "complex"))),
    ("multiply", "mixt::op::multiply", "{a} * {b}", join_rule(ANY)),
    ("divide", "mixt::op::divide", "{a} / {b}", divide),
    ("modulo", "mixt::op::modulo", "{a} % {b}", join_rule(("int", "float"))),
    ("floor_divide", "mixt::op::floor_divide", "mixt::floor_divide({a}, {b})", join_rule(("int", "float"))),
    ("equal", "mixt::op::equal", "{a} == {b}", compare(False)),
    ("not_equal", "mixt::op::not_equal", "{a} != {b}", compare(False)),
    ("less", "mixt::op::less", "{a} < {b}", compare(True)),
    ("less_equal", "mixt::op::less_equal", "{a} <= {b}", compare(True)),
    ("greater", "mixt::op::greater", "{a} > {b}", compare(True)),
    ("greater_equal", "mixt::op::greater_equal", "{a} >= {b}", compare(True)),
    ("logical_and", "mixt::op::logical_and", "{a} && {b}", join_rule(("bool",))),
    ("logical_or", "mixt::op::logical_or", "{a} || {b}", join_rule(("bool",))),
    ("bit_and", "mixt::op::bit_and", "{a} & {b}", join_rule(("bool", "int"))),
    ("bit_or", "mixt::op::bit_or", "{a} | {b}", join_rule(("bool", "int"))),
    ("bit_xor", "mixt::op::bit_xor", "{a} ^ {b}", join_rule(("bool", "int"))),
    ("shift_left", "mixt::op::shift_left", "{a} << {b}", join_rule(("int",))),
    ("shift_right", "mixt::op::shift_right", "{a} >> {b}", join_rule(("int",))),
    ("pow", "mixt::op::pow", "mixt::pow({a}, {b})", power),
    ("minimum", "mixt::op::minimum", "mixt::minimum({a}, {b})", join_rule(ANY)),
    ("maximum", "mixt::op::maximum", "mixt::maximum({a}, {b})", join_rule(ANY)),
]


def read_table(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    header = [c.strip() for c in rows[0]]
    if header[0] != "":
        sys.exit(f"{path}: the header row must start with an empty corner cell")
    cols = header[1:]
    table, order = {}, []
    for r in rows[1:]:
        r = [c.strip() for c in r]
        if len(r) != len(cols) + 1:
            sys.exit(f"{path}: row '{r[0]}' has {len(r) - 1} cells, the header {len(cols)}")
        order.append(r[0])
        table[r[0]] = {c: (None if v == "-" else v) for c, v in zip(cols, r[1:])}
    if order != cols or sorted(order) != sorted(NODES):
        sys.exit(f"{path}: rows and columns must be the 18 classic nodes in the same order")
    for a in order:
        for b in order:
            v = table[a][b]
            if v is not None and v not in NODES:
                sys.exit(f"{path}: cell ({a}, {b}) is '{v}', not a node")
            if v != table[b][a]:
                sys.exit(f"{path}: the table is not symmetric at ({a}, {b})")
    return order, table


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    order, table = read_table(sys.argv[1])
    n = len(order)

    out = []
    w = out.append
    w("// Generated by test/expr/gen_result_table.py from test/data/promotion_jax_numpy.csv. Do not edit.")
    w("#ifndef MIXT_TEST_GENERATED_RESULT_TABLE_HPP")
    w("#define MIXT_TEST_GENERATED_RESULT_TABLE_HPP")
    w("")
    w("#include <array>")
    w("#include <cstddef>")
    w("#include <string_view>")
    w("")
    w("#include <boost/mp11/list.hpp>")
    w("")
    w("#include <mixt/expr/operators.hpp>")
    w("#include <mixt/expr/rules.hpp>")
    w("")
    w("namespace mixt_test::result_table {")
    w("")
    w(f"inline constexpr std::size_t node_count = {n};")
    w("/// The nodes in the order of the CSV file's rows and columns.")
    w("using nodes = boost::mp11::mp_list<" + ", ".join(f"mixt::dtypes::{NODES[x][1]}" for x in order) + ">;")
    w("inline constexpr std::array<std::string_view, node_count> node_names{{"
      + ", ".join(f'"{x}"' for x in order) + "}};")
    w("")
    w("/// `result`: the index in `nodes` of the expected result, or `kind` (the operands join, but the operation")
    w("/// is not defined for the join's kind) or `no_join`. `join`: the CSV cell's index, or `no_join`.")
    w("inline constexpr int kind = -1;")
    w("inline constexpr int no_join = -2;")
    w("struct cell {")
    w("    signed char result;")
    w("    signed char join;")
    w("};")
    w("using table = std::array<std::array<cell, node_count>, node_count>;")
    w("")
    names = []
    for name, op, spelling, rule in OPS:
        names.append(f"{name}_case")
        w(f"struct {name}_case {{")
        w(f"    using op = {op};")
        w(f'    static constexpr std::string_view name = "{name}";')
        w(f'    static constexpr std::string_view spelling = "{spelling.format(a="a", b="b")}";')
        expr = spelling.format(a="static_cast<A&&>(a)", b="static_cast<B&&>(b)")
        w("    template <class A, class B>")
        w(f"    static auto build(A&& a, B&& b) -> decltype({expr}) {{")
        w(f"        return {expr};")
        w("    }")
        w("    static constexpr table cells{{")
        for a in order:
            row = []
            for b in order:
                res, st = rule(table, a, b)
                j = table[a][b]
                r = order.index(res) if st == "defined" else ("kind" if st == "kind" else "no_join")
                row.append(f"{{{r}, {order.index(j) if j else 'no_join'}}}")
            w(f"        {{{{{', '.join(row)}}}}}, // {a}")
        w("    }};")
        w("};")
        w("")
    w("using cases = boost::mp11::mp_list<" + ", ".join(names) + ">;")
    w("")
    w("} // namespace mixt_test::result_table")
    w("")
    w("#endif // MIXT_TEST_GENERATED_RESULT_TABLE_HPP")
    text = "\n".join(out) + "\n"
    with open(sys.argv[2], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
