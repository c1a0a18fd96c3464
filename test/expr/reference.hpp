#ifndef MIXT_TEST_EXPR_REFERENCE_HPP
#define MIXT_TEST_EXPR_REFERENCE_HPP

// The reference evaluator: computes any mixt expression element by element, with an explicit conversion at
// each node, from the published promotion table and the per-operation rules of spec/lattice.md. It shares no
// code with mixt's traits or functors: the join comes from test/data/promotion_jax_numpy.csv, the rules and the
// per-element arithmetic are written out here. The only piece of mixt it uses is mixt::convert, the one
// definition of what converting a scalar between two dtypes means (tested on its own in test/dtype).
//
// An expression is given as text, the prefix form test/expr/differential/gen.py writes:
//     (add L0 (mul L1 I2))           leaf 0 + leaf 1 * 2
//     (cast.f16 (where L0 F0x1p-1 C0x0p+0,0x1p+0))
// with leaves `L<k>`, literals `I<int64>`, `U<uint64>`, `F<double>` (hex float, nan, inf, -inf) and
// `C<re>,<im>`, typed scalars (mixt::strong) `S<dtype>:<value>` (`Si8:-3`, `Sc64:0x1p+0,-0x1p+1`), and one
// name per operation (`op_names` below; `cast.<dtype>` for casts).
//
// The narrow dtypes (int4 uint4 int2 uint2 and the float8/float6/float4 formats) are values like the others:
// decoded exactly by mixt::convert, joined by their place in JAX's lattice (table::join), computed as below.
//
// How each operation computes, given its operands already converted to the dtypes the rules say:
//   - integers in 128-bit arithmetic, exact, then wrapped to the result's width once (int4 and int2 too);
//   - +, -, *, /, sqrt on floats in double for f16, bf16, f32 and the narrow floats (exact or, by the 2p+2
//     theorem, rounded once), directly in double for f64; the result then rounded once to the result dtype
//     (e8m0fnu through f32's range first: detail::round_real);
//   - floor_divide and % on floats: NumPy's divmod, in f32 for f16/bf16/f32 and in f64 for f64 (the
//     algorithm is the definition, so it is followed step by step);
//   - exp, log, sin, cos, tanh, pow on floats and everything not exactly rounded on complex values (* / sqrt
//     abs pow and the functions) in long double, then rounded to the result dtype: these are compared within a
//     tolerance (`evaluated::tol`), which is only meaningful where no other operation consumes the value.

#include <mixt/dtype/convert.hpp>
#include <mixt/dtype/dtype.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace mixt_test::ref {

using mixt::dtype;
using c64 = std::complex<float>;
using c128 = std::complex<double>;
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

// ---------------------------------------------------------------------------------------------------------------
// Values: one alternative per concrete dtype, in the order of mixt::dtype, so that index() is the dtype.

// The weak nodes i* f* c* (15 to 17) have no values: each holds a place of its own (`no_value<K>`, distinct types so
// that std::get and std::in_place_type stay unambiguous), and the narrow dtypes follow at their own indices.

/// The placeholder alternative of weak node K: never holds a value (make and convert never create one).
template <int K>
struct no_value {
    friend constexpr bool operator==(no_value, no_value) noexcept = default;
};
template <class T>
inline constexpr bool is_no_value_v = false;
template <int K>
inline constexpr bool is_no_value_v<no_value<K>> = true;

using scalar = std::variant<bool, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, std::int8_t,
                            std::int16_t, std::int32_t, std::int64_t, Eigen::bfloat16, Eigen::half, float, double,
                            c64, c128, no_value<15>, no_value<16>, no_value<17>, mixt::uint2, mixt::uint4,
                            mixt::int2, mixt::int4, mixt::float4_e2m1fn, mixt::float6_e2m3fn, mixt::float6_e3m2fn,
                            mixt::float8_e3m4, mixt::float8_e4m3, mixt::float8_e8m0fnu, mixt::float8_e4m3b11fnuz,
                            mixt::float8_e4m3fn, mixt::float8_e4m3fnuz, mixt::float8_e5m2, mixt::float8_e5m2fnuz>;
static_assert(std::variant_size_v<scalar> == mixt::dtype_count, "one alternative per node of mixt::dtype");

inline dtype dtype_of(const scalar& s) { return static_cast<dtype>(s.index()); }

template <class T>
scalar make(T v) {
    static_assert(!is_no_value_v<T>, "reference: a weak node has no values");
    return scalar(std::in_place_type<T>, v);
}

inline bool is_concrete(dtype d) { return !mixt::is_weak(d); }

/// Calls `f(std::type_identity<T>{})` with the storage type of a concrete dtype.
template <class F>
decltype(auto) with_type(dtype d, F&& f) {
    switch (d) {
    case dtype::bool_: return f(std::type_identity<bool>{});
    case dtype::uint8: return f(std::type_identity<std::uint8_t>{});
    case dtype::uint16: return f(std::type_identity<std::uint16_t>{});
    case dtype::uint32: return f(std::type_identity<std::uint32_t>{});
    case dtype::uint64: return f(std::type_identity<std::uint64_t>{});
    case dtype::int8: return f(std::type_identity<std::int8_t>{});
    case dtype::int16: return f(std::type_identity<std::int16_t>{});
    case dtype::int32: return f(std::type_identity<std::int32_t>{});
    case dtype::int64: return f(std::type_identity<std::int64_t>{});
    case dtype::bfloat16: return f(std::type_identity<Eigen::bfloat16>{});
    case dtype::float16: return f(std::type_identity<Eigen::half>{});
    case dtype::float32: return f(std::type_identity<float>{});
    case dtype::float64: return f(std::type_identity<double>{});
    case dtype::complex64: return f(std::type_identity<c64>{});
    case dtype::complex128: return f(std::type_identity<c128>{});
    case dtype::uint2: return f(std::type_identity<mixt::uint2>{});
    case dtype::uint4: return f(std::type_identity<mixt::uint4>{});
    case dtype::int2: return f(std::type_identity<mixt::int2>{});
    case dtype::int4: return f(std::type_identity<mixt::int4>{});
    case dtype::float4_e2m1fn: return f(std::type_identity<mixt::float4_e2m1fn>{});
    case dtype::float6_e2m3fn: return f(std::type_identity<mixt::float6_e2m3fn>{});
    case dtype::float6_e3m2fn: return f(std::type_identity<mixt::float6_e3m2fn>{});
    case dtype::float8_e3m4: return f(std::type_identity<mixt::float8_e3m4>{});
    case dtype::float8_e4m3: return f(std::type_identity<mixt::float8_e4m3>{});
    case dtype::float8_e8m0fnu: return f(std::type_identity<mixt::float8_e8m0fnu>{});
    case dtype::float8_e4m3b11fnuz: return f(std::type_identity<mixt::float8_e4m3b11fnuz>{});
    case dtype::float8_e4m3fn: return f(std::type_identity<mixt::float8_e4m3fn>{});
    case dtype::float8_e4m3fnuz: return f(std::type_identity<mixt::float8_e4m3fnuz>{});
    case dtype::float8_e5m2: return f(std::type_identity<mixt::float8_e5m2>{});
    case dtype::float8_e5m2fnuz: return f(std::type_identity<mixt::float8_e5m2fnuz>{});
    default: throw std::invalid_argument("reference: " + std::string(mixt::name(d)) + " has no storage type");
    }
}

/// The conversion at a node: mixt::convert, the documented scalar conversion.
inline scalar convert(const scalar& x, dtype to) {
    return std::visit(
        [&](auto v) -> scalar {
            return with_type(to, [&](auto t) -> scalar {
                using T = typename decltype(t)::type;
                if constexpr (is_no_value_v<decltype(v)>)
                    throw std::logic_error("reference: convert of a weak placeholder");
                else
                    return make<T>(mixt::convert<T>(v));
            });
        },
        x);
}

inline mixt::dtype_kind kind_of(dtype d) { return mixt::kind(d); }
inline bool is_bool(dtype d) { return kind_of(d) == mixt::dtype_kind::boolean; }
inline bool is_int(dtype d) {
    return kind_of(d) == mixt::dtype_kind::signed_int || kind_of(d) == mixt::dtype_kind::unsigned_int;
}
inline bool is_float(dtype d) { return kind_of(d) == mixt::dtype_kind::floating; }
inline bool is_complex(dtype d) { return kind_of(d) == mixt::dtype_kind::complex; }
inline bool is_signed_int(dtype d) { return kind_of(d) == mixt::dtype_kind::signed_int; }

// ---------------------------------------------------------------------------------------------------------------
// Scalar access in wide types

/// Bool and integers, exactly.
inline i128 to_int(const scalar& s) {
    return std::visit(
        [](auto v) -> i128 {
            using T = decltype(v);
            if constexpr (std::is_integral_v<T>)
                return static_cast<i128>(v);
            else if constexpr (mixt::is_narrow_int_v<T>)
                return static_cast<i128>(v.value()); // the low bits, sign-extended for int4 and int2
            else
                throw std::logic_error("reference: to_int of a non-integer");
        },
        s);
}

/// An integer result, wrapped modulo 2^n into dtype `d` (bool: nonzero).
inline scalar from_int(dtype d, i128 v) {
    if (is_bool(d)) return make<bool>(v != 0);
    return convert(make<std::uint64_t>(static_cast<std::uint64_t>(static_cast<u128>(v))), d);
}

/// A real float's value, exactly (f16, bf16 and f32 values are doubles).
inline double to_double(const scalar& s) {
    return std::visit(
        [](auto v) -> double {
            using T = decltype(v);
            if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16> ||
                          std::is_same_v<T, float> || std::is_same_v<T, double> || mixt::is_narrow_float_v<T>)
                return mixt::convert<double>(v); // narrow floats decode exactly (every code's value is a float)
            else
                throw std::logic_error("reference: to_double of a non-float");
        },
        s);
}

/// Rounds once to the float dtype `d` (or to each component of the complex dtype `d`).
inline scalar from_double(dtype d, double v) { return convert(make<double>(v), d); }

inline int component_precision(dtype d) {
    if (mixt::is_small_float(d)) return mixt::detail::format_of(d).mantissa + 1;
    switch (d) {
    case dtype::bfloat16: return 8;
    case dtype::float16: return 11;
    case dtype::float32:
    case dtype::complex64: return 24;
    default: return 53;
    }
}
inline dtype component_of(dtype d) {
    return d == dtype::complex64 ? dtype::float32 : d == dtype::complex128 ? dtype::float64 : d;
}

inline c128 to_c128(const scalar& s) {
    if (const auto* p = std::get_if<c64>(&s)) return {p->real(), p->imag()};
    return std::get<c128>(s);
}
inline scalar from_c128(dtype d, c128 v) { return convert(make<c128>(v), d); }

/// Rounds a long double to `d` (through double: used only for results compared within a tolerance).
inline scalar from_long_double(dtype d, long double v) { return from_double(d, static_cast<double>(v)); }
inline scalar from_complex_long_double(dtype d, std::complex<long double> v) {
    return from_c128(d, c128(static_cast<double>(v.real()), static_cast<double>(v.imag())));
}

inline scalar zero_of(dtype d) { return convert(make<bool>(false), d); }

inline bool is_nan(const scalar& s) {
    const dtype d = dtype_of(s);
    if (is_float(d)) return std::isnan(to_double(s));
    if (is_complex(d)) {
        const c128 c = to_c128(s);
        return std::isnan(c.real()) || std::isnan(c.imag());
    }
    return false;
}

// ---------------------------------------------------------------------------------------------------------------
// The published table and the rules of spec/lattice.md

/// The join over the 18 classic nodes, read from the published CSV (first row and column: node names).
class table {
public:
    static table load(const std::string& path) {
        std::ifstream in(path);
        if (!in) throw std::runtime_error("reference: cannot read " + path);
        table t;
        std::string line;
        std::vector<dtype> header;
        std::size_t row = 0;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.empty()) continue;
            std::vector<std::string> cells;
            std::stringstream ss(line);
            std::string cell;
            while (std::getline(ss, cell, ',')) cells.push_back(cell);
            if (header.empty()) {
                for (std::size_t i = 1; i < cells.size(); ++i) header.push_back(parse(cells[i], path));
                if (header.size() != n) throw std::runtime_error("reference: " + path + ": expected 18 columns");
                continue;
            }
            if (cells.size() != n + 1) throw std::runtime_error("reference: " + path + ": bad row: " + line);
            const dtype a = parse(cells[0], path);
            for (std::size_t j = 0; j < n; ++j) {
                const std::string& c = cells[j + 1];
                if (c.empty() || c == "-") continue; // no join
                t.set(a, header[j], parse(c, path));
            }
            ++row;
        }
        if (row != n) throw std::runtime_error("reference: " + path + ": expected 18 rows");
        return t;
    }

#ifdef MIXT_TEST_DATA_DIR
    /// The table of jax.numpy (64-bit mode), test/data/promotion_jax_numpy.csv.
    static const table& published() {
        static const table t = load(MIXT_TEST_DATA_DIR "/promotion_jax_numpy.csv");
        return t;
    }
#endif

    /// The join of two nodes. The published table has the 18 classic nodes; the narrow ones are placed as JAX's
    /// lattice places them: each narrow int directly above i*, each narrow float directly above f*, with nothing
    /// above any of them. So a narrow node n joins x (to n) exactly where x <= n, i.e. x is n itself or x's join
    /// with i* (f* for a narrow float) is i* (f*) in the table (b and i* for the ints; b, every integer, i* and
    /// f* for the floats), and two different narrow nodes have no join.
    std::optional<dtype> join(dtype a, dtype b) const {
        if (mixt::is_small(a) || mixt::is_small(b)) {
            if (a == b) return a;
            if (mixt::is_small(a) && mixt::is_small(b)) return std::nullopt;
            const dtype small = mixt::is_small(a) ? a : b, other = mixt::is_small(a) ? b : a;
            const dtype below = is_float(small) ? dtype::weak_float : dtype::weak_int;
            return join(other, below) == below ? std::optional<dtype>(small) : std::nullopt;
        }
        const auto i = index(a), j = index(b);
        if (i >= n || j >= n) return std::nullopt;
        return cells_[i][j];
    }

private:
    static constexpr std::size_t n = mixt::classic_dtype_count;
    static std::size_t index(dtype d) { return static_cast<std::size_t>(d); }
    static dtype parse(const std::string& s, const std::string& path) {
        const auto d = mixt::parse_dtype(s);
        if (!d || index(*d) >= n) throw std::runtime_error("reference: " + path + ": unknown dtype '" + s + "'");
        return *d;
    }
    void set(dtype a, dtype b, dtype r) { cells_[index(a)][index(b)] = r; }
    std::array<std::array<std::optional<dtype>, n>, n> cells_{};
};

/// A weak node stored: i* -> i64, f* -> f64, c* -> c128 (64-bit mode).
inline dtype materialize(dtype t) {
    switch (t) {
    case dtype::weak_int: return dtype::int64;
    case dtype::weak_float: return dtype::float64;
    case dtype::weak_complex: return dtype::complex128;
    default: return t;
    }
}

/// "To inexact": bool and ints up to 32 bits -> f32, 64-bit ints -> f64, i* -> f*, others unchanged.
inline dtype to_inexact(dtype t) {
    if (t == dtype::weak_int) return dtype::weak_float;
    if (is_bool(t) || is_int(t)) return mixt::info(t).bits == 64 ? dtype::float64 : dtype::float32;
    return t;
}

/// abs, real, imag: complex -> the real type of the same width.
inline dtype real_part(dtype t) {
    switch (t) {
    case dtype::complex64: return dtype::float32;
    case dtype::complex128: return dtype::float64;
    case dtype::weak_complex: return dtype::weak_float;
    default: return t;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Trees

enum class op {
    leaf, literal, typed_scalar,
    add, sub, mul, div, mod, floor_divide, eq, ne, lt, le, gt, ge, logical_and, logical_or, bit_and, bit_or,
    bit_xor, shl, shr, pow, minimum, maximum,
    neg, logical_not, bit_not, abs, sqrt, exp, log, sin, cos, tanh, real, imag, conj, cast,
    where, clip,
};

struct op_name {
    std::string_view name;
    op o;
    int arity;
};
inline constexpr op_name op_names[] = {
    {"add", op::add, 2}, {"sub", op::sub, 2}, {"mul", op::mul, 2}, {"div", op::div, 2}, {"mod", op::mod, 2},
    {"floor_divide", op::floor_divide, 2}, {"eq", op::eq, 2}, {"ne", op::ne, 2}, {"lt", op::lt, 2},
    {"le", op::le, 2}, {"gt", op::gt, 2}, {"ge", op::ge, 2}, {"logical_and", op::logical_and, 2},
    {"logical_or", op::logical_or, 2}, {"bit_and", op::bit_and, 2}, {"bit_or", op::bit_or, 2},
    {"bit_xor", op::bit_xor, 2}, {"shl", op::shl, 2}, {"shr", op::shr, 2}, {"pow", op::pow, 2},
    {"minimum", op::minimum, 2}, {"maximum", op::maximum, 2}, {"neg", op::neg, 1},
    {"logical_not", op::logical_not, 1}, {"bit_not", op::bit_not, 1}, {"abs", op::abs, 1}, {"sqrt", op::sqrt, 1},
    {"exp", op::exp, 1}, {"log", op::log, 1}, {"sin", op::sin, 1}, {"cos", op::cos, 1}, {"tanh", op::tanh, 1},
    {"real", op::real, 1}, {"imag", op::imag, 1}, {"conj", op::conj, 1}, {"cast", op::cast, 1},
    {"where", op::where, 3}, {"clip", op::clip, 3},
};

inline std::string_view name_of(op o) {
    for (const auto& n : op_names)
        if (n.o == o) return n.name;
    return o == op::leaf ? "leaf" : o == op::typed_scalar ? "scalar" : "literal";
}

struct node {
    op o = op::leaf;
    std::vector<node> kids;
    int leaf = -1;     ///< leaves: the index of the input
    scalar lit;        ///< literals: as mixt keeps them, int64 / uint64 / double / complex<double>;
                       ///< typed scalars (mixt::strong): the value in its dtype
    dtype cast_to{};   ///< cast: the target

    // Filled in by `type`:
    dtype tag{};                 ///< the lattice node of the value (weak for literals and weak results)
    dtype value{};               ///< the dtype the value is stored in (the tag materialized)
    std::vector<dtype> operands; ///< the dtype each child is converted to before the operation
    bool exact_compare = false;  ///< a comparison with a literal that does not fit: exact values
};

inline bool is_literal(const node& n) { return n.o == op::literal; }

class parse_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

namespace detail {
inline double parse_double(std::string_view s) {
    const std::string text(s);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) throw parse_error("reference: bad number '" + text + "'");
    return v;
}

class parser {
public:
    explicit parser(std::string_view s) : s_(s) {}
    node parse() {
        node n = expr();
        skip();
        if (i_ != s_.size()) fail("trailing text");
        return n;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw parse_error("reference: cannot parse '" + std::string(s_) + "' at " + std::to_string(i_) + ": " +
                          what);
    }
    void skip() {
        while (i_ < s_.size() && s_[i_] == ' ') ++i_;
    }
    std::string_view token() {
        skip();
        const std::size_t b = i_;
        while (i_ < s_.size() && s_[i_] != ' ' && s_[i_] != '(' && s_[i_] != ')') ++i_;
        if (b == i_) fail("expected a token");
        return s_.substr(b, i_ - b);
    }
    node expr() {
        skip();
        if (i_ >= s_.size()) fail("unexpected end");
        if (s_[i_] == '(') {
            ++i_;
            const std::string_view name = token();
            node n;
            std::string_view base = name;
            if (name.substr(0, 5) == "cast.") {
                base = "cast";
                const auto d = mixt::parse_dtype(name.substr(5));
                if (!d || !is_concrete(*d)) fail("bad cast target");
                n.cast_to = *d;
            }
            int arity = -1;
            for (const auto& o : op_names)
                if (o.name == base) {
                    n.o = o.o;
                    arity = o.arity;
                }
            if (arity < 0) fail("unknown operation '" + std::string(name) + "'");
            for (int k = 0; k < arity; ++k) n.kids.push_back(expr());
            skip();
            if (i_ >= s_.size() || s_[i_] != ')') fail("expected ')'");
            ++i_;
            return n;
        }
        const std::string_view t = token();
        node n;
        const std::string_view rest = t.substr(1);
        switch (t[0]) {
        case 'L': n.o = op::leaf; n.leaf = std::stoi(std::string(rest)); return n;
        case 'I': n.o = op::literal; n.lit = make<std::int64_t>(std::stoll(std::string(rest))); return n;
        case 'U': n.o = op::literal; n.lit = make<std::uint64_t>(std::stoull(std::string(rest))); return n;
        case 'F': n.o = op::literal; n.lit = make<double>(parse_double(rest)); return n;
        case 'C': {
            const auto comma = rest.find(',');
            if (comma == std::string_view::npos) fail("complex literal without ','");
            n.o = op::literal;
            n.lit = make<c128>(c128(parse_double(rest.substr(0, comma)), parse_double(rest.substr(comma + 1))));
            return n;
        }
        case 'S': { // S<dtype>:<value>, a typed scalar
            const auto colon = rest.find(':');
            const auto d = colon == std::string_view::npos ? std::nullopt : mixt::parse_dtype(rest.substr(0, colon));
            if (!d || !is_concrete(*d)) fail("bad typed scalar");
            const std::string_view v = rest.substr(colon + 1);
            n.o = op::typed_scalar;
            if (is_bool(*d) || is_int(*d)) {
                const std::string text(v);
                n.lit = text[0] == '-' ? from_int(*d, std::stoll(text)) : from_int(*d, static_cast<i128>(std::stoull(text)));
            } else if (is_float(*d)) {
                n.lit = from_double(*d, parse_double(v));
            } else {
                const auto comma = v.find(',');
                if (comma == std::string_view::npos) fail("complex scalar without ','");
                n.lit = from_c128(*d, c128(parse_double(v.substr(0, comma)), parse_double(v.substr(comma + 1))));
            }
            return n;
        }
        default: fail("unknown token '" + std::string(t) + "'");
        }
    }
    std::string_view s_;
    std::size_t i_ = 0;
};
} // namespace detail

/// Parses the prefix text of an expression (see the top of this file).
inline node parse(std::string_view text) { return detail::parser(text).parse(); }

/// The literal's lattice node: int -> i*, floating -> f*, complex -> c*.
inline dtype literal_tag(const scalar& v) {
    const dtype d = dtype_of(v);
    if (is_int(d)) return dtype::weak_int;
    if (is_float(d)) return dtype::weak_float;
    return dtype::weak_complex;
}

/// Whether an integer literal fits the dtype it is converted to: in range for an integer dtype, not rounding
/// to infinity for a float dtype. Other literals and other targets always fit.
inline bool literal_fits(const scalar& lit, dtype target) {
    if (!is_int(dtype_of(lit))) return true;
    if (is_int(target)) {
        const int bits = mixt::info(target).bits;
        const i128 v = to_int(lit);
        const i128 lo = is_signed_int(target) ? -(i128(1) << (bits - 1)) : 0;
        const i128 hi = is_signed_int(target) ? (i128(1) << (bits - 1)) - 1 : (i128(1) << bits) - 1;
        return v >= lo && v <= hi;
    }
    if (is_float(target) && mixt::is_small(target)) {
        // A narrow float (docs/semantics.md): the integer rounds to a finite value of the format (not to its inf
        // or NaN), not by saturation: within half an ulp of that value.
        const double r = to_double(convert(lit, target));
        if (!std::isfinite(r)) return false;
        const double x = static_cast<double>(to_int(lit));
        return std::fabs(x - r) <= std::fabs(r) * std::ldexp(1.0, -(mixt::detail::format_of(target).mantissa + 1));
    }
    if (is_float(target)) return !std::isinf(to_double(convert(lit, target)));
    return true;
}

class type_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

/// A literal that does not fit: evaluation must throw mixt::overflow_error.
struct overflow {
    scalar value;
    dtype target;
    op in;
};

namespace detail {
inline std::string dtypes_text(const std::vector<dtype>& ds) {
    std::string s;
    for (const dtype d : ds) s += (s.empty() ? "" : ", ") + std::string(mixt::short_name(d));
    return s;
}

inline void type(node& n, const std::vector<dtype>& leaves, const table& t, std::vector<overflow>& overflows) {
    if (n.o == op::leaf) {
        if (n.leaf < 0 || static_cast<std::size_t>(n.leaf) >= leaves.size())
            throw type_error("reference: leaf " + std::to_string(n.leaf) + " has no input");
        n.tag = n.value = leaves[static_cast<std::size_t>(n.leaf)];
        return;
    }
    if (n.o == op::literal) {
        n.tag = literal_tag(n.lit);
        n.value = dtype_of(n.lit);
        return;
    }
    if (n.o == op::typed_scalar) {
        n.tag = n.value = dtype_of(n.lit);
        return;
    }
    std::vector<dtype> ts;
    for (node& k : n.kids) {
        type(k, leaves, t, overflows);
        ts.push_back(k.tag);
    }
    const auto undefined = [&](const char* why) {
        return type_error("reference: " + std::string(name_of(n.o)) + " is not defined for (" + dtypes_text(ts) +
                          "): " + why);
    };
    const auto join = [&](std::size_t from) {
        std::optional<dtype> j = ts[from];
        for (std::size_t k = from + 1; k < ts.size() && j; ++k) j = t.join(*j, ts[k]);
        if (!j) throw undefined("no join");
        return *j;
    };
    const auto same = [&](dtype d) { return std::vector<dtype>(ts.size(), d); };
    dtype result{};
    std::vector<dtype> operands;
    switch (n.o) {
    case op::cast: result = n.cast_to; operands = {n.cast_to}; break;
    case op::abs:
    case op::real:
    case op::imag: result = real_part(ts[0]); operands = {ts[0]}; break;
    case op::where: {
        result = join(1);
        operands = {dtype::bool_, result, result};
        break;
    }
    case op::pow: {
        // A float or complex base with an integer or bool exponent keeps the base's type; the exponent is not
        // converted to it. The operands must join all the same (c128 ** int4 is undefined: no join).
        const bool keep = (is_float(ts[0]) || is_complex(ts[0])) && (is_int(ts[1]) || is_bool(ts[1]));
        const dtype j = join(0);
        result = keep ? ts[0] : j;
        operands = keep ? ts : same(result);
        break;
    }
    case op::div:
    case op::sqrt:
    case op::exp:
    case op::log:
    case op::sin:
    case op::cos:
    case op::tanh: result = to_inexact(join(0)); operands = same(result); break;
    case op::eq:
    case op::ne:
    case op::lt:
    case op::le:
    case op::gt:
    case op::ge: {
        const dtype j = join(0);
        if (n.o != op::eq && n.o != op::ne && is_complex(j)) throw undefined("ordered comparison of complex");
        result = dtype::bool_;
        operands = same(j);
        break;
    }
    default: {
        const dtype j = join(0);
        const bool b = is_bool(j), i = is_int(j), f = is_float(j), c = is_complex(j);
        bool ok = true;
        switch (n.o) {
        case op::sub:
        case op::neg: ok = !b; break;
        case op::floor_divide:
        case op::mod: ok = i || f; break;
        case op::bit_and:
        case op::bit_or:
        case op::bit_xor:
        case op::bit_not: ok = b || i; break;
        case op::shl:
        case op::shr: ok = i; break;
        case op::logical_and:
        case op::logical_or:
        case op::logical_not: ok = b; break;
        default: ok = b || i || f || c; break; // add mul minimum maximum clip conj
        }
        if (!ok) throw undefined("the operation does not exist for the join's kind");
        result = j;
        operands = same(j);
    }
    }
    n.tag = result;
    n.value = materialize(result);
    n.operands.clear();
    for (const dtype d : operands) n.operands.push_back(materialize(d));

    // Literals (spec/lattice.md): a literal that does not fit its dtype is an error, except in a comparison of a
    // real array with a real literal, which then compares the exact values (`u8 < 300` is all true); a literal
    // that fits is converted to the join like any operand (`f16 == 0.1` compares with f16(0.1)).
    const bool comparison = n.o == op::eq || n.o == op::ne || n.o == op::lt || n.o == op::le || n.o == op::gt ||
                            n.o == op::ge;
    for (std::size_t k = 0; k < n.kids.size(); ++k) {
        const node& kid = n.kids[k];
        if (!is_literal(kid)) continue;
        const bool fits = literal_fits(kid.lit, n.operands[k]);
        if (comparison && !is_literal(n.kids[1 - k]) && !is_complex(n.kids[1 - k].value) &&
            !is_complex(dtype_of(kid.lit)) && !fits) {
            n.exact_compare = true;
            continue;
        }
        if (!fits) overflows.push_back({kid.lit, n.operands[k], n.o});
    }
}
} // namespace detail

/// Types a tree over inputs of the given dtypes: fills in every node's tag, value and operand dtypes. Throws
/// type_error where an operation is not defined; returns the literals that do not fit their dtype.
inline std::vector<overflow> type(node& root, const std::vector<dtype>& leaves, const table& t) {
    std::vector<overflow> overflows;
    detail::type(root, leaves, t, overflows);
    return overflows;
}

// ---------------------------------------------------------------------------------------------------------------
// Evaluation

/// A computed element. `tol` is 0 where the value is exact (compared bit for bit, NaN with any payload);
/// otherwise the allowed error in ulps of the value's dtype (complex: in ulps of the larger component's
/// magnitude, for both components). `consumed`: an inexact value went through another operation, so no bound
/// on the result's error is known (the generator never builds such trees).
struct evaluated {
    scalar v;
    double tol = 0;
    bool consumed = false;
};

/// The allowed errors, in ulps of the result dtype.
inline constexpr double transcendental_ulps = 2; ///< real exp log sin cos tanh pow, |complex|
inline constexpr double complex_ulps = 4;        ///< complex * / sqrt exp log sin cos tanh, normwise

namespace detail {
template <class F>
F numpy_floor_divide(F a, F b, F* modulus) {
    // numpy/core/src/npymath/npy_math_internal.h.src, npy_divmod: the remainder has the divisor's sign, the
    // quotient is snapped to the nearest integer.
    F mod = std::fmod(a, b);
    if (b == F(0)) {
        *modulus = mod;
        return a / b;
    }
    F div = (a - mod) / b;
    if (mod != F(0)) {
        if ((b < F(0)) != (mod < F(0))) {
            mod += b;
            div -= F(1);
        }
    } else {
        mod = std::copysign(F(0), b);
    }
    F floordiv;
    if (div != F(0)) {
        floordiv = std::floor(div);
        if (div - floordiv > F(0.5)) floordiv += F(1);
    } else {
        floordiv = std::copysign(F(0), a / b);
    }
    *modulus = mod;
    return floordiv;
}

// The result of an exactly rounded operation on real floats (+ - * / sqrt neg abs, floor_divide and %),
// computed in double, rounded once to the result dtype `d`. For f16, bf16, f32 and the narrow floats but e8m0fnu,
// that is the exact result rounded once: + - * of two f32 values is exact in double or within double's range
// rounded once, and / and sqrt rounded to double then to a format of p <= 24 bits give the correctly rounded
// result (53 >= 2p + 2). e8m0fnu's range is f32's (2^-127 .. 2^127), and docs/semantics.md ("Narrow dtypes")
// defines its operations as f32's result rounded once: a product or quotient beyond f32's range is f32's 0 or
// inf before it is rounded (2^-100 * 2^-100 is e8m0fnu's NaN, where the exact 2^-200 would round to 2^-127).
// So for e8m0fnu the double result goes through f32 first (rounding there only where it is beyond f32's range
// or among f32's subnormals; e8m0fnu's one bit of significand then rounds the same as from the double).
inline scalar round_real(dtype d, double v) {
    if (d == dtype::float8_e8m0fnu) return from_double(d, to_double(from_double(dtype::float32, v)));
    return from_double(d, v);
}

// Minimum / maximum as documented: NaN propagates (the first NaN operand), real floats order -0 below +0
// (IEEE 754-2019), other ties keep the first operand, complex values are ordered lexicographically.
inline bool less(const scalar& a, const scalar& b) {
    const dtype d = dtype_of(a);
    if (is_bool(d) || is_int(d)) return to_int(a) < to_int(b);
    if (is_float(d)) {
        const double x = to_double(a), y = to_double(b);
        return x < y || (x == y && std::signbit(x) && !std::signbit(y));
    }
    const c128 x = to_c128(a), y = to_c128(b);
    return x.real() < y.real() || (x.real() == y.real() && x.imag() < y.imag());
}
inline scalar minimum(const scalar& a, const scalar& b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return less(b, a) ? b : a;
}
inline scalar maximum(const scalar& a, const scalar& b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return less(a, b) ? b : a;
}

// Complex arithmetic that is not exactly rounded: in long double, rounded to `d` at the end.
inline std::complex<long double> wide(const scalar& s) {
    const c128 c = to_c128(s);
    return {c.real(), c.imag()};
}

inline long double abs_ld(std::complex<long double> z) { return std::hypot(z.real(), z.imag()); }

/// The relative condition of exp(y log x), in units of its result: what std::pow's error grows with.
inline double pow_condition(std::complex<long double> x, std::complex<long double> y) {
    if (x == std::complex<long double>(0)) return 0;
    return static_cast<double>(abs_ld(y) * abs_ld(std::log(x)));
}

inline int compare(const node& n, const scalar& a, const scalar& b) {
    // -1, 0, 1, or 2 when unordered
    const dtype d = dtype_of(a);
    if (is_bool(d) || is_int(d)) {
        const i128 x = to_int(a), y = to_int(b);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (is_float(d)) {
        const double x = to_double(a), y = to_double(b);
        if (std::isnan(x) || std::isnan(y)) return 2;
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (n.o != op::eq && n.o != op::ne) throw std::logic_error("reference: ordered comparison of complex");
    return to_c128(a) == to_c128(b) ? 0 : 2; // unequal complex: "unordered" is enough for == and !=
}

// Exact comparison of an array element with an integer literal (the literal does not fit the join).
// Exact comparison of an array element with a real literal (int64, uint64 or double).
inline int compare_exact(const scalar& x, const scalar& lit) {
    const auto integral = [](const scalar& s) { return is_bool(dtype_of(s)) || is_int(dtype_of(s)); };
    if (integral(x) && integral(lit)) {
        const i128 v = to_int(x), l = to_int(lit);
        return v < l ? -1 : v > l ? 1 : 0;
    }
    // Every 64-bit integer and every double is exact in long double.
    static_assert(std::numeric_limits<long double>::digits >= 64, "the reference needs a 64-bit long double");
    const auto wide = [&](const scalar& s) {
        return integral(s) ? static_cast<long double>(to_int(s)) : static_cast<long double>(to_double(s));
    };
    const long double v = wide(x), l = wide(lit);
    if (std::isnan(v) || std::isnan(l)) return 2;
    return v < l ? -1 : v > l ? 1 : 0;
}

inline bool comparison_result(op o, int c) {
    switch (o) {
    case op::eq: return c == 0;
    case op::ne: return c != 0;
    case op::lt: return c == -1;
    case op::le: return c == -1 || c == 0;
    case op::gt: return c == 1;
    case op::ge: return c == 1 || c == 0;
    default: throw std::logic_error("reference: not a comparison");
    }
}

inline i128 floor_div(i128 a, i128 b) {
    i128 q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
}
} // namespace detail

/// Computes one element of a typed tree. `inputs[k][i]` is element i of leaf k.
inline evaluated evaluate(const node& n, const std::vector<std::vector<scalar>>& inputs, std::size_t i) {
    if (n.o == op::leaf) return {inputs[static_cast<std::size_t>(n.leaf)][i], 0};
    if (n.o == op::literal || n.o == op::typed_scalar) return {n.lit, 0};

    std::array<scalar, 3> x; // the operands, converted
    bool consumed = false;
    for (std::size_t k = 0; k < n.kids.size(); ++k) {
        const evaluated e = evaluate(n.kids[k], inputs, i);
        consumed = consumed || e.tol != 0 || e.consumed;
        x[k] = n.exact_compare ? e.v : convert(e.v, n.operands[k]);
    }
    const dtype s = n.operands[0]; // the operation's dtype (the join) for all but pow, where and cast
    const dtype r = n.value;
    const bool b = is_bool(s), in = is_int(s), f = is_float(s), c = is_complex(s);
    // f16, bf16, f32 and the narrow floats compute in double (exact or rounded once), f64 in double directly;
    // then rounded once to the result (round_real).
    const auto real2 = [&](auto fn) { return detail::round_real(r, fn(to_double(x[0]), to_double(x[1]))); };
    const auto cplx2 = [&](auto fn) {
        const c128 p = to_c128(x[0]), q = to_c128(x[1]);
        // per component, each rounded once to the component type
        const scalar re = from_double(component_of(r), fn(p.real(), q.real()));
        const scalar im = from_double(component_of(r), fn(p.imag(), q.imag()));
        return from_c128(r, c128(to_double(re), to_double(im)));
    };
    const auto inexact = [&](scalar v, double ulps) { return evaluated{std::move(v), ulps, consumed}; };
    const auto exact = [&](scalar v) { return evaluated{std::move(v), 0, consumed}; };

    switch (n.o) {
    case op::add:
        if (b) return exact(make<bool>(std::get<bool>(x[0]) || std::get<bool>(x[1])));
        if (in) return exact(from_int(r, to_int(x[0]) + to_int(x[1])));
        if (f) return exact(real2([](double p, double q) { return p + q; }));
        return exact(cplx2([](double p, double q) { return p + q; }));
    case op::sub:
        if (in) return exact(from_int(r, to_int(x[0]) - to_int(x[1])));
        if (f) return exact(real2([](double p, double q) { return p - q; }));
        return exact(cplx2([](double p, double q) { return p - q; }));
    case op::mul:
        if (b) return exact(make<bool>(std::get<bool>(x[0]) && std::get<bool>(x[1])));
        if (in)
            return exact(from_int(r, static_cast<i128>(static_cast<u128>(to_int(x[0])) *
                                                       static_cast<u128>(to_int(x[1])))));
        if (f) return exact(real2([](double p, double q) { return p * q; }));
        return inexact(from_complex_long_double(r, detail::wide(x[0]) * detail::wide(x[1])), complex_ulps);
    case op::div:
        if (f) return exact(real2([](double p, double q) { return p / q; }));
        return inexact(from_complex_long_double(r, detail::wide(x[0]) / detail::wide(x[1])), complex_ulps);
    case op::floor_divide:
    case op::mod: {
        if (in) {
            const i128 p = to_int(x[0]), q = to_int(x[1]);
            if (q == 0) return exact(from_int(r, 0));
            const i128 d = detail::floor_div(p, q);
            return exact(from_int(r, n.o == op::floor_divide ? d : p - q * d));
        }
        double q, m;
        if (s == dtype::float64) {
            q = detail::numpy_floor_divide(to_double(x[0]), to_double(x[1]), &m);
        } else {
            float mf;
            q = detail::numpy_floor_divide(static_cast<float>(to_double(x[0])), static_cast<float>(to_double(x[1])),
                                           &mf);
            m = mf;
        }
        return exact(detail::round_real(r, n.o == op::floor_divide ? q : m));
    }
    case op::neg:
        if (in) return exact(from_int(r, -to_int(x[0])));
        if (f) return exact(detail::round_real(r, -to_double(x[0])));
        return exact(from_c128(r, -to_c128(x[0])));
    case op::eq:
    case op::ne:
    case op::lt:
    case op::le:
    case op::gt:
    case op::ge: {
        int cmp;
        if (n.exact_compare) {
            const bool lit_left = is_literal(n.kids[0]);
            cmp = detail::compare_exact(lit_left ? x[1] : x[0], lit_left ? x[0] : x[1]);
            if (lit_left && cmp != 2) cmp = -cmp;
        } else {
            cmp = detail::compare(n, x[0], x[1]);
        }
        return exact(make<bool>(detail::comparison_result(n.o, cmp)));
    }
    case op::logical_and: return exact(make<bool>(std::get<bool>(x[0]) && std::get<bool>(x[1])));
    case op::logical_or: return exact(make<bool>(std::get<bool>(x[0]) || std::get<bool>(x[1])));
    case op::logical_not: return exact(make<bool>(!std::get<bool>(x[0])));
    case op::bit_and:
    case op::bit_or:
    case op::bit_xor: {
        const u128 p = static_cast<u128>(to_int(x[0])), q = static_cast<u128>(to_int(x[1]));
        const u128 v = n.o == op::bit_and ? (p & q) : n.o == op::bit_or ? (p | q) : (p ^ q);
        return exact(from_int(r, static_cast<i128>(v)));
    }
    case op::bit_not:
        if (b) return exact(make<bool>(!std::get<bool>(x[0])));
        return exact(from_int(r, ~to_int(x[0])));
    case op::shl:
    case op::shr: {
        const i128 p = to_int(x[0]), q = to_int(x[1]);
        const int bits = mixt::info(s).bits;
        if (q < 0 || q >= bits) return exact(from_int(r, n.o == op::shl ? 0 : (p < 0 ? -1 : 0)));
        if (n.o == op::shl) return exact(from_int(r, static_cast<i128>(static_cast<u128>(p) << static_cast<int>(q))));
        // floor(p / 2^q): an arithmetic shift for negative values
        return exact(from_int(r, detail::floor_div(p, i128(1) << static_cast<int>(q))));
    }
    case op::abs:
        if (b) return exact(x[0]);
        if (in) {
            const i128 p = to_int(x[0]);
            return exact(from_int(r, p < 0 ? -p : p));
        }
        if (f) return exact(detail::round_real(r, std::fabs(to_double(x[0]))));
        return inexact(from_long_double(r, detail::abs_ld(detail::wide(x[0]))), transcendental_ulps);
    case op::sqrt:
        if (f) return exact(detail::round_real(r, std::sqrt(to_double(x[0]))));
        return inexact(from_complex_long_double(r, std::sqrt(detail::wide(x[0]))), complex_ulps);
    case op::exp:
    case op::log:
    case op::sin:
    case op::cos:
    case op::tanh: {
        if (f) {
            const long double v = to_double(x[0]);
            const long double y = n.o == op::exp   ? std::exp(v)
                                  : n.o == op::log ? std::log(v)
                                  : n.o == op::sin ? std::sin(v)
                                  : n.o == op::cos ? std::cos(v)
                                                   : std::tanh(v);
            return inexact(from_long_double(r, y), transcendental_ulps);
        }
        const std::complex<long double> v = detail::wide(x[0]);
        const std::complex<long double> y = n.o == op::exp   ? std::exp(v)
                                            : n.o == op::log ? std::log(v)
                                            : n.o == op::sin ? std::sin(v)
                                            : n.o == op::cos ? std::cos(v)
                                                             : std::tanh(v);
        return inexact(from_complex_long_double(r, y), complex_ulps);
    }
    case op::pow: {
        if (is_bool(r)) return exact(make<bool>(!std::get<bool>(x[1]) || std::get<bool>(x[0])));
        if (is_int(r)) {
            const i128 base = to_int(x[0]), e = to_int(x[1]);
            if (e < 0) return exact(from_int(r, base == 1 ? 1 : base == -1 ? ((e & 1) != 0 ? -1 : 1) : 0));
            // base ** e modulo 2^64 (then wrapped to the width): square and multiply
            std::uint64_t acc = 1, sq = static_cast<std::uint64_t>(static_cast<u128>(base));
            for (u128 k = static_cast<u128>(e); k != 0; k >>= 1) {
                if ((k & 1) != 0) acc *= sq;
                sq *= sq;
            }
            return exact(from_int(r, static_cast<i128>(acc)));
        }
        if (is_float(r) && (is_int(dtype_of(x[1])) || is_bool(dtype_of(x[1])))) {
            // An integer exponent, exactly (long double holds every integer up to 2^64): |base| ** e, negative
            // for a negative base (or -0, -inf) and an odd e. The magnitude of a zero or infinite base from pow in
            // double (see below on powl).
            const double p = to_double(x[0]);
            const i128 e = to_int(x[1]); // bool too
            const bool odd = (e & 1) != 0;
            const long double magnitude = !std::isfinite(p) || p == 0
                                              ? std::pow(std::fabs(p), static_cast<double>(e))
                                              : std::pow(std::fabs(static_cast<long double>(p)), static_cast<long double>(e));
            const long double y = e == 0 ? 1.0L : (std::signbit(p) && odd) ? -magnitude : magnitude;
            return inexact(from_long_double(r, y), transcendental_ulps);
        }
        if (is_float(r)) {
            // In the base's compute precision: f32 for f16, bf16 and f32, f64 for f64.
            const dtype cpt = r == dtype::float64 ? dtype::float64 : dtype::float32;
            const double p = to_double(convert(x[0], cpt)), q = to_double(convert(x[1], cpt));
            // Special operands (C's Annex F table) from pow in double: glibc's powl gets some wrong at run time
            // (powl(-inf, -2^63) is +inf instead of +0, the x87 integer test misreading -2^63).
            const bool special = !std::isfinite(p) || !std::isfinite(q) || p == 0 || std::fabs(q) >= 0x1p53;
            const long double y = special ? std::pow(p, q) : std::pow(static_cast<long double>(p), static_cast<long double>(q));
            return inexact(from_long_double(r, y), transcendental_ulps);
        }
        // An integer exponent (or an integer-valued complex one): repeated squaring in mixt, compared here with
        // std::pow, which is exp(y log x): its error grows with |y log x| (no bound where that is infinite: x
        // infinite, or y log x beyond the range of double).
        const std::complex<long double> p = detail::wide(x[0]), q = detail::wide(convert(x[1], r));
        const double condition = detail::pow_condition(p, q);
        // The integer n: p ** n by binary powers in long double (of p, then 1 / that for n < 0; long double's
        // range holds every intermediate power of a double), and p ** 0 == 1 for every p.
        const bool int_exponent = is_int(dtype_of(x[1])) || is_bool(dtype_of(x[1])) ||
                                  (q.imag() == 0 && std::fabs(q.real()) <= 0x1p62L && std::trunc(q.real()) == q.real());
        if (int_exponent) {
            const i128 e = is_int(dtype_of(x[1])) || is_bool(dtype_of(x[1])) ? to_int(x[1]) : static_cast<i128>(q.real());
            u128 k = static_cast<u128>(e < 0 ? -e : e);
            std::complex<long double> result(1, 0), square = p;
            for (; k != 0; k >>= 1) {
                if ((k & 1) != 0) result *= square;
                square *= square;
            }
            if (e == 0) return exact(from_complex_long_double(r, result));
            if (e < 0) result = std::complex<long double>(1, 0) / result;
            // No bound where pow_condition has none (an infinite or NaN base).
            const double bound = condition == condition ? complex_ulps + 2 * condition : HUGE_VAL;
            return inexact(from_complex_long_double(r, result), bound);
        }
        return inexact(from_complex_long_double(r, std::pow(p, q)), complex_ulps + 2 * condition);
    }
    case op::minimum: return exact(detail::minimum(x[0], x[1]));
    case op::maximum: return exact(detail::maximum(x[0], x[1]));
    case op::clip: return exact(detail::minimum(detail::maximum(x[0], x[1]), x[2]));
    case op::where: return exact(std::get<bool>(x[0]) ? x[1] : x[2]);
    case op::real:
        if (c) return exact(from_double(r, to_c128(x[0]).real()));
        return exact(x[0]);
    case op::imag:
        if (c) return exact(from_double(r, to_c128(x[0]).imag()));
        return exact(zero_of(r));
    case op::conj:
        if (c) return exact(from_c128(r, std::conj(to_c128(x[0]))));
        return exact(x[0]);
    case op::cast: return exact(x[0]);
    default: throw std::logic_error("reference: unknown operation");
    }
}

} // namespace mixt_test::ref

#endif // MIXT_TEST_EXPR_REFERENCE_HPP
