// One pass, no temporaries: `mixt::assign(dst, e)` allocates nothing and `mixt::eval(e)` allocates exactly
// once (its result), for mixed-dtype expressions of several nodes, on the fused loop and the lowering to
// Eigen. Two counters see every heap allocation: this program replaces the global operator new / delete
// (anything C++ allocates), and counts Eigen's own heap allocations, which call std::malloc directly,
// through Eigen's EIGEN_RUNTIME_NO_MALLOC check: while mixt_test::counting is alive, Eigen's "malloc
// allowed" flag is off, and each allocation it would refuse reaches the eigen_assert defined below, which
// counts it instead of aborting. (Its own executable: the replaced operator new applies to the program.)

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

namespace mixt_test {
inline std::atomic<long> operator_news{0};
inline std::atomic<std::size_t> largest_new{0}; // the largest operator new since the last reset
inline std::atomic<long> eigen_mallocs{0};
inline std::atomic<long> other_eigen_asserts{0};
inline void eigen_assert_failed(const char* condition) {
    if (std::strstr(condition, "heap allocation is forbidden") != nullptr)
        ++eigen_mallocs;
    else
        ++other_eigen_asserts;
}
} // namespace mixt_test

#define EIGEN_RUNTIME_NO_MALLOC
#define eigen_assert(x) ((x) ? static_cast<void>(0) : ::mixt_test::eigen_assert_failed(#x))

#include <mixt/eval/assign.hpp>
#include <mixt/eval/lower.hpp>
#include <mixt/expr/operators.hpp>

#include <complex>
#include <cstdint>

#include <gtest/gtest.h>

// --- Counting global allocation functions ------------------------------------------------------------------

// Out of line, so that GCC does not pair an inlined free() with the operator new it came from
// (-Wmismatched-new-delete).
namespace {
[[gnu::noinline]] void* counted_alloc(std::size_t n, std::size_t align = alignof(std::max_align_t)) {
    ++mixt_test::operator_news;
    for (std::size_t l = mixt_test::largest_new; n > l && !mixt_test::largest_new.compare_exchange_weak(l, n);) {
    }
    if (n == 0) n = 1;
    void* p = align <= alignof(std::max_align_t) ? std::malloc(n) : std::aligned_alloc(align, (n + align - 1) / align * align);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}
[[gnu::noinline]] void counted_free(void* p) noexcept { std::free(p); }
} // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }

namespace {

// Counts the allocations made while it is alive.
class counting {
  public:
    counting() : news_(mixt_test::operator_news), mallocs_(mixt_test::eigen_mallocs) {
        mixt_test::largest_new = 0;
        Eigen::internal::set_is_malloc_allowed(false);
    }
    ~counting() { Eigen::internal::set_is_malloc_allowed(true); }
    counting(const counting&) = delete;
    counting& operator=(const counting&) = delete;
    long operator_news() const { return mixt_test::operator_news - news_; }
    long eigen_mallocs() const { return mixt_test::eigen_mallocs - mallocs_; }
    std::size_t largest_new() const { return mixt_test::largest_new; }

  private:
    long news_, mallocs_;
};

constexpr Eigen::Index n = 1003;

struct inputs {
    Eigen::Tensor<std::int8_t, 1> i8{n};
    Eigen::Tensor<std::uint8_t, 1> u8{n};
    Eigen::Tensor<Eigen::half, 1> f16{n};
    Eigen::Tensor<float, 1> f32{n};
    Eigen::Tensor<std::int32_t, 1> i32{n};
    Eigen::Tensor<bool, 1> b{n};
    inputs() {
        for (Eigen::Index i = 0; i < n; ++i) {
            i8(i) = static_cast<std::int8_t>(i * 7);
            u8(i) = static_cast<std::uint8_t>(i * 13);
            f16(i) = Eigen::half(static_cast<float>(i % 17) * 0.25f);
            f32(i) = static_cast<float>(i) * 0.001f;
            i32(i) = static_cast<std::int32_t>(i) - 500;
            b(i) = i % 3 == 0;
        }
    }
};

// (i8 + u8) * f16 - f32 / 3 + where(b, i32, 2): six leaves of five dtypes, eight nodes, f32.
template <class I8, class U8, class F16, class F32, class I32, class B>
auto expression(const I8& i8, const U8& u8, const F16& f16, const F32& f32, const I32& i32, const B& b) {
    return (mixt::lazy(i8) + u8) * f16 - mixt::lazy(f32) / 3 + mixt::where(b, mixt::lazy(i32), 2);
}

TEST(allocation, the_counters_see_allocations) {
    counting c;
    Eigen::Tensor<float, 1> t(100); // Eigen's heap allocation
    int* volatile p = new int(3); // observed through a volatile, so the compiler cannot elide the pair
    delete p;
    EXPECT_EQ(c.eigen_mallocs(), 1);
    EXPECT_EQ(c.operator_news(), 1);
}

TEST(allocation, assign_allocates_nothing_on_the_fused_loop) {
    const inputs in;
    Eigen::Tensor<float, 1> dst(n);
    const auto e = expression(in.i8, in.u8, in.f16, in.f32, in.i32, in.b);
    static_assert(std::is_same_v<mixt::value_t<decltype(e)>, float>);
    {
        counting c;
        mixt::assign(dst, e);
        EXPECT_EQ(c.operator_news(), 0);
        EXPECT_EQ(c.eigen_mallocs(), 0);
    }
    {
        // Built and assigned in one statement, into a map and into a wider dtype.
        Eigen::Tensor<double, 1> wide(n);
        Eigen::TensorMap<Eigen::Tensor<double, 1>> map(wide.data(), n);
        counting c;
        mixt::assign(map, expression(in.i8, in.u8, in.f16, in.f32, in.i32, in.b) * 2);
        EXPECT_EQ(c.operator_news(), 0);
        EXPECT_EQ(c.eigen_mallocs(), 0);
        EXPECT_EQ(wide(10), 2.0 * static_cast<double>(dst(10)));
    }
    EXPECT_EQ(mixt_test::other_eigen_asserts, 0);
}

TEST(allocation, assign_allocates_nothing_on_the_lowering_to_eigen) {
    const inputs in;
    // TensorRef leaves are not contiguous to mixt, so assign lowers the expression to Eigen.
    const Eigen::TensorRef<Eigen::Tensor<std::int8_t, 1>> i8(in.i8);
    const Eigen::TensorRef<Eigen::Tensor<Eigen::half, 1>> f16(in.f16);
    Eigen::Tensor<float, 1> dst(n), fused(n);
    mixt::assign(fused, expression(in.i8, in.u8, in.f16, in.f32, in.i32, in.b));
    {
        counting c;
        mixt::assign(dst, expression(i8, in.u8, f16, in.f32, in.i32, in.b));
        EXPECT_EQ(c.operator_news(), 0);
        EXPECT_EQ(c.eigen_mallocs(), 0);
    }
    for (Eigen::Index i = 0; i < n; ++i) ASSERT_EQ(dst(i), fused(i));
    {
        // An Eigen expression leaf (a slice) and the lowered expression evaluated by Eigen itself.
        Eigen::Tensor<float, 1> part(n - 3);
        const Eigen::array<Eigen::Index, 1> off{3}, ext{n - 3};
        counting c;
        mixt::assign(part, mixt::lazy(in.i8.slice(off, ext)) * in.f16.slice(off, ext) + 1.5f);
        part.device(Eigen::DefaultDevice{}) = mixt::to_eigen(mixt::lazy(in.i8.slice(off, ext)) * mixt::strong(2.5f));
        EXPECT_EQ(c.operator_news(), 0);
        EXPECT_EQ(c.eigen_mallocs(), 0);
    }
    EXPECT_EQ(mixt_test::other_eigen_asserts, 0);
}

TEST(allocation, eval_allocates_its_result_once) {
    const inputs in;
    const auto e = expression(in.i8, in.u8, in.f16, in.f32, in.i32, in.b);
    Eigen::Tensor<float, 1> expected(n);
    mixt::assign(expected, e);
    {
        counting c;
        const Eigen::Tensor<float, 1> r = mixt::eval(e);
        EXPECT_EQ(c.eigen_mallocs(), 1);
        EXPECT_EQ(c.operator_news(), 0);
        for (Eigen::Index i = 0; i < n; ++i) ASSERT_EQ(r(i), expected(i));
    }
    {
        const Eigen::TensorRef<Eigen::Tensor<std::int8_t, 1>> i8(in.i8);
        counting c;
        const auto r = mixt::eval(expression(i8, in.u8, in.f16, in.f32, in.i32, in.b) < 0.5);
        EXPECT_EQ(c.eigen_mallocs(), 1);
        EXPECT_EQ(c.operator_news(), 0);
    }
    {
        // Complex and 64-bit dtypes, two-dimensional.
        Eigen::Tensor<std::complex<float>, 2> z(7, 9);
        Eigen::Tensor<std::uint64_t, 2> u(7, 9);
        z.setConstant({1.0f, -2.0f});
        u.setConstant(3);
        counting c;
        const auto r = mixt::eval(mixt::lazy(z) * u + mixt::conj(z) - 1);
        static_assert(std::is_same_v<std::remove_const_t<decltype(r)>, Eigen::Tensor<std::complex<float>, 2>>);
        EXPECT_EQ(c.eigen_mallocs(), 1);
        EXPECT_EQ(c.operator_news(), 0);
    }
    EXPECT_EQ(mixt_test::other_eigen_asserts, 0);
}

// A reduction of an elementwise expression reads its operands in one pass: nothing the size of the input is
// allocated, only the result (one Eigen allocation) and per-task state (lanes and a stack of partial results
// per output column: a few times the size of the result, logarithmic in the input's).
TEST(allocation, reductions_allocate_nothing_the_size_of_their_input) {
    Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> w(512, 4096);
    Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s(512, 1);
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(1, 4096);
    w.setConstant(3);
    s.setConstant(Eigen::half(0.5f));
    x.setConstant(0.25f);
    const std::size_t input_bytes = static_cast<std::size_t>(w.size());
    {
        counting c;
        const auto r = mixt::eval(mixt::sum(mixt::lazy(w) * s * x, 1)); // a GEMV
        EXPECT_EQ(c.eigen_mallocs(), 1);
        EXPECT_LT(c.largest_new(), input_bytes / 8) << c.largest_new();
        EXPECT_EQ(r(7), 4096 * 3 * 0.5f * 0.25f);
    }
    {
        counting c;
        const auto r = mixt::eval(mixt::sum<float>(mixt::lazy(w) * s)); // over all axes
        EXPECT_EQ(c.eigen_mallocs(), 1);
        EXPECT_LT(c.largest_new(), input_bytes / 8) << c.largest_new();
        EXPECT_EQ(r(), 512 * 4096 * 1.5f);
    }
    {
        counting c;
        const auto r = mixt::eval(mixt::max(mixt::lazy(w) * x, 0)); // over the outer axis: rows of columns
        EXPECT_EQ(c.eigen_mallocs(), 1);
        EXPECT_LT(c.largest_new(), input_bytes / 8) << c.largest_new();
        EXPECT_EQ(r(5), 0.75f);
    }
}

// assign of a reduction into a destination of its dtype writes the result there: no tensor for it (Eigen
// allocates nothing), only the per-task state. Rows of 4096 values, and rows of 3 (the short rows' path).
TEST(allocation, assign_of_a_reduction_allocates_no_result) {
    Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor> w(512, 4096);
    Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s(512, 1);
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(1, 4096);
    w.setConstant(3);
    s.setConstant(Eigen::half(0.5f));
    x.setConstant(0.25f);
    Eigen::Tensor<float, 1, Eigen::RowMajor> gemv(512);
    Eigen::Tensor<float, 2, Eigen::RowMajor> points(100000, 3);
    points.setConstant(2.f);
    Eigen::Tensor<float, 1, Eigen::RowMajor> norms(100000);
    {
        counting c;
        mixt::assign(gemv, mixt::sum(mixt::lazy(w) * s * x, 1));
        EXPECT_EQ(c.eigen_mallocs(), 0);
        EXPECT_LT(c.largest_new(), static_cast<std::size_t>(w.size()) / 8) << c.largest_new();
    }
    EXPECT_EQ(gemv(7), 4096 * 3 * 0.5f * 0.25f);
    {
        counting c;
        mixt::assign(norms, mixt::sum(mixt::lazy(points) * points, 1));
        EXPECT_EQ(c.eigen_mallocs(), 0);
        EXPECT_LT(c.largest_new(), static_cast<std::size_t>(norms.size()) * sizeof(float) / 4) << c.largest_new();
    }
    EXPECT_EQ(norms(99999), 12.f);
}

// A small reduction of an array of its accumulator's type into a destination of its dtype allocates nothing at
// all: its per-task state, the results of a batch of rows, a few short rows' copy (up to 4 KiB) and a full
// reduction's rank-0 result sit in place. (A rank-0 Eigen tensor allocates its element as it is constructed: mixt
// builds one only where a result broadcasts into a larger destination.) Rows of an expression that is not one
// array are computed into a buffer, which may be allocated.
TEST(allocation, small_reductions_allocate_nothing) {
    Eigen::Tensor<float, 1, Eigen::RowMajor> v(64);
    Eigen::Tensor<float, 2, Eigen::RowMajor> rows(6, 16);
    for (Eigen::Index i = 0; i < v.size(); ++i) v(i) = static_cast<float>(i % 9) - 3.f;
    for (Eigen::Index i = 0; i < rows.size(); ++i) rows.data()[i] = static_cast<float>(i % 5);
    Eigen::Tensor<float, 0, Eigen::RowMajor> total, largest;
    Eigen::Tensor<float, 1, Eigen::RowMajor> row_sums(6);
    Eigen::Tensor<std::int64_t, 1, Eigen::RowMajor> row_argmax(6);
    {
        counting c;
        mixt::assign(total, mixt::sum(v));
        mixt::assign(largest, mixt::max(v));
        mixt::assign(row_sums, mixt::sum(rows, 1));
        mixt::assign(row_argmax, mixt::argmax(rows, 1));
        EXPECT_EQ(c.eigen_mallocs(), 0);
        EXPECT_EQ(c.operator_news(), 0) << c.largest_new();
    }
    float expected = 0;
    for (Eigen::Index i = 0; i < v.size(); ++i) expected += v(i);
    EXPECT_EQ(total(), expected);
    EXPECT_EQ(largest(), 5.f);
    for (Eigen::Index r = 0; r < rows.dimension(0); ++r) {
        float row_sum = 0;
        Eigen::Index first_largest = 0;
        for (Eigen::Index j = 0; j < rows.dimension(1); ++j) {
            row_sum += rows(r, j);
            if (rows(r, j) > rows(r, first_largest)) first_largest = j;
        }
        EXPECT_EQ(row_sums(r), row_sum) << r;
        EXPECT_EQ(row_argmax(r), first_largest) << r;
    }
}

} // namespace
