#ifndef MIXT_DTYPE_STORAGE_HPP
#define MIXT_DTYPE_STORAGE_HPP

// Tags <-> C++ types. A concrete tag maps to the type that stores it (`f16` <-> `Eigen::half`); a C++
// literal type maps to the weak tag of its kind (`int` -> `i*`, `double` -> `f*`). Every concrete node has a
// storage type: the narrow floats and integers are mixt's own (dtype/narrow_float.hpp, dtype/narrow_int.hpp);
// `storage_t` of a weak node is ill-formed (SFINAE-friendly).

#include <complex>
#include <cstdint>
#include <type_traits>

#include <Eigen/Core>

#include "mixt/dtype/dtype.hpp"
#include "mixt/dtype/narrow_float.hpp"
#include "mixt/dtype/narrow_int.hpp"

namespace mixt {

namespace detail {
template <class Tag>
struct storage_impl {};
template <class T>
struct tag_of_impl {};

#define MIXT_DETAIL_STORAGE(D, T)                                                                              \
    template <>                                                                                                \
    struct storage_impl<dtype_tag<dtype::D>> {                                                                 \
        using type = T;                                                                                        \
    };                                                                                                         \
    template <>                                                                                                \
    struct tag_of_impl<T> {                                                                                    \
        using type = dtype_tag<dtype::D>;                                                                      \
    };
MIXT_DETAIL_STORAGE(bool_, bool)
MIXT_DETAIL_STORAGE(uint8, std::uint8_t)
MIXT_DETAIL_STORAGE(uint16, std::uint16_t)
MIXT_DETAIL_STORAGE(uint32, std::uint32_t)
MIXT_DETAIL_STORAGE(uint64, std::uint64_t)
MIXT_DETAIL_STORAGE(int8, std::int8_t)
MIXT_DETAIL_STORAGE(int16, std::int16_t)
MIXT_DETAIL_STORAGE(int32, std::int32_t)
MIXT_DETAIL_STORAGE(int64, std::int64_t)
MIXT_DETAIL_STORAGE(bfloat16, Eigen::bfloat16)
MIXT_DETAIL_STORAGE(float16, Eigen::half)
MIXT_DETAIL_STORAGE(float32, float)
MIXT_DETAIL_STORAGE(float64, double)
MIXT_DETAIL_STORAGE(complex64, std::complex<float>)
MIXT_DETAIL_STORAGE(complex128, std::complex<double>)
MIXT_DETAIL_STORAGE(uint2, ::mixt::uint2)
MIXT_DETAIL_STORAGE(uint4, ::mixt::uint4)
MIXT_DETAIL_STORAGE(int2, ::mixt::int2)
MIXT_DETAIL_STORAGE(int4, ::mixt::int4)
MIXT_DETAIL_STORAGE(float4_e2m1fn, ::mixt::float4_e2m1fn)
MIXT_DETAIL_STORAGE(float6_e2m3fn, ::mixt::float6_e2m3fn)
MIXT_DETAIL_STORAGE(float6_e3m2fn, ::mixt::float6_e3m2fn)
MIXT_DETAIL_STORAGE(float8_e3m4, ::mixt::float8_e3m4)
MIXT_DETAIL_STORAGE(float8_e4m3, ::mixt::float8_e4m3)
MIXT_DETAIL_STORAGE(float8_e8m0fnu, ::mixt::float8_e8m0fnu)
MIXT_DETAIL_STORAGE(float8_e4m3b11fnuz, ::mixt::float8_e4m3b11fnuz)
MIXT_DETAIL_STORAGE(float8_e4m3fn, ::mixt::float8_e4m3fn)
MIXT_DETAIL_STORAGE(float8_e4m3fnuz, ::mixt::float8_e4m3fnuz)
MIXT_DETAIL_STORAGE(float8_e5m2, ::mixt::float8_e5m2)
MIXT_DETAIL_STORAGE(float8_e5m2fnuz, ::mixt::float8_e5m2fnuz)
#undef MIXT_DETAIL_STORAGE

// The fixed-width aliases name only one type per width; `char`, `long long` and friends are the same dtype
// as the fixed-width type of their signedness and size.
template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) <= 8)
struct tag_of_impl<T>
    : tag_of_impl<std::conditional_t<
          std::is_signed_v<T>,
          std::conditional_t<sizeof(T) == 1, std::int8_t,
                             std::conditional_t<sizeof(T) == 2, std::int16_t,
                                                std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>>>,
          std::conditional_t<sizeof(T) == 1, std::uint8_t,
                             std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>>> {};

template <class T>
struct weak_tag_impl {};
template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
struct weak_tag_impl<T> {
    using type = dtypes::weak_int;
};
template <std::floating_point T>
struct weak_tag_impl<T> {
    using type = dtypes::weak_float;
};
template <std::floating_point T>
struct weak_tag_impl<std::complex<T>> {
    using type = dtypes::weak_complex;
};
template <>
struct weak_tag_impl<bool> {
    using type = dtypes::bool_;
};
} // namespace detail

/// The C++ type that stores a concrete tag: `storage_t<dtypes::f16>` is `Eigen::half`.
template <class Tag>
using storage_t = typename detail::storage_impl<Tag>::type;

/// The tag of a C++ storage type: `tag_of_t<std::int8_t>` is `dtypes::i8`; `tag_of_t<long long>` is `dtypes::i64`.
template <class T>
using tag_of_t = typename detail::tag_of_impl<std::remove_cv_t<T>>::type;

/// The dtype a C++ literal of type `T` has in an expression: ints are `i*`, floating types `f*`,
/// `std::complex` is `c*`; `bool` is never weak.
template <class T>
using literal_tag_t = typename detail::weak_tag_impl<std::remove_cv_t<T>>::type;

template <class Tag, class = void>
inline constexpr bool has_storage_v = false;
template <class Tag>
inline constexpr bool has_storage_v<Tag, std::void_t<storage_t<Tag>>> = true;

template <class T, class = void>
inline constexpr bool is_storage_type_v = false;
template <class T>
inline constexpr bool is_storage_type_v<T, std::void_t<tag_of_t<T>>> = true;

/// The runtime dtype of a storage type: `dtype_of_v<Eigen::bfloat16> == dtype::bfloat16`.
template <class T>
inline constexpr dtype dtype_of_v = tag_of_t<T>::value;

namespace detail {
// The narrow dtypes (float8/6/4, int4/2) have no arithmetic of their own: every operation on them runs in their
// compute type, f32 for the floats (one rounding of the f32 result to the narrow format is the correctly rounded
// result of + - * / and sqrt, as f32 carries more than twice their significand bits) and i32 for the ints (whose
// wrapping result the conversion back reduces modulo 2^n), and its result is converted back to the node's dtype.
// The kernel tree (eval/kernel.hpp) and the lowering to Eigen (eval/lower.hpp) both apply this rule, so no
// per-element functor (expr/functors.hpp) ever sees a narrow value.
template <class T>
using narrow_compute_t =
    std::conditional_t<is_narrow_float_v<T>, float, std::conditional_t<is_narrow_int_v<T>, std::int32_t, T>>;
template <class T>
inline constexpr bool is_narrow_v = is_narrow_float_v<T> || is_narrow_int_v<T>;

} // namespace detail

} // namespace mixt

#endif // MIXT_DTYPE_STORAGE_HPP
