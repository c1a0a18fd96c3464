// The promotion lattice at compile time and at run time, and a policy chosen for an expression.
#include <mixt/mixt.hpp>

#include <cstdint>
#include <type_traits>

int main() {
    // Joins do not depend on the bracketing; no join means no implicit promotion.
    static_assert(std::is_same_v<mixt::promote_t<std::int8_t, std::uint8_t, Eigen::half>, Eigen::half>);
    static_assert(std::is_same_v<mixt::promote_t<mixt::dtypes::u64, mixt::dtypes::i64>, mixt::dtypes::weak_float>);
    static_assert(!mixt::has_promotion_v<float, mixt::dtypes::float8_e4m3fn>);
    static_assert(mixt::promote_types(mixt::dtype::bfloat16, mixt::dtype::float16) == mixt::dtype::float32);

    // u32 + i32 is i64 under the default policy (jax), i32 under jax_x32: in a trait or for an expression.
    static_assert(std::is_same_v<mixt::promote_t<std::uint32_t, std::int32_t>, std::int64_t>);
    static_assert(std::is_same_v<mixt::promote_t<std::uint32_t, std::int32_t, mixt::policy::jax_x32>, std::int32_t>);
    Eigen::Tensor<std::uint32_t, 1> u(3);
    Eigen::Tensor<std::int32_t, 1> i(3);
    u.setValues({1, 2, 3});
    i.setValues({-1, -2, -3});
    Eigen::Tensor<std::int32_t, 1> r = mixt::eval(mixt::lazy<mixt::policy::jax_x32>(mixt::lazy(u) + i));
    return r(2) == 0 ? 0 : 1;
}
