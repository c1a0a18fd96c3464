// mixt/bench.hpp on expressions the suite does not cover: explicit casts, strong scalars, a tensor used twice,
// rank 2 and row-major layout, bool results. Part of `mixt-bench --mixt_check` (ctest bench.check).
#include "suite.hpp"

namespace mixt_suite {
namespace {

template <class A, class B>
bool same_values(const A& a, const B& b) {
    if (a.size() != b.size()) return false;
    for (index_t i = 0; i < a.size(); ++i)
        if (as_pair(a.data()[i]) != as_pair(b.data()[i])) return false;
    return true;
}

// eval_unfused(e) == eval(e), and bytes_moved(e) counts the leaves' bytes given and the result's.
template <class E>
bool agrees(const char* what, const E& e, std::int64_t leaf_bytes, bool verbose) {
    const std::int64_t expected_bytes =
        mixt::bench::element_count(e) * (leaf_bytes + static_cast<std::int64_t>(sizeof(mixt::value_t<E>)));
    const auto fused = mixt::eval(e);
    const auto unfused = mixt::bench::eval_unfused(e);
    const bool values_ok = same_values(fused, unfused);
    const bool bytes_ok = mixt::bench::bytes_moved(e) == expected_bytes;
    if (verbose || !values_ok || !bytes_ok)
        std::fprintf(values_ok && bytes_ok ? stdout : stderr, "bench.hpp %s: unfused %s, bytes %lld (%s)\n", what,
                     values_ok ? "exact" : "WRONG", static_cast<long long>(mixt::bench::bytes_moved(e)),
                     bytes_ok ? "as expected" : "WRONG");
    return values_ok && bytes_ok;
}

} // namespace

bool check_bench_header(bool verbose) {
    const index_t n = 257;
    const auto a = random_tensor<i8>(n, 1);
    const auto b = random_tensor<f16>(n, 2);
    const auto c = random_tensor<float>(n, 3);
    const auto d = random_tensor<u32>(n, 4);
    bool ok = true;
    ok = agrees("cast<f32>(i8) * f16 + f32", mixt::cast<float>(mixt::lazy(a)) * b + c, 1 + 2 + 4, verbose) && ok;
    ok = agrees("i8 * strong(i16) + f16", mixt::lazy(a) * mixt::strong(std::int16_t{3}) + b, 1 + 2, verbose) && ok;
    ok = agrees("f32 * f32 (one tensor twice)", mixt::lazy(c) * c, 4, verbose) && ok;
    ok = agrees("(u32 > 7) && (i8 < 0)", (mixt::lazy(d) > 7) && (mixt::lazy(a) < 0), 4 + 1, verbose) && ok;
    ok = agrees("where(i8 > 0, u32, f16) / 2", mixt::where(mixt::lazy(a) > 0, d, b) / 2, 1 + 4 + 2, verbose) && ok;

    Eigen::Tensor<Eigen::bfloat16, 2, Eigen::RowMajor> m(3, 5);
    Eigen::Tensor<std::uint8_t, 2, Eigen::RowMajor> k(3, 5);
    random_bits g{9};
    for (index_t i = 0; i < m.size(); ++i) {
        m.data()[i] = random_value<Eigen::bfloat16>(g);
        k.data()[i] = random_value<std::uint8_t>(g);
    }
    ok = agrees("rank-2 row-major bf16 * u8 - 1", mixt::lazy(m) * k - 1, 2 + 1, verbose) && ok;

    // The traffic pass writes every element of a result of the expression's width, c128 included.
    const auto z = random_tensor<c128>(n, 5);
    auto r = zero_tensor<c128>(n);
    mixt::bench::traffic_pass(r, mixt::lazy(z) + c);
    bool traffic_ok = true;
    for (index_t i = 0; i < n; ++i) {
        std::uint64_t words[2], zw[2];
        std::uint32_t cw;
        std::memcpy(words, &r(i), 16);
        std::memcpy(zw, &z(i), 16);
        std::memcpy(&cw, &c(i), 4);
        traffic_ok = traffic_ok && words[0] == (zw[0] ^ cw) && words[1] == zw[1];
    }
    if (verbose || !traffic_ok)
        std::fprintf(traffic_ok ? stdout : stderr, "bench.hpp traffic_pass c128 + f32: %s\n",
                     traffic_ok ? "exact" : "WRONG");
    return ok && traffic_ok;
}

} // namespace mixt_suite
