// mixt/errors.hpp and the checks of assign/eval: every run-time error is thrown before the first
// element is written, so the destination still holds what it held (a sentinel here), and each message says
// what was wrong (the value and the dtype; both shapes). Comparisons with an out-of-range literal are not
// errors: they compare exact values (a literal that fits is compared in the join, as in jax.numpy). Each case runs on the fused loop (plain tensors) and on the lowering to
// Eigen (TensorRef leaves), which check the same way.

#include <mixt/eval/assign.hpp>
#include <mixt/expr/operators.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock-matchers.h>
#include <gtest/gtest.h>

namespace {

using ::testing::HasSubstr;

constexpr Eigen::Index n = 13;

template <class T>
Eigen::Tensor<T, 1> filled(std::initializer_list<T> head, T rest) {
    Eigen::Tensor<T, 1> t(n);
    t.setConstant(rest);
    Eigen::Index i = 0;
    for (T v : head) t(i++) = v;
    return t;
}

template <class T>
Eigen::Tensor<T, 1> sentinel() {
    Eigen::Tensor<T, 1> t(n);
    std::memset(static_cast<void*>(t.data()), 0xAB, sizeof(T) * n);
    return t;
}

template <class T>
bool holds_sentinel(const Eigen::Tensor<T, 1>& t) {
    const auto* p = reinterpret_cast<const unsigned char*>(t.data());
    for (std::size_t i = 0; i < sizeof(T) * static_cast<std::size_t>(t.size()); ++i)
        if (p[i] != 0xAB) return false;
    return true;
}

// `make` takes a leaf by value and must move it into the expression it returns: an expression holds lvalue
// operands by reference, and the parameter dies when `make` returns.
// Assigns `make(leaf)` into a sentinel-filled tensor for both kinds of leaf, expects the exception with a
// message containing each of `parts`, and the destination unchanged.
template <class Error, class D, class T, class Make>
void expect_error_untouched(const Eigen::Tensor<T, 1>& input, Make make, std::vector<std::string> parts) {
    Eigen::Tensor<T, 1> copy = input;
    const Eigen::TensorRef<Eigen::Tensor<T, 1>> ref(copy);
    for (int path = 0; path < 2; ++path) {
        SCOPED_TRACE(path == 0 ? "fused loop (Tensor leaves)" : "lowered to Eigen (TensorRef leaves)");
        auto dst = sentinel<D>();
        try {
            if (path == 0)
                mixt::assign(dst, make(mixt::lazy(input)));
            else
                mixt::assign(dst, make(mixt::lazy(ref)));
            ADD_FAILURE() << "no exception";
        } catch (const Error& e) {
            for (const auto& part : parts) EXPECT_THAT(e.what(), HasSubstr(part));
        }
        EXPECT_TRUE(holds_sentinel(dst)) << "the destination was written before the error";
    }
    // eval() throws the same, before allocating a result anyone could see.
    EXPECT_THROW((void)mixt::eval(make(mixt::lazy(input))), Error);
}

TEST(errors, literal_out_of_range_for_its_dtype) {
    const auto u8 = filled<std::uint8_t>({0, 1, 255}, 7);
    const auto i8 = filled<std::int8_t>({-128, 127}, 7);
    const auto f16 = filled<Eigen::half>({Eigen::half(1)}, Eigen::half(2));
    const auto i64 = filled<std::int64_t>({1}, 2);
    using mixt::overflow_error;
    expect_error_untouched<overflow_error, std::uint8_t>(u8, [](auto a) { return std::move(a) + 300; }, {"300", "uint8", "operator+"});
    expect_error_untouched<overflow_error, std::uint8_t>(u8, [](auto a) { return std::move(a) + (-1); }, {"-1", "uint8"});
    expect_error_untouched<overflow_error, Eigen::half>(f16, [](auto a) { return std::move(a) + 100000; }, {"100000", "float16"});
    // 65520 rounds to inf in f16; 65519 rounds to the largest finite value and is accepted (below).
    expect_error_untouched<overflow_error, Eigen::half>(f16, [](auto a) { return std::move(a) * 65520; }, {"65520", "float16"});
    expect_error_untouched<overflow_error, std::int8_t>(i8, [](auto a) { return std::move(a) << 1000; }, {"1000", "int8", "operator<<"});
    expect_error_untouched<overflow_error, std::uint8_t>(u8, [](auto a) { return std::move(a) & -1; }, {"-1", "uint8", "operator&"});
    expect_error_untouched<overflow_error, std::int64_t>(i64, [](auto a) { return std::move(a) - 9223372036854775808ull; },
                                                         {"9223372036854775808", "int64"});
    // Deep in the tree, in a function, in where's branch, in clip's bounds.
    expect_error_untouched<overflow_error, std::int16_t>(u8, [&i8](auto a) { return (std::move(a) + 1) * 2 + mixt::lazy(i8) * 256; },
                                                         {"256", "int8"});
    expect_error_untouched<overflow_error, std::uint8_t>(u8, [](auto a) { return mixt::maximum(std::move(a), 256); }, {"256", "maximum"});
    expect_error_untouched<overflow_error, std::uint8_t>(u8, [](auto a) { return mixt::where(decltype(a)(a) > 3, std::move(a), -5); }, {"-5", "uint8"});
    expect_error_untouched<overflow_error, std::int8_t>(i8, [](auto a) { return mixt::clip(std::move(a), -200, 5); }, {"-200", "int8"});
    expect_error_untouched<overflow_error, std::int8_t>(i8, [](auto a) { return mixt::floor_divide(std::move(a), 128); }, {"128", "int8"});
}

TEST(errors, literals_that_fit_after_promotion_are_fine) {
    const auto u8 = filled<std::uint8_t>({0, 255}, 7);
    const auto i8 = filled<std::int8_t>({-128, 127}, 7);
    const auto f16 = filled<Eigen::half>({Eigen::half(1)}, Eigen::half(2));
    // u8 + i8 is i16: 300 fits there.
    const auto r = mixt::eval(mixt::lazy(u8) + i8 + 300);
    EXPECT_EQ(r(0), 0 - 128 + 300);
    EXPECT_EQ(r(1), 255 + 127 + 300);
    EXPECT_EQ(mixt::eval(mixt::lazy(u8) - 255)(1), 0);
    EXPECT_EQ(mixt::eval(mixt::lazy(i8) + (-128))(1), -1);
    EXPECT_EQ(static_cast<float>(mixt::eval(mixt::lazy(f16) * 0 + 65519)(0)), 65504.0f);
    // Float literals are never range errors (JAX's weak float semantics): they round, to inf if need be.
    EXPECT_TRUE(Eigen::numext::isinf(mixt::eval(mixt::lazy(f16) * 1e10)(0)));
    EXPECT_EQ(mixt::eval(mixt::lazy(u8) + 18446744073709551615ull * 0)(1), 255); // a u64 literal of value 0
    Eigen::Tensor<std::uint64_t, 1> u64(3);
    u64.setConstant(1);
    EXPECT_EQ(mixt::eval(mixt::lazy(u64) + 18446744073709551614ull)(0), std::numeric_limits<std::uint64_t>::max());
}

TEST(errors, comparison_with_out_of_range_literal_is_exact) {
    const auto u8 = filled<std::uint8_t>({0, 1, 128, 255}, 7);
    const auto i8 = filled<std::int8_t>({-128, -1, 0, 127}, 7);
    const Eigen::TensorRef<Eigen::Tensor<std::uint8_t, 1>> u8_ref(u8);
    const Eigen::TensorRef<Eigen::Tensor<std::int8_t, 1>> i8_ref(i8);
    const auto all = [](const Eigen::Tensor<bool, 1>& t, bool v) {
        for (Eigen::Index i = 0; i < t.size(); ++i)
            if (t(i) != v) return false;
        return true;
    };
    for (int path = 0; path < 2; ++path) {
        SCOPED_TRACE(path == 0 ? "fused loop" : "lowered to Eigen");
        const auto a = [&] { return path == 0 ? mixt::eval(mixt::lazy(u8) < 300) : mixt::eval(mixt::lazy(u8_ref) < 300); };
        EXPECT_TRUE(all(a(), true));
        EXPECT_TRUE(all(path == 0 ? mixt::eval(mixt::lazy(u8) > -1) : mixt::eval(mixt::lazy(u8_ref) > -1), true));
        EXPECT_TRUE(all(path == 0 ? mixt::eval(mixt::lazy(i8) == 1000) : mixt::eval(mixt::lazy(i8_ref) == 1000), false));
        EXPECT_TRUE(all(path == 0 ? mixt::eval(mixt::lazy(i8) != 1000) : mixt::eval(mixt::lazy(i8_ref) != 1000), true));
        EXPECT_TRUE(all(path == 0 ? mixt::eval(300 > mixt::lazy(u8)) : mixt::eval(300 > mixt::lazy(u8_ref)), true));
        EXPECT_TRUE(all(path == 0 ? mixt::eval(mixt::lazy(u8) <= -1) : mixt::eval(mixt::lazy(u8_ref) <= -1), false));
        EXPECT_TRUE(all(path == 0 ? mixt::eval(mixt::lazy(i8) >= -129) : mixt::eval(mixt::lazy(i8_ref) >= -129), true));
        EXPECT_TRUE(all(path == 0 ? mixt::eval(-129 < mixt::lazy(i8)) : mixt::eval(-129 < mixt::lazy(i8_ref)), true));
        // A fractional literal against integers.
        const auto half = path == 0 ? mixt::eval(mixt::lazy(i8) < 0.5) : mixt::eval(mixt::lazy(i8_ref) < 0.5);
        EXPECT_TRUE(half(0) && half(1) && half(2) && !half(3));
    }
}

TEST(errors, comparison_with_a_literal_that_fits_is_in_the_join) {
    // Values beyond 2^53 (f64) and 2^24 (f32), where converting one side to the other rounds: a literal that
    // fits the join is converted to it like any operand (spec/lattice.md; jnp.float64(2**53) == 2**53 + 1).
    Eigen::Tensor<double, 1> f64(n);
    f64.setConstant(9007199254740992.0); // 2^53
    Eigen::Tensor<float, 1> f32(n);
    f32.setConstant(16777216.0f); // 2^24
    Eigen::Tensor<std::int64_t, 1> i64(n);
    i64.setConstant(9007199254740993); // 2^53 + 1
    Eigen::Tensor<std::uint64_t, 1> u64(n);
    u64.setConstant(std::numeric_limits<std::uint64_t>::max());
    Eigen::Tensor<Eigen::half, 1> f16(n);
    f16.setConstant(std::numeric_limits<Eigen::half>::quiet_NaN());
    const Eigen::TensorRef<Eigen::Tensor<double, 1>> f64_ref(f64);
    const Eigen::TensorRef<Eigen::Tensor<std::int64_t, 1>> i64_ref(i64);
    const Eigen::TensorRef<Eigen::Tensor<std::uint64_t, 1>> u64_ref(u64);
    for (int path = 0; path < 2; ++path) {
        SCOPED_TRACE(path == 0 ? "fused loop" : "lowered to Eigen");
        const bool fused = path == 0;
        // f64 + i* is f64: 2^53 + 1 becomes 2^53.
        EXPECT_TRUE((fused ? mixt::eval(mixt::lazy(f64) == 9007199254740993) : mixt::eval(mixt::lazy(f64_ref) == 9007199254740993))(n - 1));
        EXPECT_FALSE((fused ? mixt::eval(mixt::lazy(f64) < 9007199254740993) : mixt::eval(mixt::lazy(f64_ref) < 9007199254740993))(n - 1));
        // i64 + f* is f* (stored as f64): the element 2^53 + 1 becomes 2^53.
        EXPECT_FALSE((fused ? mixt::eval(mixt::lazy(i64) > 9007199254740992.0) : mixt::eval(mixt::lazy(i64_ref) > 9007199254740992.0))(n - 1));
        EXPECT_TRUE((fused ? mixt::eval(mixt::lazy(i64) == 9007199254740992.0) : mixt::eval(mixt::lazy(i64_ref) == 9007199254740992.0))(n - 1));
        // u64 max is 2^64 - 1, which becomes 2^64 in f64, the value of the literal 18446744073709551615.0.
        EXPECT_FALSE((fused ? mixt::eval(mixt::lazy(u64) < 18446744073709551615.0) : mixt::eval(mixt::lazy(u64_ref) < 18446744073709551615.0))(n - 1));
        EXPECT_FALSE((fused ? mixt::eval(mixt::lazy(u64) != 18446744073709551615.0) : mixt::eval(mixt::lazy(u64_ref) != 18446744073709551615.0))(n - 1));
        EXPECT_TRUE((fused ? mixt::eval(mixt::lazy(u64) > -1.0) : mixt::eval(mixt::lazy(u64_ref) > -1.0))(n - 1));
    }
    // f32 + i*: 16777217 becomes 2^24; integer literals far beyond f32's integers still fit its range.
    EXPECT_TRUE(mixt::eval(mixt::lazy(f32) == 16777217)(0));
    EXPECT_FALSE(mixt::eval(mixt::lazy(f32) < 16777217)(0));
    EXPECT_TRUE(mixt::eval(mixt::lazy(f32) > -9223372036854775807 - 1)(0));
    EXPECT_TRUE(mixt::eval(mixt::lazy(f32) < 18446744073709551615ull)(0));
    // An integer literal beyond f16's range does not fit: exact values (65504 < 100000 whatever rounding does).
    Eigen::Tensor<Eigen::half, 1> f16_max(n);
    f16_max.setConstant(std::numeric_limits<Eigen::half>::infinity());
    EXPECT_FALSE(mixt::eval(mixt::lazy(f16_max) < 100000)(0));
    EXPECT_FALSE(mixt::eval(mixt::lazy(f16_max) == 100000)(0));
    f16_max.setConstant(std::numeric_limits<Eigen::half>::max());
    EXPECT_TRUE(mixt::eval(mixt::lazy(f16_max) < 100000)(0));
    // A float literal that fits is rounded to the array's dtype: f16(0.1) == 0.1 in f16.
    Eigen::Tensor<Eigen::half, 1> tenth(n);
    tenth.setConstant(Eigen::half(0.1f));
    EXPECT_TRUE(mixt::eval(mixt::lazy(tenth) == 0.1)(0));
    EXPECT_FALSE(mixt::eval(mixt::lazy(tenth) < 0.1)(0));
    // NaN is unordered with any literal: only != holds.
    EXPECT_FALSE(mixt::eval(mixt::lazy(f16) == 1)(0));
    EXPECT_FALSE(mixt::eval(mixt::lazy(f16) < 100000)(0));
    EXPECT_FALSE(mixt::eval(mixt::lazy(f16) >= -100000)(0));
    EXPECT_TRUE(mixt::eval(mixt::lazy(f16) != 1)(0));
}

TEST(errors, shape_mismatch_prints_both_shapes) {
    Eigen::Tensor<float, 2> a(2, 3), b(3, 2), c(2, 3);
    a.setConstant(1);
    b.setConstant(2);
    c.setConstant(3);
    Eigen::Tensor<float, 2> dst(2, 3);
    std::memset(static_cast<void*>(dst.data()), 0xAB, sizeof(float) * 6);
    const Eigen::Tensor<float, 2> before = dst;
    const auto same_bytes = [&] { return std::memcmp(dst.data(), before.data(), sizeof(float) * 6) == 0; };
    // Same number of elements, another shape: still an error.
    try {
        mixt::assign(dst, mixt::lazy(a) + b);
        ADD_FAILURE() << "no exception";
    } catch (const mixt::shape_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("[2, 3]"));
        EXPECT_THAT(e.what(), HasSubstr("[3, 2]"));
        EXPECT_THAT(e.what(), HasSubstr("assign"));
    }
    EXPECT_TRUE(same_bytes());
    // The destination's shape differs from every operand's.
    Eigen::Tensor<float, 2> wide(2, 4);
    try {
        mixt::assign(wide, mixt::lazy(a) * c + 1);
        ADD_FAILURE() << "no exception";
    } catch (const mixt::shape_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("[2, 4]"));
        EXPECT_THAT(e.what(), HasSubstr("[2, 3]"));
    }
    // eval() takes the shape of the first operand, and checks the others against it.
    EXPECT_THROW((void)mixt::eval(mixt::lazy(a) - b), mixt::shape_error);
    // Through a TensorRef leaf and an Eigen expression leaf too.
    const Eigen::TensorRef<Eigen::Tensor<float, 2>> ref(b);
    EXPECT_THROW(mixt::assign(dst, mixt::lazy(ref) + a), mixt::shape_error);
    EXPECT_THROW(mixt::assign(dst, mixt::lazy(b * b) + 0.5f), mixt::shape_error);
    EXPECT_TRUE(same_bytes());
    // Rank 1: [13] against [12].
    Eigen::Tensor<std::int8_t, 1> x(13), y(12);
    x.setZero();
    y.setZero();
    try {
        (void)mixt::eval(mixt::lazy(x) + y);
        ADD_FAILURE() << "no exception";
    } catch (const mixt::shape_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("[13]"));
        EXPECT_THAT(e.what(), HasSubstr("[12]"));
    }
}

TEST(errors, partial_overlap_with_the_destination) {
    std::vector<float> buffer(32, 1.0f);
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
    using map = Eigen::TensorMap<Eigen::Tensor<float, 1>>;
    map dst(buffer.data(), 13);
    const map shifted(buffer.data() + 2, 13);  // overlaps dst, offset by 2 elements
    const map disjoint(buffer.data() + 13, 13); // right after dst
    const std::vector<float> before = buffer;
    try {
        mixt::assign(dst, mixt::lazy(shifted) * 2);
        ADD_FAILURE() << "no exception";
    } catch (const mixt::aliasing_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("overlaps"));
    }
    EXPECT_EQ(buffer, before);
    EXPECT_THROW(mixt::assign(dst, mixt::lazy(disjoint) + shifted), mixt::aliasing_error);
    // The same bytes read as another width: the same start, but not the same elements.
    const Eigen::TensorMap<Eigen::Tensor<std::int16_t, 1>> narrow(reinterpret_cast<std::int16_t*>(buffer.data()), 13);
    EXPECT_THROW(mixt::assign(dst, mixt::lazy(narrow) + 1), mixt::aliasing_error);
    // A destination inside an operand.
    const map around(buffer.data(), 26);
    map inner(buffer.data() + 4, 13);
    Eigen::Tensor<float, 1> other(13);
    other.setZero();
    (void)around;
    EXPECT_THROW(mixt::assign(inner, mixt::lazy(other) + dst), mixt::aliasing_error);
    EXPECT_EQ(buffer, before);
    // Disjoint operands and the very same elements are fine: each element is read before it is written.
    mixt::assign(dst, mixt::lazy(dst) * 2 + disjoint);
    for (int i = 0; i < 13; ++i) EXPECT_EQ(buffer[static_cast<std::size_t>(i)], before[static_cast<std::size_t>(i)] * 2 + before[static_cast<std::size_t>(i + 13)]);
    Eigen::Tensor<std::int32_t, 1> t(13);
    t.setConstant(5);
    mixt::assign(t, mixt::lazy(t) * t - 1);
    EXPECT_EQ(t(12), 24);
}

TEST(errors, float_to_int_casts_saturate_instead_of_failing) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const auto f = filled<float>({nan, inf, -inf, -1.5f, 300.0f, 255.9f, -0.0f, 2.5f, 1e10f, -1e10f}, 0.0f);
    const auto u8 = mixt::eval(mixt::cast<std::uint8_t>(mixt::lazy(f)));
    const std::uint8_t want_u8[] = {0, 255, 0, 0, 255, 255, 0, 2, 255, 0};
    const auto i32 = mixt::eval(mixt::cast<std::int32_t>(mixt::lazy(f)));
    constexpr std::int32_t max = std::numeric_limits<std::int32_t>::max(), min = std::numeric_limits<std::int32_t>::min();
    const std::int32_t want_i32[] = {0, max, min, -1, 300, 255, 0, 2, max, min};
    const auto b = mixt::eval(mixt::cast<bool>(mixt::lazy(f)));
    const bool want_b[] = {true, true, true, true, true, true, false, true, true, true};
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(u8(i), want_u8[i]) << i;
        EXPECT_EQ(i32(i), want_i32[i]) << i;
        EXPECT_EQ(b(i), want_b[i]) << i;
    }
}

} // namespace
