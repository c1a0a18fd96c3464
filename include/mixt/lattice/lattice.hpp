#ifndef MIXT_LATTICE_LATTICE_HPP
#define MIXT_LATTICE_LATTICE_HPP

// Everything derived from a policy's edges, once per policy, as constexpr data indexed by node row.
//
// The edges are turned into an Mp11 node list and a `graph::bit_graph` once; the closure, the join table and
// the lattice check are the plain constexpr algorithms of lattice/graph.hpp (the rule is spelled out there),
// which the mixt-lattice tool also runs on graphs read at run time. Hana only carries the data, so the cost
// of the whole join table is a few thousand constexpr steps, not a Hana computation per pair.
// Joins of more than two nodes fold the pairwise join (exact in a lattice).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/hana/unpack.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include "mixt/dtype/dtype.hpp"
#include "mixt/lattice/graph.hpp"
#include "mixt/lattice/policy.hpp"

namespace mixt {

namespace detail {
namespace mp = boost::mp11;

// Turns the Hana pair `up<From, To...>` into `mp_list<From, To...>`.
template <class Pair>
struct edge_list;
template <class From, class... To>
struct edge_list<boost::hana::pair<From, boost::hana::tuple<To...>>> {
    using type = mp::mp_list<typename From::type, typename To::type...>;
};
struct collect_edges {
    template <class... Pairs>
    constexpr mp::mp_list<typename edge_list<Pairs>::type...> operator()(Pairs...) const {
        return {};
    }
};

// A policy's edges as `mp_list<mp_list<From, To...>...>`; a lazy_map's are read from its type, without Hana.
template <class Edges>
struct edge_lists {
    using type = decltype(boost::hana::unpack(std::declval<const Edges&>(), collect_edges{}));
};
template <class From, class... To>
struct edge_list<to_types<From, To...>> {
    using type = mp::mp_list<From, To...>;
};
template <class... Entries>
struct edge_lists<lazy_map<Entries...>> {
    using type = mp::mp_list<typename edge_list<Entries>::type...>;
};

template <class T, class = void>
inline constexpr bool has_name_member_v = false;
template <class T>
inline constexpr bool has_name_member_v<T, std::void_t<decltype(std::string_view(T::name))>> = true;

// Reasons a policy's graph is rejected, and the pair that shows it (the names predate graph.hpp).
using lattice_fault = graph::fault;
using lattice_verdict = graph::verdict;
} // namespace detail

/// The display name of a node: the short code for built-in dtypes, `T::name` for a user's own node.
template <class Node>
constexpr std::string_view node_name() {
    if constexpr (is_dtype_tag_v<Node>)
        return short_name(Node::value);
    else if constexpr (detail::has_name_member_v<Node>)
        return Node::name;
    else
        return "?";
}

/// The lattice of a policy: its nodes, their upper-bound sets and the full join table, all constexpr.
/// `lattice<P>::join(i, j)` is O(1); `lattice<P>::index_of<Node>` maps a node to its row.
template <class Policy>
struct lattice {
    static_assert(is_policy_v<Policy>, "mixt: a policy needs static members 'name', 'edges' and 'weak_types' "
                                       "(see mixt/lattice/policy.hpp)");
    using edges = typename detail::edge_lists<std::remove_cv_t<decltype(Policy::edges)>>::type;
    /// Every node named in the edges, in order of first mention.
    using nodes = detail::mp::mp_unique<detail::mp::mp_flatten<edges>>;
    static constexpr std::size_t size = detail::mp::mp_size<nodes>::value;
    using mask = graph::mask;
    static constexpr int no_join = graph::no_join;
    static constexpr int ambiguous = graph::ambiguous;

    /// Row of `Node`, or `size` when `Node` is not a node of this policy.
    template <class Node>
    static constexpr std::size_t index_of = detail::mp::mp_find<nodes, Node>::value;
    template <class Node>
    static constexpr bool contains = index_of<Node> < size;
    template <std::size_t I>
    using node_at = detail::mp::mp_at_c<nodes, I>;

private:
    template <class From, class... To>
    static constexpr void add_edges(graph::bit_graph& g, detail::mp::mp_list<From, To...>) {
        (graph::add_edge(g, index_of<From>, index_of<To>), ...);
    }
    template <class... Es>
    static constexpr graph::bit_graph make_graph(detail::mp::mp_list<Es...>) {
        graph::bit_graph g{size, {}};
        if constexpr (size <= graph::max_nodes) (add_edges(g, Es{}), ...);
        return g;
    }
    static constexpr std::array<mask, size> first_rows(const graph::mask_array& m) {
        std::array<mask, size> r{};
        for (std::size_t i = 0; i < size && i < graph::max_nodes; ++i) r[i] = m[i];
        return r;
    }

public:
    /// The policy's edges as bit masks: the input of the algorithms in lattice/graph.hpp.
    static constexpr graph::bit_graph bits = make_graph(edges{});

private:
    static constexpr graph::mask_array upper_all = graph::upper_sets(bits);

public:
    /// `direct[i]`: the nodes directly above node i, as a bit mask.
    static constexpr std::array<mask, size> direct = first_rows(bits.direct);
    /// `upper[i]`: node i and everything above it, as a bit mask.
    static constexpr std::array<mask, size> upper = first_rows(upper_all);

    static constexpr bool below_or_equal(std::size_t a, std::size_t b) { return upper[a] >> b & 1; }

    /// The first fault of the graph, if any (cycles first, then pairs without a unique join).
    static constexpr detail::lattice_verdict verdict = graph::verify(bits, upper_all);
    static constexpr bool is_lattice = verdict.fault == detail::lattice_fault::none;
    /// `table[a][b]`: the join's row, `no_join`, or `ambiguous`.
    static constexpr std::array<std::array<signed char, size>, size> table =
        graph::join_table<size>(bits, upper_all);

    static constexpr int join(std::size_t a, std::size_t b) { return table[a][b]; }
    static constexpr std::string_view name_of(std::size_t i) { return names[i]; }

private:
    template <class... Ns>
    static constexpr std::array<std::string_view, size> make_names(detail::mp::mp_list<Ns...>) {
        return {node_name<Ns>()...};
    }
    template <class... Ns>
    static constexpr std::array<int, size> make_dtypes(detail::mp::mp_list<Ns...>) {
        return {[] {
            if constexpr (is_dtype_tag_v<Ns>)
                return static_cast<int>(Ns::value);
            else
                return -1;
        }()...};
    }

public:
    static constexpr std::array<std::string_view, size> names = make_names(nodes{});
    /// The runtime dtype of each node, -1 for a user's own node.
    static constexpr std::array<int, size> node_dtypes = make_dtypes(nodes{});
    /// The row of each built-in dtype, -1 when it is not a node of this policy.
    static constexpr std::array<int, dtype_count> dtype_rows = [] {
        std::array<int, dtype_count> rows{};
        for (auto& r : rows) r = -1;
        for (std::size_t i = 0; i < size; ++i)
            if (node_dtypes[i] >= 0) rows[static_cast<std::size_t>(node_dtypes[i])] = static_cast<int>(i);
        return rows;
    }();
};

namespace lattice_error {
// The names of these templates are what a compiler prints when a policy is rejected: read the two nodes from
// the template arguments in the "required from" line.
template <class Policy, class A, class B>
struct cycle_through {
    static constexpr bool value = false;
    static_assert(sizeof(A) == 0, "mixt: the policy's edges contain a cycle through these two nodes (a node may "
                                  "not be promoted to itself or to a node below it); remove one of the edges");
};
template <class Policy, class A, class B>
struct no_unique_join {
    static constexpr bool value = false;
    static_assert(sizeof(A) == 0, "mixt: the policy is not a lattice: these two nodes have several least upper "
                                  "bounds (incomparable minimal common supertypes); add an edge that orders them");
};
template <class Policy>
struct too_many_nodes {
    static constexpr bool value = false;
    static_assert(sizeof(Policy) == 0, "mixt: a policy may have at most 64 nodes");
};
} // namespace lattice_error

namespace detail {
template <class Policy, lattice_fault Fault = lattice<Policy>::verdict.fault>
struct check_lattice_impl : std::true_type {};
template <class Policy>
struct check_lattice_impl<Policy, lattice_fault::cycle>
    : lattice_error::cycle_through<Policy, typename lattice<Policy>::template node_at<lattice<Policy>::verdict.a>,
                                   typename lattice<Policy>::template node_at<lattice<Policy>::verdict.b>> {};
template <class Policy>
struct check_lattice_impl<Policy, lattice_fault::no_unique_join>
    : lattice_error::no_unique_join<Policy,
                                    typename lattice<Policy>::template node_at<lattice<Policy>::verdict.a>,
                                    typename lattice<Policy>::template node_at<lattice<Policy>::verdict.b>> {};
template <class Policy>
struct check_lattice_impl<Policy, lattice_fault::too_many_nodes> : lattice_error::too_many_nodes<Policy> {};
} // namespace detail

/// Instantiating this checks a policy's graph and, if it is not a lattice, fails with a message whose
/// instantiation context names the offending pair. Every entry point that uses a policy instantiates it.
template <class Policy>
inline constexpr bool check_lattice_v = detail::check_lattice_impl<Policy>::value;

} // namespace mixt

#endif // MIXT_LATTICE_LATTICE_HPP
