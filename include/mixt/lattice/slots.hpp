#ifndef MIXT_LATTICE_SLOTS_HPP
#define MIXT_LATTICE_SLOTS_HPP

// Joining operands by slot, for a policy whose `slots` is `slot_rule::by_category` (PyTorch's result_type,
// aten/src/ATen/native/TypeProperties.cpp). What it means: an operand's dtype counts by where it comes from
// (`operand_slot`): arrays of rank 1 or more first, then rank-0 arrays and expressions, then C++ literals.
// The rule, in steps:
//   1. a literal's dtype is its stored dtype under the policy (`i*` -> i64, `f*` -> f32, `c*` -> c64 under
//      `torch`: PyTorch's wrapped numbers);
//   2. the operands of each slot are joined in the policy's lattice (no join: no result);
//   3. the slots are combined from the last: `combine(dimensioned, combine(zero_dim, literal))`, where
//      `combine(h, l)` is h when l's category (bool < int < float < complex) is not higher than h's; the
//      policy's `complex_of` h when l is complex and h a float (no entry: no result); else the join of h and l.
// To extend: another policy with `slots = slot_rule::by_category` gets this rule over its own lattice.
// Why not weak nodes: a rank-0 f64 is f64 with an int array and gives way to an f16 array, which no node of
// a lattice can be (it would sit below f16 and bf16 and be joined to f64 with ints).
// Example:
//     using mixt::operand_slot;
//     static_assert(mixt::promote_types(mixt::dtype::int8, operand_slot::dimensioned, mixt::dtype::float64,
//                                       operand_slot::zero_dim, mixt::policy::torch{}) == mixt::dtype::float64);
//
// Everything here is constexpr over `mixt::dtype`: the expression typing (expr/rules.hpp) calls it at compile
// time, the tests and tools at run time. A policy's tables are made only where a slot join asks for them.

#include <array>
#include <cstddef>
#include <optional>

#include <boost/hana/first.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/unpack.hpp>

#include "mixt/dtype/dtype.hpp"
#include "mixt/lattice/policy.hpp"
#include "mixt/lattice/promote.hpp"

namespace mixt {

/// The category of a dtype in PyTorch's sense: 0 bool, 1 integers, 2 floats, 3 complex.
constexpr int category(dtype d) {
    switch (kind(d)) {
    case dtype_kind::boolean: return 0;
    case dtype_kind::unsigned_int:
    case dtype_kind::signed_int: return 1;
    case dtype_kind::floating: return 2;
    case dtype_kind::complex: return 3;
    }
    return 0;
}

/// The outcome of a slot join: the dtype, or why there is none (the two dtypes that do not join, and whether
/// it is a float with no complex of its precision under the policy).
struct slot_join_result {
    std::optional<dtype> result;
    dtype a = dtype::bool_, b = dtype::bool_;
    bool no_complex = false;
};

namespace detail {
struct collect_complex_of {
    template <class... Pairs>
    constexpr std::array<int, dtype_count> operator()(Pairs... ps) const {
        std::array<int, dtype_count> r{};
        for (auto& x : r) x = -1;
        ((r[static_cast<std::size_t>(decltype(+boost::hana::first(ps))::type::value)] =
              static_cast<int>(decltype(+boost::hana::second(ps))::type::value)),
         ...);
        return r;
    }
};

template <class Policy>
constexpr std::array<int, dtype_count> make_complex_of() {
    if constexpr (requires { Policy::complex_of; }) {
        return boost::hana::unpack(Policy::complex_of, collect_complex_of{});
    } else {
        std::array<int, dtype_count> r{};
        for (auto& x : r) x = -1;
        return r;
    }
}
/// The policy's `complex_of` as a table by dtype (-1: none).
template <class Policy>
inline constexpr std::array<int, dtype_count> complex_of_table = make_complex_of<Policy>();

/// The stored dtypes of the three weak nodes under a policy (-1 where it stores none).
template <class Policy>
inline constexpr std::array<int, 3> weak_storage = {
    [] {
        using M = materialize_t<dtypes::weak_int, Policy>;
        return is_weak(M::value) ? -1 : static_cast<int>(M::value);
    }(),
    [] {
        using M = materialize_t<dtypes::weak_float, Policy>;
        return is_weak(M::value) ? -1 : static_cast<int>(M::value);
    }(),
    [] {
        using M = materialize_t<dtypes::weak_complex, Policy>;
        return is_weak(M::value) ? -1 : static_cast<int>(M::value);
    }()};

template <class Policy>
constexpr dtype stored_dtype(dtype d) {
    if (!is_weak(d)) return d;
    const int k = d == dtype::weak_int ? 0 : d == dtype::weak_float ? 1 : 2;
    return weak_storage<Policy>[static_cast<std::size_t>(k)] < 0 ? d
                                                                  : static_cast<dtype>(weak_storage<Policy>[static_cast<std::size_t>(k)]);
}

// combine(h, l) of step 3; a missing side (no operand in that slot) is empty.
template <class Policy>
constexpr slot_join_result combine_slots(std::optional<dtype> h, std::optional<dtype> l) {
    if (!h) return {l};
    if (!l) return {h};
    if (category(*l) <= category(*h)) return {h};
    if (category(*l) == 3 && category(*h) == 2) {
        const int c = complex_of_table<Policy>[static_cast<std::size_t>(*h)];
        if (c < 0) return {std::nullopt, *h, *l, true};
        return {static_cast<dtype>(c)};
    }
    const std::optional<dtype> j = promote_types(*h, *l, Policy{});
    if (!j) return {std::nullopt, *h, *l};
    return {j};
}
} // namespace detail

/// The result dtype of operands `ds[i]` in slots `ss[i]` under a policy with `slots` (the rule above).
template <class Policy, std::size_t N>
    requires is_policy_v<Policy>
constexpr slot_join_result slot_join(const std::array<dtype, N>& ds, const std::array<operand_slot, N>& ss,
                                     Policy = {}) {
    std::array<std::optional<dtype>, 3> per_slot{};
    for (std::size_t i = 0; i < N; ++i) {
        const dtype d = detail::stored_dtype<Policy>(ds[i]);
        std::optional<dtype>& acc = per_slot[static_cast<std::size_t>(ss[i])];
        if (!acc) {
            acc = d;
            continue;
        }
        const std::optional<dtype> j = promote_types(*acc, d, Policy{});
        if (!j) return {std::nullopt, *acc, d};
        acc = j;
    }
    const slot_join_result lower = detail::combine_slots<Policy>(per_slot[1], per_slot[2]);
    if (!lower.result && (per_slot[1] || per_slot[2])) return lower;
    return detail::combine_slots<Policy>(per_slot[0], lower.result);
}

/// The join of two dtypes by slot at run time: `torch.result_type` under `policy::torch`. A literal is given
/// as its weak dtype (`dtype::weak_float` for `2.5`) or its stored one; `bool` for PyTorch's Python bool. Under
/// a policy without `slots`, the slots are ignored (a literal is its weak dtype) and this is `promote_types(a, b)`.
template <class Policy = default_policy>
    requires is_policy_v<Policy>
constexpr std::optional<dtype> promote_types(dtype a, operand_slot sa, dtype b, operand_slot sb, Policy = {}) {
    if constexpr (slot_rule_v<Policy> == slot_rule::by_category)
        return slot_join(std::array<dtype, 2>{a, b}, std::array<operand_slot, 2>{sa, sb}, Policy{}).result;
    else
        return promote_types(a, b, Policy{});
}

} // namespace mixt

#endif // MIXT_LATTICE_SLOTS_HPP
