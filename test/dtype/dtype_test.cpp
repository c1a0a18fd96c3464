// mixt/dtype/dtype.hpp: the 33 nodes, their names both ways, parsing, and the facts each node carries.
// The expected names of the 18 classic nodes come from the header row of test/data/promotion_jax_numpy.csv,
// not from a copy written here.

#include <mixt/dtype/dtype.hpp>

#include <cstddef>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace {

using mixt::dtype;

constexpr dtype nth(std::size_t i) { return static_cast<dtype>(i); }

std::vector<dtype> all_dtypes() {
    std::vector<dtype> v;
    for (std::size_t i = 0; i < mixt::dtype_count; ++i) v.push_back(nth(i));
    return v;
}

// Compile-time: every node parses back from both of its names.
constexpr bool names_round_trip() {
    for (std::size_t i = 0; i < mixt::dtype_count; ++i) {
        if (mixt::parse_dtype(mixt::short_name(nth(i))) != nth(i)) return false;
        if (mixt::parse_dtype(mixt::name(nth(i))) != nth(i)) return false;
    }
    return true;
}
static_assert(names_round_trip());
static_assert(mixt::parse_dtype("bf16") == dtype::bfloat16 && mixt::parse_dtype("bfloat16") == dtype::bfloat16);
static_assert(!mixt::parse_dtype("int128").has_value());
static_assert(mixt::dtypes::float8_e4m3fn::value == dtype::float8_e4m3fn);

TEST(dtype_names, count_matches_the_enum) {
    EXPECT_EQ(mixt::dtype_count, 33u);
    EXPECT_EQ(mixt::classic_dtype_count, 18u);
    // The last enumerator is the last node: no gap, no extra enumerator after the table.
    EXPECT_EQ(static_cast<std::size_t>(dtype::float8_e5m2fnuz) + 1, mixt::dtype_count);
}

TEST(dtype_names, both_names_round_trip_for_every_node) {
    for (dtype d : all_dtypes()) {
        SCOPED_TRACE(std::string(mixt::name(d)));
        EXPECT_FALSE(mixt::short_name(d).empty());
        EXPECT_FALSE(mixt::name(d).empty());
        EXPECT_EQ(mixt::parse_dtype(mixt::short_name(d)), d);
        EXPECT_EQ(mixt::parse_dtype(mixt::name(d)), d);
        EXPECT_EQ(mixt::info(d).short_name, mixt::short_name(d));
        EXPECT_EQ(mixt::info(d).name, mixt::name(d));
    }
}

TEST(dtype_names, no_name_is_shared_by_two_nodes) {
    // A name may be both the short and the long name of one node (`uint4`), never a name of two nodes.
    std::set<std::string_view> seen;
    for (dtype d : all_dtypes()) {
        std::set<std::string_view> own{mixt::short_name(d), mixt::name(d)};
        for (std::string_view n : own) EXPECT_TRUE(seen.insert(n).second) << "name used twice: " << n;
    }
}

TEST(dtype_names, classic_short_names_are_the_promotion_table_header) {
    std::ifstream in(MIXT_TEST_DATA_DIR "/promotion_jax_numpy.csv");
    ASSERT_TRUE(in) << "cannot open " MIXT_TEST_DATA_DIR "/promotion_jax_numpy.csv";
    std::string header;
    std::getline(in, header);
    std::vector<std::string> cols;
    std::stringstream ss(header);
    for (std::string cell; std::getline(ss, cell, ',');) cols.push_back(cell);
    ASSERT_EQ(cols.size(), mixt::classic_dtype_count + 1);
    EXPECT_EQ(cols[0], "");
    for (std::size_t i = 0; i < mixt::classic_dtype_count; ++i)
        EXPECT_EQ(mixt::short_name(nth(i)), cols[i + 1]) << "column " << i + 1;
}

TEST(dtype_names, parse_short_and_long_names) {
    EXPECT_EQ(mixt::parse_dtype("b"), dtype::bool_);
    EXPECT_EQ(mixt::parse_dtype("bool"), dtype::bool_);
    EXPECT_EQ(mixt::parse_dtype("u8"), dtype::uint8);
    EXPECT_EQ(mixt::parse_dtype("uint8"), dtype::uint8);
    EXPECT_EQ(mixt::parse_dtype("i64"), dtype::int64);
    EXPECT_EQ(mixt::parse_dtype("int64"), dtype::int64);
    EXPECT_EQ(mixt::parse_dtype("f16"), dtype::float16);
    EXPECT_EQ(mixt::parse_dtype("float16"), dtype::float16);
    EXPECT_EQ(mixt::parse_dtype("c128"), dtype::complex128);
    EXPECT_EQ(mixt::parse_dtype("complex128"), dtype::complex128);
    EXPECT_EQ(mixt::parse_dtype("i*"), dtype::weak_int);
    EXPECT_EQ(mixt::parse_dtype("weak_int"), dtype::weak_int);
    EXPECT_EQ(mixt::parse_dtype("f*"), dtype::weak_float);
    EXPECT_EQ(mixt::parse_dtype("c*"), dtype::weak_complex);
    EXPECT_EQ(mixt::parse_dtype("int4"), dtype::int4);
    EXPECT_EQ(mixt::parse_dtype("float8_e4m3fn"), dtype::float8_e4m3fn);
    EXPECT_EQ(mixt::parse_dtype("float8_e5m2fnuz"), dtype::float8_e5m2fnuz);
}

TEST(dtype_names, unknown_names_do_not_parse) {
    for (std::string_view s : {"", " ", "int128", "U8", "Uint8", "uint8 ", " u8", "u8,", "f8", "float", "int",
                               "complex", "i", "*", "weak", "float8", "float8_e4m3fn\n"}) {
        EXPECT_FALSE(mixt::parse_dtype(s).has_value()) << "'" << s << "'";
    }
    // A string_view with an embedded NUL is not the name before it.
    EXPECT_FALSE(mixt::parse_dtype(std::string_view("u8\0x", 4)).has_value());
}

TEST(dtype_facts, weak_nodes_are_exactly_the_star_names) {
    for (dtype d : all_dtypes()) {
        const bool star = mixt::short_name(d).ends_with('*');
        EXPECT_EQ(mixt::is_weak(d), star) << mixt::name(d);
        EXPECT_EQ(mixt::info(d).bits == 0, star) << mixt::name(d);
    }
}

TEST(dtype_facts, kinds_follow_the_names) {
    for (dtype d : all_dtypes()) {
        const std::string_view n = mixt::name(d);
        mixt::dtype_kind expected{};
        if (n == "bool")
            expected = mixt::dtype_kind::boolean;
        else if (n.starts_with("uint"))
            expected = mixt::dtype_kind::unsigned_int;
        else if (n.starts_with("int") || n == "weak_int")
            expected = mixt::dtype_kind::signed_int;
        else if (n.starts_with("complex") || n == "weak_complex")
            expected = mixt::dtype_kind::complex;
        else
            expected = mixt::dtype_kind::floating;
        EXPECT_EQ(mixt::kind(d), expected) << n;
    }
}

TEST(dtype_facts, bits_are_in_the_names) {
    // The width is the number in the short name (`u16`, `c128`, `int4`); the float4/6/8 names carry it
    // after "float"; bool is stored in a byte.
    for (dtype d : all_dtypes()) {
        if (mixt::is_weak(d)) continue;
        const std::string_view n = mixt::name(d);
        int expected = 8;
        if (n != "bool") {
            const std::string_view digits = n.substr(n.find_first_of("0123456789"));
            expected = std::stoi(std::string(digits.substr(0, digits.find_first_not_of("0123456789"))));
        }
        EXPECT_EQ(mixt::info(d).bits, expected) << n;
    }
}

TEST(dtype_facts, small_nodes_are_the_ones_after_the_classic_table) {
    for (dtype d : all_dtypes()) {
        const bool classic = static_cast<std::size_t>(d) < mixt::classic_dtype_count;
        EXPECT_EQ(mixt::is_small(d), !classic) << mixt::name(d);
        EXPECT_EQ(mixt::is_small_float(d), !classic && mixt::kind(d) == mixt::dtype_kind::floating)
            << mixt::name(d);
        if (!classic) {
            EXPECT_LE(mixt::info(d).bits, 8) << mixt::name(d);
        }
    }
    EXPECT_TRUE(mixt::is_small_float(dtype::float8_e4m3fn));
    EXPECT_FALSE(mixt::is_small_float(dtype::int4));
    EXPECT_FALSE(mixt::is_small_float(dtype::bfloat16));
}

TEST(dtype_tags, tags_carry_their_dtype) {
    EXPECT_EQ(mixt::dtypes::bool_::value, dtype::bool_);
    EXPECT_EQ(mixt::dtypes::u8::value, dtype::uint8);
    EXPECT_EQ(mixt::dtypes::i64::value, dtype::int64);
    EXPECT_EQ(mixt::dtypes::bf16::value, dtype::bfloat16);
    EXPECT_EQ(mixt::dtypes::f16::value, dtype::float16);
    EXPECT_EQ(mixt::dtypes::c128::value, dtype::complex128);
    EXPECT_EQ(mixt::dtypes::weak_int::value, dtype::weak_int);
    EXPECT_EQ(mixt::dtypes::weak_float::value, dtype::weak_float);
    EXPECT_EQ(mixt::dtypes::weak_complex::value, dtype::weak_complex);
    EXPECT_EQ(mixt::dtypes::uint2::value, dtype::uint2);
    EXPECT_EQ(mixt::dtypes::float4_e2m1fn::value, dtype::float4_e2m1fn);
    EXPECT_TRUE(mixt::is_dtype_tag_v<mixt::dtypes::f32>);
    EXPECT_TRUE(mixt::is_dtype_tag_v<mixt::dtype_tag<dtype::float8_e5m2>>);
    EXPECT_FALSE(mixt::is_dtype_tag_v<float>);
    EXPECT_FALSE(mixt::is_dtype_tag_v<dtype>);
}

} // namespace
