// Compile-only: promote_t and has_promotion_v instantiated for every ordered pair of the 33 dtype tags under
// each of the four built-in policies (4 x 33 x 33 = 4356 pairs), and checked against promote_types (the run
// time function over the same join table). This translation unit is also the one bench/compile_time/
// measure.sh times: its cost is the cost of the promotion traits at scale.

#include <array>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <mixt/dtype/dtype.hpp>
#include <mixt/lattice/promote.hpp>

namespace {

namespace mp = boost::mp11;
using mixt::dtype;

template <class Seq>
struct tags_of;
template <std::size_t... I>
struct tags_of<std::index_sequence<I...>> {
    using type = mp::mp_list<mixt::dtype_tag<static_cast<dtype>(I)>...>;
};
using all_tags = typename tags_of<std::make_index_sequence<mixt::dtype_count>>::type;
using all_pairs = mp::mp_product<mp::mp_list, all_tags, all_tags>;
static_assert(mp::mp_size<all_pairs>::value == 33 * 33);

template <class Policy, class A, class B>
constexpr bool agrees() {
    constexpr std::optional<dtype> expected = mixt::promote_types(A::value, B::value, Policy{});
    if constexpr (mixt::has_promotion_v<A, B, Policy>) {
        using R = mixt::promote_t<A, B, Policy>;
        if constexpr (mixt::is_dtype_tag_v<R>)
            return expected && R::value == *expected;
        else
            return false;
    } else {
        return !expected;
    }
}

// The index of the first pair whose traits disagree with promote_types, or the number of pairs.
template <class Policy, class... Pairs>
constexpr std::size_t first_wrong_pair(mp::mp_list<Pairs...>) {
    constexpr bool ok[] = {agrees<Policy, mp::mp_first<Pairs>, mp::mp_second<Pairs>>()...};
    for (std::size_t k = 0; k < sizeof...(Pairs); ++k)
        if (!ok[k]) return k;
    return sizeof...(Pairs);
}

template <class Policy, class A, class B>
struct traits_disagree_with_promote_types {
    static_assert(sizeof(A) == 0, "mixt test: promote_t/has_promotion_v<A, B, Policy> disagree with promote_types "
                                  "for the template arguments of traits_disagree_with_promote_types");
    static constexpr bool ok = false;
};
template <class Policy>
constexpr bool check_policy() {
    constexpr std::size_t k = first_wrong_pair<Policy>(all_pairs{});
    if constexpr (k < mp::mp_size<all_pairs>::value) {
        using pair = mp::mp_at_c<all_pairs, k>;
        return traits_disagree_with_promote_types<Policy, mp::mp_first<pair>, mp::mp_second<pair>>::ok;
    } else {
        return true;
    }
}

static_assert(check_policy<mixt::policy::jax>());
static_assert(check_policy<mixt::policy::jax_x32>());
static_assert(check_policy<mixt::policy::jax_strict>());
static_assert(check_policy<mixt::policy::array_api>());

} // namespace
