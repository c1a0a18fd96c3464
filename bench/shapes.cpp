// B1-B6 of the suite: broadcasting, Dense operands and views as destinations, at fixed full sizes (issue 17's
// rows). Each row owns its arrays (shapes differ between operands, so the 1-D workspaces of E1-E12 do not
// fit) and has the same variants as E1-E12 but eigen_unfused: mixt, mixt_threads, hand_loop (one statement per
// node, as the E rows' hand loops), eigen_cast (idiomatic Eigen 3.4: .broadcast() and .cast<>(), or Dense
// casts) and traffic (every array element read once, a broadcast operand once in all, the result written
// once, no arithmetic). GB/s count exactly those bytes, for every variant.
#include "rows.hpp"

#include <memory>
#include <vector>

namespace mixt_suite {
namespace {

using namespace rows;

// B1: (u8 / 255 - mean) / std over a channel-last image: the inner extent 3 is the hard case.
struct b1 {
    static constexpr const char* id = "B1";
    static constexpr const char* text = "(u8 / 255 - mean) / std, [1080, 1920, 3] and [3]";
    using result = float;
    struct data {
        index_t h, w;
        row_major<u8, 3> image;
        row_major<float, 1> mean, stddev;
        row_major<float, 3> out;
        explicit data(bool small)
            : h(small ? 17 : 1080), w(small ? 23 : 1920), image(h, w, 3), mean(3), stddev(3), out(h, w, 3) {
            fill<u8>(image, 11);
            mean.setValues({0.485f, 0.456f, 0.406f});
            stddev.setValues({0.229f, 0.224f, 0.225f});
        }
        auto expression() const { return (mixt::lazy(image) / 255 - mean) / stddev; }
        void hand_loop() {
            const u8* a = image.data();
            float* r = out.data();
            const index_t pixels = h * w;
            for (index_t p = 0; p < pixels; ++p)
                for (index_t c = 0; c < 3; ++c) {
                    const float x = static_cast<float>(a[p * 3 + c]) / 255.0f;
                    r[p * 3 + c] = (x - mean(c)) / stddev(c);
                }
        }
        void eigen_cast() {
            const Eigen::array<index_t, 3> shape{1, 1, 3}, times{h, w, 1};
            out = (image.cast<float>() / 255.0f - mean.reshape(shape).broadcast(times)) / stddev.reshape(shape).broadcast(times);
        }
        void traffic() {
            benchmark::DoNotOptimize(read_all(mean.data(), 3) ^ read_all(stddev.data(), 3));
            floor_run(out.data(), out.size(), image.data());
        }
        std::int64_t bytes() const { return image.size() * 1 + 2 * 3 * 4 + out.size() * 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

// B2: a bias on every row.
struct b2 {
    static constexpr const char* id = "B2";
    static constexpr const char* text = "f32 + f16, [4096, 4096] + [4096]";
    using result = float;
    struct data {
        index_t n;
        row_major<float, 2> a;
        row_major<f16, 1> bias;
        row_major<float, 2> out;
        explicit data(bool small) : n(small ? 45 : 4096), a(n, n), bias(n), out(n, n) {
            fill<float>(a, 21);
            fill<f16>(bias, 22);
        }
        auto expression() const { return mixt::lazy(a) + bias; }
        void hand_loop() {
            for (index_t i = 0; i < n; ++i) {
                const float* x = a.data() + i * n;
                float* r = out.data() + i * n;
                for (index_t j = 0; j < n; ++j) r[j] = x[j] + static_cast<float>(bias.data()[j]);
            }
        }
        void eigen_cast() { out = a + bias.cast<float>().reshape(a2{1, n}).broadcast(a2{n, 1}); }
        void traffic() {
            benchmark::DoNotOptimize(read_all(bias.data(), n));
            floor_run(out.data(), out.size(), a.data());
        }
        std::int64_t bytes() const { return a.size() * 4 + bias.size() * 2 + out.size() * 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

// B3: a scale per row, the result in f16.
struct b3 {
    static constexpr const char* id = "B3";
    static constexpr const char* text = "i8 * f16, [4096, 4096] * [4096, 1]";
    using result = f16;
    struct data {
        index_t n;
        row_major<i8, 2> q;
        row_major<f16, 2> scale;
        row_major<f16, 2> out;
        explicit data(bool small) : n(small ? 45 : 4096), q(n, n), scale(n, 1), out(n, n) {
            fill<i8>(q, 31);
            fill<f16>(scale, 32);
        }
        auto expression() const { return mixt::lazy(q) * scale; }
        void hand_loop() {
            for (index_t i = 0; i < n; ++i) {
                const i8* x = q.data() + i * n;
                f16* r = out.data() + i * n;
                const float s = static_cast<float>(scale.data()[i]);
                for (index_t j = 0; j < n; ++j) r[j] = f16(static_cast<float>(x[j]) * s);
            }
        }
        void eigen_cast() { out = (q.cast<float>() * scale.cast<float>().broadcast(a2{1, n})).cast<f16>(); }
        void traffic() {
            benchmark::DoNotOptimize(read_all(scale.data(), n));
            floor_run(out.data(), out.size(), q.data());
        }
        std::int64_t bytes() const { return q.size() * 1 + scale.size() * 2 + out.size() * 2; }
        const f16* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

// B4: an outer product.
struct b4 {
    static constexpr const char* id = "B4";
    static constexpr const char* text = "f32 * bf16, [4096, 1] * [1, 4096]";
    using result = float;
    struct data {
        index_t n;
        row_major<float, 2> a;
        row_major<bf16, 2> b;
        row_major<float, 2> out;
        explicit data(bool small) : n(small ? 45 : 4096), a(n, 1), b(1, n), out(n, n) {
            fill<float>(a, 41);
            fill<bf16>(b, 42);
        }
        auto expression() const { return mixt::lazy(a) * b; }
        void hand_loop() {
            for (index_t i = 0; i < n; ++i) {
                float* r = out.data() + i * n;
                const float x = a.data()[i];
                for (index_t j = 0; j < n; ++j) r[j] = x * static_cast<float>(b.data()[j]);
            }
        }
        void eigen_cast() { out = a.broadcast(a2{1, n}) * b.cast<float>().broadcast(a2{n, 1}); }
        void traffic() {
            benchmark::DoNotOptimize(read_all(a.data(), n));
            for (index_t i = 0; i < n; ++i) floor_run(out.data() + i * n, n, b.data()); // a row from b
        }
        std::int64_t bytes() const { return a.size() * 4 + b.size() * 2 + out.size() * 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

// B5: Dense arrays.
struct b5 {
    static constexpr const char* id = "B5";
    static constexpr const char* text = "Eigen::ArrayXf + Array<i8>, 16M elements";
    using result = float;
    struct data {
        Eigen::ArrayXf x;
        Eigen::Array<i8, Eigen::Dynamic, 1> y;
        Eigen::ArrayXf out;
        explicit data(bool small) : x(small ? 1003 : 16777216), y(x.size()), out(x.size()) {
            fill<float>(x, 51);
            fill<i8>(y, 52);
        }
        auto expression() const { return mixt::lazy(x) + y; }
        void hand_loop() {
            const index_t n = x.size();
            const float* a = x.data();
            const i8* b = y.data();
            float* r = out.data();
            for (index_t i = 0; i < n; ++i) r[i] = a[i] + static_cast<float>(b[i]);
        }
        void eigen_cast() { out = x + y.cast<float>(); }
        void traffic() { floor_run(out.data(), out.size(), x.data(), y.data()); }
        std::int64_t bytes() const { return x.size() * 4 + y.size() * 1 + out.size() * 4; }
        const float* result_data() const { return out.data(); }
        index_t elements() const { return out.size(); }
    };
};

// B6: a block of a matrix plus a map of half, into a block of another matrix.
struct b6 {
    static constexpr const char* id = "B6";
    static constexpr const char* text = "A.block(4000x4000) + Map<f16 matrix> into C.block, A, C [4096, 4096]";
    using result = float;
    struct data {
        index_t n, k;
        Eigen::MatrixXf a, c;
        std::vector<f16> h_storage;
        Eigen::Map<const Eigen::Matrix<f16, Eigen::Dynamic, Eigen::Dynamic>> h;
        explicit data(bool small)
            : n(small ? 50 : 4096), k(small ? 43 : 4000), a(n, n), c(n, n),
              h_storage(static_cast<std::size_t>(k * k)), h(h_storage.data(), k, k) {
            fill<float>(a, 61);
            c.setZero();
            fill_random(h_storage.data(), k * k, 62);
        }
        auto expression() const { return mixt::lazy(a.block(0, 0, k, k)) + h; }
        void hand_loop() {
            for (index_t j = 0; j < k; ++j) {
                const float* x = a.data() + j * n;
                const f16* y = h_storage.data() + j * k;
                float* r = c.data() + j * n;
                for (index_t i = 0; i < k; ++i) r[i] = x[i] + static_cast<float>(y[i]);
            }
        }
        void eigen_cast() { c.block(0, 0, k, k) = a.block(0, 0, k, k) + h.cast<float>(); }
        void traffic() {
            for (index_t j = 0; j < k; ++j) floor_run(c.data() + j * n, k, a.data() + j * n, h_storage.data() + j * k);
        }
        std::int64_t bytes() const { return k * k * (4 + 2 + 4); }
        index_t elements() const { return k * k; }
        void assign(const Eigen::ThreadPoolDevice* device) {
            if (device)
                mixt::assign(c.block(0, 0, k, k), expression(), *device);
            else
                mixt::assign(c.block(0, 0, k, k), expression());
        }
        // The block, copied out contiguously for the check.
        std::vector<float> block() const {
            std::vector<float> v(static_cast<std::size_t>(k * k));
            for (index_t j = 0; j < k; ++j)
                for (index_t i = 0; i < k; ++i) v[static_cast<std::size_t>(j * k + i)] = c(i, j);
            return v;
        }
    };
};

} // namespace

bool shapes(action a, index_t n) {
    return rows_action<sized<b1, 1080 * 1920 * 3>, sized<b2, 4096 * 4096>, sized<b3, 4096 * 4096>, sized<b4, 4096 * 4096>,
                       sized<b5, 16777216>, sized<b6, 4000 * 4000>>(a, n != 0);
}

} // namespace mixt_suite
