// The mixt-lattice tool (src/mixt_lattice.cpp), run as a program: its output, exit status and messages.
// The build passes the tool's path as MIXT_LATTICE_EXE (test/CMakeLists.txt) and the data folder as
// MIXT_TEST_DATA_DIR; the lattice files the `check` tests read are under test/data/lattices/.

#include <mixt/dtype/dtype.hpp>
#include <mixt/lattice/promote.hpp>
#include <mixt/lattice/slots.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace {

#ifdef MIXT_LATTICE_EXE
constexpr const char* tool_path = MIXT_LATTICE_EXE;
#else
constexpr const char* tool_path = nullptr;
#endif

const std::string data_dir = MIXT_TEST_DATA_DIR;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

struct result {
    int status = -1;
    std::string out, err;
};

// Runs the tool with `args` (each passed as one argument, no shell expansion).
result run(std::initializer_list<std::string> args) {
    static int counter = 0;
    const std::string base = ::testing::TempDir() + "mixt_lattice_test_" + std::to_string(::getpid()) + "_" +
                             std::to_string(counter++);
    std::string cmd = shell_quote(tool_path);
    for (const std::string& a : args) cmd += ' ' + shell_quote(a);
    cmd += " >" + shell_quote(base + ".out") + " 2>" + shell_quote(base + ".err") + " </dev/null";
    const int raw = std::system(cmd.c_str());
    result r;
    r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_file(base + ".out");
    r.err = read_file(base + ".err");
    std::filesystem::remove(base + ".out");
    std::filesystem::remove(base + ".err");
    return r;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    parts.push_back(cur);
    return parts;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(' ');
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

std::vector<std::vector<std::string>> csv_cells(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    for (const std::string& line : split(text, '\n'))
        if (!line.empty()) rows.push_back(split(line, ','));
    return rows;
}

std::string lattice_file(const std::string& name) { return data_dir + "/lattices/" + name; }

class mixt_lattice : public ::testing::Test {
protected:
    void SetUp() override {
        if (tool_path == nullptr) GTEST_SKIP() << "built without the mixt-lattice tool (MIXT_BUILD_TOOLS=OFF)";
    }
};

// --- table ----------------------------------------------------------------------------------------------

TEST_F(mixt_lattice, table_csv_is_the_reference_table_byte_for_byte) {
    const std::string expected = read_file(data_dir + "/promotion_jax_numpy.csv");
    ASSERT_FALSE(expected.empty());
    const result r = run({"table", "--format", "csv"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, expected);
    EXPECT_EQ(r.err, "");
    // csv and jax are the defaults.
    EXPECT_EQ(run({"table"}).out, expected);
    EXPECT_EQ(run({"table", "--policy=jax", "--format=csv"}).out, expected);
}

TEST_F(mixt_lattice, table_markdown_has_the_same_cells) {
    const auto csv = csv_cells(read_file(data_dir + "/promotion_jax_numpy.csv"));
    const result r = run({"table", "--format", "markdown"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> lines = split(r.out, '\n');
    ASSERT_EQ(lines.back(), "");
    lines.pop_back();
    ASSERT_EQ(lines.size(), csv.size() + 1);
    // Line 1 is the header, line 2 the delimiter row, then one line per dtype.
    EXPECT_EQ(lines[1].find_first_not_of("|-"), std::string::npos) << lines[1];
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (i == 1) continue;
        const auto& line = lines[i];
        ASSERT_GE(line.size(), 2u);
        ASSERT_EQ(line.front(), '|');
        ASSERT_EQ(line.back(), '|');
        const auto cells = split(line.substr(1, line.size() - 2), '|');
        const auto& expected = csv[i == 0 ? 0 : i - 1];
        ASSERT_EQ(cells.size(), expected.size()) << line;
        for (std::size_t c = 0; c < cells.size(); ++c) EXPECT_EQ(trim(cells[c]), expected[c]) << line;
    }
    EXPECT_EQ(run({"table", "--format", "md"}).out, r.out);
}

TEST_F(mixt_lattice, table_all_appends_the_small_nodes_by_long_name) {
    const result r = run({"table", "--all"});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto rows = csv_cells(r.out);
    ASSERT_EQ(rows.size(), mixt::dtype_count + 1);
    EXPECT_EQ(rows[0][19], "uint2");
    EXPECT_EQ(rows[0].back(), "float8_e5m2fnuz");
    // The classic block is the reference table.
    const auto csv = csv_cells(read_file(data_dir + "/promotion_jax_numpy.csv"));
    for (std::size_t i = 0; i < csv.size(); ++i)
        for (std::size_t j = 0; j < csv[i].size(); ++j) EXPECT_EQ(rows[i][j], csv[i][j]) << i << "," << j;
    // Row/column k + 1 is dtype k.
    const auto cell = [&](mixt::dtype a, mixt::dtype b) {
        return rows[static_cast<std::size_t>(a) + 1][static_cast<std::size_t>(b) + 1];
    };
    EXPECT_EQ(cell(mixt::dtype::int64, mixt::dtype::float8_e4m3fn), "float8_e4m3fn");
    EXPECT_EQ(cell(mixt::dtype::float32, mixt::dtype::float8_e4m3fn), "-");
    EXPECT_EQ(cell(mixt::dtype::float8_e4m3fn, mixt::dtype::float8_e5m2), "-");
    EXPECT_EQ(cell(mixt::dtype::int8, mixt::dtype::int4), "-");
    EXPECT_EQ(cell(mixt::dtype::weak_int, mixt::dtype::int4), "int4");
    EXPECT_EQ(cell(mixt::dtype::uint2, mixt::dtype::uint2), "uint2");
}

TEST_F(mixt_lattice, table_of_every_policy_matches_promote_types) {
    for (const char* name : {"jax", "jax_x32", "jax_strict", "array_api"}) {
        const result r = run({"table", "--all", "--policy", name});
        ASSERT_EQ(r.status, 0) << name << ": " << r.err;
        const auto rows = csv_cells(r.out);
        ASSERT_EQ(rows.size(), mixt::dtype_count + 1) << name;
        const auto policy = *mixt::parse_policy(name);
        for (std::size_t a = 0; a < mixt::dtype_count; ++a) {
            ASSERT_EQ(rows[a + 1].size(), mixt::dtype_count + 1) << name;
            EXPECT_EQ(rows[a + 1][0], mixt::short_name(static_cast<mixt::dtype>(a))) << name;
            for (std::size_t b = 0; b < mixt::dtype_count; ++b) {
                const auto j = mixt::promote_types(static_cast<mixt::dtype>(a), static_cast<mixt::dtype>(b), policy);
                EXPECT_EQ(rows[a + 1][b + 1], j ? std::string(mixt::short_name(*j)) : "-")
                    << name << " " << rows[0][a + 1] << "," << rows[0][b + 1];
            }
        }
    }
}

TEST_F(mixt_lattice, table_spot_checks_of_the_other_policies) {
    const auto x32 = csv_cells(run({"table", "--policy", "jax_x32"}).out);
    const auto strict = csv_cells(run({"table", "--policy", "jax_strict"}).out);
    const auto array_api = csv_cells(run({"table", "--policy", "array_api"}).out);
    const auto at = [](const auto& rows, mixt::dtype a, mixt::dtype b) {
        return rows.at(static_cast<std::size_t>(a) + 1).at(static_cast<std::size_t>(b) + 1);
    };
    using mixt::dtype;
    EXPECT_EQ(at(x32, dtype::uint32, dtype::int8), "i32");
    EXPECT_EQ(at(x32, dtype::uint32, dtype::int32), "i32");
    EXPECT_EQ(at(strict, dtype::int8, dtype::int16), "-");
    EXPECT_EQ(at(strict, dtype::weak_int, dtype::int8), "i8");
    EXPECT_EQ(at(strict, dtype::weak_int, dtype::float32), "f32");
    EXPECT_EQ(at(array_api, dtype::bfloat16, dtype::bfloat16), "-"); // not a node of array_api
    EXPECT_EQ(at(array_api, dtype::uint64, dtype::int8), "-");
    EXPECT_EQ(at(array_api, dtype::int8, dtype::uint8), "i16");
}

// torch and megengine: the table of arrays as for every policy; torch's second table, over operand kinds (rank 1
// or more, rank 0 `0d:`, literal), equal to promote_types by slot, `n/a` for two literals. The slot rule's own tests are in test/lattice.
TEST_F(mixt_lattice, table_of_torch_and_megengine) {
    for (const char* name : {"torch", "megengine"}) {
        const result r = run({"table", "--policy", name});
        ASSERT_EQ(r.status, 0) << name << ": " << r.err;
        const std::size_t blank = r.out.find("\n\n");
        const auto rows = csv_cells(r.out.substr(0, blank));
        ASSERT_EQ(rows.size(), mixt::classic_dtype_count + 1) << name;
        const auto policy = *mixt::parse_policy(name);
        for (std::size_t a = 0; a < mixt::classic_dtype_count; ++a)
            for (std::size_t b = 0; b < mixt::classic_dtype_count; ++b) {
                const auto j = mixt::promote_types(static_cast<mixt::dtype>(a), static_cast<mixt::dtype>(b), policy);
                EXPECT_EQ(rows.at(a + 1).at(b + 1), j ? std::string(mixt::short_name(*j)) : "-") << name;
            }
        // Only a policy with slots prints the second table.
        EXPECT_EQ(blank == std::string::npos, std::string_view(name) == "megengine") << name;
    }
    const result r = run({"table", "--policy", "torch"});
    const auto kinds = csv_cells(r.out.substr(r.out.find("\n\n")));
    ASSERT_FALSE(kinds.empty());
    const auto& labels = kinds[0];
    const auto operand = [](const std::string& label) {
        const bool zero = label.rfind("0d:", 0) == 0;
        const auto d = *mixt::parse_dtype(zero ? label.substr(3) : label);
        return std::pair{d, mixt::is_weak(d) ? mixt::operand_slot::literal
                            : zero          ? mixt::operand_slot::zero_dim
                                            : mixt::operand_slot::dimensioned};
    };
    ASSERT_EQ(kinds.size(), labels.size());
    for (std::size_t i = 1; i < kinds.size(); ++i)
        for (std::size_t k = 1; k < labels.size(); ++k) {
            const auto [a, sa] = operand(kinds[i][0]);
            const auto [b, sb] = operand(labels[k]);
            if (sa == mixt::operand_slot::literal && sb == mixt::operand_slot::literal) {
                // No expression has two literals and no array: marked, not joined.
                EXPECT_EQ(kinds[i][k], "n/a") << kinds[i][0] << "," << labels[k];
                continue;
            }
            const auto j = mixt::promote_types(a, sa, b, sb, mixt::policy::torch{});
            EXPECT_EQ(kinds[i][k], j ? std::string(mixt::short_name(*j)) : "-") << kinds[i][0] << "," << labels[k];
        }
    EXPECT_NE(std::find(labels.begin(), labels.end(), "0d:f64"), labels.end());
}

TEST_F(mixt_lattice, table_rejects_bad_arguments) {
    const result policy = run({"table", "--policy", "numpy"});
    EXPECT_EQ(policy.status, 2);
    EXPECT_NE(policy.err.find("unknown policy 'numpy'"), std::string::npos) << policy.err;
    EXPECT_NE(policy.err.find("usage: mixt-lattice"), std::string::npos);
    EXPECT_EQ(policy.out, "");
    EXPECT_EQ(run({"table", "--format", "json"}).status, 2);
    EXPECT_EQ(run({"table", "--policy"}).status, 2);
    EXPECT_EQ(run({"table", "--bogus"}).status, 2);
    EXPECT_EQ(run({"table", "extra"}).status, 2);
}

// --- join -----------------------------------------------------------------------------------------------

std::string join_of(std::initializer_list<std::string> args) {
    const result r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.out;
}

TEST_F(mixt_lattice, join_of_dtypes) {
    EXPECT_EQ(join_of({"join", "i8", "u8", "f16"}), "f16\n");
    EXPECT_EQ(join_of({"join", "f16", "u8", "i8"}), "f16\n");
    EXPECT_EQ(join_of({"join", "i8", "u8"}), "i16\n");
    EXPECT_EQ(join_of({"join", "bf16", "f16"}), "f32\n");
    EXPECT_EQ(join_of({"join", "u64", "i64"}), "f*\n");
    EXPECT_EQ(join_of({"join", "b", "i*"}), "i*\n");
    EXPECT_EQ(join_of({"join", "i64", "f16"}), "f16\n");
    EXPECT_EQ(join_of({"join", "f32", "f32"}), "f32\n");
    EXPECT_EQ(join_of({"join", "int64", "float8_e4m3fn"}), "float8_e4m3fn\n");
    EXPECT_EQ(join_of({"join", "int8", "uint8", "float16"}), "f16\n"); // long names
    EXPECT_EQ(join_of({"join", "c*", "f32"}), "c64\n");
    EXPECT_EQ(join_of({"join", "--policy", "jax_x32", "u32", "i8"}), "i32\n");
    EXPECT_EQ(join_of({"join", "u32", "i8", "--policy=jax_x32"}), "i32\n");
    EXPECT_EQ(join_of({"join", "--policy", "jax_strict", "i*", "i8"}), "i8\n");
}

TEST_F(mixt_lattice, join_failure_uses_jax_wording) {
    const result r = run({"join", "i8", "c64", "b", "int4"});
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("Input dtypes {i8, c64, b, int4} have no available implicit dtype promotion path"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("2-bit and 4-bit integers do not support implicit promotion"), std::string::npos) << r.err;

    const result f8 = run({"join", "f32", "float8_e4m3fn"});
    EXPECT_EQ(f8.status, 1);
    EXPECT_NE(f8.err.find("Input dtypes {f32, float8_e4m3fn} have no available implicit dtype promotion path"),
              std::string::npos)
        << f8.err;
    EXPECT_NE(f8.err.find("8-bit floats do not support implicit promotion"), std::string::npos) << f8.err;
    EXPECT_NE(f8.err.find("mixt::cast<T>(x)"), std::string::npos) << f8.err;

    const result two_f8 = run({"join", "float8_e4m3fn", "float8_e5m2"});
    EXPECT_EQ(two_f8.status, 1);
    EXPECT_NE(two_f8.err.find("8-bit floats"), std::string::npos) << two_f8.err;

    const result f4 = run({"join", "float4_e2m1fn", "bf16"});
    EXPECT_EQ(f4.status, 1);
    EXPECT_NE(f4.err.find("4-bit floats do not support implicit promotion"), std::string::npos) << f4.err;
}

TEST_F(mixt_lattice, join_failure_plain_wording) {
    const result r = run({"join", "--policy", "array_api", "u64", "i8"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("Input dtypes {u64, i8} have no available implicit dtype promotion path (policy "
                         "array_api). Try explicitly casting inputs to the desired output type"),
              std::string::npos)
        << r.err;
    const result not_node = run({"join", "--policy", "array_api", "bf16", "f32"});
    EXPECT_EQ(not_node.status, 1);
    EXPECT_NE(not_node.err.find("bf16 is not a dtype of that policy"), std::string::npos) << not_node.err;
}

TEST_F(mixt_lattice, join_strict_wording) {
    const result r = run({"join", "--policy", "jax_strict", "i8", "i16"});
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("Input dtypes {i8, i16} have no available implicit dtype promotion path when "
                         "jax_numpy_dtype_promotion=strict"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("Try explicitly casting inputs to the desired output type"), std::string::npos) << r.err;
}

TEST_F(mixt_lattice, join_rejects_unknown_names_and_too_few_dtypes) {
    const result r = run({"join", "u8", "float128"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("unknown dtype 'float128'"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    const result one = run({"join", "u8"});
    EXPECT_EQ(one.status, 2);
    EXPECT_NE(one.err.find("usage:"), std::string::npos) << one.err;
    EXPECT_EQ(run({"join"}).status, 2);
    EXPECT_EQ(run({"join", "--policy", "bogus", "u8", "i8"}).status, 2);
}

// --- check ----------------------------------------------------------------------------------------------

TEST_F(mixt_lattice, check_accepts_a_lattice) {
    const result r = run({"check", lattice_file("good.txt")});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("good.txt: a lattice: 6 nodes, 5 edges"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
}

TEST_F(mixt_lattice, check_of_the_jax_lattice_reproduces_the_reference_table) {
    // The run-time path (a file, graph.hpp at run time) gives the same table as the compile-time one.
    const result r = run({"check", "--table", lattice_file("jax_classic.txt")});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, read_file(data_dir + "/promotion_jax_numpy.csv"));
}

TEST_F(mixt_lattice, check_names_the_pair_of_a_diamond) {
    const result r = run({"check", lattice_file("diamond.txt")});
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("diamond.txt: not a lattice: left and right have no unique least upper bound"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("top1 and top2"), std::string::npos) << r.err;
}

TEST_F(mixt_lattice, check_names_a_cycle) {
    const result r = run({"check", lattice_file("cycle.txt")});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("cycle.txt: not a lattice"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("a -> b -> c -> a"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("lines 3, 4, 5"), std::string::npos) << r.err;
    const result self = run({"check", lattice_file("self_loop.txt")});
    EXPECT_EQ(self.status, 1);
    EXPECT_NE(self.err.find("y -> y (line 2)"), std::string::npos) << self.err;
}

TEST_F(mixt_lattice, check_reports_bad_syntax_with_the_line) {
    const result r = run({"check", lattice_file("bad_syntax.txt")});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("bad_syntax.txt:4: expected 'node -> node ...'"), std::string::npos) << r.err;
    const result chr = run({"check", lattice_file("bad_char.txt")});
    EXPECT_EQ(chr.status, 2);
    EXPECT_NE(chr.err.find("bad_char.txt:1:7: unexpected ','"), std::string::npos) << chr.err;
    const result two = run({"check", lattice_file("two_sources.txt")});
    EXPECT_EQ(two.status, 2);
    EXPECT_NE(two.err.find("two_sources.txt:1: one node before '->'"), std::string::npos) << two.err;
}

TEST_F(mixt_lattice, check_rejects_empty_and_unreadable_files) {
    for (const char* name : {"empty.txt", "comments_only.txt"}) {
        const result r = run({"check", lattice_file(name)});
        EXPECT_EQ(r.status, 2) << name;
        EXPECT_NE(r.err.find(std::string(name) + ": no nodes"), std::string::npos) << r.err;
    }
    const result missing = run({"check", lattice_file("no_such_file.txt")});
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("cannot read '" + lattice_file("no_such_file.txt") + "'"), std::string::npos)
        << missing.err;
    const result dir = run({"check", data_dir});
    EXPECT_EQ(dir.status, 2);
    EXPECT_NE(dir.err.find("cannot read"), std::string::npos) << dir.err;
    EXPECT_EQ(run({"check"}).status, 2);
    EXPECT_EQ(run({"check", "a.txt", "b.txt"}).status, 2);
}

TEST_F(mixt_lattice, check_accepts_64_nodes_and_rejects_65) {
    const auto write_chain = [](std::size_t nodes) {
        const std::string path = ::testing::TempDir() + "mixt_lattice_chain_" + std::to_string(::getpid()) + "_" +
                                 std::to_string(nodes) + ".txt";
        std::ofstream out(path);
        for (std::size_t i = 0; i + 1 < nodes; ++i) out << "n" << i << " -> n" << i + 1 << '\n';
        return path;
    };
    const std::string ok = write_chain(64);
    const result r64 = run({"check", ok});
    EXPECT_EQ(r64.status, 0) << r64.err;
    EXPECT_NE(r64.out.find("64 nodes, 63 edges"), std::string::npos) << r64.out;
    const std::string too_many = write_chain(65);
    const result r65 = run({"check", too_many});
    EXPECT_EQ(r65.status, 2);
    EXPECT_NE(r65.err.find(too_many + ":64: node 'n64'"), std::string::npos) << r65.err;
    EXPECT_NE(r65.err.find("at most 64 nodes"), std::string::npos) << r65.err;
    std::filesystem::remove(ok);
    std::filesystem::remove(too_many);
}

// --- dot ------------------------------------------------------------------------------------------------

TEST_F(mixt_lattice, dot_draws_the_policy_edges) {
    const result r = run({"dot"});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string& d = r.out;
    EXPECT_NE(d.find("digraph \"jax\" {"), std::string::npos);
    EXPECT_NE(d.find("rankdir=BT;"), std::string::npos);
    for (const char* edge : {"\"b\" -> \"i*\";", "\"i*\" -> \"u8\";", "\"u64\" -> \"f*\";", "\"f*\" -> \"bf16\";",
                             "\"bf16\" -> \"f32\";", "\"f32\" -> \"c64\";", "\"c64\" -> \"c128\";",
                             "\"u32\" -> \"i64\";", "\"f*\" -> \"float8_e4m3fn\";"})
        EXPECT_NE(d.find(edge), std::string::npos) << edge;
    EXPECT_EQ(d.find("\"bf16\" -> \"f16\""), std::string::npos);
    EXPECT_NE(d.find("\"i*\" [label=\"i*\\nweak int\", style=\"rounded,dashed\"];"), std::string::npos) << d;
    EXPECT_NE(d.find("\"u8\" [label=\"u8\\nuint8\"];"), std::string::npos) << d;
    // One edge line per edge of the policy (spec/lattice.md: 39 edges), and nothing after the closing brace.
    std::size_t edges = 0;
    for (const std::string& line : split(d, '\n'))
        if (line.rfind("    \"", 0) == 0 && line.find(" -> ") != std::string::npos) ++edges;
    EXPECT_EQ(edges, 39u);
    EXPECT_EQ(d.substr(d.size() - 2), "}\n");

    const result x32 = run({"dot", "--policy", "jax_x32"});
    ASSERT_EQ(x32.status, 0) << x32.err;
    EXPECT_NE(x32.out.find("\"u32\" -> \"i32\";"), std::string::npos);
    EXPECT_EQ(x32.out.find("\"u32\" -> \"i64\";"), std::string::npos);
}

TEST_F(mixt_lattice, dot_output_is_read_by_graphviz) {
    if (std::system("command -v dot >/dev/null 2>&1") != 0) GTEST_SKIP() << "Graphviz's dot is not installed";
    for (const char* policy : {"jax", "jax_x32", "jax_strict", "array_api"}) {
        const std::string cmd = shell_quote(tool_path) + " dot --policy " + policy + " | dot -Tcanon >/dev/null";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << policy;
    }
}

// --- report, help, usage --------------------------------------------------------------------------------

TEST_F(mixt_lattice, report_prints_the_table_and_a_line_per_policy) {
    const result r = run({"report"});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string md = run({"table", "--format", "markdown"}).out;
    EXPECT_NE(r.out.find(md), std::string::npos);
    for (const char* line : {"- jax: 33 nodes, 39 edges, a lattice\n", "- jax_x32: 33 nodes, 39 edges, a lattice\n",
                             "- jax_strict: 33 nodes, ", "- array_api: 16 nodes, "})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
    EXPECT_EQ(run({"report", "extra"}).status, 2);
}

TEST_F(mixt_lattice, help_and_usage_errors) {
    const result help = run({"--help"});
    EXPECT_EQ(help.status, 0);
    EXPECT_NE(help.out.find("usage: mixt-lattice"), std::string::npos);
    EXPECT_EQ(run({"table", "--help"}).status, 0);
    const result none = run({});
    EXPECT_EQ(none.status, 2);
    EXPECT_NE(none.err.find("usage: mixt-lattice"), std::string::npos);
    const result unknown = run({"frobnicate"});
    EXPECT_EQ(unknown.status, 2);
    EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos) << unknown.err;
    const result version = run({"--version"});
    EXPECT_EQ(version.status, 0);
    EXPECT_EQ(version.out.rfind("mixt-lattice ", 0), 0u) << version.out;
}

} // namespace
