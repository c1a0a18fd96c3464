#ifndef MIXT_LATTICE_GRAPH_HPP
#define MIXT_LATTICE_GRAPH_HPP

// The lattice algorithms over a plain value: a directed graph of at most 64 nodes as one bit mask per node.
// `lattice<Policy>` (lattice/lattice.hpp) runs them at compile time on a policy's edges; the mixt-lattice
// tool runs the same functions at run time on a graph read from a file. There is no other copy of them.
//
// The rule, as in JAX's design note (jep/9407):
//   1. Node i's upper-bound set `upper[i]` is i itself plus every node reachable from i along edges.
//   2. The join (least upper bound) of a set of nodes is the member c of the intersection of their
//      upper-bound sets whose own upper-bound set contains that whole intersection (c lies below every
//      other common upper bound).
//   3. An empty intersection means "no implicit promotion" (`no_join`). A non-empty one without such a member
//      (`ambiguous`: several incomparable minimal common upper bounds) means the graph is not a lattice, and
//      so does a cycle.
// Costs: the closure is Warshall's algorithm on bit masks, O(N^2) mask operations; one join visits the set
// bits of one mask, O(N); `verify` and `join_table` are O(N^3) at most.
//
// Example, a diamond (b and c have two minimal common upper bounds, d and e):
//
//     constexpr mixt::graph::bit_graph diamond = [] {
//         mixt::graph::bit_graph g{5};
//         add_edge(g, 0, 1); add_edge(g, 0, 2);                       // a -> b c
//         add_edge(g, 1, 3); add_edge(g, 1, 4);                       // b -> d e
//         add_edge(g, 2, 3); add_edge(g, 2, 4);                       // c -> d e
//         return g;
//     }();
//     constexpr auto v = mixt::graph::verify(diamond);
//     static_assert(v.fault == mixt::graph::fault::no_unique_join && v.a == 1 && v.b == 2);

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace mixt::graph {

using mask = std::uint64_t;
inline constexpr std::size_t max_nodes = 64;
/// `join` results that are not a node: no common upper bound; several incomparable least candidates.
inline constexpr int no_join = -1;
inline constexpr int ambiguous = -2;

using mask_array = std::array<mask, max_nodes>;

/// A graph over nodes `0 .. size-1`: bit j of `direct[i]` is set when there is an edge i -> j.
/// A `size` above `max_nodes` is representable only so that `verify` can reject it.
struct bit_graph {
    std::size_t size = 0;
    mask_array direct{};
};

constexpr mask bit(std::size_t i) { return mask{1} << i; }
constexpr bool has(mask m, std::size_t i) { return (m >> i & 1) != 0; }
/// The number of node rows the masks actually hold.
constexpr std::size_t rows(const bit_graph& g) { return g.size < max_nodes ? g.size : max_nodes; }

constexpr void add_edge(bit_graph& g, std::size_t from, std::size_t to) {
    if (from < max_nodes && to < max_nodes) g.direct[from] |= bit(to);
}

constexpr std::size_t edge_count(const bit_graph& g) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < rows(g); ++i) n += static_cast<std::size_t>(std::popcount(g.direct[i]));
    return n;
}

/// `upper_sets(g)[i]`: node i and every node reachable from it (the reflexive-transitive closure).
constexpr mask_array upper_sets(const bit_graph& g) {
    const std::size_t n = rows(g);
    mask_array up{};
    for (std::size_t i = 0; i < n; ++i) up[i] = g.direct[i] | bit(i);
    // Warshall: after step k, up[i] holds the nodes reachable through intermediates 0..k.
    for (std::size_t k = 0; k < n; ++k)
        for (std::size_t i = 0; i < n; ++i)
            if (has(up[i], k)) up[i] |= up[k];
    return up;
}

/// `a <= b` in the order the edges generate.
constexpr bool below_or_equal(const mask_array& upper, std::size_t a, std::size_t b) { return has(upper[a], b); }

/// The least member of a set of common upper bounds (one whose upper-bound set contains the whole set):
/// its row, `no_join` for the empty set, `ambiguous` when no member is least.
constexpr int least_of(const mask_array& upper, mask common) {
    if (common == 0) return no_join;
    for (mask m = common; m != 0; m &= m - 1) {
        const auto k = static_cast<std::size_t>(std::countr_zero(m));
        if ((common & ~upper[k]) == 0) return static_cast<int>(k);
    }
    return ambiguous;
}

/// The join of nodes a and b: a row, `no_join` or `ambiguous`.
constexpr int join(const bit_graph& g, const mask_array& upper, std::size_t a, std::size_t b) {
    if (a >= rows(g) || b >= rows(g)) return no_join;
    return least_of(upper, upper[a] & upper[b]);
}

/// The join of a set of nodes given as a mask (empty set: `no_join`).
constexpr int join_all(const bit_graph& g, const mask_array& upper, mask nodes) {
    if (nodes == 0 || (rows(g) < max_nodes && (nodes >> rows(g)) != 0)) return no_join;
    mask common = ~mask{0};
    for (mask m = nodes; m != 0; m &= m - 1) common &= upper[static_cast<std::size_t>(std::countr_zero(m))];
    return least_of(upper, common);
}

/// The minimal members of a set of common upper bounds: those with no other member below them. When
/// `least_of` is `ambiguous` these are the incomparable candidates to name in an error.
constexpr mask minimal_of(const mask_array& upper, mask common) {
    mask minimal = 0;
    for (mask m = common; m != 0; m &= m - 1) {
        const auto c = static_cast<std::size_t>(std::countr_zero(m));
        bool is_minimal = true;
        for (mask o = common & ~bit(c); o != 0; o &= o - 1)
            if (has(upper[static_cast<std::size_t>(std::countr_zero(o))], c)) is_minimal = false;
        if (is_minimal) minimal |= bit(c);
    }
    return minimal;
}

/// `join_table<N>(g, upper)[a][b] == join(g, upper, a, b)` for the first N nodes (N >= g.size).
template <std::size_t N>
constexpr std::array<std::array<signed char, N>, N> join_table(const bit_graph& g, const mask_array& upper) {
    std::array<std::array<signed char, N>, N> t{};
    for (std::size_t a = 0; a < N; ++a)
        for (std::size_t b = 0; b < N; ++b) t[a][b] = static_cast<signed char>(join(g, upper, a, b));
    return t;
}

/// Why a graph is not a lattice.
enum class fault : unsigned char { none, cycle, no_unique_join, too_many_nodes };

/// The first fault of a graph, and the pair of nodes that shows it (`a <= b`).
struct verdict {
    graph::fault fault = graph::fault::none;
    std::size_t a = 0, b = 0;
};

/// The first fault: more than `max_nodes` nodes; else a cycle (a self-loop `a -> a`, or the first pair
/// a < b in row-major order that reach each other); else the first pair a < b in row-major order whose
/// common upper bounds have no least member. Pairs with no common upper bound at all are allowed: they
/// are the dtype pairs without implicit promotion.
constexpr verdict verify(const bit_graph& g, const mask_array& upper) {
    if (g.size > max_nodes) return {fault::too_many_nodes, 0, 0};
    for (std::size_t a = 0; a < g.size; ++a) {
        if (has(g.direct[a], a)) return {fault::cycle, a, a};
        for (std::size_t b = a + 1; b < g.size; ++b)
            if (below_or_equal(upper, a, b) && below_or_equal(upper, b, a)) return {fault::cycle, a, b};
    }
    for (std::size_t a = 0; a < g.size; ++a)
        for (std::size_t b = a + 1; b < g.size; ++b)
            if (join(g, upper, a, b) == ambiguous) return {fault::no_unique_join, a, b};
    return {};
}

constexpr verdict verify(const bit_graph& g) { return verify(g, upper_sets(g)); }

constexpr bool is_lattice(const bit_graph& g) { return verify(g).fault == fault::none; }

/// A shortest path along edges, `nodes[0] == from` ... `nodes[length - 1] == to`; `length == 0` when `to`
/// cannot be reached. A path from a node to itself has at least one edge (it is a cycle), so
/// `shortest_path(g, a, a)` finds the shortest cycle through a.
struct path {
    std::size_t length = 0;
    std::array<unsigned char, max_nodes + 1> nodes{};
};

constexpr path shortest_path(const bit_graph& g, std::size_t from, std::size_t to) {
    const std::size_t n = rows(g);
    path p;
    if (from >= n || to >= n) return p;
    // Breadth-first search by frontiers; `parent[j]` is the node j was first reached from.
    std::array<unsigned char, max_nodes> parent{};
    mask seen = 0, frontier = bit(from);
    bool found = false;
    while (frontier != 0 && !found) {
        mask next = 0;
        for (mask m = frontier; m != 0; m &= m - 1) {
            const auto i = static_cast<std::size_t>(std::countr_zero(m));
            for (mask e = g.direct[i] & ~seen; e != 0; e &= e - 1) {
                const auto j = static_cast<std::size_t>(std::countr_zero(e));
                parent[j] = static_cast<unsigned char>(i);
                seen |= bit(j);
                next |= bit(j);
            }
        }
        found = has(seen, to);
        frontier = next;
    }
    if (!found) return p;
    std::array<unsigned char, max_nodes + 1> reversed{};
    std::size_t len = 0;
    std::size_t at = to;
    reversed[len++] = static_cast<unsigned char>(to);
    do {
        at = parent[at];
        reversed[len++] = static_cast<unsigned char>(at);
    } while (at != from && len <= max_nodes);
    p.length = len;
    for (std::size_t k = 0; k < len; ++k) p.nodes[k] = reversed[len - 1 - k];
    return p;
}

} // namespace mixt::graph

#endif // MIXT_LATTICE_GRAPH_HPP
