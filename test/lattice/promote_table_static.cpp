// Compile-only: the `jax` policy reproduces test/data/promotion_jax_numpy.csv cell by cell, at compile time.
//
// The CSV file is the only source of the expected values: test/lattice/lattice.cmake embeds it at configure
// time as a raw string literal (mixt_test/promotion_jax_numpy.hpp), which a constexpr parser reads here.
// Three independent routes to mixt's answer are compared with every cell:
//   1. `mixt::promote_types(a, b, policy::jax{})` over the runtime enum (a constexpr function);
//   2. `lattice<policy::jax>::table` read directly by row;
//   3. `promote_t` / `has_promotion_v` instantiated for every pair of the 18 tags (an Mp11 cartesian
//      product), and over the storage types of the 15 concrete nodes (weak results materialized).
// A wrong cell stops compilation in `wrong_cell<Line, Field, Row, Column>`: the 1-based line and field of the
// CSV file, and the two dtypes.

#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <mixt/dtype/dtype.hpp>
#include <mixt/dtype/storage.hpp>
#include <mixt/lattice/lattice.hpp>
#include <mixt/lattice/promote.hpp>
#include <mixt_test/promotion_jax_numpy.hpp>

#include "promotion_csv.hpp"

namespace {

namespace mp = boost::mp11;
namespace csv = mixt_test::csv;
using mixt::dtype;
using jax = mixt::policy::jax;

constexpr csv::table table = csv::parse(mixt_test::promotion_jax_numpy_csv);

// The file is a well-formed square table over the 18 classic nodes, rows and columns in the same order.
static_assert(table.error.empty(), "mixt test: promotion_jax_numpy.csv is not a well-formed table");
static_assert(table.rows == mixt::classic_dtype_count && table.cols == mixt::classic_dtype_count,
              "mixt test: promotion_jax_numpy.csv must have one row and one column per classic node");
constexpr bool names_are_classic_nodes() {
    for (std::size_t i = 0; i < table.rows; ++i) {
        const std::optional<dtype> r = mixt::parse_dtype(table.row_names[i]);
        if (!r || mixt::is_small(*r) || table.row_names[i] != table.col_names[i]) return false;
        for (std::size_t j = 0; j < i; ++j)
            if (table.row_names[j] == table.row_names[i]) return false;
    }
    return true;
}
static_assert(names_are_classic_nodes(),
              "mixt test: the rows and columns of promotion_jax_numpy.csv must name the classic nodes, once each, "
              "in the same order");

// -1 when every cell agrees, else `row * cols + column` of the first cell (0-based data indices) that does not.
template <class Join>
constexpr long first_wrong_cell(Join join) {
    for (std::size_t r = 0; r < table.rows; ++r)
        for (std::size_t c = 0; c < table.cols; ++c) {
            const csv::cell_value expected = csv::value_of(table.cells[r][c]);
            const std::optional<dtype> a = mixt::parse_dtype(table.row_names[r]);
            const std::optional<dtype> b = mixt::parse_dtype(table.col_names[c]);
            if (!expected.valid || !a || !b || join(*a, *b) != expected.join)
                return static_cast<long>(r * table.cols + c);
        }
    return -1;
}

constexpr std::optional<dtype> join_by_promote_types(dtype a, dtype b) {
    return mixt::promote_types(a, b, jax{});
}

constexpr std::optional<dtype> join_by_lattice_table(dtype a, dtype b) {
    using L = mixt::lattice<jax>;
    const int ra = L::dtype_rows[static_cast<std::size_t>(a)];
    const int rb = L::dtype_rows[static_cast<std::size_t>(b)];
    if (ra < 0 || rb < 0) return std::nullopt;
    const int j = L::table[static_cast<std::size_t>(ra)][static_cast<std::size_t>(rb)];
    if (j < 0) return std::nullopt;
    return static_cast<dtype>(L::node_dtypes[static_cast<std::size_t>(j)]);
}

// Reports a wrong cell by its place in the file: line `Line` (the header is line 1), field `Field`.
template <long Line, long Field, dtype Row, dtype Column>
struct wrong_cell {
    static_assert(Line < 0, "mixt test: mixt disagrees with promotion_jax_numpy.csv at the cell named by the "
                            "arguments of wrong_cell<line, field, row dtype, column dtype>");
    static constexpr bool ok = true;
};
template <long Cell>
constexpr bool check_cell() {
    if constexpr (Cell < 0) {
        return true;
    } else {
        constexpr std::size_t r = static_cast<std::size_t>(Cell) / table.cols;
        constexpr std::size_t c = static_cast<std::size_t>(Cell) % table.cols;
        return wrong_cell<static_cast<long>(r) + 2, static_cast<long>(c) + 2,
                          mixt::parse_dtype(table.row_names[r]).value_or(dtype::bool_),
                          mixt::parse_dtype(table.col_names[c]).value_or(dtype::bool_)>::ok;
    }
}

static_assert(check_cell<first_wrong_cell(join_by_promote_types)>());
static_assert(check_cell<first_wrong_cell(join_by_lattice_table)>());

// Route 3: the traits, instantiated for every pair of tags.
template <class Seq>
struct classic_tags_of;
template <std::size_t... I>
struct classic_tags_of<std::index_sequence<I...>> {
    using type = mp::mp_list<mixt::dtype_tag<static_cast<dtype>(I)>...>;
};
using classic_tags = typename classic_tags_of<std::make_index_sequence<mixt::classic_dtype_count>>::type;
using tag_pairs = mp::mp_product<mp::mp_list, classic_tags, classic_tags>;
static_assert(mp::mp_size<tag_pairs>::value == 18 * 18);

// The cell of the pair, as `row * cols + column`.
template <class A, class B>
constexpr long cell_of() {
    const std::size_t r = csv::find_name(table.row_names, table.rows, mixt::short_name(A::value));
    const std::size_t c = csv::find_name(table.col_names, table.cols, mixt::short_name(B::value));
    return static_cast<long>(r * table.cols + c);
}

template <class A, class B>
constexpr bool tag_pair_agrees() {
    const csv::cell_value expected = csv::lookup(table, mixt::short_name(A::value), mixt::short_name(B::value));
    if (!expected.valid) return false;
    if constexpr (mixt::has_promotion_v<A, B, jax>) {
        using R = mixt::promote_t<A, B, jax>;
        // With tags in, the result is the joined tag, and join_t names the same node.
        if constexpr (mixt::is_dtype_tag_v<R> && std::is_same_v<R, mixt::join_t<jax, A, B>>)
            return expected.join == R::value;
        else
            return false;
    } else {
        return !expected.join.has_value();
    }
}
template <class... Pairs>
constexpr long first_wrong_tag_pair(mp::mp_list<Pairs...>) {
    constexpr bool ok[] = {tag_pair_agrees<mp::mp_first<Pairs>, mp::mp_second<Pairs>>()...};
    constexpr long cells[] = {cell_of<mp::mp_first<Pairs>, mp::mp_second<Pairs>>()...};
    for (std::size_t k = 0; k < sizeof...(Pairs); ++k)
        if (!ok[k]) return cells[k];
    return -1;
}
static_assert(check_cell<first_wrong_tag_pair(tag_pairs{})>());

// Over storage types: a weak join is materialized as the policy says, e.g. u64 + i64 -> f* -> double.
template <class Tag>
using has_storage_q = std::bool_constant<mixt::has_storage_v<Tag>>;
using concrete_tags = mp::mp_copy_if<classic_tags, has_storage_q>;
static_assert(mp::mp_size<concrete_tags>::value == 15);
using storage_pairs = mp::mp_product<mp::mp_list, concrete_tags, concrete_tags>;

template <std::size_t... I>
constexpr std::array<dtype, sizeof...(I)> materialized_dtypes(std::index_sequence<I...>) {
    return {mixt::materialize_t<mixt::dtype_tag<static_cast<dtype>(I)>, jax>::value...};
}
constexpr auto materialized = materialized_dtypes(std::make_index_sequence<mixt::dtype_count>{});

template <class A, class B>
constexpr bool storage_pair_agrees() {
    using SA = mixt::storage_t<A>;
    using SB = mixt::storage_t<B>;
    const csv::cell_value expected = csv::lookup(table, mixt::short_name(A::value), mixt::short_name(B::value));
    if (!expected.valid) return false;
    if constexpr (mixt::has_promotion_v<SA, SB, jax>) {
        using R = mixt::promote_t<SA, SB, jax>;
        if constexpr (mixt::is_storage_type_v<R>)
            return expected.join && mixt::dtype_of_v<R> == materialized[static_cast<std::size_t>(*expected.join)] &&
                   std::is_same_v<R, mixt::result_storage_t<mixt::promote_t<A, B, jax>, jax>>;
        else
            return false;
    } else {
        return !expected.join.has_value();
    }
}
template <class... Pairs>
constexpr long first_wrong_storage_pair(mp::mp_list<Pairs...>) {
    constexpr bool ok[] = {storage_pair_agrees<mp::mp_first<Pairs>, mp::mp_second<Pairs>>()...};
    constexpr long cells[] = {cell_of<mp::mp_first<Pairs>, mp::mp_second<Pairs>>()...};
    for (std::size_t k = 0; k < sizeof...(Pairs); ++k)
        if (!ok[k]) return cells[k];
    return -1;
}
static_assert(check_cell<first_wrong_storage_pair(storage_pairs{})>());

} // namespace
