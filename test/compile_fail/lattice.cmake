# Compile tests of the lattice layer: a user policy that is not a lattice, and an undefined promotion at an
# entry point that needs one, each stop compilation with mixt's own message. Every failing snippet has a
# valid twin that differs from it in one line and must compile (the positive control), so a case cannot
# pass because of an unrelated error in the shared code.

# The test/lattice build rules (generated promotion table, compile-only table checks) live next to those
# tests; test/CMakeLists.txt includes them too (include_guard: once), so this file also works on its own.
include("${CMAKE_CURRENT_LIST_DIR}/../lattice/lattice.cmake")

set(_mixt_user_nodes [=[
#include <string_view>
#include <type_traits>
#include <boost/hana/map.hpp>
#include <mixt/lattice/promote.hpp>
struct a { static constexpr std::string_view name = "a"; };
struct b { static constexpr std::string_view name = "b"; };
struct c { static constexpr std::string_view name = "c"; };
struct d { static constexpr std::string_view name = "d"; };
#define MIXT_TEST_POLICY(NAME, ...)                                                        \
    struct NAME {                                                                          \
        static constexpr std::string_view name = #NAME;                                    \
        static constexpr auto edges = boost::hana::make_map(__VA_ARGS__);                   \
        static constexpr auto weak_types = boost::hana::make_map();                        \
    };
]=])

# A policy that is not a lattice stops compilation with mixt's message first, then the entry point that
# needed a join fails too: up to 4 errors (a user's policy, not a user's expression; the expression errors
# above allow one).
# A cycle: a -> b -> c -> a. The valid twin drops the edge c -> a.
set(_cycle_use "static_assert(std::is_same_v<mixt::promote_t<a, b, user>, b>);")
mixt_expect_compile_fail(lattice.policy_cycle
  CODE "${_mixt_user_nodes}\nMIXT_TEST_POLICY(user, mixt::up<a, b>, mixt::up<b, c>, mixt::up<c, a>)\n${_cycle_use}"
  REGEX "mixt: the policy's edges contain a cycle" MAX_ERRORS 4 MAX_LINES 200)
mixt_expect_compile_fail(lattice.policy_cycle_names_the_pair
  CODE "${_mixt_user_nodes}\nMIXT_TEST_POLICY(user, mixt::up<a, b>, mixt::up<b, c>, mixt::up<c, a>)\n${_cycle_use}"
  REGEX "cycle_through<user, a, b>" MAX_ERRORS 4 MAX_LINES 200)
mixt_expect_compiles(lattice.policy_cycle_valid_twin
  CODE "${_mixt_user_nodes}\nMIXT_TEST_POLICY(user, mixt::up<a, b>, mixt::up<b, c>, mixt::up<c>)\n${_cycle_use}")

# A diamond without a single top: a and b are both below c and d, which are incomparable, so a and b have
# two least upper bounds. The valid twin orders them (c -> d), and a v b = c.
set(_diamond_use "static_assert(std::is_same_v<mixt::promote_t<a, b, user>, c>);")
mixt_expect_compile_fail(lattice.policy_diamond
  CODE "${_mixt_user_nodes}\nMIXT_TEST_POLICY(user, mixt::up<a, c, d>, mixt::up<b, c, d>)\n${_diamond_use}"
  REGEX "mixt: the policy is not a lattice: these two nodes have several least upper bounds" MAX_ERRORS 4 MAX_LINES 200)
mixt_expect_compile_fail(lattice.policy_diamond_names_the_pair
  CODE "${_mixt_user_nodes}\nMIXT_TEST_POLICY(user, mixt::up<a, c, d>, mixt::up<b, c, d>)\n${_diamond_use}"
  REGEX "no_unique_join<user, a, b>" MAX_ERRORS 4 MAX_LINES 200)
mixt_expect_compiles(lattice.policy_diamond_valid_twin
  CODE "${_mixt_user_nodes}\nMIXT_TEST_POLICY(user, mixt::up<a, c, d>, mixt::up<b, c, d>, mixt::up<c, d>)\n${_diamond_use}")

# checked_join_t, the entry point expressions use, where the join is undefined.
set(_mixt_checked [=[
#include <type_traits>
#include <mixt/lattice/promote.hpp>
namespace dt = mixt::dtypes;
struct add {};
]=])

mixt_expect_compile_fail(lattice.no_promotion_path
  CODE "${_mixt_checked}\nusing r = mixt::checked_join_t<add, mixt::policy::jax, dt::i8, dt::int4>;"
  REGEX "no available implicit dtype promotion path.*mixt::cast<T>\\(x\\)")
mixt_expect_compile_fail(lattice.no_promotion_path_names_the_pair
  CODE "${_mixt_checked}\nusing r = mixt::checked_join_t<add, mixt::policy::jax, dt::i8, dt::int4>;"
  REGEX "no_implicit_promotion<add, mixt::dtype_tag<mixt::dtype::int8>, mixt::dtype_tag<mixt::dtype::int4>, mixt::policy::jax>")
mixt_expect_compile_fail(lattice.no_promotion_path_strict
  CODE "${_mixt_checked}\nusing r = mixt::checked_join_t<add, mixt::policy::jax_strict, dt::i8, dt::i16>;"
  REGEX "no available implicit dtype promotion path")
mixt_expect_compile_fail(lattice.small_float
  CODE "${_mixt_checked}\nusing r = mixt::checked_join_t<add, mixt::policy::jax, dt::f32, dt::float8_e4m3fn>;"
  REGEX "8-bit and smaller floats do not support implicit promotion")
mixt_expect_compile_fail(lattice.small_float_pair
  CODE "${_mixt_checked}\nusing r = mixt::checked_join_t<add, mixt::policy::jax, dt::float8_e4m3fn, dt::float8_e5m2>;"
  REGEX "8-bit and smaller floats do not support implicit promotion")
mixt_expect_compile_fail(lattice.not_a_node_of_array_api
  CODE "${_mixt_checked}\nusing r = mixt::checked_join_t<add, mixt::policy::array_api, dt::f16, dt::f32>;"
  REGEX "mixt: this dtype is not a node of the policy")
mixt_expect_compiles(lattice.checked_join_valid_twins
  CODE "${_mixt_checked}
static_assert(std::is_same_v<mixt::checked_join_t<add, mixt::policy::jax, dt::i8, dt::i16>, dt::i16>);
static_assert(std::is_same_v<mixt::checked_join_t<add, mixt::policy::jax_strict, dt::i8, dt::i8>, dt::i8>);
static_assert(std::is_same_v<mixt::checked_join_t<add, mixt::policy::jax, dt::i64, dt::float8_e4m3fn>, dt::float8_e4m3fn>);
static_assert(std::is_same_v<mixt::checked_join_t<add, mixt::policy::jax, dt::float8_e5m2, dt::float8_e5m2>, dt::float8_e5m2>);
static_assert(std::is_same_v<mixt::checked_join_t<add, mixt::policy::array_api, dt::f64, dt::f32>, dt::f64>);")
