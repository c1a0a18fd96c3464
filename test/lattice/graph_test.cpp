// mixt/lattice/graph.hpp: the closure, join and lattice check on small graphs, at compile time
// (static_assert) and at run time; a randomized comparison with a definitional reference implementation;
// and the agreement of lattice<Policy> with the same functions.

#include <mixt/lattice/graph.hpp>
#include <mixt/lattice/lattice.hpp>
#include <mixt/lattice/policy.hpp>

#include <cstddef>
#include <cstdio>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace g = mixt::graph;

constexpr g::bit_graph make(std::size_t n, std::initializer_list<std::pair<std::size_t, std::size_t>> edges) {
    g::bit_graph r{n, {}};
    for (const auto& [from, to] : edges) add_edge(r, from, to);
    return r;
}

constexpr g::mask set_of(std::initializer_list<std::size_t> nodes) {
    g::mask m = 0;
    for (std::size_t i : nodes) m |= g::bit(i);
    return m;
}

// 0 -> 1 -> 2
constexpr g::bit_graph chain = make(3, {{0, 1}, {1, 2}});
// a(0) -> b(1) c(2); b -> d(3) e(4); c -> d e: b and c have two minimal common upper bounds.
constexpr g::bit_graph diamond = make(5, {{0, 1}, {0, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}});
// The same with d -> e: now d is the join of b and c.
constexpr g::bit_graph diamond_ordered = make(5, {{0, 1}, {0, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}});
// start(0) -> a(1) -> b(2) -> c(3) -> a
constexpr g::bit_graph cycle = make(4, {{0, 1}, {1, 2}, {2, 3}, {3, 1}});
// Two unrelated nodes: no join, but still a lattice in mixt's sense (no implicit promotion between them).
constexpr g::bit_graph apart = make(2, {});
// 0 -> 1 -> ... -> 63: uses every bit of the masks.
constexpr g::bit_graph long_chain = [] {
    g::bit_graph r{64, {}};
    for (std::size_t i = 0; i + 1 < 64; ++i) add_edge(r, i, i + 1);
    return r;
}();

// --- Compile time -------------------------------------------------------------------------------------------

constexpr g::mask_array chain_up = g::upper_sets(chain);
static_assert(chain_up[0] == set_of({0, 1, 2}) && chain_up[1] == set_of({1, 2}) && chain_up[2] == set_of({2}));
static_assert(g::below_or_equal(chain_up, 0, 2) && !g::below_or_equal(chain_up, 2, 0));
static_assert(g::join(chain, chain_up, 0, 2) == 2 && g::join(chain, chain_up, 1, 1) == 1);
static_assert(g::join_all(chain, chain_up, set_of({0, 1, 2})) == 2);
static_assert(g::verify(chain).fault == g::fault::none && g::is_lattice(chain));
static_assert(g::edge_count(chain) == 2);

constexpr g::mask_array diamond_up = g::upper_sets(diamond);
static_assert(g::join(diamond, diamond_up, 1, 2) == g::ambiguous);
static_assert(g::join(diamond, diamond_up, 0, 1) == 1 && g::join(diamond, diamond_up, 3, 3) == 3);
static_assert(g::join(diamond, diamond_up, 3, 4) == g::no_join);
static_assert(g::minimal_of(diamond_up, diamond_up[1] & diamond_up[2]) == set_of({3, 4}));
static_assert(g::verify(diamond).fault == g::fault::no_unique_join && g::verify(diamond).a == 1 &&
              g::verify(diamond).b == 2);
static_assert(g::is_lattice(diamond_ordered));
static_assert(g::join(diamond_ordered, g::upper_sets(diamond_ordered), 1, 2) == 3);

static_assert(g::verify(cycle).fault == g::fault::cycle && g::verify(cycle).a == 1 && g::verify(cycle).b == 2);
static_assert(g::shortest_path(cycle, 1, 1).length == 4); // a -> b -> c -> a
static_assert(g::verify(make(2, {{0, 1}, {1, 1}})).fault == g::fault::cycle &&
              g::verify(make(2, {{0, 1}, {1, 1}})).a == 1 && g::verify(make(2, {{0, 1}, {1, 1}})).b == 1);

static_assert(g::is_lattice(apart) && g::join(apart, g::upper_sets(apart), 0, 1) == g::no_join);
static_assert(g::is_lattice(g::bit_graph{}));
static_assert(g::verify(g::bit_graph{65, {}}).fault == g::fault::too_many_nodes);

constexpr g::mask_array long_up = g::upper_sets(long_chain);
static_assert(long_up[0] == ~g::mask{0} && long_up[63] == g::bit(63));
static_assert(g::join(long_chain, long_up, 0, 63) == 63 && g::join(long_chain, long_up, 62, 5) == 62);
static_assert(g::is_lattice(long_chain));
static_assert(g::shortest_path(long_chain, 0, 63).length == 64 && g::shortest_path(long_chain, 63, 0).length == 0);

constexpr auto chain_table = g::join_table<3>(chain, chain_up);
static_assert(chain_table[0][0] == 0 && chain_table[0][1] == 1 && chain_table[2][0] == 2);

// --- Run time: the same facts, one EXPECT each, so a run reports every wrong one --------------------------

TEST(graph, upper_sets_of_a_chain) {
    const auto up = g::upper_sets(chain);
    EXPECT_EQ(up[0], set_of({0, 1, 2}));
    EXPECT_EQ(up[1], set_of({1, 2}));
    EXPECT_EQ(up[2], set_of({2}));
    for (std::size_t i = 3; i < g::max_nodes; ++i) EXPECT_EQ(up[i], 0u) << "row " << i;
}

TEST(graph, join_of_a_diamond_is_ambiguous_and_named) {
    const auto up = g::upper_sets(diamond);
    EXPECT_EQ(g::join(diamond, up, 1, 2), g::ambiguous);
    EXPECT_EQ(g::least_of(up, up[1] & up[2]), g::ambiguous);
    EXPECT_EQ(g::minimal_of(up, up[1] & up[2]), set_of({3, 4}));
    const auto v = g::verify(diamond);
    EXPECT_EQ(v.fault, g::fault::no_unique_join);
    EXPECT_EQ(v.a, 1u);
    EXPECT_EQ(v.b, 2u);
}

TEST(graph, verify_reports_the_first_pair_in_row_major_order) {
    // Two diamonds: nodes 0..4 as above, and 5 -> 7 8, 6 -> 7 8. The pair (1, 2) comes first.
    const auto two = make(9, {{0, 1}, {0, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {5, 7}, {5, 8}, {6, 7}, {6, 8}});
    const auto v = g::verify(two);
    EXPECT_EQ(v.fault, g::fault::no_unique_join);
    EXPECT_EQ(v.a, 1u);
    EXPECT_EQ(v.b, 2u);
    // Without the first diamond's second top, the second diamond's (5, 6) is reported.
    const auto second = make(9, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {5, 7}, {5, 8}, {6, 7}, {6, 8}});
    EXPECT_EQ(g::verify(second).a, 5u);
    EXPECT_EQ(g::verify(second).b, 6u);
}

TEST(graph, cycles_come_before_ambiguous_joins) {
    // The diamond plus a cycle 5 <-> 6 later in the node order.
    auto d = make(7, {{0, 1}, {0, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {5, 6}, {6, 5}});
    const auto v = g::verify(d);
    EXPECT_EQ(v.fault, g::fault::cycle);
    EXPECT_EQ(v.a, 5u);
    EXPECT_EQ(v.b, 6u);
}

TEST(graph, shortest_path_names_a_cycle) {
    const auto p = g::shortest_path(cycle, 1, 1);
    ASSERT_EQ(p.length, 4u);
    EXPECT_EQ(p.nodes[0], 1);
    EXPECT_EQ(p.nodes[1], 2);
    EXPECT_EQ(p.nodes[2], 3);
    EXPECT_EQ(p.nodes[3], 1);
    const auto to_c = g::shortest_path(cycle, 0, 3);
    ASSERT_EQ(to_c.length, 4u);
    EXPECT_EQ(to_c.nodes[3], 3);
    EXPECT_EQ(g::shortest_path(cycle, 1, 0).length, 0u);
    EXPECT_EQ(g::shortest_path(chain, 0, 0).length, 0u); // no edge back: no cycle through 0
    const auto self = g::shortest_path(make(1, {{0, 0}}), 0, 0);
    EXPECT_EQ(self.length, 2u);
}

TEST(graph, join_all_folds_the_common_upper_bounds) {
    const auto up = g::upper_sets(diamond_ordered);
    EXPECT_EQ(g::join_all(diamond_ordered, up, set_of({1, 2})), 3);
    EXPECT_EQ(g::join_all(diamond_ordered, up, set_of({0, 1, 2, 4})), 4);
    EXPECT_EQ(g::join_all(diamond_ordered, up, set_of({0})), 0);
    EXPECT_EQ(g::join_all(diamond_ordered, up, 0), g::no_join);
    EXPECT_EQ(g::join_all(diamond_ordered, up, g::bit(7)), g::no_join); // not a node
}

TEST(graph, out_of_range_rows_have_no_join) {
    const auto up = g::upper_sets(chain);
    EXPECT_EQ(g::join(chain, up, 0, 3), g::no_join);
    EXPECT_EQ(g::join(chain, up, 63, 0), g::no_join);
}

// --- A definitional reference: reachability by depth-first search, the join by its definition -----------

struct reference {
    std::size_t n;
    std::vector<std::vector<bool>> le; // le[a][b]: a <= b

    explicit reference(const g::bit_graph& gr) : n(gr.size), le(n, std::vector<bool>(n, false)) {
        for (std::size_t s = 0; s < n; ++s) {
            std::vector<std::size_t> stack{s};
            le[s][s] = true;
            while (!stack.empty()) {
                const std::size_t i = stack.back();
                stack.pop_back();
                for (std::size_t j = 0; j < n; ++j)
                    if (g::has(gr.direct[i], j) && !le[s][j]) {
                        le[s][j] = true;
                        stack.push_back(j);
                    }
            }
        }
    }
    int join(std::size_t a, std::size_t b) const {
        std::vector<std::size_t> common;
        for (std::size_t c = 0; c < n; ++c)
            if (le[a][c] && le[b][c]) common.push_back(c);
        if (common.empty()) return g::no_join;
        for (std::size_t c : common) {
            bool least = true;
            for (std::size_t d : common) least = least && le[c][d];
            if (least) return static_cast<int>(c);
        }
        return g::ambiguous;
    }
};

g::bit_graph random_graph(std::mt19937_64& rng, std::size_t n, double density, bool acyclic) {
    g::bit_graph r{n, {}};
    std::bernoulli_distribution edge(density);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if ((!acyclic || i < j) && i != j && edge(rng)) add_edge(r, i, j);
    return r;
}

TEST(graph, agrees_with_the_reference_on_random_graphs) {
    std::mt19937_64 rng(20240601);
    int outcomes[3] = {}; // none, cycle, no_unique_join: the rounds must cover all three
    for (int round = 0; round < 300; ++round) {
        const std::size_t n = 1 + static_cast<std::size_t>(rng() % 64);
        const double density = (round % 3 == 0) ? 0.02 : (round % 3 == 1) ? 0.08 : 0.3;
        const bool acyclic = round % 4 != 0;
        const auto gr = random_graph(rng, n, density, acyclic);
        const reference ref(gr);
        const auto up = g::upper_sets(gr);
        bool any_cycle = false, any_ambiguous = false;
        for (std::size_t a = 0; a < n; ++a)
            for (std::size_t b = 0; b < n; ++b) {
                ASSERT_EQ(g::below_or_equal(up, a, b), ref.le[a][b]) << "round " << round << " " << a << "<=" << b;
                ASSERT_EQ(g::join(gr, up, a, b), ref.join(a, b)) << "round " << round << " join " << a << "," << b;
                if (a < b && ref.le[a][b] && ref.le[b][a]) any_cycle = true;
                if (a < b && ref.join(a, b) == g::ambiguous) any_ambiguous = true;
            }
        const auto v = g::verify(gr, up);
        const g::fault expected = any_cycle       ? g::fault::cycle
                                  : any_ambiguous ? g::fault::no_unique_join
                                                  : g::fault::none;
        EXPECT_EQ(v.fault, expected) << "round " << round;
        ++outcomes[static_cast<int>(expected)];
        if (v.fault == g::fault::no_unique_join) {
            EXPECT_EQ(ref.join(v.a, v.b), g::ambiguous) << "round " << round;
        }
    }
    EXPECT_GE(outcomes[0], 10);
    EXPECT_GE(outcomes[1], 10);
    EXPECT_GE(outcomes[2], 10);
    std::printf("random graphs: %d lattices, %d with a cycle, %d with an ambiguous join\n", outcomes[0], outcomes[1],
                outcomes[2]);
}

// --- lattice<Policy> is these functions applied to the policy's edges ------------------------------------

template <class P>
void expect_lattice_matches_graph() {
    using L = mixt::lattice<P>;
    const auto up = g::upper_sets(L::bits);
    ASSERT_EQ(L::bits.size, L::size);
    for (std::size_t a = 0; a < L::size; ++a) {
        EXPECT_EQ(L::direct[a], L::bits.direct[a]) << P::name << " row " << a;
        EXPECT_EQ(L::upper[a], up[a]) << P::name << " row " << a;
        for (std::size_t b = 0; b < L::size; ++b)
            EXPECT_EQ(L::join(a, b), g::join(L::bits, up, a, b)) << P::name << " " << a << "," << b;
    }
    EXPECT_EQ(L::verdict.fault, g::verify(L::bits).fault) << P::name;
    EXPECT_TRUE(L::is_lattice) << P::name;
}

TEST(graph, lattice_of_each_builtin_policy_is_the_graph_functions) {
    expect_lattice_matches_graph<mixt::policy::jax>();
    expect_lattice_matches_graph<mixt::policy::jax_x32>();
    expect_lattice_matches_graph<mixt::policy::jax_strict>();
    expect_lattice_matches_graph<mixt::policy::array_api>();
}

// A user's policy that is not a lattice: lattice<P> reports the same pair as graph::verify.
struct top1 {
    static constexpr std::string_view name = "top1";
};
struct top2 {
    static constexpr std::string_view name = "top2";
};
struct diamond_policy {
    static constexpr std::string_view name = "diamond";
    static constexpr auto edges =
        boost::hana::make_map(mixt::up<mixt::dtypes::i8, mixt::dtypes::u8, mixt::dtypes::i16>,
                              mixt::up<mixt::dtypes::u8, top1, top2>, mixt::up<mixt::dtypes::i16, top1, top2>);
    static constexpr auto weak_types = boost::hana::make_map();
};
using diamond_lattice = mixt::lattice<diamond_policy>;
static_assert(!diamond_lattice::is_lattice);
static_assert(diamond_lattice::verdict.fault == mixt::detail::lattice_fault::no_unique_join);
static_assert(diamond_lattice::name_of(diamond_lattice::verdict.a) == "u8" &&
              diamond_lattice::name_of(diamond_lattice::verdict.b) == "i16");
static_assert(diamond_lattice::join(diamond_lattice::index_of<mixt::dtypes::u8>,
                                    diamond_lattice::index_of<mixt::dtypes::i16>) == diamond_lattice::ambiguous);

} // namespace
