// mixt/lattice/lattice.hpp: for every built-in policy, the join table is the join of a lattice.
//
// The reference is deliberately slow and separate from mixt's algorithms: the adjacency is read from the
// policy's Hana `edges` directly (not from `lattice<P>::direct`), the upper-bound sets come from a depth-first
// search, and the least upper bound is found by the definition (every common upper bound that lies below all
// the others, all of them counted, not the first one found). Over all pairs and all triples of nodes:
// existence (a join exists iff there is a common upper bound), uniqueness (at most one least one),
// commutativity, idempotence and associativity.

#include <mixt/lattice/lattice.hpp>
#include <mixt/lattice/promote.hpp>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/second.hpp>
#include <boost/mp11/algorithm.hpp>
#include <gtest/gtest.h>

namespace {

namespace hana = boost::hana;
namespace dt = mixt::dtypes;
using mixt::dtype;

// ---------------------------------------------------------------------------------------------------------
// The reference

struct reference {
    std::size_t n = 0;
    std::vector<std::vector<bool>> edge;  // edge[a][b]: b is listed directly above a in the policy
    std::vector<std::vector<bool>> reach; // reach[a][b]: a <= b (reflexive, transitive)

    std::vector<std::size_t> common_upper_bounds(const std::vector<std::size_t>& xs) const {
        std::vector<std::size_t> common;
        for (std::size_t k = 0; k < n; ++k) {
            bool all = true;
            for (std::size_t x : xs) all = all && reach[x][k];
            if (all) common.push_back(k);
        }
        return common;
    }
    // Every least member of the common upper bounds (a lattice has at most one).
    std::vector<std::size_t> least_upper_bounds(const std::vector<std::size_t>& xs) const {
        const std::vector<std::size_t> common = common_upper_bounds(xs);
        std::vector<std::size_t> least;
        for (std::size_t c : common) {
            bool below_all = true;
            for (std::size_t m : common) below_all = below_all && reach[c][m];
            if (below_all) least.push_back(c);
        }
        return least;
    }
};

template <class Policy>
reference make_reference() {
    using L = mixt::lattice<Policy>;
    reference r;
    r.n = L::size;
    r.edge.assign(r.n, std::vector<bool>(r.n, false));
    hana::for_each(Policy::edges, [&](auto entry) {
        using From = typename decltype(+hana::first(entry))::type;
        hana::for_each(hana::second(entry), [&](auto to) {
            using To = typename decltype(+to)::type;
            r.edge[L::template index_of<From>][L::template index_of<To>] = true;
        });
    });
    r.reach.assign(r.n, std::vector<bool>(r.n, false));
    for (std::size_t s = 0; s < r.n; ++s) {
        std::vector<std::size_t> stack{s};
        while (!stack.empty()) {
            const std::size_t v = stack.back();
            stack.pop_back();
            if (r.reach[s][v]) continue;
            r.reach[s][v] = true;
            for (std::size_t w = 0; w < r.n; ++w)
                if (r.edge[v][w]) stack.push_back(w);
        }
    }
    return r;
}

template <class Policy>
std::string node(std::size_t i) {
    return std::string(mixt::lattice<Policy>::name_of(i));
}

// ---------------------------------------------------------------------------------------------------------
// Typed over the four built-in policies

template <class Policy>
class lattice_laws : public ::testing::Test {};
using builtin_policies =
    ::testing::Types<mixt::policy::jax, mixt::policy::jax_x32, mixt::policy::jax_strict, mixt::policy::array_api>;
struct policy_names {
    template <class P>
    static std::string GetName(int) {
        return std::string(P::name);
    }
};
TYPED_TEST_SUITE(lattice_laws, builtin_policies, policy_names);

TYPED_TEST(lattice_laws, is_a_lattice) {
    using L = mixt::lattice<TypeParam>;
    EXPECT_TRUE(L::is_lattice);
    EXPECT_EQ(L::verdict.fault, mixt::graph::fault::none);
    EXPECT_TRUE(mixt::check_lattice_v<TypeParam>);
}

TYPED_TEST(lattice_laws, nodes_are_the_nodes_named_in_the_edges) {
    using L = mixt::lattice<TypeParam>;
    std::set<std::string> named;
    hana::for_each(TypeParam::edges, [&](auto entry) {
        using From = typename decltype(+hana::first(entry))::type;
        named.insert(std::string(mixt::node_name<From>()));
        hana::for_each(hana::second(entry), [&](auto to) {
            named.insert(std::string(mixt::node_name<typename decltype(+to)::type>()));
        });
    });
    std::set<std::string> rows;
    for (std::size_t i = 0; i < L::size; ++i) rows.insert(node<TypeParam>(i));
    EXPECT_EQ(rows, named);
    EXPECT_EQ(rows.size(), L::size) << "two rows with one name";
}

TYPED_TEST(lattice_laws, direct_edges_and_upper_sets_match_the_reference) {
    using L = mixt::lattice<TypeParam>;
    const reference r = make_reference<TypeParam>();
    for (std::size_t a = 0; a < L::size; ++a)
        for (std::size_t b = 0; b < L::size; ++b) {
            EXPECT_EQ((L::direct[a] >> b & 1) != 0, r.edge[a][b]) << node<TypeParam>(a) << " -> " << node<TypeParam>(b);
            EXPECT_EQ((L::upper[a] >> b & 1) != 0, r.reach[a][b]) << node<TypeParam>(a) << " <= " << node<TypeParam>(b);
            EXPECT_EQ(L::below_or_equal(a, b), r.reach[a][b]) << node<TypeParam>(a) << " <= " << node<TypeParam>(b);
        }
}

TYPED_TEST(lattice_laws, the_order_is_acyclic) {
    const reference r = make_reference<TypeParam>();
    for (std::size_t a = 0; a < r.n; ++a) {
        EXPECT_FALSE(r.edge[a][a]) << node<TypeParam>(a);
        for (std::size_t b = a + 1; b < r.n; ++b)
            EXPECT_FALSE(r.reach[a][b] && r.reach[b][a]) << node<TypeParam>(a) << ", " << node<TypeParam>(b);
    }
}

TYPED_TEST(lattice_laws, pairs_join_exists_iff_common_upper_bound_and_is_unique) {
    using L = mixt::lattice<TypeParam>;
    const reference r = make_reference<TypeParam>();
    std::size_t joined = 0;
    for (std::size_t a = 0; a < r.n; ++a)
        for (std::size_t b = 0; b < r.n; ++b) {
            const std::string pair = node<TypeParam>(a) + " v " + node<TypeParam>(b);
            const std::vector<std::size_t> common = r.common_upper_bounds({a, b});
            const std::vector<std::size_t> least = r.least_upper_bounds({a, b});
            EXPECT_LE(least.size(), 1u) << pair << ": several least upper bounds";
            EXPECT_EQ(least.size() == 1, !common.empty()) << pair << ": existence";
            const int j = L::join(a, b);
            EXPECT_NE(j, L::ambiguous) << pair;
            if (least.size() == 1) {
                ++joined;
                const std::string said = j >= 0 ? node<TypeParam>(static_cast<std::size_t>(j)) : "-";
                EXPECT_EQ(j, static_cast<int>(least[0]))
                    << pair << ": mixt says " << said << ", the reference " << node<TypeParam>(least[0]);
            } else {
                EXPECT_EQ(j, L::no_join) << pair;
            }
            EXPECT_EQ(static_cast<int>(L::table[a][b]), j) << pair;
        }
    EXPECT_GT(joined, r.n); // more than the diagonal: the policy connects something
}

TYPED_TEST(lattice_laws, idempotent_and_commutative) {
    using L = mixt::lattice<TypeParam>;
    for (std::size_t a = 0; a < L::size; ++a) {
        EXPECT_EQ(L::join(a, a), static_cast<int>(a)) << node<TypeParam>(a);
        for (std::size_t b = 0; b < L::size; ++b)
            EXPECT_EQ(L::join(a, b), L::join(b, a)) << node<TypeParam>(a) << ", " << node<TypeParam>(b);
    }
}

TYPED_TEST(lattice_laws, triples_associative_and_equal_to_the_reference) {
    using L = mixt::lattice<TypeParam>;
    const reference r = make_reference<TypeParam>();
    // Counting failures keeps a broken policy from printing 36000 lines; the first few are shown in full.
    std::size_t failures = 0;
    auto fail = [&](std::size_t a, std::size_t b, std::size_t c, const std::string& what) {
        if (++failures <= 20)
            ADD_FAILURE() << "(" << node<TypeParam>(a) << ", " << node<TypeParam>(b) << ", " << node<TypeParam>(c)
                          << "): " << what;
    };
    for (std::size_t a = 0; a < r.n; ++a)
        for (std::size_t b = 0; b < r.n; ++b)
            for (std::size_t c = 0; c < r.n; ++c) {
                const int ab = L::join(a, b);
                const int bc = L::join(b, c);
                const int left = ab < 0 ? L::no_join : L::join(static_cast<std::size_t>(ab), c);
                const int right = bc < 0 ? L::no_join : L::join(a, static_cast<std::size_t>(bc));
                if (left >= 0 && right != left) fail(a, b, c, "(a v b) v c exists but a v (b v c) differs");
                if (right >= 0 && left != right) fail(a, b, c, "a v (b v c) exists but (a v b) v c differs");
                const std::vector<std::size_t> common = r.common_upper_bounds({a, b, c});
                const std::vector<std::size_t> least = r.least_upper_bounds({a, b, c});
                if (least.size() > 1) fail(a, b, c, "several least upper bounds");
                if ((least.size() == 1) != !common.empty()) fail(a, b, c, "common upper bounds but no least one");
                const int expected = least.size() == 1 ? static_cast<int>(least[0]) : L::no_join;
                if (left != expected) fail(a, b, c, "the folded join differs from the reference's");
            }
    EXPECT_EQ(failures, 0u);
}

TYPED_TEST(lattice_laws, rows_and_dtypes_agree) {
    using L = mixt::lattice<TypeParam>;
    for (std::size_t i = 0; i < L::size; ++i) {
        ASSERT_GE(L::node_dtypes[i], 0) << "built-in policies use built-in dtypes only";
        const auto d = static_cast<dtype>(L::node_dtypes[i]);
        EXPECT_EQ(L::name_of(i), mixt::short_name(d));
        EXPECT_EQ(L::names[i], mixt::short_name(d));
        EXPECT_EQ(L::dtype_rows[static_cast<std::size_t>(d)], static_cast<int>(i));
    }
    std::size_t mapped = 0;
    for (std::size_t d = 0; d < mixt::dtype_count; ++d)
        if (L::dtype_rows[d] >= 0) {
            ++mapped;
            EXPECT_EQ(L::node_dtypes[static_cast<std::size_t>(L::dtype_rows[d])], static_cast<int>(d));
        }
    EXPECT_EQ(mapped, L::size);
}

// ---------------------------------------------------------------------------------------------------------
// Members of lattice<P>

TEST(lattice_members, sizes_and_lookup) {
    using J = mixt::lattice<mixt::policy::jax>;
    using A = mixt::lattice<mixt::policy::array_api>;
    EXPECT_EQ(J::size, mixt::dtype_count);
    EXPECT_EQ(mixt::lattice<mixt::policy::jax_x32>::size, mixt::dtype_count);
    EXPECT_EQ(mixt::lattice<mixt::policy::jax_strict>::size, mixt::dtype_count);
    EXPECT_EQ(A::size, 16u); // the 18 classic nodes less bf16 and f16
    EXPECT_TRUE(J::contains<dt::float8_e5m2>);
    EXPECT_FALSE(A::contains<dt::f16>);
    EXPECT_FALSE(A::contains<dt::int4>);
    EXPECT_FALSE(J::contains<float>); // a storage type is not a node
    EXPECT_EQ(J::index_of<float>, J::size);
    EXPECT_EQ(A::dtype_rows[static_cast<std::size_t>(dtype::float16)], -1);
    EXPECT_TRUE((std::is_same_v<J::node_at<J::index_of<dt::bf16>>, dt::bf16>));
    EXPECT_TRUE((std::is_same_v<A::node_at<A::index_of<dt::c64>>, dt::c64>));
    EXPECT_EQ(J::name_of(J::index_of<dt::weak_float>), "f*");
    EXPECT_EQ(J::join(J::index_of<dt::u64>, J::index_of<dt::i64>), static_cast<int>(J::index_of<dt::weak_float>));
    EXPECT_EQ(J::join(J::index_of<dt::i8>, J::index_of<dt::int4>), J::no_join);
}

TEST(lattice_members, usable_in_constant_expressions) {
    using J = mixt::lattice<mixt::policy::jax>;
    static_assert(J::is_lattice);
    static_assert(J::join(J::index_of<dt::bf16>, J::index_of<dt::f16>) == static_cast<int>(J::index_of<dt::f32>));
    static_assert(J::below_or_equal(J::index_of<dt::bool_>, J::index_of<dt::c128>));
    static_assert(!J::below_or_equal(J::index_of<dt::c128>, J::index_of<dt::bool_>));
    SUCCEED();
}

// ---------------------------------------------------------------------------------------------------------
// User policies that are not lattices: the verdict names the fault and the pair (inspecting `verdict` does
// not instantiate the check; the compile errors are in test/compile_fail/lattice.cmake).

struct n_a {
    static constexpr std::string_view name = "a";
};
struct n_b {
    static constexpr std::string_view name = "b";
};
struct n_c {
    static constexpr std::string_view name = "c";
};
struct n_d {
    static constexpr std::string_view name = "d";
};
struct n_unnamed {};

struct cyclic {
    static constexpr std::string_view name = "cyclic";
    static constexpr auto edges = hana::make_map(mixt::up<n_a, n_b>, mixt::up<n_b, n_c>, mixt::up<n_c, n_a>);
    static constexpr auto weak_types = hana::make_map();
};
struct self_loop {
    static constexpr std::string_view name = "self_loop";
    static constexpr auto edges = hana::make_map(mixt::up<n_a, n_a>);
    static constexpr auto weak_types = hana::make_map();
};
// a and b are both below c and d, which are incomparable: two least upper bounds.
struct bowtie {
    static constexpr std::string_view name = "bowtie";
    static constexpr auto edges = hana::make_map(mixt::up<n_a, n_c, n_d>, mixt::up<n_b, n_c, n_d>);
    static constexpr auto weak_types = hana::make_map();
};
// Two chains that never meet: a lattice with undefined pairs.
struct two_chains {
    static constexpr std::string_view name = "two_chains";
    static constexpr auto edges = hana::make_map(mixt::up<n_a, n_b>, mixt::up<n_c, n_d>);
    static constexpr auto weak_types = hana::make_map();
};

template <std::size_t I>
struct chain_node {};
template <std::size_t... I>
constexpr auto chain_edges(std::index_sequence<I...>) {
    return hana::make_map(mixt::up<chain_node<I>, chain_node<I + 1>>..., mixt::up<chain_node<sizeof...(I)>>);
}
template <std::size_t Edges>
struct chain {
    static constexpr std::string_view name = "chain";
    static constexpr auto edges = chain_edges(std::make_index_sequence<Edges>{});
    static constexpr auto weak_types = hana::make_map();
};

TEST(lattice_faults, cycle_is_found) {
    using L = mixt::lattice<cyclic>;
    EXPECT_FALSE(L::is_lattice);
    EXPECT_EQ(L::verdict.fault, mixt::graph::fault::cycle);
    EXPECT_NE(L::verdict.a, L::verdict.b);
    EXPECT_TRUE(L::below_or_equal(L::verdict.a, L::verdict.b) && L::below_or_equal(L::verdict.b, L::verdict.a));
    using S = mixt::lattice<self_loop>;
    EXPECT_EQ(S::verdict.fault, mixt::graph::fault::cycle);
    EXPECT_EQ(S::name_of(S::verdict.a), "a");
    EXPECT_EQ(S::name_of(S::verdict.b), "a");
}

TEST(lattice_faults, two_least_upper_bounds_are_found) {
    using L = mixt::lattice<bowtie>;
    EXPECT_FALSE(L::is_lattice);
    EXPECT_EQ(L::verdict.fault, mixt::graph::fault::no_unique_join);
    const std::set<std::string_view> pair{L::name_of(L::verdict.a), L::name_of(L::verdict.b)};
    EXPECT_EQ(pair, (std::set<std::string_view>{"a", "b"}));
    EXPECT_EQ(L::join(L::index_of<n_a>, L::index_of<n_b>), L::ambiguous);
    EXPECT_EQ(L::join(L::index_of<n_a>, L::index_of<n_c>), static_cast<int>(L::index_of<n_c>));
}

TEST(lattice_faults, disconnected_chains_are_a_lattice_with_undefined_pairs) {
    using L = mixt::lattice<two_chains>;
    EXPECT_TRUE(L::is_lattice);
    EXPECT_EQ(L::join(L::index_of<n_a>, L::index_of<n_c>), L::no_join);
    EXPECT_EQ(L::join(L::index_of<n_a>, L::index_of<n_b>), static_cast<int>(L::index_of<n_b>));
    EXPECT_FALSE((mixt::has_promotion_v<n_a, n_d, two_chains>));
    EXPECT_TRUE((std::is_same_v<mixt::promote_t<n_a, n_b, two_chains>, n_b>));
}

TEST(lattice_faults, sixty_four_nodes_at_most) {
    EXPECT_TRUE(mixt::lattice<chain<63>>::is_lattice); // 64 nodes
    EXPECT_EQ(mixt::lattice<chain<63>>::size, 64u);
    EXPECT_EQ(mixt::lattice<chain<63>>::join(0, 63), 63);
    EXPECT_EQ(mixt::lattice<chain<64>>::size, 65u);
    EXPECT_EQ(mixt::lattice<chain<64>>::verdict.fault, mixt::graph::fault::too_many_nodes);
}

TEST(lattice_faults, node_names) {
    EXPECT_EQ(mixt::node_name<dt::bf16>(), "bf16");
    EXPECT_EQ(mixt::node_name<n_a>(), "a");
    EXPECT_EQ(mixt::node_name<n_unnamed>(), "?");
}

} // namespace
