// mixt/lattice/promote.hpp: promote_t, has_promotion_v, join_t, materialize_t, result_storage_t and
// promote_types, against
//   - test/data/promotion_jax_numpy.csv, read at run time, for the `jax` policy (every wrong cell reported);
//   - the rules spec/lattice.md states for `jax_x32`, `jax_strict` and `array_api`, written as predicates over
//     the dtype facts and checked over every pair of the 33 nodes;
//   - the seed's named cases.
// The compile-time counterpart of the CSV walk is promote_table_static.cpp.

#include <mixt/lattice/promote.hpp>

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/map.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <gtest/gtest.h>

namespace mixt {
// gtest prints dtypes (and std::optional<dtype>) by name in failure messages.
inline void PrintTo(dtype d, std::ostream* os) { *os << name(d); }
} // namespace mixt

namespace {

namespace mp = boost::mp11;
namespace dt = mixt::dtypes;
namespace pol = mixt::policy;
using mixt::dtype;
using mixt::has_promotion_v;
using mixt::promote_t;
using mixt::promote_types;

// ---------------------------------------------------------------------------------------------------------
// Helpers

std::vector<dtype> all_dtypes() {
    std::vector<dtype> v;
    for (std::size_t i = 0; i < mixt::dtype_count; ++i) v.push_back(static_cast<dtype>(i));
    return v;
}

std::string show(std::optional<dtype> d) { return d ? std::string(mixt::short_name(*d)) : std::string("-"); }

std::string pair_name(dtype a, dtype b) {
    return std::string(mixt::short_name(a)) + " + " + std::string(mixt::short_name(b));
}

bool is_int(dtype d) {
    return mixt::kind(d) == mixt::dtype_kind::signed_int || mixt::kind(d) == mixt::dtype_kind::unsigned_int;
}
bool is_inexact(dtype d) {
    return mixt::kind(d) == mixt::dtype_kind::floating || mixt::kind(d) == mixt::dtype_kind::complex;
}
// Literal kinds in the order a weak value may move up in strict mode: int, then float, then complex.
int kind_rank(dtype d) {
    switch (mixt::kind(d)) {
    case mixt::dtype_kind::boolean: return -1;
    case mixt::dtype_kind::unsigned_int:
    case mixt::dtype_kind::signed_int: return 0;
    case mixt::dtype_kind::floating: return 1;
    case mixt::dtype_kind::complex: return 2;
    }
    return -1;
}

struct csv_table {
    std::vector<std::string> col_names, row_names;
    std::vector<std::vector<std::string>> cells;
};

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
    if (!line.empty() && line.back() == ',') out.emplace_back();
    return out;
}

csv_table read_csv(const std::string& path) {
    csv_table t;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::string line;
    std::getline(in, line);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    t.col_names = split(line);
    t.col_names.erase(t.col_names.begin()); // the corner cell
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        std::vector<std::string> cells = split(line);
        t.row_names.push_back(cells.front());
        cells.erase(cells.begin());
        t.cells.push_back(std::move(cells));
    }
    return t;
}

const csv_table& jax_numpy_table() {
    static const csv_table t = read_csv(MIXT_TEST_DATA_DIR "/promotion_jax_numpy.csv");
    return t;
}

// The join under a policy as mixt's lattice computes it, by node names (independent of the dtype enum).
template <class Policy>
std::optional<std::string> join_by_names(std::string_view a, std::string_view b) {
    using L = mixt::lattice<Policy>;
    std::size_t ra = L::size, rb = L::size;
    for (std::size_t i = 0; i < L::size; ++i) {
        if (L::name_of(i) == a) ra = i;
        if (L::name_of(i) == b) rb = i;
    }
    if (ra == L::size || rb == L::size) return std::nullopt;
    const int j = L::join(ra, rb);
    if (j < 0) return std::nullopt;
    return std::string(L::name_of(static_cast<std::size_t>(j)));
}

// ---------------------------------------------------------------------------------------------------------
// 1. The jax policy reproduces promotion_jax_numpy.csv, cell by cell.

TEST(promote_jax_table, csv_is_the_classic_square) {
    const csv_table& t = jax_numpy_table();
    ASSERT_EQ(t.col_names.size(), mixt::classic_dtype_count);
    ASSERT_EQ(t.row_names.size(), mixt::classic_dtype_count);
    EXPECT_EQ(t.row_names, t.col_names);
    for (const auto& row : t.cells) EXPECT_EQ(row.size(), t.col_names.size());
}

TEST(promote_jax_table, promote_types_matches_every_cell) {
    const csv_table& t = jax_numpy_table();
    std::size_t checked = 0;
    for (std::size_t r = 0; r < t.row_names.size(); ++r)
        for (std::size_t c = 0; c < t.col_names.size() && c < t.cells[r].size(); ++c) {
            const std::string& cell = t.cells[r][c];
            const std::optional<dtype> a = mixt::parse_dtype(t.row_names[r]);
            const std::optional<dtype> b = mixt::parse_dtype(t.col_names[c]);
            ASSERT_TRUE(a && b) << "row " << t.row_names[r] << ", column " << t.col_names[c];
            const std::optional<dtype> expected = cell == "-" ? std::nullopt : mixt::parse_dtype(cell);
            EXPECT_TRUE(cell == "-" || expected) << "unknown dtype '" << cell << "' in the CSV";
            const std::optional<dtype> actual = promote_types(*a, *b);
            EXPECT_EQ(show(actual), show(expected))
                << "row " << t.row_names[r] << ", column " << t.col_names[c] << " (line " << r + 2 << ", field "
                << c + 2 << ")";
            EXPECT_EQ(promote_types(*a, *b, pol::jax{}), actual);
            EXPECT_EQ(promote_types(*a, *b, mixt::policy_id::jax), actual);
            ++checked;
        }
    EXPECT_EQ(checked, 18u * 18u);
}

TEST(promote_jax_table, lattice_join_by_node_names_matches_every_cell) {
    const csv_table& t = jax_numpy_table();
    for (std::size_t r = 0; r < t.row_names.size(); ++r)
        for (std::size_t c = 0; c < t.col_names.size() && c < t.cells[r].size(); ++c) {
            const std::optional<std::string> actual = join_by_names<pol::jax>(t.row_names[r], t.col_names[c]);
            EXPECT_EQ(actual.value_or("-"), t.cells[r][c])
                << "row " << t.row_names[r] << ", column " << t.col_names[c];
        }
}

// The traits' answers for every pair of the 18 classic tags, computed at compile time, compared at run time.
struct trait_answer {
    dtype a, b;
    bool defined;
    bool is_tag;
    dtype join;
};
template <class A, class B>
constexpr trait_answer jax_trait_answer() {
    if constexpr (has_promotion_v<A, B>) {
        using R = promote_t<A, B>;
        if constexpr (mixt::is_dtype_tag_v<R>)
            return {A::value, B::value, true, true, R::value};
        else
            return {A::value, B::value, true, false, dtype::bool_};
    } else {
        return {A::value, B::value, false, false, dtype::bool_};
    }
}
template <class Seq>
struct tags_of;
template <std::size_t... I>
struct tags_of<std::index_sequence<I...>> {
    using type = mp::mp_list<mixt::dtype_tag<static_cast<dtype>(I)>...>;
};
using classic_tags = typename tags_of<std::make_index_sequence<mixt::classic_dtype_count>>::type;
template <class... Pairs>
constexpr std::array<trait_answer, sizeof...(Pairs)> jax_trait_answers(mp::mp_list<Pairs...>) {
    return {jax_trait_answer<mp::mp_first<Pairs>, mp::mp_second<Pairs>>()...};
}

TEST(promote_jax_table, promote_t_over_tags_matches_every_cell) {
    const csv_table& t = jax_numpy_table();
    constexpr auto answers = jax_trait_answers(mp::mp_product<mp::mp_list, classic_tags, classic_tags>{});
    ASSERT_EQ(answers.size(), 18u * 18u);
    for (const trait_answer& ans : answers) {
        const auto r = static_cast<std::size_t>(std::find(t.row_names.begin(), t.row_names.end(),
                                                          mixt::short_name(ans.a)) - t.row_names.begin());
        const auto c = static_cast<std::size_t>(std::find(t.col_names.begin(), t.col_names.end(),
                                                          mixt::short_name(ans.b)) - t.col_names.begin());
        ASSERT_TRUE(r < t.row_names.size() && c < t.col_names.size()) << pair_name(ans.a, ans.b);
        const std::string& cell = t.cells[r][c];
        EXPECT_EQ(ans.defined, cell != "-") << "has_promotion_v<" << pair_name(ans.a, ans.b) << ">";
        if (ans.defined) {
            EXPECT_TRUE(ans.is_tag) << "promote_t<" << pair_name(ans.a, ans.b) << "> is not a tag";
            EXPECT_EQ(mixt::short_name(ans.join), cell) << "promote_t<" << pair_name(ans.a, ans.b) << ">";
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// jax_x32: identical to jax except `u32 -> u64 i32`, so u32 with a signed strong int of at most 32 bits
// joins to i32 (jax: i64).

bool x32_exception(dtype a, dtype b) {
    auto narrow_signed = [](dtype d) {
        return mixt::kind(d) == mixt::dtype_kind::signed_int && !mixt::is_weak(d) && !mixt::is_small(d) &&
               mixt::info(d).bits <= 32;
    };
    return (a == dtype::uint32 && narrow_signed(b)) || (b == dtype::uint32 && narrow_signed(a));
}

TEST(promote_jax_x32, same_as_jax_except_u32_with_narrow_signed_ints) {
    int exceptions = 0;
    for (dtype a : all_dtypes())
        for (dtype b : all_dtypes()) {
            const std::optional<dtype> x32 = promote_types(a, b, pol::jax_x32{});
            const std::optional<dtype> x64 = promote_types(a, b, pol::jax{});
            EXPECT_EQ(x32, promote_types(a, b, mixt::policy_id::jax_x32)) << pair_name(a, b);
            if (x32_exception(a, b)) {
                ++exceptions;
                EXPECT_EQ(show(x32), "i32") << pair_name(a, b);
                EXPECT_EQ(show(x64), "i64") << pair_name(a, b);
            } else {
                EXPECT_EQ(show(x32), show(x64)) << pair_name(a, b);
            }
        }
    EXPECT_EQ(exceptions, 6); // u32 with i8, i16, i32, in both orders
}

TEST(promote_jax_x32, never_creates_a_64_bit_type_from_narrower_inputs) {
    // Materialized results, as a stored array would hold them.
    auto materialized = [](dtype d) {
        switch (d) {
        case dtype::weak_int: return mixt::materialize_t<dt::weak_int, pol::jax_x32>::value;
        case dtype::weak_float: return mixt::materialize_t<dt::weak_float, pol::jax_x32>::value;
        case dtype::weak_complex: return mixt::materialize_t<dt::weak_complex, pol::jax_x32>::value;
        default: return d;
        }
    };
    auto wide = [](dtype d) {
        return d == dtype::uint64 || d == dtype::int64 || d == dtype::float64 || d == dtype::complex128;
    };
    for (dtype a : all_dtypes())
        for (dtype b : all_dtypes()) {
            if (wide(a) || wide(b)) continue;
            const std::optional<dtype> j = promote_types(a, b, pol::jax_x32{});
            if (j) {
                EXPECT_FALSE(wide(materialized(*j))) << pair_name(a, b) << " -> " << show(j);
            }
        }
    // The same property fails for jax (u32 + i32 -> i64): the check can fail.
    EXPECT_EQ(promote_types(dtype::uint32, dtype::int32), dtype::int64);
}

TEST(promote_jax_x32, weak_results_are_stored_in_32_bits) {
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::weak_int, pol::jax_x32>, dt::i32>));
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::weak_float, pol::jax_x32>, dt::f32>));
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::weak_complex, pol::jax_x32>, dt::c64>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, std::int64_t, pol::jax_x32>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint32_t, std::int8_t, pol::jax_x32>, std::int32_t>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint32_t, std::int32_t, pol::jax_x32>, std::int32_t>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint32_t, std::int64_t, pol::jax_x32>, std::int64_t>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint32_t, std::int32_t>, std::int64_t>));
}

// ---------------------------------------------------------------------------------------------------------
// jax_strict: only same-type and literal-of-a-lower-or-equal-kind operations are defined.

std::optional<dtype> strict_rule(dtype a, dtype b) {
    if (a == b) return a;
    if (a == dtype::bool_ || b == dtype::bool_) return std::nullopt;
    const bool wa = mixt::is_weak(a), wb = mixt::is_weak(b);
    if (!wa && !wb) return std::nullopt; // two distinct strong types never mix
    if (wa && wb) return kind_rank(a) >= kind_rank(b) ? a : b;
    const dtype weak = wa ? a : b, strong = wa ? b : a;
    if (kind_rank(weak) <= kind_rank(strong)) return strong;
    return std::nullopt;
}

TEST(promote_jax_strict, follows_the_strict_rule_for_every_pair) {
    for (dtype a : all_dtypes())
        for (dtype b : all_dtypes()) {
            EXPECT_EQ(show(promote_types(a, b, pol::jax_strict{})), show(strict_rule(a, b))) << pair_name(a, b);
            EXPECT_EQ(promote_types(a, b, pol::jax_strict{}), promote_types(a, b, mixt::policy_id::jax_strict));
        }
}

TEST(promote_jax_strict, distinct_strong_types_have_no_join) {
    for (dtype a : all_dtypes())
        for (dtype b : all_dtypes())
            if (a != b && !mixt::is_weak(a) && !mixt::is_weak(b)) {
                EXPECT_FALSE(promote_types(a, b, pol::jax_strict{})) << pair_name(a, b);
            }
    EXPECT_FALSE((has_promotion_v<std::int8_t, std::int16_t, pol::jax_strict>));
    EXPECT_FALSE((has_promotion_v<float, double, pol::jax_strict>));
    EXPECT_TRUE((std::is_same_v<promote_t<float, float, pol::jax_strict>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::int8_t, dt::weak_int, pol::jax_strict>, dt::i8>));
    EXPECT_TRUE((std::is_same_v<promote_t<Eigen::half, dt::weak_int, pol::jax_strict>, dt::f16>));
    EXPECT_FALSE((has_promotion_v<std::int8_t, dt::weak_float, pol::jax_strict>));
    EXPECT_FALSE((has_promotion_v<bool, dt::weak_int, pol::jax_strict>));
}

// ---------------------------------------------------------------------------------------------------------
// array_api: bool, ints and inexact types do not mix; u64 with a signed int is undefined; bf16, f16 and the
// small nodes are not nodes of the policy; literals join arrays of their kind or (int literal) a real float.

bool array_api_node(dtype d) { return !mixt::is_small(d) && d != dtype::bfloat16 && d != dtype::float16; }

TEST(promote_array_api, nodes_outside_the_standard_have_no_promotion) {
    for (dtype a : all_dtypes())
        for (dtype b : all_dtypes())
            if (!array_api_node(a) || !array_api_node(b)) {
                EXPECT_FALSE(promote_types(a, b, pol::array_api{})) << pair_name(a, b);
            }
    EXPECT_FALSE((has_promotion_v<Eigen::half, Eigen::half, pol::array_api>));
    EXPECT_FALSE((has_promotion_v<dt::f16, dt::f32, pol::array_api>));
    EXPECT_FALSE((has_promotion_v<Eigen::bfloat16, float, pol::array_api>));
}

TEST(promote_array_api, strong_types_follow_the_rule) {
    for (dtype a : all_dtypes())
        for (dtype b : all_dtypes()) {
            if (!array_api_node(a) || !array_api_node(b) || mixt::is_weak(a) || mixt::is_weak(b)) continue;
            const std::optional<dtype> j = promote_types(a, b, pol::array_api{});
            const std::optional<dtype> jax = promote_types(a, b, pol::jax{});
            if (a == b) {
                EXPECT_EQ(j, a) << pair_name(a, b);
            } else if (a == dtype::bool_ || b == dtype::bool_) {
                EXPECT_FALSE(j) << pair_name(a, b);
            } else if (is_int(a) && is_int(b)) {
                // The int sub-lattice of jax, without `u64 -> f*`.
                if (jax && is_int(*jax) && !mixt::is_weak(*jax))
                    EXPECT_EQ(show(j), show(jax)) << pair_name(a, b);
                else
                    EXPECT_FALSE(j) << pair_name(a, b) << ": jax gives " << show(jax);
            } else if (is_inexact(a) && is_inexact(b)) {
                EXPECT_EQ(show(j), show(jax)) << pair_name(a, b);
            } else {
                EXPECT_FALSE(j) << pair_name(a, b) << ": ints and inexact types do not mix";
            }
            EXPECT_EQ(j, promote_types(a, b, mixt::policy_id::array_api));
        }
}

TEST(promote_array_api, literals_follow_the_rule) {
    for (dtype w : {dtype::weak_int, dtype::weak_float, dtype::weak_complex})
        for (dtype s : all_dtypes()) {
            if (!array_api_node(s) || mixt::is_weak(s)) continue;
            const std::optional<dtype> j = promote_types(w, s, pol::array_api{});
            EXPECT_EQ(j, promote_types(s, w, pol::array_api{})) << pair_name(w, s);
            if (s == dtype::bool_) {
                EXPECT_FALSE(j) << pair_name(w, s) << ": no mixed bool";
            } else if (w == dtype::weak_int && (is_int(s) || mixt::kind(s) == mixt::dtype_kind::floating)) {
                EXPECT_EQ(j, s) << pair_name(w, s);
            } else if (w == dtype::weak_float && is_int(s)) {
                EXPECT_FALSE(j) << pair_name(w, s) << ": a float literal with an int array";
            } else if (w == dtype::weak_float && is_inexact(s)) {
                EXPECT_EQ(j, s) << pair_name(w, s);
            } else if (w == dtype::weak_complex && mixt::kind(s) == mixt::dtype_kind::complex) {
                EXPECT_EQ(j, s) << pair_name(w, s);
            }
        }
}

TEST(promote_array_api, named_cases) {
    EXPECT_FALSE(promote_types(dtype::int8, dtype::float32, pol::array_api{}));
    EXPECT_EQ(promote_types(dtype::weak_int, dtype::float32, pol::array_api{}), dtype::float32);
    EXPECT_FALSE(promote_types(dtype::weak_float, dtype::int8, pol::array_api{}));
    EXPECT_FALSE(promote_types(dtype::uint64, dtype::int64, pol::array_api{}));
    EXPECT_EQ(promote_types(dtype::uint32, dtype::int32, pol::array_api{}), dtype::int64);
    for (dtype d : all_dtypes())
        if (d != dtype::bool_) {
            EXPECT_FALSE(promote_types(dtype::bool_, d, pol::array_api{})) << mixt::name(d);
        }
    EXPECT_FALSE((has_promotion_v<std::int8_t, float, pol::array_api>));
    EXPECT_FALSE((has_promotion_v<std::uint64_t, std::int64_t, pol::array_api>));
    EXPECT_FALSE((has_promotion_v<bool, std::int8_t, pol::array_api>));
    EXPECT_TRUE((std::is_same_v<promote_t<float, std::complex<double>, pol::array_api>, std::complex<double>>));
    EXPECT_TRUE((std::is_same_v<promote_t<dt::weak_int, float, pol::array_api>, dt::f32>));
}

// ---------------------------------------------------------------------------------------------------------
// 3. The seed's named cases, at compile time, at run time, and through promote_types.

using I8 = dt::i8;
using U8 = dt::u8;
static_assert(std::is_same_v<promote_t<promote_t<I8, U8>, dt::f16>, dt::f16>);
static_assert(std::is_same_v<promote_t<I8, promote_t<U8, dt::f16>>, dt::f16>);
static_assert(std::is_same_v<promote_t<I8, U8, dt::f16>, dt::f16>);
static_assert(std::is_same_v<promote_t<dt::bf16, dt::f16>, dt::f32>);
static_assert(std::is_same_v<promote_t<dt::u64, dt::i64>, dt::weak_float>);
static_assert(std::is_same_v<promote_t<dt::bool_, dt::weak_int>, dt::weak_int>);
static_assert(std::is_same_v<promote_t<dt::i64, dt::f16>, dt::f16>);
static_assert(std::is_same_v<promote_t<dt::i64, dt::float8_e4m3fn>, dt::float8_e4m3fn>);
static_assert(!has_promotion_v<dt::i8, dt::int4>);
static_assert(!has_promotion_v<dt::f32, dt::float8_e4m3fn>);
static_assert(!has_promotion_v<dt::float8_e4m3fn, dt::float8_e5m2>);
static_assert(has_promotion_v<dt::i8, dt::f16>);

TEST(promote_seed_cases, traits) {
    EXPECT_TRUE((std::is_same_v<promote_t<promote_t<I8, U8>, dt::f16>, dt::f16>));
    EXPECT_TRUE((std::is_same_v<promote_t<I8, promote_t<U8, dt::f16>>, dt::f16>));
    EXPECT_TRUE((std::is_same_v<promote_t<I8, U8>, dt::i16>)); // the inner sum is i16, not f16
    EXPECT_TRUE((std::is_same_v<promote_t<dt::bf16, dt::f16>, dt::f32>));
    EXPECT_TRUE((std::is_same_v<promote_t<dt::u64, dt::i64>, dt::weak_float>));
    EXPECT_TRUE((std::is_same_v<promote_t<dt::bool_, dt::weak_int>, dt::weak_int>));
    EXPECT_TRUE((std::is_same_v<promote_t<dt::i64, dt::f16>, dt::f16>));
    EXPECT_TRUE((std::is_same_v<promote_t<dt::i64, dt::float8_e4m3fn>, dt::float8_e4m3fn>));
    EXPECT_FALSE((has_promotion_v<dt::i8, dt::int4>));
    EXPECT_FALSE((has_promotion_v<dt::f32, dt::float8_e4m3fn>));
    EXPECT_FALSE((has_promotion_v<dt::float8_e4m3fn, dt::float8_e5m2>));
    // Through storage types.
    EXPECT_TRUE((std::is_same_v<promote_t<promote_t<std::int8_t, std::uint8_t>, Eigen::half>, Eigen::half>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::int8_t, promote_t<std::uint8_t, Eigen::half>>, Eigen::half>));
    EXPECT_TRUE((std::is_same_v<promote_t<Eigen::bfloat16, Eigen::half>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::int64_t, Eigen::half>, Eigen::half>));
    EXPECT_FALSE((has_promotion_v<std::int8_t, dt::int4>));
    EXPECT_FALSE((has_promotion_v<float, dt::float8_e4m3fn>));
}

TEST(promote_seed_cases, promote_types) {
    const auto i8u8 = promote_types(dtype::int8, dtype::uint8);
    ASSERT_TRUE(i8u8);
    const auto u8f16 = promote_types(dtype::uint8, dtype::float16);
    ASSERT_TRUE(u8f16);
    EXPECT_EQ(promote_types(*i8u8, dtype::float16), dtype::float16);
    EXPECT_EQ(promote_types(dtype::int8, *u8f16), dtype::float16);
    EXPECT_EQ(promote_types(dtype::bfloat16, dtype::float16), dtype::float32);
    EXPECT_EQ(promote_types(dtype::uint64, dtype::int64), dtype::weak_float);
    EXPECT_EQ(promote_types(dtype::bool_, dtype::weak_int), dtype::weak_int);
    EXPECT_EQ(promote_types(dtype::int64, dtype::float16), dtype::float16);
    EXPECT_EQ(promote_types(dtype::int64, dtype::float8_e4m3fn), dtype::float8_e4m3fn);
    EXPECT_FALSE(promote_types(dtype::int8, dtype::int4));
    EXPECT_FALSE(promote_types(dtype::float32, dtype::float8_e4m3fn));
    EXPECT_FALSE(promote_types(dtype::float8_e4m3fn, dtype::float8_e5m2));
    static_assert(promote_types(dtype::bfloat16, dtype::float16) == dtype::float32);
    static_assert(!promote_types(dtype::int8, dtype::int4));
}

// ---------------------------------------------------------------------------------------------------------
// 4. The traits over C++ types, tags, mixed lists and policies.

TEST(promote_traits, cpp_types) {
    EXPECT_TRUE((std::is_same_v<promote_t<std::int8_t, std::uint8_t>, std::int16_t>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, std::int64_t>, double>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, std::int64_t, pol::jax>, double>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, std::int64_t, pol::jax_x32>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<bool, bool>, bool>));
    EXPECT_TRUE((std::is_same_v<promote_t<bool, std::uint16_t>, std::uint16_t>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::int32_t, float>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::int64_t, float>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<float, double>, double>));
    EXPECT_TRUE((std::is_same_v<promote_t<float, std::complex<float>>, std::complex<float>>));
    EXPECT_TRUE((std::is_same_v<promote_t<double, std::complex<float>>, std::complex<double>>));
    EXPECT_TRUE((std::is_same_v<promote_t<const float, double>, double>));
}

TEST(promote_traits, builtin_integer_types_map_like_fixed_width_ones) {
    EXPECT_TRUE((std::is_same_v<promote_t<long long, std::uint8_t>, promote_t<std::int64_t, std::uint8_t>>));
    EXPECT_TRUE((std::is_same_v<promote_t<long long, std::uint8_t>, std::int64_t>));
    EXPECT_TRUE((std::is_same_v<promote_t<long long, unsigned long long>, double>));
    EXPECT_TRUE((std::is_same_v<promote_t<int, unsigned>, std::int64_t>));
    EXPECT_TRUE((std::is_same_v<promote_t<short, unsigned char>, std::int16_t>));
    using char_as = std::conditional_t<std::is_signed_v<char>, std::int8_t, std::uint8_t>;
    EXPECT_TRUE((std::is_same_v<promote_t<char, std::uint8_t>, promote_t<char_as, std::uint8_t>>));
    EXPECT_TRUE((std::is_same_v<promote_t<char, char>, char_as>));
    EXPECT_TRUE((std::is_same_v<promote_t<signed char, unsigned char>, std::int16_t>));
}

TEST(promote_traits, tags_and_mixed_lists) {
    // With any tag in the list, the result is the joined tag (weak results stay weak).
    EXPECT_TRUE((std::is_same_v<promote_t<dt::i8, dt::weak_int>, dt::i8>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::int8_t, dt::weak_int>, dt::i8>));
    EXPECT_TRUE((std::is_same_v<promote_t<Eigen::half, mixt::literal_tag_t<double>>, dt::f16>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::int8_t, mixt::literal_tag_t<double>>, dt::weak_float>));
    EXPECT_TRUE((std::is_same_v<promote_t<mixt::literal_tag_t<int>, mixt::literal_tag_t<double>>, dt::weak_float>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, dt::i64>, dt::weak_float>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, std::int64_t>, double>));
    EXPECT_TRUE((std::is_same_v<promote_t<dt::weak_int>, dt::weak_int>));
    EXPECT_TRUE((std::is_same_v<promote_t<int>, int>));
}

TEST(promote_traits, variadic) {
    EXPECT_TRUE((std::is_same_v<promote_t<std::int8_t, std::uint8_t, Eigen::half>, Eigen::half>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint8_t, Eigen::half, std::int8_t>, Eigen::half>));
    EXPECT_TRUE((std::is_same_v<promote_t<bool, std::int8_t, std::uint8_t, std::int32_t>, std::int32_t>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, std::int8_t, float>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<dt::bf16, dt::i8, dt::f16, dt::weak_complex>, dt::c64>));
    EXPECT_TRUE((std::is_same_v<promote_t<dt::bf16, dt::f16, dt::i8>, dt::f32>)); // not bf16 v i8
    EXPECT_TRUE((std::is_same_v<promote_t<Eigen::bfloat16, Eigen::half, std::int8_t>, float>));
    EXPECT_FALSE((has_promotion_v<std::int8_t, std::uint8_t, dt::int4>));
    EXPECT_FALSE((has_promotion_v<dt::int4, std::int8_t, std::uint8_t>));
}

// Variadic promote_t is the join of all its arguments: equal to the pairwise fold in either bracketing, and
// undefined exactly where the fold is. Over every triple of a sample of tags that covers each kind.
struct triple_answer {
    dtype a, b, c;
    bool ok;
};
template <class A, class B, class C>
constexpr triple_answer triple() {
    constexpr std::optional<dtype> ab = promote_types(A::value, B::value);
    constexpr std::optional<dtype> bc = promote_types(B::value, C::value);
    constexpr std::optional<dtype> left = ab ? promote_types(*ab, C::value) : std::nullopt;
    constexpr std::optional<dtype> right = bc ? promote_types(A::value, *bc) : std::nullopt;
    bool ok = left == right;
    if constexpr (has_promotion_v<A, B, C>)
        ok = ok && left && promote_t<A, B, C>::value == *left;
    else
        ok = ok && !left;
    return {A::value, B::value, C::value, ok};
}
template <class... Triples>
constexpr std::array<triple_answer, sizeof...(Triples)> triples(mp::mp_list<Triples...>) {
    return {triple<mp::mp_at_c<Triples, 0>, mp::mp_at_c<Triples, 1>, mp::mp_at_c<Triples, 2>>()...};
}
using sample_tags = mp::mp_list<dt::bool_, dt::u8, dt::i8, dt::u64, dt::bf16, dt::f16, dt::weak_int, dt::weak_float,
                                dt::c64, dt::float8_e4m3fn>;

TEST(promote_traits, variadic_is_the_join_of_all_arguments) {
    constexpr auto answers = triples(mp::mp_product<mp::mp_list, sample_tags, sample_tags, sample_tags>{});
    EXPECT_EQ(answers.size(), 1000u);
    for (const triple_answer& t : answers)
        EXPECT_TRUE(t.ok) << "promote_t<" << mixt::short_name(t.a) << ", " << mixt::short_name(t.b) << ", "
                          << mixt::short_name(t.c) << ">";
}

TEST(promote_traits, the_policy_may_be_anywhere_in_the_list) {
    EXPECT_TRUE((std::is_same_v<promote_t<pol::jax_x32, std::uint64_t, std::int64_t>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, pol::jax_x32, std::int64_t>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, std::int64_t, pol::jax_x32>, float>));
    EXPECT_TRUE((std::is_same_v<promote_t<pol::jax, std::uint64_t, std::int64_t>, double>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint32_t, pol::jax_x32, dt::i8>, dt::i32>));
    EXPECT_FALSE((has_promotion_v<pol::array_api, std::int8_t, float>));
    EXPECT_FALSE((has_promotion_v<std::int8_t, pol::array_api, float>));
}

template <class... Ts>
concept promotable = requires { typename promote_t<Ts...>; };

template <class A, class B>
constexpr int detect() {
    if constexpr (requires { typename promote_t<A, B>; })
        return 1;
    else
        return 0;
}

TEST(promote_traits, sfinae_friendly) {
    EXPECT_FALSE((has_promotion_v<std::int8_t, dt::int4>));
    EXPECT_FALSE((has_promotion_v<std::string, int>));
    EXPECT_FALSE((has_promotion_v<int, std::string>));
    EXPECT_FALSE((has_promotion_v<int, void>));
    EXPECT_FALSE((has_promotion_v<long double, int>));
    EXPECT_FALSE(has_promotion_v<>);
    EXPECT_FALSE(has_promotion_v<pol::jax>);
    EXPECT_TRUE((has_promotion_v<int, float>));
    EXPECT_FALSE((promotable<std::int8_t, dt::int4>));
    EXPECT_FALSE((promotable<dt::float8_e4m3fn, dt::float8_e5m2>));
    EXPECT_FALSE((promotable<std::string>));
    EXPECT_TRUE((promotable<std::int8_t, std::uint8_t>));
    EXPECT_EQ((detect<std::int8_t, dt::int4>()), 0);
    EXPECT_EQ((detect<dt::f32, dt::float8_e4m3fn>()), 0);
    EXPECT_EQ((detect<std::int8_t, float>()), 1);
}

TEST(promote_traits, join_t_keeps_weak_results_weak) {
    EXPECT_TRUE((std::is_same_v<mixt::join_t<pol::jax, dt::u64, dt::i64>, dt::weak_float>));
    EXPECT_TRUE((std::is_same_v<mixt::join_t<pol::jax, dt::i8, dt::u8, dt::f16>, dt::f16>));
    EXPECT_TRUE((std::is_same_v<mixt::join_t<pol::jax_x32, dt::u32, dt::i8>, dt::i32>));
    EXPECT_TRUE((std::is_same_v<mixt::join_t<pol::jax, dt::weak_int, dt::weak_float>, dt::weak_float>));
}

struct add_op {};
TEST(promote_traits, checked_join_of_defined_pairs) {
    EXPECT_TRUE((std::is_same_v<mixt::checked_join_t<add_op, pol::jax, dt::i8, dt::u8>, dt::i16>));
    EXPECT_TRUE((std::is_same_v<mixt::checked_join_t<add_op, pol::jax, std::int8_t, std::uint8_t>, dt::i16>));
    EXPECT_TRUE((std::is_same_v<mixt::checked_join_t<add_op, pol::jax, dt::u64, dt::i64>, dt::weak_float>));
    EXPECT_TRUE((std::is_same_v<mixt::checked_join_t<add_op, pol::array_api, dt::weak_int, dt::f32>, dt::f32>));
}

TEST(promote_traits, materialize_and_result_storage) {
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::weak_int>, dt::i64>));
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::weak_float>, dt::f64>));
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::weak_complex>, dt::c128>));
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::weak_int, pol::jax_strict>, dt::i64>));
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::weak_float, pol::array_api>, dt::f64>));
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::f16>, dt::f16>));
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::float8_e5m2>, dt::float8_e5m2>));
    EXPECT_TRUE((std::is_same_v<mixt::result_storage_t<dt::weak_int>, std::int64_t>));
    EXPECT_TRUE((std::is_same_v<mixt::result_storage_t<dt::weak_float>, double>));
    EXPECT_TRUE((std::is_same_v<mixt::result_storage_t<dt::weak_complex>, std::complex<double>>));
    EXPECT_TRUE((std::is_same_v<mixt::result_storage_t<dt::weak_int, pol::jax_x32>, std::int32_t>));
    EXPECT_TRUE((std::is_same_v<mixt::result_storage_t<dt::weak_float, pol::jax_x32>, float>));
    EXPECT_TRUE((std::is_same_v<mixt::result_storage_t<dt::weak_complex, pol::jax_x32>, std::complex<float>>));
    EXPECT_TRUE((std::is_same_v<mixt::result_storage_t<dt::bf16>, Eigen::bfloat16>));
    EXPECT_TRUE((std::is_same_v<mixt::result_storage_t<promote_t<dt::u64, dt::i64>>, double>));
    // A storage-type promotion is result_storage_t of the tag promotion.
    EXPECT_TRUE((std::is_same_v<promote_t<std::uint64_t, std::int64_t>,
                                mixt::result_storage_t<promote_t<dt::u64, dt::i64>>>));
}

// A user's policy whose joins may be nodes without a storage type: with C++ types in, such a join has no
// C++ result, and the traits say so without a hard error; with a tag or the node in, the result is the node.
struct q16 {
    static constexpr std::string_view name = "q16";
};
struct fixed_point {
    static constexpr std::string_view name = "fixed_point";
    static constexpr auto edges = boost::hana::make_map(mixt::up<dt::i8, dt::i16, q16>, mixt::up<dt::i16, q16>,
                                                        mixt::up<dt::u8, q16>, mixt::up<q16>);
    static constexpr auto weak_types = boost::hana::make_map();
};
// Weak nodes, but no weak_types: a weak join cannot be stored.
struct unmaterialized {
    static constexpr std::string_view name = "unmaterialized";
    static constexpr auto edges = boost::hana::make_map(mixt::up<dt::u64, dt::weak_float>,
                                                        mixt::up<dt::i64, dt::weak_float>, mixt::up<dt::weak_float>);
    static constexpr auto weak_types = boost::hana::make_map();
};

TEST(promote_user_policy, joins_without_storage_are_sfinae_friendly) {
    EXPECT_TRUE((std::is_same_v<promote_t<std::int8_t, std::int16_t, fixed_point>, std::int16_t>));
    EXPECT_TRUE((std::is_same_v<promote_t<dt::i16, dt::u8, fixed_point>, q16>));
    EXPECT_TRUE((std::is_same_v<promote_t<std::int16_t, q16, fixed_point>, q16>));
    EXPECT_TRUE((std::is_same_v<mixt::join_t<fixed_point, dt::i16, dt::u8>, q16>));
    EXPECT_EQ(mixt::lattice<fixed_point>::name_of(mixt::lattice<fixed_point>::index_of<q16>), q16::name);
    EXPECT_FALSE((has_promotion_v<std::int16_t, std::uint8_t, fixed_point>)) << fixed_point::name;
    EXPECT_FALSE((promotable<std::int16_t, std::uint8_t, fixed_point>));
    EXPECT_FALSE((has_promotion_v<float, std::int8_t, fixed_point>)); // f32 is not a node
    EXPECT_FALSE(mixt::promote_types(dtype::int16, dtype::uint8, fixed_point{})); // q16 is not a dtype
    EXPECT_EQ(mixt::promote_types(dtype::int8, dtype::int16, fixed_point{}), dtype::int16);

    EXPECT_TRUE((std::is_same_v<promote_t<dt::u64, dt::i64, unmaterialized>, dt::weak_float>));
    EXPECT_FALSE((has_promotion_v<std::uint64_t, std::int64_t, unmaterialized>)) << unmaterialized::name;
    EXPECT_TRUE((std::is_same_v<mixt::materialize_t<dt::weak_float, unmaterialized>, dt::weak_float>));
}

TEST(promote_policies, parse_and_visit) {
    EXPECT_EQ(mixt::parse_policy("jax"), mixt::policy_id::jax);
    EXPECT_EQ(mixt::parse_policy("jax_x32"), mixt::policy_id::jax_x32);
    EXPECT_EQ(mixt::parse_policy("jax_strict"), mixt::policy_id::jax_strict);
    EXPECT_EQ(mixt::parse_policy("array_api"), mixt::policy_id::array_api);
    EXPECT_FALSE(mixt::parse_policy("numpy"));
    EXPECT_FALSE(mixt::parse_policy(""));
    for (auto id : {mixt::policy_id::jax, mixt::policy_id::jax_x32, mixt::policy_id::jax_strict,
                    mixt::policy_id::array_api}) {
        const std::string_view n = mixt::visit_policy(id, [](auto p) { return decltype(p)::name; });
        EXPECT_EQ(mixt::parse_policy(n), id) << n;
    }
}

} // namespace
