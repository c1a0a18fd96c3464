#ifndef MIXT_TEST_LATTICE_PROMOTION_CSV_HPP
#define MIXT_TEST_LATTICE_PROMOTION_CSV_HPP

// A constexpr reader for the promotion tables of test/data (`promotion_jax_numpy.csv`): a header row of
// column names after an empty corner cell, then one row per node, each starting with the row's name. A cell
// is a node's short name, or `-` where there is no join. promote_table_static.cpp reads the file, embedded
// at configure time, with this and static_asserts every cell against mixt.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include <mixt/dtype/dtype.hpp>

namespace mixt_test::csv {

inline constexpr std::size_t max_side = 64;

struct table {
    std::size_t rows = 0; ///< data rows (the header row not counted)
    std::size_t cols = 0; ///< data columns (the corner cell not counted)
    std::array<std::string_view, max_side> row_names{};
    std::array<std::string_view, max_side> col_names{};
    std::array<std::array<std::string_view, max_side>, max_side> cells{};
    /// Why the text is not a table (empty when it is): a row of the wrong length, too many rows, ...
    std::string_view error{};
    std::size_t error_line = 0; ///< 1-based line of the text `error` is about
};

namespace detail {
constexpr std::string_view chomp(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    return line;
}
} // namespace detail

constexpr table parse(std::string_view text) {
    table t;
    std::size_t line_no = 0;
    bool header_seen = false;
    while (!text.empty()) {
        const std::size_t eol = text.find('\n');
        const std::string_view line = detail::chomp(text.substr(0, eol));
        text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
        ++line_no;
        if (line.empty()) continue;
        std::array<std::string_view, max_side + 1> fields{};
        std::size_t n = 0;
        for (std::string_view rest = line;;) {
            const std::size_t comma = rest.find(',');
            if (n == fields.size()) {
                t.error = "too many columns";
                t.error_line = line_no;
                return t;
            }
            fields[n++] = rest.substr(0, comma);
            if (comma == std::string_view::npos) break;
            rest = rest.substr(comma + 1);
        }
        if (!header_seen) {
            header_seen = true;
            if (!fields[0].empty()) {
                t.error = "the header row must start with an empty corner cell";
                t.error_line = line_no;
                return t;
            }
            t.cols = n - 1;
            for (std::size_t c = 0; c < t.cols; ++c) t.col_names[c] = fields[c + 1];
            continue;
        }
        if (n != t.cols + 1) {
            t.error = "a row has a different number of cells than the header";
            t.error_line = line_no;
            return t;
        }
        if (t.rows == max_side) {
            t.error = "too many rows";
            t.error_line = line_no;
            return t;
        }
        t.row_names[t.rows] = fields[0];
        for (std::size_t c = 0; c < t.cols; ++c) t.cells[t.rows][c] = fields[c + 1];
        ++t.rows;
    }
    if (!header_seen) t.error = "no header row";
    return t;
}

/// What a cell says: `valid` is false for a name that is not a dtype; `join` is empty for `-`.
struct cell_value {
    bool valid = false;
    std::optional<mixt::dtype> join{};
};

constexpr cell_value value_of(std::string_view cell) {
    if (cell == "-") return {true, std::nullopt};
    const std::optional<mixt::dtype> d = mixt::parse_dtype(cell);
    return {d.has_value(), d};
}

/// The row (or column) called `name`, or `max_side` when there is none.
constexpr std::size_t find_name(const std::array<std::string_view, max_side>& names, std::size_t count,
                                std::string_view name) {
    for (std::size_t i = 0; i < count; ++i)
        if (names[i] == name) return i;
    return max_side;
}

/// The expected join of the nodes named `a` (row) and `b` (column); invalid when either name or the cell is
/// not in the table.
constexpr cell_value lookup(const table& t, std::string_view a, std::string_view b) {
    const std::size_t r = find_name(t.row_names, t.rows, a);
    const std::size_t c = find_name(t.col_names, t.cols, b);
    if (r == max_side || c == max_side) return {};
    return value_of(t.cells[r][c]);
}

} // namespace mixt_test::csv

#endif // MIXT_TEST_LATTICE_PROMOTION_CSV_HPP
