// mixt/bench.hpp on expressions the suite does not cover: explicit casts, strong scalars, a tensor used twice,
// rank 2 and row-major layout, bool results; the traffic floor, streamed and not. Part of `mixt-bench --mixt_check` (ctest bench.check).
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

// The streamed floor (bench.hpp, traffic_streamed: straight from the registers) writes the bytes the scalar
// floor writes, at lengths around its steps and at every offset from a 32-byte boundary, and nothing else.
template <class R, class... Ls>
bool streamed_floor_agrees(const char* what, bool verbose) {
#if MIXT_BENCH_VECTOR_FLOOR
    bool ok = true;
    const auto leaves = std::make_tuple(random_tensor<Ls>(300, 20 + sizeof(Ls))...);
    for (const std::int64_t n : {0, 1, 7, 31, 32, 33, 127, 128, 129, 255, 300}) {
        for (std::size_t offset = 0; offset < 32 / sizeof(R) + 1; ++offset) {
            const std::size_t guard = 64;
            std::vector<unsigned char> got(static_cast<std::size_t>(n) * sizeof(R) + 2 * guard + 64, 0x5A);
            std::vector<unsigned char> want(static_cast<std::size_t>(n) * sizeof(R), 0);
            const auto base = (reinterpret_cast<std::uintptr_t>(got.data()) + guard + 31) & ~std::uintptr_t{31};
            auto* dst = reinterpret_cast<R*>(base) + offset;
            std::apply([&](const auto&... l) { mixt::bench::detail::traffic_streamed(dst, n, l.data()...); }, leaves);
            std::apply([&](const auto&... l) {
                mixt::bench::detail::traffic_range(reinterpret_cast<R*>(want.data()), 0, n, l.data()...);
            }, leaves);
            const auto* first = reinterpret_cast<const unsigned char*>(dst);
            const bool same = n == 0 || std::memcmp(first, want.data(), want.size()) == 0;
            bool untouched = true;
            for (std::size_t b = 0; b < got.size(); ++b) {
                const unsigned char* p = got.data() + b;
                if ((p < first || p >= first + want.size()) && got[b] != 0x5A) untouched = false;
            }
            ok = ok && same && untouched;
        }
    }
    if (verbose || !ok)
        std::fprintf(ok ? stdout : stderr, "bench.hpp streamed traffic floor %s: %s\n", what, ok ? "exact" : "WRONG");
    return ok;
#else
    (void)what;
    (void)verbose;
    return true;
#endif
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
    ok = streamed_floor_agrees<float, i8, float>("i8 + f32 -> f32", verbose) && ok;
    ok = streamed_floor_agrees<std::int16_t, u8, i8>("u8 + i8 -> i16", verbose) && ok;
    ok = streamed_floor_agrees<double, std::int32_t, double>("i32 + f64 -> f64", verbose) && ok;
    ok = streamed_floor_agrees<std::int64_t, u8, std::uint16_t, u32>("u8, u16, u32 -> i64", verbose) && ok;
    ok = streamed_floor_agrees<c128, c64, float, c128>("c64, f32, c128 -> c128", verbose) && ok;
    ok = streamed_floor_agrees<bool, float>("f32 -> bool (a wider leaf)", verbose) && ok;
    ok = streamed_floor_agrees<f16, bf16, float>("bf16, f32 -> f16", verbose) && ok;
    return ok && traffic_ok;
}

} // namespace mixt_suite
