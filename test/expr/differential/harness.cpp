// The non-generated half of the differential test: random inputs, and the comparison of mixt's results with
// the reference evaluator's (test/expr/reference.hpp).

#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace mixt_test::diff {

namespace {

using ref::scalar;
using mixt::dtype;

// splitmix64: the same numbers on every platform (std::uniform_*_distribution are implementation-defined).
struct rng {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint64_t below(std::uint64_t n) { return next() % n; }
    std::int64_t between(std::int64_t lo, std::int64_t hi) {
        return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }
};

scalar random_int(dtype d, rng& g) {
    const int bits = mixt::info(d).bits;
    const bool is_signed = mixt::kind(d) == mixt::dtype_kind::signed_int;
    const ref::i128 max = is_signed ? (ref::i128(1) << (bits - 1)) - 1 : (ref::i128(1) << bits) - 1;
    const ref::i128 min = is_signed ? -(ref::i128(1) << (bits - 1)) : 0;
    ref::i128 v = 0;
    switch (g.below(6)) {
    case 0: { // edges, shift counts around the width
        const ref::i128 edges[] = {0, 1, -1, 2, min, max, min + 1, max - 1, bits - 1, bits, bits + 1, 7, 8, 3};
        v = edges[g.below(std::size(edges))];
        break;
    }
    case 1:
    case 2: v = g.between(-20, 40); break;
    case 3: v = g.between(-1000, 1000); break;
    default: v = static_cast<ref::i128>(g.next()); break; // any bit pattern (wrapped below)
    }
    return ref::from_int(d, v);
}

// The narrow float of dtype `d` with code `c` (in the format's low bits).
scalar narrow_code(dtype d, std::uint8_t c) {
    return ref::with_type(d, [&](auto t) -> scalar {
        using T = typename decltype(t)::type;
        if constexpr (mixt::is_narrow_float_v<T>)
            return ref::make<T>(T::from_bits(c));
        else
            throw std::logic_error("narrow_code: not a narrow float");
    });
}

// A double, rounded to `d` by mixt::convert where it is not representable.
double random_real(dtype d, rng& g) {
    static const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0, 127.5, 255.5, 0.1,
                                      65504.0, 65520.0, 1e5, -1e10, 0x1p24 + 1, 0x1p31, 0x1p32, 0x1p53 + 1, 0x1p63,
                                      -0x1p63, 0x1p64, 1e300, -1e38, 3.4028234663852886e38, 0x1p-126, 0x1p-149,
                                      0x1p-24, 0x1p-14, 0x1p-1022, 0x1p-1074, 1e-8, 2049.0, 257.0, 4097.0,
                                      1.0 / 3, -0.1,
                                      std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity()};
    // Values that f16, bf16 or f32 round (their neighbours are what the leaves hold), for comparisons with the
    // same values as literals.
    static const double rounded[] = {0.1, -0.1, 1.0 / 3, 2049.0, 257.0, 4097.0, 65519.0, 0x1p24 + 1, 1e-8};
    switch (g.below(11)) {
    case 0:
    case 1:
    case 2: return specials[g.below(std::size(specials))];
    case 10: return rounded[g.below(std::size(rounded))];
    case 3:
    case 4:
    case 5: return static_cast<double>(g.between(-64, 64)) / static_cast<double>(1 + g.below(8));
    case 6:
    case 7: {
        // Any magnitude: for a narrow float, within its own exponent range (a magnitude up to 2^40 would be
        // its overflow value, NaN or inf, most of the time).
        int lo = -40, hi = 40;
        if (mixt::is_small_float(d)) {
            const mixt::float_format f = mixt::detail::format_of(d);
            lo = 1 - f.bias - f.mantissa;
            hi = (1 << f.exponent) - 1 - f.bias;
        }
        return (g.below(2) != 0 ? 1.0 : -1.0) * g.uniform() * std::ldexp(1.0, static_cast<int>(g.between(lo, hi)));
    }
    default: { // any bit pattern of the dtype: subnormals, NaN payloads
        const std::uint64_t b = g.next();
        if (mixt::is_small_float(d)) // any code of the format (its low `bits` bits): subnormals, NaN codes
            return ref::to_double(narrow_code(d, static_cast<std::uint8_t>(b & ((1u << mixt::detail::format_of(d).bits) - 1u))));
        switch (d) {
        case dtype::float16: return static_cast<double>(Eigen::numext::bit_cast<Eigen::half>(static_cast<std::uint16_t>(b)));
        case dtype::bfloat16:
            return static_cast<double>(Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<std::uint16_t>(b)));
        case dtype::float32: return static_cast<double>(Eigen::numext::bit_cast<float>(static_cast<std::uint32_t>(b)));
        default: return Eigen::numext::bit_cast<double>(b);
        }
    }
    }
}

scalar random_scalar(dtype d, rng& g) {
    if (d == dtype::bool_) return ref::make<bool>(g.below(2) != 0);
    if (ref::is_int(d)) return random_int(d, g);
    if (ref::is_float(d)) return ref::from_double(d, random_real(d, g));
    const dtype comp = ref::component_of(d);
    const double re = ref::to_double(ref::from_double(comp, random_real(comp, g)));
    const double im = g.below(4) == 0 ? 0.0 : ref::to_double(ref::from_double(comp, random_real(comp, g)));
    return ref::from_c128(d, ref::c128(re, im));
}

// --- printing ----------------------------------------------------------------------------------------------------

std::string show(const scalar& s) {
    std::ostringstream o;
    o << mixt::short_name(ref::dtype_of(s)) << ' ';
    std::visit(
        [&](auto v) {
            using T = decltype(v);
            if constexpr (ref::is_no_value_v<T>) {
                o << "(no value)";
            } else if constexpr (std::is_same_v<T, bool>) {
                o << (v ? "true" : "false");
            } else if constexpr (mixt::is_narrow_int_v<T>) {
                o << v.value();
            } else if constexpr (mixt::is_narrow_float_v<T>) {
                o << std::setprecision(17) << static_cast<double>(v) << " [code 0x" << std::hex << +v.bits() << std::dec
                  << ']';
            } else if constexpr (std::is_integral_v<T>) {
                o << +v;
            } else if constexpr (std::is_same_v<T, ref::c64> || std::is_same_v<T, ref::c128>) {
                o << std::setprecision(17) << '(' << v.real() << ", " << v.imag() << ')';
            } else {
                o << std::setprecision(17) << static_cast<double>(v) << " [" << std::hexfloat
                  << static_cast<double>(v) << ']' << std::defaultfloat;
            }
        },
        s);
    return o.str();
}

std::string dims_text(const std::vector<Eigen::Index>& d) {
    std::string s = "[";
    for (std::size_t k = 0; k < d.size(); ++k) s += (k ? ", " : "") + std::to_string(d[k]);
    return s + "]";
}

// --- comparison ----------------------------------------------------------------------------------------------------

// The position of a real float among all values of its dtype: adjacent values differ by one, -0 == +0.
std::int64_t ordered(const scalar& s) {
    std::uint64_t bits = 0, sign = 0;
    if (mixt::is_small_float(ref::dtype_of(s))) {
        // The code, sign and magnitude as the format lays them out (e8m0fnu has no sign: its code is its place).
        std::visit(
            [&](auto v) {
                using T = decltype(v);
                if constexpr (mixt::is_narrow_float_v<T>) {
                    bits = v.bits();
                    sign = mixt::detail::narrow_float_traits<T::value_dtype>::sign_bit;
                }
            },
            s);
        const auto mag = static_cast<std::int64_t>(bits & ~sign);
        return (bits & sign) != 0 ? -mag : mag;
    }
    switch (ref::dtype_of(s)) {
    case dtype::float16:
        bits = Eigen::numext::bit_cast<std::uint16_t>(std::get<Eigen::half>(s));
        sign = 0x8000;
        break;
    case dtype::bfloat16:
        bits = Eigen::numext::bit_cast<std::uint16_t>(std::get<Eigen::bfloat16>(s));
        sign = 0x8000;
        break;
    case dtype::float32:
        bits = Eigen::numext::bit_cast<std::uint32_t>(std::get<float>(s));
        sign = 0x80000000u;
        break;
    default:
        bits = Eigen::numext::bit_cast<std::uint64_t>(std::get<double>(s));
        sign = 0x8000000000000000u;
        break;
    }
    const auto mag = static_cast<std::int64_t>(bits & ~sign);
    return (bits & sign) != 0 ? -mag : mag;
}

double ulp_distance(const scalar& a, const scalar& b) {
    const std::int64_t x = ordered(a), y = ordered(b);
    return x > y ? static_cast<double>(static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(y))
                 : static_cast<double>(static_cast<std::uint64_t>(y) - static_cast<std::uint64_t>(x));
}

int min_exponent(dtype comp) {
    switch (comp) {
    case dtype::float16: return -14;
    case dtype::float64: return -1022;
    default: return -126;
    }
}

// The spacing of the component dtype at magnitude m.
long double ulp_at(dtype comp, long double m) {
    const int p = ref::component_precision(comp);
    int e = min_exponent(comp);
    if (m != 0 && std::isfinite(m)) e = std::max(e, std::ilogb(m));
    return std::ldexp(1.0L, e - (p - 1));
}

bool same_bits(const scalar& got, const scalar& want) {
    if (got.index() != want.index()) return false;
    const dtype d = ref::dtype_of(got);
    if (ref::is_float(d)) {
        if (ref::is_nan(got) || ref::is_nan(want)) return ref::is_nan(got) && ref::is_nan(want);
        return ordered(got) == ordered(want) && std::signbit(ref::to_double(got)) == std::signbit(ref::to_double(want));
    }
    if (ref::is_complex(d)) {
        const dtype comp = ref::component_of(d);
        const ref::c128 g = ref::to_c128(got), w = ref::to_c128(want);
        return same_bits(ref::from_double(comp, g.real()), ref::from_double(comp, w.real())) &&
               same_bits(ref::from_double(comp, g.imag()), ref::from_double(comp, w.imag()));
    }
    return got == want;
}

bool close_real(const scalar& got, const scalar& want, double tol) {
    const bool gn = ref::is_nan(got), wn = ref::is_nan(want);
    if (gn || wn) return gn && wn;
    return ulp_distance(got, want) <= tol;
}

bool close_complex(const scalar& got, const scalar& want, double tol) {
    const dtype comp = ref::component_of(ref::dtype_of(want));
    const ref::c128 g = ref::to_c128(got), w = ref::to_c128(want);
    const auto part = [&](double x) { return ref::from_double(comp, x); };
    const auto finite = [](ref::c128 z) { return std::isfinite(z.real()) && std::isfinite(z.imag()); };
    const auto infinite = [](ref::c128 z) { return std::isinf(z.real()) || std::isinf(z.imag()); };
    const long double m = std::max(std::fabs(static_cast<long double>(w.real())), std::fabs(static_cast<long double>(w.imag())));
    const long double max = comp == dtype::float32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    // An error bound of 2^p ulps or more (std::pow of complex values at a huge |y log x|): no digit is known.
    if (tol >= std::ldexp(1.0, ref::component_precision(comp))) return true;
    // The reference computes in long double, whose range is wider; at the edges of the dtype's range the
    // intermediate results of the dtype's own algorithms (C's Annex G for * and /, exp(y log x) for pow)
    // overflow where the reference's do not:
    //   - a complex value with an infinite part is an infinity, whatever its other part: where the exact result
    //     overflows, only that is defined;
    //   - where the exact result is NaN (an indeterminate form), Annex G's recovery may find an infinity;
    //   - a result in the top half of the range may overflow on the way;
    //   - libgcc's complex division (GCC 12's __divdc3) returns NaN + NaN i for some quotients that overflow:
    //     (5.5 + 5.33i) / (2.2250738585072014e-308 + 0i) is NaN, not an infinity.
    if (infinite(w)) return infinite(g) || (std::isnan(g.real()) && std::isnan(g.imag()));
    if (!finite(w)) {
        if (!finite(g) && (infinite(g) || std::isnan(g.real()) != std::isnan(w.real()) ||
                           std::isnan(g.imag()) != std::isnan(w.imag())))
            return true;
        // NaN parts as NaN, finite parts within tol ulps of themselves
        return close_real(part(g.real()), part(w.real()), tol) && close_real(part(g.imag()), part(w.imag()), tol);
    }
    if (!finite(g)) return infinite(g) && m >= max / 2;
    // Normwise: both components within tol ulps of the larger component's magnitude.
    const long double allowed = tol * ulp_at(comp, m);
    return std::fabs(static_cast<long double>(g.real()) - w.real()) <= allowed &&
           std::fabs(static_cast<long double>(g.imag()) - w.imag()) <= allowed;
}

int precision(dtype d) {
    return ref::is_float(d) || ref::is_complex(d) ? ref::component_precision(d) : 64;
}

// Whether `got` (of the dtype mixt wrote) matches `want` (the reference's value in the expression's value dtype
// `v`, with its tolerance).
bool matches(const scalar& got, const scalar& want, double tol) {
    const dtype g = ref::dtype_of(got), v = ref::dtype_of(want);
    if (tol == 0) return same_bits(got, ref::convert(want, g));
    // Within a tolerance: compared in the less precise of the two dtypes (a result within 2 ulp of f32 is
    // further than 2 ulp of f64 from the exact value once widened).
    if (precision(g) < precision(v)) {
        const scalar w = ref::convert(want, g);
        return ref::is_complex(g) ? close_complex(got, w, tol) : close_real(got, w, tol);
    }
    if (ref::is_complex(g) && !ref::is_complex(v)) {
        if (ref::to_c128(got).imag() != 0 || std::signbit(ref::to_c128(got).imag())) return false;
    }
    const scalar gv = ref::convert(got, v);
    return ref::is_complex(v) ? close_complex(gv, want, tol) : close_real(gv, want, tol);
}

std::string inputs_at(const std::vector<leaf_view>& leaves, std::size_t i) {
    std::string s;
    for (std::size_t k = 0; k < leaves.size(); ++k) s += "\n      t" + std::to_string(k) + " = " + show(leaves[k].values[i]);
    return s;
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// What the run compared, printed at the end: a test that silently compares nothing should show.
struct counts {
    long trees = 0, overflow_trees = 0, exact = 0, within = 0, reductions = 0, reduced_values = 0;
} totals;

// The largest tolerance of a tree's values (0: every value exact), by tree number: verify records it, for
// verify_reductions, which runs after it on the same tree.
std::map<int, double> inexact_tree_tol;

class report : public ::testing::Environment {
public:
    void TearDown() override {
        std::printf("expr.differential: %ld trees, %ld of them expecting mixt::overflow_error; %ld results compared "
                    "bit for bit, %ld within a tolerance; %ld reductions, %ld reduced values\n",
                    totals.trees, totals.overflow_trees, totals.exact, totals.within, totals.reductions,
                    totals.reduced_values);
    }
};
[[maybe_unused]] ::testing::Environment* const report_environment = ::testing::AddGlobalTestEnvironment(new report);


} // namespace

std::uint64_t leaf_seed(int tree, int leaf) {
    rng g{static_cast<std::uint64_t>(tree) * 1000003u + static_cast<std::uint64_t>(leaf)};
    return g.next();
}

std::vector<ref::scalar> random_values(mixt::dtype d, std::size_t n, std::uint64_t seed) {
    rng g{seed};
    std::vector<ref::scalar> v;
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) v.push_back(random_scalar(d, g));
    return v;
}

std::vector<Eigen::Index> broadcast_dims(const std::vector<leaf_view>& leaves) {
    std::size_t rank = 0;
    for (const auto& l : leaves) rank = std::max(rank, l.dims.size());
    std::vector<Eigen::Index> out(rank, 1);
    for (const auto& l : leaves) {
        const std::size_t lead = rank - l.dims.size();
        for (std::size_t k = 0; k < l.dims.size(); ++k) {
            Eigen::Index& o = out[lead + k];
            const Eigen::Index d = l.dims[k];
            if (d == o || d == 1) continue;
            if (o != 1) throw std::invalid_argument("broadcast_dims: the leaves' shapes do not broadcast");
            o = d;
        }
    }
    return out;
}

namespace {
/// Leaf `l`'s values at every element of the result of shape `out` (in the layout's order): a leaf of lower
/// rank is aligned at the last dimension, and a dimension of size 1 repeats its element.
leaf_view expand(const leaf_view& l, const std::vector<Eigen::Index>& out, bool row_major) {
    const std::size_t rank = out.size(), lead = rank - l.dims.size();
    std::size_t n = 1;
    for (const auto d : out) n *= static_cast<std::size_t>(d);
    // The leaf's own strides in elements, per result dimension (0 where it is stretched or absent).
    std::vector<std::size_t> stride(rank, 0);
    std::size_t s = 1;
    for (std::size_t j = 0; j < l.dims.size(); ++j) {
        const std::size_t k = row_major ? l.dims.size() - 1 - j : j; // from the fastest-varying dimension
        if (l.dims[k] != 1) stride[lead + k] = s;
        s *= static_cast<std::size_t>(l.dims[k]);
    }
    leaf_view e{l.type, {}, out};
    e.values.reserve(n);
    std::vector<Eigen::Index> idx(rank, 0);
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t at = 0;
        for (std::size_t k = 0; k < rank; ++k) at += static_cast<std::size_t>(idx[k]) * stride[k];
        e.values.push_back(l.values.at(at));
        // The next index in the layout's order.
        for (std::size_t j = 0; j < rank; ++j) {
            const std::size_t k = row_major ? rank - 1 - j : j;
            if (++idx[k] < out[k]) break;
            idx[k] = 0;
        }
    }
    return e;
}
} // namespace

void verify(const tree_case& c, const std::vector<leaf_view>& given, const outcome& out) {
    const std::string what = "tree " + std::to_string(c.id) + ": " + c.expr + "\n  reference form: " + c.ref;
    SCOPED_TRACE(what);
    ++totals.trees;

    ref::node root = ref::parse(c.ref);
    // Every leaf's values at every element of the broadcast result.
    const std::vector<Eigen::Index> shape = broadcast_dims(given);
    std::vector<leaf_view> leaves;
    for (const auto& l : given) leaves.push_back(expand(l, shape, out.row_major));
    std::vector<dtype> leaf_dtypes;
    for (const auto& l : leaves) leaf_dtypes.push_back(l.type);
    std::vector<ref::overflow> overflows;
    try {
        overflows = ref::type(root, leaf_dtypes, ref::table::published());
    } catch (const ref::type_error& x) {
        ADD_FAILURE() << "the reference finds the expression ill-typed: " << x.what();
        return;
    }

    // Types: the generator's node, the reference's, and mixt's agree.
    EXPECT_EQ(mixt::short_name(root.tag), std::string_view(c.tag)) << "reference vs generator: lattice node";
    EXPECT_EQ(mixt::short_name(out.tag), mixt::short_name(root.tag)) << "mixt vs reference: lattice node";
    EXPECT_EQ(mixt::short_name(out.value_dtype), mixt::short_name(root.value)) << "mixt vs reference: value dtype";
    if (out.value_dtype != root.value) return;

    // Literals out of range: every evaluation throws mixt::overflow_error naming the value and the dtype, and
    // writes nothing.
    EXPECT_EQ(!overflows.empty(), c.overflow) << "reference vs generator: does a literal overflow?";
    std::vector<const run*> runs = {&out.eval, &out.assign};
    if (*out.lowered.how != '\0') runs.push_back(&out.lowered);
    if (!overflows.empty()) {
        const ref::overflow& o = overflows.front();
        const std::string value = show(o.value).substr(show(o.value).find(' ') + 1);
        for (const run* r : runs) {
            if (!r->overflow) {
                ADD_FAILURE() << r->how << " did not throw mixt::overflow_error; the literal " << value
                              << " does not fit " << mixt::name(o.target) << " (in " << ref::name_of(o.in) << ")";
                continue;
            }
            const std::string& msg = *r->overflow;
            EXPECT_TRUE(contains(msg, value)) << r->how << ": the message does not name the value " << value << ": "
                                              << msg;
            EXPECT_TRUE(contains(msg, mixt::name(o.target)) || contains(msg, mixt::short_name(o.target)))
                << r->how << ": the message does not name the dtype " << mixt::name(o.target) << ": " << msg;
        }
        EXPECT_TRUE(out.assign.untouched) << "mixt::assign threw but wrote into the destination";
        ++totals.overflow_trees;
        return;
    }
    for (const run* r : runs)
        if (r->overflow) ADD_FAILURE() << r->how << " threw mixt::overflow_error: " << *r->overflow;

    // Values, element by element.
    const std::size_t n = leaves.front().values.size();
    std::vector<std::vector<scalar>> inputs;
    for (const auto& l : leaves) inputs.push_back(l.values);
    std::vector<ref::evaluated> want;
    want.reserve(n);
    for (std::size_t i = 0; i < n; ++i) want.push_back(ref::evaluate(root, inputs, i));
    double& tree_tol = inexact_tree_tol[c.id];
    for (const auto& w : want) tree_tol = std::max(tree_tol, w.tol);
    for (std::size_t i = 0; i < n; ++i)
        if (want[i].consumed) {
            ADD_FAILURE() << "an inexact value feeds another operation: the tree cannot be checked";
            return;
        }

    for (const run* r : runs) {
        if (!r->ran) continue;
        EXPECT_EQ(dims_text(r->dims), dims_text(leaves.front().dims)) << r->how << ": shape";
        if (r->values.size() != n) {
            ADD_FAILURE() << r->how << ": " << r->values.size() << " elements, expected " << n;
            continue;
        }
        int reported = 0, wrong = 0;
        for (std::size_t i = 0; i < n; ++i) {
            ++(want[i].tol == 0 ? totals.exact : totals.within);
            if (matches(r->values[i], want[i].v, want[i].tol)) continue;
            ++wrong;
            if (reported++ < 4)
                ADD_FAILURE() << r->how << ", element " << i << ":\n    got      " << show(r->values[i])
                              << "\n    expected " << show(ref::convert(want[i].v, ref::dtype_of(r->values[i])))
                              << " (reference value " << show(want[i].v) << ")"
                              << (want[i].tol != 0 ? ", within " + std::to_string(want[i].tol) + " ulp" : "")
                              << "\n    inputs:" << inputs_at(leaves, i);
        }
        if (wrong > reported) ADD_FAILURE() << r->how << ": " << wrong << " of " << n << " elements differ in all";
    }
}

// --- Reductions ------------------------------------------------------------------------------------------------
//
// The elements are mixt::eval's (verified above against the reference); each is converted to the accumulator
// dtype (mixt::convert, the definition of a conversion) and reduced here: integers exactly, modulo 2^128 and
// then wrapped to the result's width (what a sum or product wrapping at the accumulator's width gives); floats
// in long double, compared within the bound of a blocked pairwise sum (each of mixt's lanes adds up to 128
// terms in a row, the blocks combine pairwise): (128 + log2 n + 2) eps of the accumulator times the sum of
// magnitudes, plus an ulp of the result's dtype; min, max, argmin, argmax, any and all exactly (NaN first,
// -0 < +0, the first index of the extreme).

namespace {

using mixt::reduce_kind;

struct reduce_layout {
    std::vector<Eigen::Index> in_dims, out_dims;
    bool row_major;
};

// The logical index of flat (memory-order) position i of dims.
std::vector<Eigen::Index> unravel(std::size_t i, const std::vector<Eigen::Index>& dims, bool row_major) {
    std::vector<Eigen::Index> idx(dims.size());
    auto rest = static_cast<Eigen::Index>(i);
    for (std::size_t k = 0; k < dims.size(); ++k) {
        const std::size_t d = row_major ? dims.size() - 1 - k : k;
        idx[d] = rest % dims[d];
        rest /= dims[d];
    }
    return idx;
}
std::size_t ravel(const std::vector<Eigen::Index>& idx, const std::vector<Eigen::Index>& dims, bool row_major) {
    std::size_t flat = 0;
    for (std::size_t k = 0; k < dims.size(); ++k) {
        const std::size_t d = row_major ? k : dims.size() - 1 - k;
        flat = flat * static_cast<std::size_t>(dims[d]) + static_cast<std::size_t>(idx[d]);
    }
    return flat;
}

long double eps_of(dtype d) { return std::ldexp(1.0L, 1 - ref::component_precision(d)); }
long double max_finite(dtype d) {
    switch (ref::component_of(d)) {
    case dtype::float16: return 65504.0L;
    case dtype::bfloat16: return 3.3895313892515355e38L;
    case dtype::float32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
    }
}

// A real float result m against the exact value e: bound `b` (absolute), non-finite cases by class.
bool close_reduced(long double m, long double e, long double b, long double magnitude, dtype acc, bool prod) {
    if (std::isnan(e)) return std::isnan(m);
    // Partial results can overflow the accumulator (or, for a product, under- or overflow) where the exact
    // value does not: then anything non-finite or huge is accepted.
    const bool may_overflow = prod ? true : magnitude > max_finite(acc) / 4;
    if (std::isinf(e)) return std::isinf(m) ? m == e : (may_overflow && (std::isnan(m) || std::fabs(m) > max_finite(acc) / 4));
    if (!std::isfinite(m)) return may_overflow || std::fabs(e) > max_finite(acc) / 2;
    return std::fabs(m - e) <= b;
}

long double ulp_at(long double x, dtype d) {
    const int p = ref::component_precision(ref::component_of(d));
    int e = 0;
    std::frexp(x, &e);
    const int min_exp = ref::component_of(d) == dtype::float16 ? -13 : ref::component_of(d) == dtype::float32 ? -125
                        : ref::component_of(d) == dtype::bfloat16 ? -125 : -1021;
    return std::ldexp(1.0L, std::max(e, min_exp) - p);
}

} // namespace

void verify_reductions(const tree_case& c, const outcome& out, const std::vector<reduction_run>& runs) {
    SCOPED_TRACE("tree " + std::to_string(c.id) + ": " + c.expr);
    for (const reduction_run& r : runs) {
        SCOPED_TRACE(r.how);
        ++totals.reductions;
        if (out.eval.overflow) {
            EXPECT_TRUE(r.overflow) << "mixt::eval threw overflow_error; the reduction did not";
            continue;
        }
        if (!out.eval.ran) continue;
        if (r.overflow) {
            ADD_FAILURE() << "threw mixt::overflow_error: " << *r.overflow;
            continue;
        }
        const std::vector<Eigen::Index>& in_dims = out.eval.dims;
        const std::size_t n = out.eval.values.size();
        std::vector<bool> reduced(in_dims.size(), false);
        for (const int a : r.axes) reduced[static_cast<std::size_t>(a)] = true;
        std::vector<Eigen::Index> kept_dims; // the output's logical dims, with keepdims
        for (std::size_t d = 0; d < in_dims.size(); ++d) kept_dims.push_back(reduced[d] ? 1 : in_dims[d]);
        std::vector<Eigen::Index> out_dims;
        for (std::size_t d = 0; d < in_dims.size(); ++d)
            if (!reduced[d] || r.keep) out_dims.push_back(kept_dims[d]);
        std::size_t outputs = 1, per_output = 1;
        for (std::size_t d = 0; d < in_dims.size(); ++d) (reduced[d] ? per_output : outputs) *= static_cast<std::size_t>(in_dims[d]);
        const bool extreme = r.kind == reduce_kind::min || r.kind == reduce_kind::max || r.kind == reduce_kind::argmin ||
                             r.kind == reduce_kind::argmax;
        if (per_output == 0 && outputs > 0 && extreme) {
            EXPECT_TRUE(r.shape_error) << "a reduction of nothing did not throw mixt::shape_error";
            continue;
        }
        if (r.shape_error) {
            ADD_FAILURE() << "threw mixt::shape_error: " << *r.shape_error;
            continue;
        }
        ASSERT_TRUE(r.ran);
        EXPECT_EQ(dims_text(r.dims), dims_text(out_dims)) << "shape";
        ASSERT_EQ(r.values.size(), outputs);
        // The elements of each output, in the input's memory order, with their index along the reduced axes
        // (argmin/argmax: the flat index in memory order over all axes, the index along the axis for one).
        std::vector<std::vector<std::pair<scalar, Eigen::Index>>> groups(outputs);
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<Eigen::Index> idx = unravel(i, in_dims, out.row_major);
            Eigen::Index along = r.axes.size() == 1 ? idx[static_cast<std::size_t>(r.axes[0])] : static_cast<Eigen::Index>(i);
            std::vector<Eigen::Index> o = idx;
            for (std::size_t d = 0; d < o.size(); ++d)
                if (reduced[d]) o[d] = 0;
            groups[ravel(o, kept_dims, out.row_major)].push_back({out.eval.values[i], along});
        }
        int reported = 0;
        for (std::size_t g = 0; g < outputs; ++g) {
            const auto& elems = groups[g];
            const scalar& got = r.values[g];
            ++totals.reduced_values;
            std::string failure;
            const dtype acc = r.accumulator;
            std::vector<scalar> xs;
            for (const auto& e : elems) xs.push_back(ref::convert(e.first, acc));
            switch (r.kind) {
            case reduce_kind::any:
            case reduce_kind::all: {
                bool v = r.kind == reduce_kind::all;
                for (const auto& x : xs) v = r.kind == reduce_kind::any ? (v || std::get<bool>(x)) : (v && std::get<bool>(x));
                if (std::get<bool>(got) != v) failure = "expected " + std::string(v ? "true" : "false");
                break;
            }
            case reduce_kind::min:
            case reduce_kind::max:
            case reduce_kind::argmin:
            case reduce_kind::argmax: {
                const bool is_min = r.kind == reduce_kind::min || r.kind == reduce_kind::argmin;
                std::size_t best = 0;
                for (std::size_t k = 1; k < xs.size(); ++k) {
                    if (ref::is_nan(xs[best])) break;
                    if (ref::is_nan(xs[k])) {
                        best = k;
                        break;
                    }
                    // min/max order -0 before +0 (complex values: lexicographically, each part so); argmin
                    // and argmax compare values (equal ones keep the first index).
                    const bool signed_zeros = r.kind == reduce_kind::min || r.kind == reduce_kind::max;
                    const auto before = [&](const scalar& a, const scalar& b) {
                        // (ref::detail::less orders -0 below +0, as min and max do: argmin and argmax of real
                        // floats compare the values alone, -0 == +0, README's "Reductions")
                        if (!signed_zeros && ref::is_float(acc)) return ref::to_double(a) < ref::to_double(b);
                        if (!signed_zeros || !(ref::is_float(acc) || ref::is_complex(acc))) return ref::detail::less(a, b);
                        const auto part_less = [](double x, double y) {
                            return x < y || (x == y && std::signbit(x) && !std::signbit(y));
                        };
                        if (ref::is_float(acc)) return part_less(ref::to_double(a), ref::to_double(b));
                        const ref::c128 p = ref::to_c128(a), q = ref::to_c128(b);
                        if (part_less(p.real(), q.real())) return true;
                        if (part_less(q.real(), p.real())) return false;
                        return part_less(p.imag(), q.imag());
                    };
                    if (is_min ? before(xs[k], xs[best]) : before(xs[best], xs[k])) best = k;
                }
                if (r.kind == reduce_kind::argmin || r.kind == reduce_kind::argmax) {
                    // Elements known within `tol` ulps only (an inexact root: f32's exp on one path may differ
                    // from another's by an ulp): the reduction recomputes them, so its extreme may be another
                    // element within twice the tolerance of each other's exact values, 4 tol of eval's values.
                    const double tol = inexact_tree_tol[c.id];
                    const auto got_at = std::find_if(elems.begin(), elems.end(),
                                                     [&](const auto& e) { return e.second == ref::to_int(got); });
                    const bool near = tol != 0 && ref::is_float(acc) && got_at != elems.end() &&
                                      close_real(ref::convert(got_at->first, acc), xs[best], 4 * tol);
                    if (ref::to_int(got) != elems[best].second && !near)
                        failure = "expected index " + std::to_string(elems[best].second) + " (" + show(elems[best].first) + ")";
                } else {
                    const scalar want = ref::convert(xs[best], r.result);
                    if (ref::is_nan(want) ? !ref::is_nan(got) : !same_bits(got, want)) failure = "expected " + show(want);
                }
                break;
            }
            case reduce_kind::sum:
            case reduce_kind::prod:
            case reduce_kind::mean: {
                const bool prod = r.kind == reduce_kind::prod;
                if (ref::is_int(acc) || ref::is_bool(acc)) {
                    ref::u128 v = prod ? 1 : 0;
                    for (const auto& x : xs) {
                        const auto w = static_cast<ref::u128>(ref::to_int(x));
                        v = prod ? v * w : v + w;
                    }
                    if (r.kind == reduce_kind::mean) {
                        // Exact sums of up to 32-bit integers: the quotient rounded once (double rounding allowed:
                        // mixt divides in double).
                        const long double q = static_cast<long double>(static_cast<ref::i128>(v)) / static_cast<long double>(xs.size());
                        const long double m = ref::to_double(got);
                        if (!(std::fabs(m - q) <= ulp_at(q, r.result))) failure = "expected about " + std::to_string(static_cast<double>(q));
                    } else {
                        const scalar want = ref::from_int(r.result, static_cast<ref::i128>(v));
                        if (!same_bits(got, want)) failure = "expected " + show(want);
                    }
                } else if (ref::is_float(acc)) {
                    long double v = prod ? 1 : 0, mag = 0;
                    bool moderate = true; // a product is bounded only where no partial product can under- or overflow
                    for (const auto& x : xs) {
                        const long double a = std::fabs(static_cast<long double>(ref::to_double(x)));
                        moderate = moderate && a >= 0x1p-8L && a <= 0x1p8L;
                    }
                    for (const auto& x : xs) {
                        const long double w = ref::to_double(x);
                        v = prod ? v * w : v + w;
                        mag = prod ? mag : mag + std::fabs(w);
                    }
                    const long double count = static_cast<long double>(xs.size());
                    long double b = (130 + std::log2(count + 1)) * eps_of(acc) * (prod ? std::fabs(v) * count : mag);
                    if (r.kind == reduce_kind::mean) {
                        v /= count;
                        b = b / count + eps_of(acc) * std::fabs(v);
                    }
                    b += ulp_at(v, r.result);
                    if (prod && !moderate) {
                        if (std::isnan(v) != ref::is_nan(got) && !std::isinf(v) && std::isfinite(ref::to_double(got)))
                            failure = "NaN where the exact product is not, or the other way";
                        break;
                    }
                    if (!close_reduced(ref::to_double(got), v, b, mag, acc, prod))
                        failure = "expected about " + std::to_string(static_cast<double>(v)) + " within " + std::to_string(static_cast<double>(b));
                } else { // complex
                    std::complex<long double> v = prod ? 1 : 0;
                    long double mag = 0;
                    bool finite = true;
                    for (const auto& x : xs) {
                        const ref::c128 w = ref::to_c128(x);
                        finite = finite && std::isfinite(w.real()) && std::isfinite(w.imag());
                        const std::complex<long double> wl(w.real(), w.imag());
                        v = prod ? v * wl : v + wl;
                        mag += std::fabs(wl.real()) + std::fabs(wl.imag());
                    }
                    const long double count = static_cast<long double>(xs.size());
                    if (r.kind == reduce_kind::mean) v /= count;
                    const ref::c128 m = ref::to_c128(got);
                    // Products of complex values (and anything with infinities or NaN) are checked for finiteness
                    // only: their componentwise error has no simple bound.
                    if (prod || !finite || mag > max_finite(acc) / 4) {
                        if (finite && !prod && mag <= max_finite(acc) / 4 &&
                            !(std::isfinite(m.real()) && std::isfinite(m.imag())))
                            failure = "expected a finite value";
                        break;
                    }
                    long double b = (130 + std::log2(count + 1)) * eps_of(acc) * mag;
                    if (r.kind == reduce_kind::mean) b /= count;
                    b += ulp_at(std::abs(v), r.result);
                    if (std::fabs(m.real() - v.real()) > b || std::fabs(m.imag() - v.imag()) > b)
                        failure = "expected about (" + std::to_string(static_cast<double>(v.real())) + ", " +
                                  std::to_string(static_cast<double>(v.imag())) + ")";
                }
                break;
            }
            }
            if (!failure.empty() && reported++ < 4)
                ADD_FAILURE() << "output " << g << " (" << elems.size() << " elements): got " << show(got) << ", " << failure;
        }
    }
}

} // namespace mixt_test::diff
