#ifndef MIXT_SIMD_OPS_HPP
#define MIXT_SIMD_OPS_HPP

// Operations on 8-lane batches: `simd::apply<R>(fn, xs...)` computes the per-element functor `fn` (from
// expr/functors.hpp) on every lane and returns a batch<R>. The operations the fused loop meets most are
// vectorized (simd/ops_avx2.hpp); everything else runs the scalar functor lane by lane, which is the
// definition, so results never depend on which path ran.

#include <complex>
#include <tuple>
#include <type_traits>

#include "mixt/simd/batch.hpp"
#include "mixt/simd/convert.hpp"

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

/// apply<R>(fn, xs...) for storing only: where R is f16 or bf16 and the vector version computes in f32, a
/// batch holding the f32 result not yet rounded to R, which the store rounds (see convert_unrounded in
/// simd/convert.hpp): the same bits written, one conversion fewer. Otherwise apply<R>(fn, xs...).
template <class R, class Fn, class... Ts>
batch<R> apply_unrounded(const Fn& fn, const batch<Ts>&... xs) {
    if constexpr (requires { detail::vectorized<R, Fn, Ts...>::template apply<false>(fn, xs...); })
        return detail::vectorized<R, Fn, Ts...>::template apply<false>(fn, xs...);
    else
        return apply<R>(fn, xs...);
}

namespace detail {
// Specialized by the vector back ends where `combined_store<T, Fn, A>::value`: `combined_store<T, Fn, A>::store
// <ALeft>(out, a, p)` is apply_store's work, with the operand at p taken straight from memory.
template <class T, class Fn, class A = T>
struct combined_store : std::false_type {};
// Specialized by the vector back ends where `real_product_store<T, Fn>::value`: see apply_real_product_store.
template <class T, class Fn>
struct real_product_store : std::false_type {};
} // namespace detail

/// Whether apply_real_product_store has a form for results of T combined with Fn (under AVX2: complex<double>,
/// + and -).
template <class T, class Fn>
inline constexpr bool combines_real_product_v = detail::real_product_store<T, Fn>::value;

/// `c64 * f32 + c128` in one step, straight from memory: stores fn(c', p[0, 8)) (ALeft) or fn(p[0, 8), c') at
/// out, where c' is the complex<float> product of the 8 elements at a and the float batch x as a complex number
/// (x * a where RealLeft, else a * x), converted to T: bit for bit
/// `apply_store<ALeft>(out, fn, apply<complex<float>>(mul_fn{}, load(a), convert<complex<float>>(x)), p)`
/// (operands of the product swapped where RealLeft). Returns false, having stored nothing, where a lane of the
/// product is NaN in both parts (C's Annex G recovery is the planar product's work): the caller stores the batch
/// the planar way. With Stream, the stores are streaming (non-temporal) ones, and out must be aligned to
/// stream_pair_alignment<T>.
template <bool ALeft, bool RealLeft, bool Stream = false, class T, class Fn>
    requires combines_real_product_v<T, Fn>
bool apply_real_product_store(T* out, const Fn&, const std::complex<float>* a, const batch<float>& x, const T* p) {
    return detail::real_product_store<T, Fn>::template store<ALeft, RealLeft, Stream>(out, a, x, p);
}

/// Whether apply_store has a form for a batch<A> and elements of T in memory that combines them without loading
/// the elements into a batch first.
template <class T, class Fn, class A = T>
inline constexpr bool combines_from_memory_v = detail::combined_store<T, Fn, A>::value;

/// Stores fn(a', p[0, 8)) (ALeft) or fn(p[0, 8), a') at out, where a' is a converted to T:
/// `store(out, apply<T>(fn, convert<T>(a), load(p)))`, bit for bit. Where combines_from_memory_v<T, Fn, A>
/// (under AVX2: complex + and -, with a complex<float> batch or one of T), the elements at p are combined in
/// their memory order, with a's parts interleaved once: the planar complex batch would otherwise take one
/// shuffle per register to load p and one more to store the result.
template <bool ALeft, class T, class Fn, class A>
void apply_store(T* out, const Fn& fn, const batch<A>& a, const T* p) {
    if constexpr (detail::combined_store<T, Fn, A>::value)
        detail::combined_store<T, Fn, A>::template store<ALeft>(out, a, p);
    else if constexpr (ALeft)
        store(out, apply<T>(fn, convert<T>(a), load(p)));
    else
        store(out, apply<T>(fn, load(p), convert<T>(a)));
}

} // namespace mixt::simd

// The vector back ends specialize detail::vectorized and detail::combined_store.
#include "mixt/simd/ops_avx2.hpp"

#endif // MIXT_SIMD_OPS_HPP
