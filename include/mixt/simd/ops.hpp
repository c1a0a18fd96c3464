#ifndef MIXT_SIMD_OPS_HPP
#define MIXT_SIMD_OPS_HPP

// Operations on 8-lane batches: `simd::apply<R>(fn, xs...)` computes the per-element functor `fn` (from
// expr/functors.hpp) on every lane and returns a batch<R>. The operations the fused loop meets most are
// vectorized (simd/ops_avx2.hpp); everything else runs the scalar functor lane by lane, which is the
// definition, so results never depend on which path ran.

#include <tuple>
#include <type_traits>

#include "mixt/simd/batch.hpp"

namespace mixt::simd {

template <class T>
struct lanes_of {
    T v[lanes];
};

/// The scalar definition, lane by lane.
template <class R, class Fn, class... Ts>
batch<R> apply_lanes(const Fn& fn, const batch<Ts>&... xs) {
    std::tuple<lanes_of<Ts>...> in;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (to_array(xs, std::get<K>(in).v), ...);
    }(std::index_sequence_for<Ts...>{});
    R out[lanes];
    for (int l = 0; l < lanes; ++l)
        out[l] = std::apply([&](const auto&... a) { return static_cast<R>(fn(a.v[l]...)); }, in);
    return load(out);
}

namespace detail {
// Specialized by the vector back ends: `vectorized<R, Fn, Ts...>::value` says a vector version exists and
// `vectorized<...>::apply(fn, xs...)` computes it.
template <class R, class Fn, class... Ts>
struct vectorized : std::false_type {};
} // namespace detail

template <class R, class Fn, class... Ts>
batch<R> apply(const Fn& fn, const batch<Ts>&... xs) {
    if constexpr (detail::vectorized<R, Fn, Ts...>::value)
        return detail::vectorized<R, Fn, Ts...>::apply(fn, xs...);
    else
        return apply_lanes<R>(fn, xs...);
}

} // namespace mixt::simd

// The vector back ends specialize detail::vectorized.
#include "mixt/simd/ops_avx2.hpp"

#endif // MIXT_SIMD_OPS_HPP
