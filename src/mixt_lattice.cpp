// mixt-lattice: prints mixt's promotion tables and lattice pictures, answers joins, and checks a user's
// lattice file. Every answer comes from the library: the built-in policies through `lattice<Policy>` and
// `promote_types`, a user's file through the functions of mixt/lattice/graph.hpp that `lattice<Policy>`
// itself runs at compile time.
//
// Exit status: 0 done; 1 a negative answer (no join, not a lattice); 2 bad arguments or bad input.

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "mixt/dtype/dtype.hpp"
#include "mixt/lattice/graph.hpp"
#include "mixt/lattice/lattice.hpp"
#include "mixt/lattice/policy.hpp"
#include "mixt/lattice/promote.hpp"
#include "mixt/lattice/slots.hpp"
#include "mixt/version.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_negative = 1;
constexpr int exit_usage = 2;

constexpr std::string_view usage_text = R"(usage: mixt-lattice <command> [options]

Commands:
  table [--policy P] [--format csv|markdown] [--all]
      The promotion table of a policy: the join of each pair of dtypes, '-' where there is none.
      Rows and columns b u8 u16 u32 u64 i8 i16 i32 i64 bf16 f16 f32 f64 c64 c128 i* f* c*;
      --all appends the sub-byte ints and the small floats (uint2 ... float8_e5m2fnuz).
      A policy that joins by slot (torch) then prints a second table over operands: an array of
      rank 1 or more (b ... c128), of rank 0 (0d:b ... 0d:c128), and a literal (i* f* c*);
      'n/a' for two literals, which no expression has (it needs an array).
  dot [--policy P]
      The policy's lattice as a Graphviz digraph (bottom to top; weak types dashed).
  join [--policy P] A B [C ...]
      The join of dtypes (short codes such as u8, bf16, i*, or long names such as uint8,
      float8_e4m3fn), or an error naming the dtypes that do not promote.
  check [--table] [--format csv|markdown] FILE
      Reads a lattice written as lines 'a -> b c' ('#' starts a comment; 'a ->' declares a node
      with nothing above it) and says whether it is a lattice; if not, names the cycle or the pair
      without a unique least upper bound. --table prints its join table.
  report
      The jax promotion table in Markdown and a summary of every built-in policy.

Options:
  --policy P    jax (default), jax_x32, jax_strict, array_api, torch, megengine
  --format F    csv (default) or markdown
  -h, --help    this text;  --version  the version

Exit status: 0 done, 1 a negative answer (no join, not a lattice), 2 bad arguments or bad input.
)";

int usage_error(std::string_view message) {
    std::cerr << "mixt-lattice: " << message << "\n\n" << usage_text;
    return exit_usage;
}

enum class table_format { csv, markdown };

struct options {
    mixt::policy_id policy = mixt::policy_id::jax;
    std::string policy_name = "jax";
    table_format format = table_format::csv;
    bool all = false;
    bool table = false;
    std::vector<std::string> operands;
};

// Parses the options a command accepts (`allowed` lists their names); anything else not starting with '-'
// is an operand. Returns an error message, or nothing.
std::optional<std::string> parse_options(const std::vector<std::string>& args, std::string_view allowed,
                                         options& o) {
    const auto accepts = [&](std::string_view name) {
        std::string_view rest = allowed;
        while (!rest.empty()) {
            const auto space = rest.find(' ');
            if (rest.substr(0, space) == name) return true;
            rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
        }
        return false;
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string arg = args[i];
        if (arg.size() < 2 || arg[0] != '-' || arg == "--") {
            o.operands.push_back(arg);
            continue;
        }
        std::string value;
        bool has_value = false;
        if (const auto eq = arg.find('='); eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg.resize(eq);
            has_value = true;
        }
        if (!accepts(arg)) return "unknown option '" + arg + "'";
        if (arg == "--all" || arg == "--table") {
            if (has_value) return "option '" + arg + "' takes no value";
            (arg == "--all" ? o.all : o.table) = true;
            continue;
        }
        if (!has_value) {
            if (i + 1 >= args.size()) return "option '" + arg + "' needs a value";
            value = args[++i];
        }
        if (arg == "--policy") {
            const auto p = mixt::parse_policy(value);
            if (!p) return "unknown policy '" + value + "' (expected jax, jax_x32, jax_strict, array_api, torch or megengine)";
            o.policy = *p;
            o.policy_name = value;
        } else if (arg == "--format") {
            if (value == "csv")
                o.format = table_format::csv;
            else if (value == "markdown" || value == "md")
                o.format = table_format::markdown;
            else
                return "unknown format '" + value + "' (expected csv or markdown)";
        }
    }
    return std::nullopt;
}

// --- Tables -----------------------------------------------------------------------------------------------

// A square table: `cells[r][c]`, rows and columns labelled alike. CSV: first cell empty, '\n' line ends,
// as test/data/promotion_jax_numpy.csv. Markdown: a GitHub table with padded columns.
void print_table(std::ostream& out, const std::vector<std::string>& labels,
                 const std::vector<std::vector<std::string>>& cells, table_format format) {
    const std::size_t n = labels.size();
    if (format == table_format::csv) {
        for (std::size_t c = 0; c < n; ++c) out << ',' << labels[c];
        out << '\n';
        for (std::size_t r = 0; r < n; ++r) {
            out << labels[r];
            for (std::size_t c = 0; c < n; ++c) out << ',' << cells[r][c];
            out << '\n';
        }
        return;
    }
    // Column 0 holds the row labels; column c + 1 the joins with labels[c].
    std::vector<std::size_t> width(n + 1, 3);
    for (std::size_t r = 0; r < n; ++r) width[0] = std::max(width[0], labels[r].size());
    for (std::size_t c = 0; c < n; ++c) {
        width[c + 1] = std::max(width[c + 1], labels[c].size());
        for (std::size_t r = 0; r < n; ++r) width[c + 1] = std::max(width[c + 1], cells[r][c].size());
    }
    const auto row = [&](const std::string& first, auto&& cell) {
        out << "| " << first << std::string(width[0] - first.size(), ' ');
        for (std::size_t c = 0; c < n; ++c) {
            const std::string& s = cell(c);
            out << " | " << s << std::string(width[c + 1] - s.size(), ' ');
        }
        out << " |\n";
    };
    row("", [&](std::size_t c) -> const std::string& { return labels[c]; });
    out << '|';
    for (std::size_t w : width) out << std::string(w + 2, '-') << '|';
    out << '\n';
    for (std::size_t r = 0; r < n; ++r) row(labels[r], [&](std::size_t c) -> const std::string& { return cells[r][c]; });
}

std::string code(mixt::dtype d) { return std::string(mixt::short_name(d)); }

void print_promotion_table(std::ostream& out, mixt::policy_id policy, table_format format, bool all) {
    const std::size_t n = all ? mixt::dtype_count : mixt::classic_dtype_count;
    std::vector<std::string> labels;
    std::vector<std::vector<std::string>> cells(n);
    for (std::size_t i = 0; i < n; ++i) labels.push_back(code(static_cast<mixt::dtype>(i)));
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) {
            const auto j = mixt::promote_types(static_cast<mixt::dtype>(r), static_cast<mixt::dtype>(c), policy);
            cells[r].push_back(j ? code(*j) : "-");
        }
    print_table(out, labels, cells, format);
}

// Under a policy that joins by slot: the result of every pair of operands, each an array of rank 1 or more
// (its dtype's code), of rank 0 (`0d:` and the code) or a literal (`i* f* c*`). Two literals are `n/a`: an
// expression has an array, so that pair never reaches the slot rule (which would join them as rank-0 operands).
template <class Policy>
void print_slot_table(std::ostream& out, table_format format) {
    struct operand {
        std::string label;
        mixt::dtype d;
        mixt::operand_slot slot;
    };
    std::vector<operand> ops;
    for (const auto slot : {mixt::operand_slot::dimensioned, mixt::operand_slot::zero_dim})
        for (std::size_t i = 0; i < mixt::classic_dtype_count; ++i) {
            const auto d = static_cast<mixt::dtype>(i);
            if (!mixt::is_weak(d))
                ops.push_back({(slot == mixt::operand_slot::zero_dim ? "0d:" : "") + code(d), d, slot});
        }
    for (const auto d : {mixt::dtype::weak_int, mixt::dtype::weak_float, mixt::dtype::weak_complex})
        ops.push_back({code(d), d, mixt::operand_slot::literal});
    std::vector<std::string> labels;
    std::vector<std::vector<std::string>> cells(ops.size());
    for (const operand& a : ops) labels.push_back(a.label);
    for (std::size_t r = 0; r < ops.size(); ++r)
        for (const operand& b : ops) {
            if (ops[r].slot == mixt::operand_slot::literal && b.slot == mixt::operand_slot::literal) {
                cells[r].push_back("n/a");
                continue;
            }
            const auto j = mixt::promote_types(ops[r].d, ops[r].slot, b.d, b.slot, Policy{});
            cells[r].push_back(j ? code(*j) : "-");
        }
    print_table(out, labels, cells, format);
}

int cmd_table(const std::vector<std::string>& args) {
    options o;
    if (auto err = parse_options(args, "--policy --format --all", o)) return usage_error(*err);
    if (!o.operands.empty()) return usage_error("table takes no operand ('" + o.operands[0] + "')");
    print_promotion_table(std::cout, o.policy, o.format, o.all);
    mixt::visit_policy(o.policy, [&](auto policy) {
        using P = decltype(policy);
        if constexpr (mixt::slot_rule_v<P> == mixt::slot_rule::by_category) {
            std::cout << '\n';
            print_slot_table<P>(std::cout, o.format);
        }
    });
    return exit_ok;
}

// --- DOT --------------------------------------------------------------------------------------------------

std::string dot_id(std::string_view s) { return '"' + std::string(s) + '"'; }

int cmd_dot(const std::vector<std::string>& args) {
    options o;
    if (auto err = parse_options(args, "--policy", o)) return usage_error(*err);
    if (!o.operands.empty()) return usage_error("dot takes no operand ('" + o.operands[0] + "')");
    mixt::visit_policy(o.policy, [&](auto policy) {
        using P = decltype(policy);
        using L = mixt::lattice<P>;
        std::ostream& out = std::cout;
        out << "// The promotion lattice of mixt's policy '" << P::name << "': an edge a -> b says that a may be\n"
            << "// promoted implicitly to b; the join of two dtypes is their lowest common node. Weak types\n"
            << "// (the kinds of C++ literals) are dashed. Render with: dot -Tsvg\n"
            << "digraph " << dot_id(P::name) << " {\n"
            << "    rankdir=BT;\n"
            << "    node [shape=box, style=rounded, fontname=\"Helvetica\"];\n"
            << "    edge [arrowsize=0.7];\n";
        for (std::size_t i = 0; i < L::size; ++i) {
            out << "    " << dot_id(L::names[i]) << " [label=\"" << L::names[i];
            bool weak = false;
            if (L::node_dtypes[i] >= 0) {
                const auto d = static_cast<mixt::dtype>(L::node_dtypes[i]);
                weak = mixt::is_weak(d);
                if (weak)
                    out << "\\nweak " << (mixt::kind(d) == mixt::dtype_kind::signed_int ? "int"
                                           : mixt::kind(d) == mixt::dtype_kind::floating ? "float"
                                                                                          : "complex");
                else if (mixt::name(d) != mixt::short_name(d))
                    out << "\\n" << mixt::name(d);
            }
            out << '"';
            if (weak) out << ", style=\"rounded,dashed\"";
            out << "];\n";
        }
        for (std::size_t i = 0; i < L::size; ++i)
            for (std::size_t j = 0; j < L::size; ++j)
                if (mixt::graph::has(L::direct[i], j))
                    out << "    " << dot_id(L::names[i]) << " -> " << dot_id(L::names[j]) << ";\n";
        out << "}\n";
    });
    return exit_ok;
}

// --- join -------------------------------------------------------------------------------------------------

std::string dtype_list(const std::vector<mixt::dtype>& inputs) {
    std::string list = "{";
    for (std::size_t i = 0; i < inputs.size(); ++i) list += (i ? ", " : "") + code(inputs[i]);
    return list + '}';
}

// JAX's wording for a failed promotion (jax/_src/dtypes.py, _least_upper_bound), with mixt's cast.
std::string no_promotion_message(const std::vector<mixt::dtype>& inputs, mixt::policy_id policy,
                                 std::string_view policy_name) {
    std::string msg = "Input dtypes " + dtype_list(inputs) + " have no available implicit dtype promotion path";
    const std::string cast = "mixt::cast<T>(x)";
    if (policy == mixt::policy_id::jax_strict)
        return msg + " when jax_numpy_dtype_promotion=strict (policy jax_strict). Try explicitly casting inputs "
                     "to the desired output type (" + cast + "), or use the jax policy "
                     "(jax_numpy_dtype_promotion=standard).";
    msg += " (policy " + std::string(policy_name) + ").";
    // As JAX, the widest small float present names the rule: 8-bit, then 6-bit, then 4-bit floats.
    for (const int bits : {8, 6, 4})
        for (mixt::dtype d : inputs)
            if (mixt::is_small_float(d) && mixt::info(d).bits == bits)
                return msg + " To avoid unintended promotion, " + std::to_string(bits) +
                       "-bit floats do not support implicit promotion. If you want your inputs promoted to another "
                       "type, cast them explicitly (" + cast + ").";
    for (mixt::dtype d : inputs)
        if (mixt::is_small(d))
            return msg + " To avoid unintended promotion, 2-bit and 4-bit integers do not support implicit "
                         "promotion. If you want your inputs promoted to another type, cast them explicitly (" +
                   cast + ").";
    return msg + " Try explicitly casting inputs to the desired output type (" + cast + ").";
}

int cmd_join(const std::vector<std::string>& args) {
    options o;
    if (auto err = parse_options(args, "--policy", o)) return usage_error(*err);
    if (o.operands.size() < 2) return usage_error("join needs at least two dtypes");
    std::vector<mixt::dtype> inputs;
    for (const std::string& s : o.operands) {
        const auto d = mixt::parse_dtype(s);
        if (!d) {
            std::cerr << "mixt-lattice: unknown dtype '" << s
                      << "' (expected a short code such as b, u8, i64, bf16, f32, c64, i*, f*, c* or a long name "
                         "such as uint8, bfloat16, float8_e4m3fn)\n";
            return exit_usage;
        }
        inputs.push_back(*d);
    }
    const bool all_nodes = mixt::visit_policy(o.policy, [&](auto policy) {
        using L = mixt::lattice<decltype(policy)>;
        for (mixt::dtype d : inputs)
            if (L::dtype_rows[static_cast<std::size_t>(d)] < 0) {
                std::cerr << "mixt-lattice: Input dtypes " << dtype_list(inputs)
                          << " have no available implicit dtype promotion path (policy " << o.policy_name
                          << "): " << code(d) << " is not a dtype of that policy. Try explicitly casting inputs "
                          << "to the desired output type (mixt::cast<T>(x)).\n";
                return false;
            }
        return true;
    });
    if (!all_nodes) return exit_negative;
    // A fold of the pairwise join, as promote_t does; exact because every built-in policy is a lattice.
    std::optional<mixt::dtype> acc = inputs[0];
    for (std::size_t k = 1; k < inputs.size() && acc; ++k) acc = mixt::promote_types(*acc, inputs[k], o.policy);
    if (!acc) {
        std::cerr << "mixt-lattice: " << no_promotion_message(inputs, o.policy, o.policy_name) << '\n';
        return exit_negative;
    }
    std::cout << code(*acc) << '\n';
    return exit_ok;
}

// --- check ------------------------------------------------------------------------------------------------

struct lattice_file {
    std::string path;
    mixt::graph::bit_graph graph;
    std::vector<std::string> names;
    // edge_line[i][j]: the line that first wrote the edge i -> j.
    std::vector<std::vector<std::size_t>> edge_line;
};

struct parse_error {
    std::string message;
};

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '*' ||
           c == '.';
}

std::string describe_char(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
    static constexpr char hex[] = "0123456789abcdef";
    return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

// Splits one side of a line into node names; reports a bad character with its column (1-based).
std::optional<parse_error> split_names(std::string_view text, std::size_t column0, std::vector<std::string>& out) {
    std::size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == ' ' || c == '\t' || c == '\r') {
            ++i;
            continue;
        }
        if (!is_name_char(c)) {
            // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict, a false positive) on the chain of
            // operator+ temporaries.
            std::string what = ":";
            what += std::to_string(column0 + i + 1);
            what += ": unexpected ";
            what += describe_char(c);
            what += " (node names are made of letters, digits and _ * .)";
            return parse_error{what};
        }
        const std::size_t start = i;
        while (i < text.size() && is_name_char(text[i])) ++i;
        out.emplace_back(text.substr(start, i - start));
    }
    return std::nullopt;
}

// Reads a lattice file; on error returns "path:line[:column]: what was wrong".
std::optional<std::string> read_lattice_file(const std::string& path, lattice_file& f) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return "cannot read '" + path + "': it is a directory";
    std::ifstream in(path, std::ios::binary);
    if (!in) return "cannot read '" + path + "': " + std::strerror(errno);
    f.path = path;
    std::string line;
    std::size_t line_no = 0;
    const auto node = [&](const std::string& name, std::size_t& row) -> std::optional<std::string> {
        const auto it = std::find(f.names.begin(), f.names.end(), name);
        if (it != f.names.end()) {
            row = static_cast<std::size_t>(it - f.names.begin());
            return std::nullopt;
        }
        if (f.names.size() == mixt::graph::max_nodes)
            return path + ":" + std::to_string(line_no) + ": node '" + name + "' is node number " +
                   std::to_string(mixt::graph::max_nodes + 1) + ": a lattice may have at most " +
                   std::to_string(mixt::graph::max_nodes) + " nodes";
        row = f.names.size();
        f.names.push_back(name);
        f.edge_line.emplace_back();
        for (auto& r : f.edge_line) r.resize(f.names.size(), 0);
        return std::nullopt;
    };
    while (std::getline(in, line)) {
        ++line_no;
        std::string_view text = line;
        if (const auto hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
        if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        const auto arrow = text.find("->");
        const std::string where = path + ":" + std::to_string(line_no);
        if (arrow == std::string_view::npos)
            return where + ": expected 'node -> node ...' (a node with nothing above it: 'node ->'), found '" +
                   std::string(text) + "'";
        if (text.find("->", arrow + 2) != std::string_view::npos)
            return where + ":" + std::to_string(text.find("->", arrow + 2) + 1) +
                   ": more than one '->' (write one line per node: 'a -> b c')";
        std::vector<std::string> from, to;
        if (auto e = split_names(text.substr(0, arrow), 0, from)) return where + e->message;
        if (auto e = split_names(text.substr(arrow + 2), arrow + 2, to)) return where + e->message;
        if (from.empty()) return where + ": no node before '->'";
        if (from.size() > 1)
            return where + ": one node before '->', found " + std::to_string(from.size()) + " ('" + from[0] +
                   "', '" + from[1] + (from.size() > 2 ? "', ...)" : "')");
        std::size_t a = 0;
        if (auto e = node(from[0], a)) return e;
        for (const std::string& name : to) {
            std::size_t b = 0;
            if (auto e = node(name, b)) return e;
            mixt::graph::add_edge(f.graph, a, b);
            if (f.edge_line[a][b] == 0) f.edge_line[a][b] = line_no;
        }
    }
    if (in.bad() || (!in.eof() && in.fail())) return "cannot read '" + path + "': " + std::strerror(errno);
    if (f.names.empty())
        return path + ": no nodes (an empty lattice): expected lines 'node -> node ...', e.g. 'i8 -> i16'";
    f.graph.size = f.names.size();
    return std::nullopt;
}

std::string join_names(const lattice_file& f, mixt::graph::mask m, std::string_view last_sep) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < f.names.size(); ++i)
        if (mixt::graph::has(m, i)) parts.push_back(f.names[i]);
    std::string s;
    for (std::size_t i = 0; i < parts.size(); ++i)
        s += (i == 0 ? "" : i + 1 == parts.size() ? std::string(last_sep) : std::string(", ")) + parts[i];
    return s;
}

int cmd_check(const std::vector<std::string>& args) {
    options o;
    if (auto err = parse_options(args, "--table --format", o)) return usage_error(*err);
    if (o.operands.size() != 1) return usage_error("check takes one file");
    lattice_file f;
    if (auto err = read_lattice_file(o.operands[0], f)) {
        std::cerr << "mixt-lattice: " << *err << '\n';
        return exit_usage;
    }
    namespace g = mixt::graph;
    const g::mask_array upper = g::upper_sets(f.graph);
    const g::verdict v = g::verify(f.graph, upper);
    const std::string& a = f.names[v.a];
    const std::string& b = f.names[v.b];
    switch (v.fault) {
    case g::fault::none: break;
    case g::fault::cycle: {
        // The cycle through a and b: a -> ... -> b -> ... -> a, shortest legs.
        const g::path up = g::shortest_path(f.graph, v.a, v.b);
        const g::path down = g::shortest_path(f.graph, v.b, v.a);
        std::vector<std::size_t> cycle;
        if (v.a == v.b) {
            cycle = {v.a, v.a};
        } else {
            for (std::size_t k = 0; k < up.length; ++k) cycle.push_back(up.nodes[k]);
            for (std::size_t k = 1; k < down.length; ++k) cycle.push_back(down.nodes[k]);
        }
        std::string text, lines;
        for (std::size_t k = 0; k < cycle.size(); ++k) {
            text += (k ? " -> " : "") + f.names[cycle[k]];
            if (k) lines += (k > 1 ? ", " : "") + std::to_string(f.edge_line[cycle[k - 1]][cycle[k]]);
        }
        std::cerr << "mixt-lattice: " << f.path << ": not a lattice: the edges contain a cycle through " << a
                  << (v.a == v.b ? "" : " and " + b) << ": " << text << " (line" << (cycle.size() > 2 ? "s " : " ")
                  << lines << "). A node may not be promoted to itself or to a node below it; remove one of "
                  << "these edges.\n";
        return exit_negative;
    }
    case g::fault::no_unique_join: {
        const g::mask common = upper[v.a] & upper[v.b];
        const g::mask minimal = g::minimal_of(upper, common);
        const std::size_t first = static_cast<std::size_t>(std::countr_zero(minimal));
        const std::size_t second = static_cast<std::size_t>(std::countr_zero(minimal & (minimal - 1)));
        std::cerr << "mixt-lattice: " << f.path << ": not a lattice: " << a << " and " << b
                  << " have no unique least upper bound: their common upper bounds " << join_names(f, minimal, " and ")
                  << (std::popcount(minimal) == 2 ? " are both" : " are all")
                  << " minimal and incomparable. Add an edge that orders them (e.g. '" << f.names[first] << " -> "
                  << f.names[second] << "'), or a node above " << a << " and " << b << " and below "
                  << join_names(f, minimal, " and ") << ".\n";
        return exit_negative;
    }
    case g::fault::too_many_nodes:
        std::cerr << "mixt-lattice: " << f.path << ": more than " << g::max_nodes << " nodes\n";
        return exit_usage;
    }
    std::size_t no_join_pairs = 0;
    for (std::size_t i = 0; i < f.names.size(); ++i)
        for (std::size_t j = i + 1; j < f.names.size(); ++j)
            if (g::join(f.graph, upper, i, j) == g::no_join) ++no_join_pairs;
    if (o.table) {
        std::vector<std::vector<std::string>> cells(f.names.size());
        for (std::size_t i = 0; i < f.names.size(); ++i)
            for (std::size_t j = 0; j < f.names.size(); ++j) {
                const int k = g::join(f.graph, upper, i, j);
                cells[i].push_back(k >= 0 ? f.names[static_cast<std::size_t>(k)] : "-");
            }
        print_table(std::cout, f.names, cells, o.format);
    } else {
        std::cout << f.path << ": a lattice: " << f.names.size() << " nodes, " << g::edge_count(f.graph)
                  << " edges; every pair of nodes with a common upper bound has a least one";
        if (no_join_pairs > 0)
            std::cout << " (" << no_join_pairs << (no_join_pairs == 1 ? " pair has" : " pairs have")
                      << " no common upper bound: no implicit promotion between them)";
        std::cout << ".\n";
    }
    return exit_ok;
}

// --- report -----------------------------------------------------------------------------------------------

int cmd_report(const std::vector<std::string>& args) {
    if (!args.empty()) return usage_error("report takes no argument ('" + args[0] + "')");
    std::ostream& out = std::cout;
    out << "## Promotion table, policy jax\n\n"
        << "The join of the row and column dtypes under JAX's standard lattice with 64-bit types (`-`: no\n"
        << "implicit promotion; `i* f* c*`: weak types, the kinds of C++ literals).\n\n";
    print_promotion_table(out, mixt::policy_id::jax, table_format::markdown, false);
    out << "\n## Built-in policies\n\n";
    for (const auto id : {mixt::policy_id::jax, mixt::policy_id::jax_x32, mixt::policy_id::jax_strict,
                          mixt::policy_id::array_api, mixt::policy_id::torch, mixt::policy_id::megengine})
        mixt::visit_policy(id, [&](auto policy) {
            using P = decltype(policy);
            using L = mixt::lattice<P>;
            out << "- " << P::name << ": " << L::size << " nodes, " << mixt::graph::edge_count(L::bits)
                << " edges, " << (L::is_lattice ? "a lattice" : "NOT a lattice") << '\n';
        });
    return exit_ok;
}

} // namespace

int main(int argc, char** argv) {
    std::ios::sync_with_stdio(false);
    std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
    if (args.empty()) return usage_error("no command");
    const std::string command = args[0];
    args.erase(args.begin());
    if (command == "-h" || command == "--help" || command == "help") {
        std::cout << usage_text;
        return exit_ok;
    }
    if (command == "--version") {
        std::cout << "mixt-lattice " << MIXT_VERSION_MAJOR << '.' << MIXT_VERSION_MINOR << '.' << MIXT_VERSION_PATCH
                  << '\n';
        return exit_ok;
    }
    for (const std::string& a : args)
        if (a == "-h" || a == "--help") {
            std::cout << usage_text;
            return exit_ok;
        }
    if (command == "table") return cmd_table(args);
    if (command == "dot") return cmd_dot(args);
    if (command == "join") return cmd_join(args);
    if (command == "check") return cmd_check(args);
    if (command == "report") return cmd_report(args);
    return usage_error("unknown command '" + command + "'");
}
