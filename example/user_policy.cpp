// A promotion policy of your own: a node mixt does not know (a 16-bit fixed-point type) and your own edges,
// in a few lines. mixt derives the rest (the join table, promote_t, the lattice check) from the edges.
// Built and run as a test (example.user_policy): main returns non-zero if a check fails.

#include <cstdint>
#include <cstdio>
#include <string_view>
#include <type_traits>

#include <boost/hana/map.hpp>

#include <mixt/mixt.hpp>

// Any class type can be a node; `name` is what tables and error messages print.
struct my_fixed16 { // Q7.8 fixed point: every int8 is exact, and every value is exact in float
    static constexpr std::string_view name = "q16";
};

// "a -> b" means a may be promoted implicitly to b. The nodes of the policy are the nodes named here.
struct fixed_point_policy {
    static constexpr std::string_view name = "fixed_point";
    static constexpr auto edges = boost::hana::make_map(
        mixt::up<mixt::dtypes::bool_, mixt::dtypes::weak_int>,          // bool -> int literal
        mixt::up<mixt::dtypes::weak_int, mixt::dtypes::i8>,             // int literal -> i8
        mixt::up<mixt::dtypes::i8, mixt::dtypes::i16, my_fixed16>,      // i8 -> i16, q16
        mixt::up<mixt::dtypes::i16, mixt::dtypes::f32>,                 // i16 -> f32
        mixt::up<my_fixed16, mixt::dtypes::f32>,                        // q16 -> f32
        mixt::up<mixt::dtypes::f32>);                                   // f32: the top
    // A result that is only an int literal is stored as i16.
    static constexpr auto weak_types = boost::hana::make_map(mixt::weak_as<mixt::dtypes::weak_int, mixt::dtypes::i16>);
};

using P = fixed_point_policy;
namespace dt = mixt::dtypes;

// Compile time: the graph is a lattice (a cycle or two least upper bounds would stop compilation with a
// message naming the two nodes), and the traits follow the edges.
static_assert(mixt::lattice<P>::is_lattice);
static_assert(std::is_same_v<mixt::promote_t<my_fixed16, dt::i8, P>, my_fixed16>);
static_assert(std::is_same_v<mixt::promote_t<my_fixed16, std::int16_t, P>, dt::f32>); // a node in: a node out
static_assert(std::is_same_v<mixt::promote_t<std::int8_t, std::int16_t, P>, std::int16_t>); // C++ types in and out
static_assert(std::is_same_v<mixt::promote_t<bool, mixt::literal_tag_t<int>, P>, dt::weak_int>);
static_assert(!mixt::has_promotion_v<std::int8_t, double, P>); // f64 is not a node of this policy

int main() {
    int failures = 0;
    auto check = [&](bool ok, const char* what) {
        if (!ok) {
            std::printf("FAILED: %s\n", what);
            ++failures;
        }
    };

    // Run time: the same table through mixt::promote_types (empty where the join is not a built-in dtype).
    check(mixt::promote_types(mixt::dtype::int8, mixt::dtype::int16, P{}) == mixt::dtype::int16, "i8 + i16 -> i16");
    check(mixt::promote_types(mixt::dtype::int16, mixt::dtype::float32, P{}) == mixt::dtype::float32,
          "i16 + f32 -> f32");
    check(!mixt::promote_types(mixt::dtype::int8, mixt::dtype::uint8, P{}), "u8 is not a node: no promotion");
    check(std::is_same_v<mixt::result_storage_t<mixt::promote_t<dt::weak_int, dt::bool_, P>, P>, std::int16_t>,
          "an int literal result is stored as int16");
    check(std::is_same_v<mixt::storage_t<mixt::promote_t<my_fixed16, dt::i16, P>>, float>, "q16 + i16 is a float");

    // The join table, as mixt derived it from the edges.
    using L = mixt::lattice<P>;
    std::printf("%-4s", "");
    for (std::size_t j = 0; j < L::size; ++j)
        std::printf(" %-4.*s", static_cast<int>(L::name_of(j).size()), L::name_of(j).data());
    std::printf("\n");
    for (std::size_t i = 0; i < L::size; ++i) {
        std::printf("%-4.*s", static_cast<int>(L::name_of(i).size()), L::name_of(i).data());
        for (std::size_t j = 0; j < L::size; ++j) {
            const int k = L::join(i, j);
            const std::string_view cell = k < 0 ? std::string_view("-") : L::name_of(static_cast<std::size_t>(k));
            std::printf(" %-4.*s", static_cast<int>(cell.size()), cell.data());
        }
        std::printf("\n");
    }
    // Every pair has a join here, since every node reaches f32; i16 and q16 meet only there.
    check(L::join(L::index_of<dt::i16>, L::index_of<my_fixed16>) == static_cast<int>(L::index_of<dt::f32>),
          "i16 v q16 = f32");

    return failures == 0 ? 0 : 1;
}
