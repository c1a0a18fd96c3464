#ifndef MIXT_LATTICE_POLICY_HPP
#define MIXT_LATTICE_POLICY_HPP

// What a promotion policy is, and the built-in ones.
//
// A policy is a class with three static members:
//   - `name`: a `std::string_view` used in tables and error messages;
//   - `edges`: a Boost.Hana map from each node to the nodes directly above it ("may be promoted implicitly
//     to"), written with `mixt::up<From, To...>`; a node with nothing above it is written `up<Node>`. The
//     nodes of the policy are exactly the nodes named in this map, so a policy may use nodes of its own
//     (any class type; give it a `static constexpr std::string_view name` for the tables);
//   - `weak_types`: a Hana map from each weak node to the concrete node it is stored as when a result must
//     be materialized, written with `mixt::weak_as<Weak, Concrete>`.
// A policy may also have these optional members (absent, the policy behaves as JAX does):
//   - `slots`: `mixt::slot_rule::by_category` makes an operation join its operands by where their dtypes
//     come from, as PyTorch does (lattice/slots.hpp): an array of rank 1 or more, an array or expression of
//     rank 0 (`mixt::operand_slot`), or a C++ literal; each group is joined in the lattice, and a later group
//     counts only where its category (bool < int < float < complex) is higher than the earlier ones';
//   - `complex_of`: with `slots`, a Hana map from a float to the complex dtype of its precision (written with
//     `mixt::as_complex<Float, Complex>`), for a float array with a complex operand of a later group;
//   - `int_to_inexact`: `mixt::inexact_rule::default_float` makes true division and the float functions of
//     bool and integer operands give the policy's default float (what `f*` is stored as), at any width.
// The built-in policies write their maps as types, `mixt::lazy_map<mixt::up_t<From, To...>...>` (and `weak_as_t`,
// `as_complex_t`): such a member is a Hana map (Foldable and Searchable) whose value is built the first time a
// translation unit uses it, so that including this header costs nothing per policy (a `make_map` of 22 entries
// is about 0.1 s of a compiler's time; docs/performance-notes.md). A policy of your own may use either form.
// This is the only place promotion is written down: joins, traits, tables and pictures are derived from it
// (lattice/lattice.hpp). Example, a policy of two nodes where `i8` widens to `i16` and nothing else exists:
//
//     struct tiny {
//         static constexpr std::string_view name = "tiny";
//         static constexpr auto edges = boost::hana::make_map(mixt::up<mixt::dtypes::i8, mixt::dtypes::i16>,
//                                                             mixt::up<mixt::dtypes::i16>);
//         static constexpr auto weak_types = boost::hana::make_map();
//     };
//     static_assert(std::is_same_v<mixt::promote_t<std::int8_t, std::int16_t, tiny>, std::int16_t>);

#include <string_view>
#include <type_traits>

#include <boost/hana/any_of.hpp>
#include <boost/hana/at_key.hpp>
#include <boost/hana/contains.hpp>
#include <boost/hana/find.hpp>
#include <boost/hana/find_if.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include "mixt/dtype/dtype.hpp"

namespace mixt {

/// One entry of a policy's `edges`: `From` may be promoted implicitly to each of `To...`.
template <class From, class... To>
inline constexpr auto up = boost::hana::make_pair(boost::hana::type_c<From>, boost::hana::tuple_t<To...>);

/// One entry of a policy's `weak_types`: a weak result of node `Weak` is stored as node `Concrete`.
template <class Weak, class Concrete>
inline constexpr auto weak_as = boost::hana::make_pair(boost::hana::type_c<Weak>, boost::hana::type_c<Concrete>);

/// One entry of a policy's `complex_of`: a float array with a complex operand of a later slot gives `Complex`.
template <class Float, class Complex>
inline constexpr auto as_complex =
    boost::hana::make_pair(boost::hana::type_c<Float>, boost::hana::type_c<Complex>);

namespace detail {
template <class Key, class... Values>
struct to_types; // the entry Key -> tuple_t<Values...>, never defined: lazy_map reads its arguments
template <class Key, class Value>
struct to_type; // the entry Key -> type_c<Value>
struct lazy_map_tag {};
} // namespace detail

/// `up<From, To...>` as a type, for a `lazy_map`.
template <class From, class... To>
using up_t = detail::to_types<From, To...>;
/// `weak_as<Weak, Concrete>` as a type, for a `lazy_map`.
template <class Weak, class Concrete>
using weak_as_t = detail::to_type<Weak, Concrete>;
/// `as_complex<Float, Complex>` as a type, for a `lazy_map`.
template <class Float, class Complex>
using as_complex_t = detail::to_type<Float, Complex>;

/// A Hana map written as types, built only where it is used: `lazy_map<up_t<i8, i16>, up_t<i16>>` is
/// `hana::make_map(up<i8, i16>, up<i16>)` for `hana::unpack`, `for_each`, `find`, `contains`, `at_key`.
template <class... Entries>
struct lazy_map {
    using hana_tag = detail::lazy_map_tag;
};

namespace detail {
template <class Entry>
struct hana_entry_impl;
template <class Key, class... Values>
struct hana_entry_impl<to_types<Key, Values...>> {
    static constexpr auto value = up<Key, Values...>;
};
template <class Key, class Value>
struct hana_entry_impl<to_type<Key, Value>> {
    static constexpr auto value = weak_as<Key, Value>;
};
template <class Map>
inline constexpr auto built_map = 0;
template <class... Entries>
inline constexpr auto built_map<lazy_map<Entries...>> = boost::hana::make_map(hana_entry_impl<Entries>::value...);
// Quoted predicate: whether an entry's key is Key.
template <class Key>
struct entry_of {
    template <class Entry>
    using fn = std::is_same<boost::mp11::mp_front<Entry>, Key>;
};
} // namespace detail

} // namespace mixt

// A lazy_map is Foldable and Searchable by its built map (Hana's dispatch on the tag).
namespace boost::hana {
template <>
struct unpack_impl<mixt::detail::lazy_map_tag> {
    template <class Xs, class F>
    static constexpr decltype(auto) apply(Xs&&, F&& f) {
        return hana::unpack(mixt::detail::built_map<std::remove_cvref_t<Xs>>, static_cast<F&&>(f));
    }
};
template <>
struct find_if_impl<mixt::detail::lazy_map_tag> {
    template <class Xs, class Pred>
    static constexpr auto apply(Xs&&, Pred&& p) {
        return hana::find_if(mixt::detail::built_map<std::remove_cvref_t<Xs>>, static_cast<Pred&&>(p));
    }
};
template <>
struct any_of_impl<mixt::detail::lazy_map_tag> {
    template <class Xs, class Pred>
    static constexpr auto apply(Xs&&, Pred&& p) {
        return hana::any_of(mixt::detail::built_map<std::remove_cvref_t<Xs>>, static_cast<Pred&&>(p));
    }
};
template <>
struct find_impl<mixt::detail::lazy_map_tag> {
    template <class Xs, class Key>
    static constexpr auto apply(Xs&&, const Key& k) {
        return hana::find(mixt::detail::built_map<std::remove_cvref_t<Xs>>, k);
    }
};
template <>
struct contains_impl<mixt::detail::lazy_map_tag> {
    template <class Xs, class Key>
    static constexpr auto apply(Xs&&, Key&& k) {
        return hana::contains(mixt::detail::built_map<std::remove_cvref_t<Xs>>, static_cast<Key&&>(k));
    }
};
template <>
struct at_key_impl<mixt::detail::lazy_map_tag> {
    template <class Xs, class Key>
    static constexpr decltype(auto) apply(Xs&&, const Key& k) {
        return hana::at_key(mixt::detail::built_map<std::remove_cvref_t<Xs>>, k);
    }
};
} // namespace boost::hana

namespace mixt {

/// Where an operand's dtype comes from, for a policy whose `slots` is `slot_rule::by_category`: PyTorch's
/// dimensioned tensors, zero-dim tensors and wrapped Python scalars. An expression's slot follows from its
/// type: a leaf or sub-expression of rank 1 or more is `dimensioned`, one of rank 0 (an `Eigen::Tensor<T, 0>`,
/// a full reduction, a `mixt::strong` scalar) is `zero_dim`, a C++ literal is `literal`.
enum class operand_slot : unsigned char { dimensioned, zero_dim, literal };

/// How a policy joins operands of different slots: `none`, JAX's way (the lattice alone, literals as weak
/// nodes), or `by_category`, PyTorch's (lattice/slots.hpp).
enum class slot_rule : unsigned char { none, by_category };

/// What true division and the float functions give for bool and integer operands: `by_width`, JAX's (up to
/// 32 bits f32, 64 bits f64), or `default_float`, PyTorch's (the policy's default float, always).
enum class inexact_rule : unsigned char { by_width, default_float };

template <class Policy>
inline constexpr slot_rule slot_rule_v = slot_rule::none;
template <class Policy>
    requires requires { Policy::slots; }
inline constexpr slot_rule slot_rule_v<Policy> = Policy::slots;

template <class Policy>
inline constexpr inexact_rule inexact_rule_v = inexact_rule::by_width;
template <class Policy>
    requires requires { Policy::int_to_inexact; }
inline constexpr inexact_rule inexact_rule_v<Policy> = Policy::int_to_inexact;

template <class T, class = void>
inline constexpr bool is_policy_v = false;
template <class T>
inline constexpr bool is_policy_v<T, std::void_t<decltype(T::edges), decltype(T::weak_types), decltype(T::name)>> =
    true;

namespace policy {
using namespace mixt::dtypes;
// The narrow nodes' tags, over the storage types of the same names in namespace mixt (dtype/narrow_float.hpp).
using mixt::dtypes::float4_e2m1fn;
using mixt::dtypes::float6_e2m3fn;
using mixt::dtypes::float6_e3m2fn;
using mixt::dtypes::float8_e3m4;
using mixt::dtypes::float8_e4m3;
using mixt::dtypes::float8_e4m3b11fnuz;
using mixt::dtypes::float8_e4m3fn;
using mixt::dtypes::float8_e4m3fnuz;
using mixt::dtypes::float8_e5m2;
using mixt::dtypes::float8_e5m2fnuz;
using mixt::dtypes::float8_e8m0fnu;
using mixt::dtypes::int2;
using mixt::dtypes::int4;
using mixt::dtypes::uint2;
using mixt::dtypes::uint4;

/// JAX's standard lattice with 64-bit types enabled (`jax_numpy_dtype_promotion=standard`, `jax_enable_x64`).
/// The default policy.
struct jax {
    static constexpr std::string_view name = "jax";
    static constexpr lazy_map<
        up_t<bool_, weak_int>,
        up_t<weak_int, u8, i8, uint2, uint4, int2, int4>,
        up_t<u8, u16, i16>, up_t<u16, u32, i32>, up_t<u32, u64, i64>, up_t<u64, weak_float>,
        up_t<i8, i16>, up_t<i16, i32>, up_t<i32, i64>, up_t<i64, weak_float>,
        up_t<weak_float, bf16, f16, weak_complex, float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4,
           float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
           float8_e5m2fnuz>,
        up_t<bf16, f32>, up_t<f16, f32>, up_t<f32, f64, c64>, up_t<f64, c128>,
        up_t<weak_complex, c64>, up_t<c64, c128>> edges{};
    static constexpr lazy_map<weak_as_t<weak_int, i64>, weak_as_t<weak_float, f64>, weak_as_t<weak_complex, c128>> weak_types{};
};

/// JAX with 64-bit types disabled: `u32` widens to `i32` rather than `i64`, so promotion never creates a
/// 64-bit type from narrower inputs, and weak results are stored in 32 bits.
struct jax_x32 {
    static constexpr std::string_view name = "jax_x32";
    // jax's edges with u32's entry moved to the end and changed (what hana::erase_key and insert would do).
    static constexpr boost::mp11::mp_push_back<
        boost::mp11::mp_remove_if_q<std::remove_const_t<decltype(jax::edges)>, detail::entry_of<u32>>,
        up_t<u32, u64, i32>>
        edges{};
    static constexpr lazy_map<weak_as_t<weak_int, i32>, weak_as_t<weak_float, f32>, weak_as_t<weak_complex, c64>> weak_types{};
};

/// JAX's strict mode: only a literal and an array of its kind (or wider kind) mix; every strong dtype stands
/// alone, so `i8 + i16` needs an explicit cast.
struct jax_strict {
    static constexpr std::string_view name = "jax_strict";
    static constexpr lazy_map<
        up_t<bool_>,
        up_t<weak_int, weak_float, u8, u16, u32, u64, i8, i16, i32, i64, uint2, uint4, int2, int4>,
        up_t<weak_float, weak_complex, bf16, f16, f32, f64, float4_e2m1fn, float6_e2m3fn, float6_e3m2fn,
           float8_e3m4, float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz,
           float8_e5m2, float8_e5m2fnuz>,
        up_t<weak_complex, c64, c128>> edges{};
    static constexpr auto weak_types = jax::weak_types;
};

/// The Python Array API standard: bool, integers and floats do not mix; `u64` with a signed integer is
/// undefined; an int literal joins any int or real-float array, a float literal any floating array.
/// The standard says nothing of bf16/f16, so they are not nodes of this policy.
struct array_api {
    static constexpr std::string_view name = "array_api";
    static constexpr lazy_map<
        up_t<bool_>,
        up_t<weak_int, u8, i8, weak_float>,
        up_t<u8, u16, i16>, up_t<u16, u32, i32>, up_t<u32, u64, i64>, up_t<u64>,
        up_t<i8, i16>, up_t<i16, i32>, up_t<i32, i64>, up_t<i64>,
        up_t<weak_float, f32, weak_complex>,
        up_t<f32, f64, c64>, up_t<f64, c128>,
        up_t<weak_complex, c64>, up_t<c64, c128>> edges{};
    static constexpr auto weak_types = jax::weak_types;
};

/// PyTorch's `torch.result_type` (PyTorch 1.13 to 2.x). Tensors of rank 1 or more join in PyTorch's table,
/// the lattice below (`u8 + i8` is i16, any int with any float is the float, `bf16 + f16` is f32); an operand
/// of rank 0 or a literal counts only where its category is higher (`slots`, lattice/slots.hpp): an i8 array
/// times an f64 rank-0 tensor is f64, an f16 array plus an f64 rank-0 tensor is f16, a float literal with an
/// int array is f32 (the default float), an int literal with a bool array is i64. A float array with a complex
/// operand of a later slot gives the complex of the float's precision (`complex_of`; f16's would be complex32,
/// which mixt has not: a compile error). u16, u32, u64, which PyTorch supports only in part, join nothing but
/// themselves. True division of ints gives f32 (`int_to_inexact`).
struct torch {
    static constexpr std::string_view name = "torch";
    static constexpr lazy_map<
        up_t<bool_, u8, i8>, up_t<u8, i16>, up_t<i8, i16>, up_t<i16, i32>, up_t<i32, i64>, up_t<i64, bf16, f16>,
        up_t<bf16, f32>, up_t<f16, f32>, up_t<f32, f64, c64>, up_t<f64, c128>, up_t<c64, c128>, up_t<c128>,
        up_t<u16>, up_t<u32>, up_t<u64>> edges{};
    static constexpr lazy_map<weak_as_t<weak_int, i64>, weak_as_t<weak_float, f32>, weak_as_t<weak_complex, c64>> weak_types{};
    static constexpr slot_rule slots = slot_rule::by_category;
    static constexpr lazy_map<as_complex_t<bf16, c64>, as_complex_t<f32, c64>, as_complex_t<f64, c128>> complex_of{};
    static constexpr inexact_rule int_to_inexact = inexact_rule::default_float;
};

/// MegEngine's rules (its dtype document): the Array API's lattice over the dtypes MegEngine has (bool, u8, u16,
/// i8, i16, i32, f16, f32), with the kinds mixed "type first", bool -> int -> float (`i16 + f32` is f32 by
/// i16 -> i32 -> f16 -> f32, `i8 + u8` is i16), and a literal converted to the array's dtype where the kinds
/// agree, else to the default (an int literal is i32, a float literal f32). The document also says that bool
/// connects to nothing; mixt follows the mixing rule, bool -> int (README, "Policies").
struct megengine {
    static constexpr std::string_view name = "megengine";
    static constexpr lazy_map<
        up_t<bool_, weak_int>, up_t<weak_int, u8, i8>, up_t<u8, u16, i16>, up_t<u16, i32>, up_t<i8, i16>, up_t<i16, i32>,
        up_t<i32, weak_float>, up_t<weak_float, f16>, up_t<f16, f32>, up_t<f32>> edges{};
    static constexpr lazy_map<weak_as_t<weak_int, i32>, weak_as_t<weak_float, f32>> weak_types{};
};

} // namespace policy

using default_policy = policy::jax;

} // namespace mixt

#endif // MIXT_LATTICE_POLICY_HPP
