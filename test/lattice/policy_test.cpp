// mixt/lattice/policy.hpp: what a policy is, and the shape of the four built-in ones, checked against the
// rules of spec/lattice.md as predicates over the dtype facts (which nodes, which nodes have no outgoing
// edge, which kinds an edge may connect), not against a copy of the edge lists.

#include <mixt/lattice/lattice.hpp>
#include <mixt/lattice/policy.hpp>
#include <mixt/lattice/promote.hpp>

#include <cstddef>
#include <algorithm>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/size.hpp>
#include <boost/hana/type.hpp>
#include <gtest/gtest.h>

namespace mixt {
// gtest prints dtypes (and sets of them) by name in failure messages.
inline void PrintTo(dtype d, std::ostream* os) { *os << name(d); }
} // namespace mixt

namespace {

namespace hana = boost::hana;
namespace dt = mixt::dtypes;
namespace pol = mixt::policy;
using mixt::dtype;

struct edge {
    dtype from, to;
    friend bool operator<(const edge& x, const edge& y) {
        return x.from != y.from ? x.from < y.from : x.to < y.to;
    }
};

// The policy's edges over built-in dtypes, read from its Hana map.
template <class Policy>
std::set<edge> edges_of() {
    std::set<edge> out;
    hana::for_each(Policy::edges, [&](auto entry) {
        using From = typename decltype(+hana::first(entry))::type;
        hana::for_each(hana::second(entry), [&](auto to) {
            using To = typename decltype(+to)::type;
            out.insert({From::value, To::value});
        });
    });
    return out;
}

template <class Policy>
std::set<dtype> nodes_of() {
    std::set<dtype> out;
    hana::for_each(Policy::edges, [&](auto entry) {
        using From = typename decltype(+hana::first(entry))::type;
        out.insert(From::value);
        hana::for_each(hana::second(entry), [&](auto to) { out.insert(decltype(+to)::type::value); });
    });
    return out;
}

std::set<dtype> all_dtypes() {
    std::set<dtype> out;
    for (std::size_t i = 0; i < mixt::dtype_count; ++i) out.insert(static_cast<dtype>(i));
    return out;
}

std::set<dtype> sources(const std::set<edge>& es) {
    std::set<dtype> out;
    for (const edge& e : es) out.insert(e.from);
    return out;
}

std::string show(const edge& e) {
    return std::string(mixt::short_name(e.from)) + " -> " + std::string(mixt::short_name(e.to));
}

// Literal kinds in the order values may move up: bool, ints, floats, complex.
int kind_rank(dtype d) {
    switch (mixt::kind(d)) {
    case mixt::dtype_kind::boolean: return 0;
    case mixt::dtype_kind::unsigned_int:
    case mixt::dtype_kind::signed_int: return 1;
    case mixt::dtype_kind::floating: return 2;
    case mixt::dtype_kind::complex: return 3;
    }
    return -1;
}

// ---------------------------------------------------------------------------------------------------------

struct no_weak_types {
    static constexpr std::string_view name = "x";
    static constexpr auto edges = hana::make_map(mixt::up<dt::i8>);
};

TEST(policy_concept, is_policy) {
    EXPECT_TRUE(mixt::is_policy_v<pol::jax>);
    EXPECT_TRUE(mixt::is_policy_v<pol::jax_x32>);
    EXPECT_TRUE(mixt::is_policy_v<pol::jax_strict>);
    EXPECT_TRUE(mixt::is_policy_v<pol::array_api>);
    EXPECT_FALSE(mixt::is_policy_v<int>);
    EXPECT_FALSE(mixt::is_policy_v<dt::i8>);
    EXPECT_FALSE(mixt::is_policy_v<no_weak_types>) << no_weak_types::name << " has no weak_types";
    EXPECT_TRUE((std::is_same_v<mixt::default_policy, pol::jax>));
}

TEST(policy_concept, names) {
    EXPECT_EQ(pol::jax::name, "jax");
    EXPECT_EQ(pol::jax_x32::name, "jax_x32");
    EXPECT_EQ(pol::jax_strict::name, "jax_strict");
    EXPECT_EQ(pol::array_api::name, "array_api");
}

TEST(policy_concept, up_and_weak_as_are_hana_pairs) {
    constexpr auto e = mixt::up<dt::u8, dt::u16, dt::i16>;
    EXPECT_TRUE((std::is_same_v<typename decltype(+hana::first(e))::type, dt::u8>));
    EXPECT_EQ(decltype(hana::size(hana::second(e)))::value, 2u);
    constexpr auto sink = mixt::up<dt::c128>;
    EXPECT_EQ(decltype(hana::size(hana::second(sink)))::value, 0u);
    constexpr auto w = mixt::weak_as<dt::weak_int, dt::i64>;
    EXPECT_TRUE((std::is_same_v<typename decltype(+hana::first(w))::type, dt::weak_int>));
    EXPECT_TRUE((std::is_same_v<typename decltype(+hana::second(w))::type, dt::i64>));
}

// ---------------------------------------------------------------------------------------------------------
// jax

TEST(policy_jax, every_dtype_is_a_node) { EXPECT_EQ(nodes_of<pol::jax>(), all_dtypes()); }

TEST(policy_jax, sinks_are_the_small_nodes_and_c128) {
    const std::set<dtype> from = sources(edges_of<pol::jax>());
    for (dtype d : all_dtypes()) {
        const bool sink = mixt::is_small(d) || d == dtype::complex128;
        EXPECT_EQ(from.count(d) == 0, sink) << mixt::name(d);
    }
}

TEST(policy_jax, edges_never_lower_the_kind_and_strong_edges_widen) {
    for (const edge& e : edges_of<pol::jax>()) {
        EXPECT_LE(kind_rank(e.from), kind_rank(e.to)) << show(e);
        if (!mixt::is_weak(e.from) && !mixt::is_weak(e.to)) {
            EXPECT_GT(mixt::info(e.to).bits, mixt::info(e.from).bits) << show(e);
        }
    }
}

TEST(policy_jax, weak_nodes_sit_below_every_strong_node_of_their_kind) {
    using L = mixt::lattice<pol::jax>;
    for (dtype w : {dtype::weak_int, dtype::weak_float, dtype::weak_complex})
        for (dtype s : all_dtypes()) {
            if (mixt::is_weak(s) || kind_rank(s) != kind_rank(w)) continue;
            const auto rw = static_cast<std::size_t>(L::dtype_rows[static_cast<std::size_t>(w)]);
            const auto rs = static_cast<std::size_t>(L::dtype_rows[static_cast<std::size_t>(s)]);
            EXPECT_TRUE(L::below_or_equal(rw, rs)) << mixt::name(w) << " <= " << mixt::name(s);
        }
}

// ---------------------------------------------------------------------------------------------------------
// jax_x32: the same edges except u32's, which go to u64 and i32.

TEST(policy_jax_x32, differs_from_jax_only_in_u32_edges) {
    const std::set<edge> x64 = edges_of<pol::jax>();
    const std::set<edge> x32 = edges_of<pol::jax_x32>();
    EXPECT_EQ(nodes_of<pol::jax_x32>(), all_dtypes());
    std::set<edge> x64_rest, x32_rest, x64_u32, x32_u32;
    for (const edge& e : x64) (e.from == dtype::uint32 ? x64_u32 : x64_rest).insert(e);
    for (const edge& e : x32) (e.from == dtype::uint32 ? x32_u32 : x32_rest).insert(e);
    EXPECT_TRUE(x64_rest.size() == x32_rest.size() && std::equal(x64_rest.begin(), x64_rest.end(), x32_rest.begin(),
                                                                 [](const edge& a, const edge& b) {
                                                                     return a.from == b.from && a.to == b.to;
                                                                 }));
    std::set<dtype> to64, to32;
    for (const edge& e : x64_u32) to64.insert(e.to);
    for (const edge& e : x32_u32) to32.insert(e.to);
    EXPECT_EQ(to64, (std::set<dtype>{dtype::uint64, dtype::int64}));
    EXPECT_EQ(to32, (std::set<dtype>{dtype::uint64, dtype::int32}));
}

// ---------------------------------------------------------------------------------------------------------
// jax_strict: edges leave weak nodes only; i* reaches every int and f*; f* every float and c*; c* c64 c128.

TEST(policy_jax_strict, only_weak_nodes_have_edges) {
    EXPECT_EQ(nodes_of<pol::jax_strict>(), all_dtypes());
    for (const edge& e : edges_of<pol::jax_strict>()) {
        EXPECT_TRUE(mixt::is_weak(e.from)) << show(e);
        EXPECT_NE(e.to, dtype::bool_) << show(e);
    }
}

TEST(policy_jax_strict, weak_nodes_reach_their_kind_and_above) {
    using L = mixt::lattice<pol::jax_strict>;
    auto row = [](dtype d) { return static_cast<std::size_t>(L::dtype_rows[static_cast<std::size_t>(d)]); };
    for (dtype w : {dtype::weak_int, dtype::weak_float, dtype::weak_complex})
        for (dtype s : all_dtypes()) {
            if (s == w || s == dtype::bool_) continue;
            EXPECT_EQ(L::below_or_equal(row(w), row(s)), kind_rank(w) <= kind_rank(s))
                << mixt::name(w) << " <= " << mixt::name(s);
        }
}

// ---------------------------------------------------------------------------------------------------------
// array_api

TEST(policy_array_api, nodes_are_the_classic_ones_less_bf16_and_f16) {
    std::set<dtype> expected;
    for (dtype d : all_dtypes())
        if (!mixt::is_small(d) && d != dtype::bfloat16 && d != dtype::float16) expected.insert(d);
    EXPECT_EQ(nodes_of<pol::array_api>(), expected);
}

TEST(policy_array_api, kinds_are_not_connected) {
    // bool alone; ints among themselves; inexact among themselves; the only edge across is i* -> f*.
    auto klass = [](dtype d) { return kind_rank(d) >= 2 ? 2 : kind_rank(d); };
    for (const edge& e : edges_of<pol::array_api>()) {
        EXPECT_NE(e.from, dtype::bool_) << show(e);
        EXPECT_NE(e.to, dtype::bool_) << show(e);
        if (klass(e.from) != klass(e.to)) {
            EXPECT_TRUE(e.from == dtype::weak_int && e.to == dtype::weak_float) << show(e);
        }
        EXPECT_FALSE(mixt::is_weak(e.to) && !mixt::is_weak(e.from)) << show(e) << ": a strong node never becomes weak";
    }
}

// ---------------------------------------------------------------------------------------------------------
// weak_types, for every built-in policy: each weak node of the policy is stored as a concrete node of its
// kind that lies above it.

template <class Policy>
void check_weak_types() {
    using L = mixt::lattice<Policy>;
    std::set<dtype> keys;
    hana::for_each(Policy::weak_types, [&](auto entry) {
        using Weak = typename decltype(+hana::first(entry))::type;
        using Concrete = typename decltype(+hana::second(entry))::type;
        keys.insert(Weak::value);
        SCOPED_TRACE(std::string(Policy::name) + ": " + std::string(mixt::name(Weak::value)));
        EXPECT_TRUE(mixt::is_weak(Weak::value));
        EXPECT_FALSE(mixt::is_weak(Concrete::value));
        EXPECT_EQ(kind_rank(Weak::value), kind_rank(Concrete::value));
        EXPECT_TRUE(mixt::has_storage_v<Concrete>);
        EXPECT_TRUE((std::is_same_v<mixt::materialize_t<Weak, Policy>, Concrete>));
        ASSERT_TRUE(L::template contains<Weak> && L::template contains<Concrete>);
        EXPECT_TRUE(L::below_or_equal(L::template index_of<Weak>, L::template index_of<Concrete>));
    });
    std::set<dtype> weak_nodes;
    for (dtype d : nodes_of<Policy>())
        if (mixt::is_weak(d)) weak_nodes.insert(d);
    EXPECT_EQ(keys, weak_nodes) << Policy::name;
}

TEST(policy_weak_types, every_weak_node_materializes_above_itself) {
    check_weak_types<pol::jax>();
    check_weak_types<pol::jax_x32>();
    check_weak_types<pol::jax_strict>();
    check_weak_types<pol::array_api>();
}

TEST(policy_weak_types, default_widths) {
    // 64-bit mode: i64 f64 c128; 32-bit mode: i32 f32 c64 (complex widths count both halves).
    auto bits = [](auto tag) { return mixt::info(decltype(tag)::value).bits; };
    EXPECT_EQ(bits(mixt::materialize_t<dt::weak_int, pol::jax>{}), 64);
    EXPECT_EQ(bits(mixt::materialize_t<dt::weak_float, pol::jax>{}), 64);
    EXPECT_EQ(bits(mixt::materialize_t<dt::weak_complex, pol::jax>{}), 128);
    EXPECT_EQ(bits(mixt::materialize_t<dt::weak_int, pol::jax_x32>{}), 32);
    EXPECT_EQ(bits(mixt::materialize_t<dt::weak_float, pol::jax_x32>{}), 32);
    EXPECT_EQ(bits(mixt::materialize_t<dt::weak_complex, pol::jax_x32>{}), 64);
}

} // namespace
