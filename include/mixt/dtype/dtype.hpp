#ifndef MIXT_DTYPE_DTYPE_HPP
#define MIXT_DTYPE_DTYPE_HPP

// The dtype vocabulary: one enumerator and one tag per node of JAX's promotion lattice, their names, and
// parsing. Nothing here knows about promotion; the lattice layer builds on these tags.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

namespace mixt {

/// Every node of the JAX lattice. The first 18 are the "classic" nodes in the order of the published
/// promotion tables; weak nodes (`i* f* c*`) are the kinds of C++ literals, whose width is not fixed.
enum class dtype : unsigned char {
    bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64,
    bfloat16, float16, float32, float64, complex64, complex128,
    weak_int, weak_float, weak_complex,
    uint2, uint4, int2, int4,
    float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3, float8_e8m0fnu,
    float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
};

inline constexpr std::size_t dtype_count = 33;
/// The nodes of the seed tables (`b ... c128 i* f* c*`), in table order.
inline constexpr std::size_t classic_dtype_count = 18;

enum class dtype_kind : unsigned char { boolean, unsigned_int, signed_int, floating, complex };

struct dtype_info {
    std::string_view short_name; ///< the seed tables' code: `u8`, `bf16`, `i*`
    std::string_view name;       ///< the long name: `uint8`, `bfloat16`, `float8_e4m3fn`
    dtype_kind kind;
    bool weak;
    int bits; ///< storage width; 0 for weak nodes
};

namespace detail {
inline constexpr std::array<dtype_info, dtype_count> dtype_infos{{
    {"b", "bool", dtype_kind::boolean, false, 8},
    {"u8", "uint8", dtype_kind::unsigned_int, false, 8},
    {"u16", "uint16", dtype_kind::unsigned_int, false, 16},
    {"u32", "uint32", dtype_kind::unsigned_int, false, 32},
    {"u64", "uint64", dtype_kind::unsigned_int, false, 64},
    {"i8", "int8", dtype_kind::signed_int, false, 8},
    {"i16", "int16", dtype_kind::signed_int, false, 16},
    {"i32", "int32", dtype_kind::signed_int, false, 32},
    {"i64", "int64", dtype_kind::signed_int, false, 64},
    {"bf16", "bfloat16", dtype_kind::floating, false, 16},
    {"f16", "float16", dtype_kind::floating, false, 16},
    {"f32", "float32", dtype_kind::floating, false, 32},
    {"f64", "float64", dtype_kind::floating, false, 64},
    {"c64", "complex64", dtype_kind::complex, false, 64},
    {"c128", "complex128", dtype_kind::complex, false, 128},
    {"i*", "weak_int", dtype_kind::signed_int, true, 0},
    {"f*", "weak_float", dtype_kind::floating, true, 0},
    {"c*", "weak_complex", dtype_kind::complex, true, 0},
    {"uint2", "uint2", dtype_kind::unsigned_int, false, 2},
    {"uint4", "uint4", dtype_kind::unsigned_int, false, 4},
    {"int2", "int2", dtype_kind::signed_int, false, 2},
    {"int4", "int4", dtype_kind::signed_int, false, 4},
    {"float4_e2m1fn", "float4_e2m1fn", dtype_kind::floating, false, 4},
    {"float6_e2m3fn", "float6_e2m3fn", dtype_kind::floating, false, 6},
    {"float6_e3m2fn", "float6_e3m2fn", dtype_kind::floating, false, 6},
    {"float8_e3m4", "float8_e3m4", dtype_kind::floating, false, 8},
    {"float8_e4m3", "float8_e4m3", dtype_kind::floating, false, 8},
    {"float8_e8m0fnu", "float8_e8m0fnu", dtype_kind::floating, false, 8},
    {"float8_e4m3b11fnuz", "float8_e4m3b11fnuz", dtype_kind::floating, false, 8},
    {"float8_e4m3fn", "float8_e4m3fn", dtype_kind::floating, false, 8},
    {"float8_e4m3fnuz", "float8_e4m3fnuz", dtype_kind::floating, false, 8},
    {"float8_e5m2", "float8_e5m2", dtype_kind::floating, false, 8},
    {"float8_e5m2fnuz", "float8_e5m2fnuz", dtype_kind::floating, false, 8},
}};
} // namespace detail

/// Facts about a dtype: `mixt::info(mixt::dtype::bfloat16).short_name == "bf16"`.
constexpr const dtype_info& info(dtype d) { return detail::dtype_infos[static_cast<std::size_t>(d)]; }
constexpr std::string_view short_name(dtype d) { return info(d).short_name; }
constexpr std::string_view name(dtype d) { return info(d).name; }
constexpr bool is_weak(dtype d) { return info(d).weak; }
constexpr dtype_kind kind(dtype d) { return info(d).kind; }
/// Sub-byte ints and the 4/6/8-bit floats: tags today, storage later.
constexpr bool is_small(dtype d) { return static_cast<std::size_t>(d) >= classic_dtype_count; }
constexpr bool is_small_float(dtype d) { return is_small(d) && kind(d) == dtype_kind::floating; }

/// Parses either name: `parse_dtype("u8") == parse_dtype("uint8") == dtype::uint8`.
constexpr std::optional<dtype> parse_dtype(std::string_view s) {
    for (std::size_t i = 0; i < dtype_count; ++i)
        if (detail::dtype_infos[i].short_name == s || detail::dtype_infos[i].name == s) return static_cast<dtype>(i);
    return std::nullopt;
}

/// The compile-time tag of a dtype; lattice policies are graphs over such tags.
template <dtype D>
struct dtype_tag {
    static constexpr mixt::dtype value = D;
};

template <class T>
struct is_dtype_tag : std::false_type {};
template <dtype D>
struct is_dtype_tag<dtype_tag<D>> : std::true_type {};
template <class T>
inline constexpr bool is_dtype_tag_v = is_dtype_tag<T>::value;

/// Short names for the tags, for writing policies and traits: `promote_t<dtypes::i8, dtypes::weak_int>`.
namespace dtypes {
using bool_ = dtype_tag<dtype::bool_>;
using u8 = dtype_tag<dtype::uint8>;
using u16 = dtype_tag<dtype::uint16>;
using u32 = dtype_tag<dtype::uint32>;
using u64 = dtype_tag<dtype::uint64>;
using i8 = dtype_tag<dtype::int8>;
using i16 = dtype_tag<dtype::int16>;
using i32 = dtype_tag<dtype::int32>;
using i64 = dtype_tag<dtype::int64>;
using bf16 = dtype_tag<dtype::bfloat16>;
using f16 = dtype_tag<dtype::float16>;
using f32 = dtype_tag<dtype::float32>;
using f64 = dtype_tag<dtype::float64>;
using c64 = dtype_tag<dtype::complex64>;
using c128 = dtype_tag<dtype::complex128>;
using weak_int = dtype_tag<dtype::weak_int>;
using weak_float = dtype_tag<dtype::weak_float>;
using weak_complex = dtype_tag<dtype::weak_complex>;
using uint2 = dtype_tag<dtype::uint2>;
using uint4 = dtype_tag<dtype::uint4>;
using int2 = dtype_tag<dtype::int2>;
using int4 = dtype_tag<dtype::int4>;
using float4_e2m1fn = dtype_tag<dtype::float4_e2m1fn>;
using float6_e2m3fn = dtype_tag<dtype::float6_e2m3fn>;
using float6_e3m2fn = dtype_tag<dtype::float6_e3m2fn>;
using float8_e3m4 = dtype_tag<dtype::float8_e3m4>;
using float8_e4m3 = dtype_tag<dtype::float8_e4m3>;
using float8_e8m0fnu = dtype_tag<dtype::float8_e8m0fnu>;
using float8_e4m3b11fnuz = dtype_tag<dtype::float8_e4m3b11fnuz>;
using float8_e4m3fn = dtype_tag<dtype::float8_e4m3fn>;
using float8_e4m3fnuz = dtype_tag<dtype::float8_e4m3fnuz>;
using float8_e5m2 = dtype_tag<dtype::float8_e5m2>;
using float8_e5m2fnuz = dtype_tag<dtype::float8_e5m2fnuz>;
} // namespace dtypes

} // namespace mixt

#endif // MIXT_DTYPE_DTYPE_HPP
