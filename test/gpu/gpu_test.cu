// Mixed-dtype expressions evaluated on an Eigen::GpuDevice, over TensorMaps of cudaMalloc'd memory, equal
// the DefaultDevice's results under mixt's NaN contract (README, "NaN"; test/support/nan_contract.hpp): bit
// for bit, except that a NaN may have another sign or payload (x86 keeps an operand's, CUDA makes a canonical
// one). The same per-element code (expr/functors.hpp, mixt::convert) runs as device code. The run-time checks
// (literal ranges, shapes) happen on the host before the kernel is launched. Without a CUDA device (or
// driver) every test is skipped, saying why.
//
// Built with nvcc only when CMake finds a CUDA compiler (test/gpu/CMakeLists.txt), with nvcc's defaults
// (-fmad=true): mixt rounds each product before the sum that consumes it (__fmul_rn in device code), so the
// results do not depend on the flag. test/gpu/ptx_check.cmake checks the device code's instructions without
// a GPU.

#define EIGEN_USE_GPU

#include "gpu_support.hpp"

namespace {

using namespace mixt_gpu_test;

TEST_F(gpu, mixed_arithmetic) {
    const auto i8 = make<std::int8_t>(1);
    const auto u8 = make<std::uint8_t>(2);
    const auto f16 = make<Eigen::half>(3);
    const auto f32 = make<float>(4);
    const auto bf16 = make<Eigen::bfloat16>(5);
    const auto i16 = make<std::int16_t>(6);
    check("(i8 + u8) * f16 - 1", [](const auto& a, const auto& b, const auto& c) { return (mixt::lazy(a) + b) * c - 1; },
          i8, u8, f16);
    check("clip(bf16 * f32, -1, 1) / i8", [](const auto& a, const auto& b, const auto& c) {
        return mixt::clip(mixt::lazy(a) * b, -1, 1) / c;
    }, bf16, f32, i8);
    check("where(f32 > 0, i16, f32 * 0.5)", [](const auto& a, const auto& b) {
        return mixt::where(mixt::lazy(a) > 0, b, mixt::lazy(a) * 0.5);
    }, f32, i16);
    check("minimum(f16, bf16) + maximum(i8, u8)", [](const auto& a, const auto& b, const auto& c, const auto& d) {
        return mixt::minimum(mixt::lazy(a), b) + mixt::maximum(mixt::lazy(c), d);
    }, f16, bf16, i8, u8);
}

TEST_F(gpu, integer_semantics_without_undefined_behaviour) {
    const auto i32 = make<std::int32_t>(7);
    const auto i8 = make<std::int8_t>(8);
    const auto u8 = make<std::uint8_t>(9);
    const auto u64 = make<std::uint64_t>(10);
    const auto i64 = make<std::int64_t>(11);
    // floor_divide and % with zero and INT_MIN / -1 among the operands; shifts by any count; wrapping.
    check("floor_divide(i32, i8) + i32 % i8", [](const auto& a, const auto& b) {
        return mixt::floor_divide(mixt::lazy(a), b) + mixt::lazy(a) % b;
    }, i32, i8);
    check("(i8 << u8) ^ (i8 >> u8)", [](const auto& a, const auto& b) {
        return (mixt::lazy(a) << b) ^ (mixt::lazy(a) >> b);
    }, i8, u8);
    check("i64 * i64 - abs(i64)", [](const auto& a) { return mixt::lazy(a) * a - mixt::abs(a); }, i64);
    check("u64 + i64 (f*, stored as f64)", [](const auto& a, const auto& b) { return mixt::lazy(a) + b; }, u64, i64);
    check("pow(i8, u8 % 9)", [](const auto& a, const auto& b) { return mixt::pow(mixt::lazy(a), mixt::lazy(b) % 9); }, i8, u8);
}

TEST_F(gpu, conversions_and_literal_comparisons) {
    const auto f32 = make<float>(12);
    const auto u8 = make<std::uint8_t>(13);
    const auto f64 = make<double>(14);
    // Saturating float -> int casts with NaN -> 0, and exact comparisons with out-of-range literals.
    check("cast<i32>(f32 * 1e6) + cast<u8>(f32)", [](const auto& a) {
        return mixt::cast<std::int32_t>(mixt::lazy(a) * 1e6f) + mixt::cast<std::uint8_t>(a);
    }, f32);
    check("(u8 < 300) & (u8 > -1) & (u8 != 1000)", [](const auto& a) {
        return (mixt::lazy(a) < 300) & (mixt::lazy(a) > -1) & (mixt::lazy(a) != 1000);
    }, u8);
    check("f64 == 9007199254740993 | f64 < 0.5", [](const auto& a) {
        return (mixt::lazy(a) == 9007199254740993) | (mixt::lazy(a) < 0.5);
    }, f64);
    check("cast<f16>(f64) * cast<bf16>(u8)", [](const auto& a, const auto& b) {
        return mixt::cast<Eigen::half>(a) * mixt::cast<Eigen::bfloat16>(b);
    }, f64, u8);
}

TEST_F(gpu, narrow_dtypes) {
    const auto e4 = make<mixt::float8_e4m3fn>(20);
    const auto e5 = make<mixt::float8_e5m2>(21);
    const auto f4 = make<mixt::float4_e2m1fn>(22);
    const auto e8 = make<mixt::float8_e8m0fnu>(23);
    const auto i4 = make<mixt::int4>(24);
    const auto f32 = make<float>(25);
    // Computed in f32 and rounded once per node, each format's overflow rule (dtype/narrow_float.hpp).
    check("e4m3fn * e4m3fn + 0.3", [](const auto& a) { return mixt::lazy(a) * a + 0.3; }, e4);
    check("cast<f32>(e5m2) * f32", [](const auto& a, const auto& b) { return mixt::cast<float>(a) * b; }, e5, f32);
    check("cast<float4_e2m1fn>(f32 * 0.01)", [](const auto& a) { return mixt::cast<mixt::float4_e2m1fn>(mixt::lazy(a) * 0.01f); },
          f32);
    check("cast<f32>(float4) * cast<f32>(e8m0fnu)", [](const auto& a, const auto& b) {
        return mixt::cast<float>(a) * mixt::cast<float>(b);
    }, f4, e8);
    check("int4 * int4 - 3", [](const auto& a) { return mixt::lazy(a) * a - 3; }, i4);
}

TEST_F(gpu, packed_operands) {
    // n bytes of packed int4 (2n elements) and of packed uint2 (4n), read on the GPU through Eigen's evaluator of
    // a packed array (dtype/packed.hpp): the DefaultDevice's bits.
    const auto bytes = make<std::uint8_t>(26);
    const auto f32 = make<float>(27);
    const device_tensor<std::uint8_t> on_device(bytes);
    const device_tensor<float> f32_on_device(f32);
    const device_tensor<float> out(n);
    const auto host_i4 = mixt::packed<const mixt::int4>(bytes.data(), n);
    const auto dev_i4 = mixt::packed<const mixt::int4>(static_cast<const std::uint8_t*>(on_device.map().data()), n);
    const Eigen::Tensor<float, 1> want = mixt::eval(mixt::cast<float>(mixt::lazy(host_i4)) * f32 + 1);
    mixt::assign(out.map(), mixt::cast<float>(mixt::lazy(dev_i4)) * f32_on_device.map() + 1, *device_);
    device_->synchronize();
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    expect_same("cast<f32>(int4 packed) * f32 + 1", n, out.download(), want);
    const auto host_u2 = mixt::packed<const mixt::uint2>(bytes.data(), n);
    const auto dev_u2 = mixt::packed<const mixt::uint2>(static_cast<const std::uint8_t*>(on_device.map().data()), n);
    const device_tensor<std::int32_t> out_i32(n);
    const Eigen::Tensor<std::int32_t, 1> want_i32 = mixt::eval(mixt::cast<std::int32_t>(mixt::lazy(host_u2)) * 3 - 1);
    mixt::assign(out_i32.map(), mixt::cast<std::int32_t>(mixt::lazy(dev_u2)) * 3 - 1, *device_);
    device_->synchronize();
    expect_same("cast<i32>(uint2 packed) * 3 - 1", n, out_i32.download(), want_i32);
}

TEST_F(gpu, functions_and_complex_values) {
    const auto f32 = make<float>(16);
    const auto f16 = make<Eigen::half>(17);
    const auto bf16 = make<Eigen::bfloat16>(18);
    const auto c64 = make<std::complex<float>>(19);
    const auto c128 = make<std::complex<double>>(20);
    const auto i8 = make<std::int8_t>(21);
    // One function per check, so that an error is not magnified by a cancellation in a sum of two of them.
    check_close("exp(f32 * 0.01)", 3, [](const auto& a) { return mixt::exp(mixt::lazy(a) * 0.01f); }, f32);
    check_close("sqrt(abs(f32))", 1, [](const auto& a) { return mixt::sqrt(mixt::abs(a)); }, f32);
    // Functions of f16 and bf16 are correctly rounded on every device (half_math_test: each exact value lies
    // far further from a rounding boundary than CUDA's f64 functions err), so the bits are the CPU's.
    check("exp(f16)", [](const auto& a) { return mixt::exp(a); }, f16);
    check("sin(f16)", [](const auto& a) { return mixt::sin(a); }, f16);
    check("cos(bf16)", [](const auto& a) { return mixt::cos(a); }, bf16);
    check("log(abs(f16))", [](const auto& a) { return mixt::log(mixt::abs(a)); }, f16);
    check("tanh(bf16)", [](const auto& a) { return mixt::tanh(a); }, bf16);
    check_close("tanh(i8)", 3, [](const auto& a) { return mixt::tanh(a); }, i8);
    check_close("sin(f32) * cos(f32)", 6, [](const auto& a) { return mixt::sin(a) * mixt::cos(a); }, f32);
    check_close("pow(abs(f32) * 0.01, bf16 * 0.1)", 5, [](const auto& a, const auto& b) {
        return mixt::pow(mixt::abs(a) * 0.01f, mixt::lazy(b) * 0.1f);
    }, f32, bf16);
    // Products, sums, conjugates and parts of complex values are exact, each product rounded on its own: bit
    // for bit.
    check("c64 * c64 + conj(c64) - c64 * f32", [](const auto& a, const auto& b) {
        return mixt::lazy(a) * a + mixt::conj(a) - mixt::lazy(a) * b;
    }, c64, f32);
    check("real(c128) * imag(c128) + c128 / 2", [](const auto& a) {
        return mixt::real(a) * mixt::imag(a) + mixt::lazy(a) / 2;
    }, c128);
    const auto c64_b = make<std::complex<float>>(26);
    check("c64 / c64 (computed in c128, rounded part by part)", [](const auto& a, const auto& b) { return mixt::lazy(a) / b; },
          c64, c64_b);
    check("c128 / c64 + c64 / c128", [](const auto& a, const auto& b) { return mixt::lazy(a) / b + mixt::lazy(b) / a; },
          c128, c64);
    check("pow(c64, i8 % 5)", [](const auto& a, const auto& b) { return mixt::pow(mixt::lazy(a), mixt::lazy(b) % 5); }, c64, i8);
    check_close("abs(c64)", 4, [](const auto& a) { return mixt::abs(a); }, c64);
    check_close("exp(c64 * 0.01)", 4, [](const auto& a) { return mixt::exp(mixt::lazy(a) * 0.01f); }, c64);
    // A complex exponent that is not an integer: exp(w log z), in complex128 on the device.
    check_close("pow(c64, c64 * 0.01 + 0.5)", 4, [](const auto& a, const auto& b) {
        return mixt::pow(mixt::lazy(a), mixt::lazy(b) * 0.01f + 0.5f);
    }, c64, c64_b);
}

// exp of f16 and bf16 in device code is computed in float and settled in double only near a rounding boundary
// (expr/functors.hpp, small_float_exp): for every one of the 65536 values of each, the host's bits.
template <class T>
void every_value_exp(const Eigen::GpuDevice& device) {
    Eigen::Tensor<T, 1> host(65536);
    for (int i = 0; i < 65536; ++i) host(i) = Eigen::numext::bit_cast<T>(static_cast<std::uint16_t>(i));
    const Eigen::Tensor<T, 1> want = mixt::eval(mixt::exp(host));
    const device_tensor<T> in(host), out(65536);
    mixt::assign(out.map(), mixt::exp(in.map()), device);
    device.synchronize();
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    const Eigen::Tensor<T, 1> got = out.download();
    expect_all(std::is_same_v<T, Eigen::half> ? "exp(f16)" : "exp(bf16)", 65536, got, want,
               [](const auto& g, const auto& w) { return mixt_test::same_result(g, w); },
               [&](Eigen::Index i) { return " (of bits " + std::to_string(i) + ") differs from the host's"; });
}
TEST_F(gpu, exp_of_every_half_and_bfloat16_value) {
    every_value_exp<Eigen::half>(*device_);
    every_value_exp<Eigen::bfloat16>(*device_);
}

// Rank 2, row-major: the same kernels index through the tensor's layout.
TEST_F(gpu, rank_two_row_major) {
    using T8 = Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor>;
    using TH = Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor>;
    const Eigen::Index rows = 301, cols = 331; // rows * cols <= n: views of the first elements
    const auto flat8 = make<std::int8_t>(22);
    const auto flath = make<Eigen::half>(23);
    // Copied, not assigned from a map: Eigen's own host executor does not compile in a .cu file.
    T8 a(rows, cols);
    TH b(rows, cols);
    std::memcpy(a.data(), flat8.data(), sizeof(std::int8_t) * static_cast<std::size_t>(rows * cols));
    std::memcpy(b.data(), flath.data(), sizeof(Eigen::half) * static_cast<std::size_t>(rows * cols));
    const TH want = mixt::eval(mixt::lazy(a) * b + 2); // i8 * f16 + i* is f16
    const device_tensor<std::int8_t> da(flat8);
    const device_tensor<Eigen::half> db(flath);
    const device_tensor<Eigen::half> out(rows * cols);
    Eigen::TensorMap<Eigen::Tensor<std::int8_t, 2, Eigen::RowMajor>> ma(da.map().data(), rows, cols);
    Eigen::TensorMap<Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor>> mb(db.map().data(), rows, cols);
    Eigen::TensorMap<TH> mo(out.map().data(), rows, cols);
    mixt::assign(mo, mixt::lazy(ma) * mb + 2, *device_);
    device_->synchronize();
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    const Eigen::Tensor<Eigen::half, 1> got = out.download();
    expect_same("i8 * f16 + 2, rank 2 row-major", rows * cols, got, [&](Eigen::Index i) { return want.data()[i]; });
}

// to_eigen on the GPU, reduced by Eigen's own GPU executor: an Eigen reduction of the lowered expression, and a
// mixt reduction lowered whole (mixt's accumulator dtype: the i16 values of i8 + u8 summed in the default int,
// i64). Integer sums do not depend on the order of the reduction.
TEST_F(gpu, lowered_expression_reduced) {
    const auto i8 = make<std::int8_t>(24);
    const auto u8 = make<std::uint8_t>(25);
    // The host's sum by a plain loop (Eigen's own host executor does not compile in a .cu file): i8 + u8 is i16.
    std::int64_t want = 0;
    for (Eigen::Index i = 0; i < n; ++i) want += static_cast<std::int16_t>(i8(i) + u8(i));
    const device_tensor<std::int8_t> da(i8);
    const device_tensor<std::uint8_t> db(u8);
    const auto a = da.map();
    const auto b = db.map();
    const auto sum_on_device = [&](const auto& reduction) {
        const device_tensor<std::int64_t> out(1);
        Eigen::TensorMap<Eigen::Tensor<std::int64_t, 0>> total(out.map().data());
        total.device(*device_) = reduction;
        device_->synchronize();
        EXPECT_EQ(cudaGetLastError(), cudaSuccess);
        return out.download()(0);
    };
    EXPECT_EQ(sum_on_device(mixt::to_eigen(mixt::lazy(a) + b).template cast<std::int64_t>().sum()), want);
    EXPECT_EQ(sum_on_device(mixt::to_eigen(mixt::sum(mixt::lazy(a) + b))), want);
}

// mixt's kernel (eval/gpu.hpp) takes three paths: 16-byte loads where every array is contiguous and aligned
// (the tests above, on cudaMalloc'd memory), one element per thread where a pointer is not aligned, and the
// strided kernel for broadcast operands and strided destinations. Each against the DefaultDevice.
TEST_F(gpu, misaligned_broadcast_and_strided) {
    const auto i8 = make<std::int8_t>(27);
    const auto f16 = make<Eigen::half>(28);
    const auto f32 = make<float>(29);
    const device_tensor<std::int8_t> da(i8);
    const device_tensor<Eigen::half> db(f16);
    const device_tensor<float> dc(f32);
    const Eigen::Index m = n - 3;
    {
        // Operands one element past their allocation's start: not 16-byte aligned.
        const Eigen::TensorMap<const Eigen::Tensor<const std::int8_t, 1>> ha(i8.data() + 1, m);
        const Eigen::TensorMap<const Eigen::Tensor<const Eigen::half, 1>> hb(f16.data() + 1, m);
        const Eigen::TensorMap<const Eigen::Tensor<const float, 1>> hc(f32.data() + 1, m);
        const Eigen::Tensor<float, 1> want = mixt::eval(mixt::lazy(ha) + mixt::lazy(hb) * hc);
        const device_tensor<float> out(n);
        Eigen::TensorMap<Eigen::Tensor<float, 1>> o(out.map().data() + 1, m);
        mixt::assign(o, mixt::lazy(Eigen::TensorMap<const Eigen::Tensor<const std::int8_t, 1>>(da.map().data() + 1, m)) +
                            mixt::lazy(Eigen::TensorMap<const Eigen::Tensor<const Eigen::half, 1>>(db.map().data() + 1, m)) *
                                Eigen::TensorMap<const Eigen::Tensor<const float, 1>>(dc.map().data() + 1, m),
                     *device_);
        device_->synchronize();
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
        const Eigen::Tensor<float, 1> got = out.download();
        expect_same("misaligned", m, [&](Eigen::Index i) { return got(i + 1); }, want);
    }
    {
        // [rows, cols] i8 times a [rows, 1] f16 scale plus a [cols] f32 row (row-major), into every other
        // column of a [rows, 2 * cols] destination.
        const Eigen::Index rows = 211, cols = 233;
        constexpr int RM = Eigen::RowMajor;
        Eigen::Tensor<std::int8_t, 2, RM> w(rows, cols);
        Eigen::Tensor<Eigen::half, 2, RM> scale(rows, 1);
        Eigen::Tensor<float, 1, RM> bias(cols);
        std::memcpy(w.data(), i8.data(), sizeof(std::int8_t) * static_cast<std::size_t>(rows * cols));
        std::memcpy(scale.data(), f16.data(), sizeof(Eigen::half) * static_cast<std::size_t>(rows));
        std::memcpy(bias.data(), f32.data(), sizeof(float) * static_cast<std::size_t>(cols));
        const Eigen::Tensor<float, 2, RM> want = mixt::eval(mixt::lazy(w) * scale + bias);
        using MI = Eigen::TensorMap<const Eigen::Tensor<const std::int8_t, 2, RM>>;
        using MH = Eigen::TensorMap<const Eigen::Tensor<const Eigen::half, 2, RM>>;
        using MF = Eigen::TensorMap<const Eigen::Tensor<const float, 1, RM>>;
        const device_tensor<float> out(2 * rows * cols);
        ASSERT_EQ(cudaMemset(out.map().data(), 0xff, sizeof(float) * static_cast<std::size_t>(2 * rows * cols)), cudaSuccess);
        Eigen::TensorMap<Eigen::Tensor<float, 2, RM>> big(out.map().data(), rows, 2 * cols);
        const Eigen::array<Eigen::Index, 2> every_other{1, 2};
        auto dst = big.stride(every_other);
        mixt::assign(dst, mixt::lazy(MI(da.map().data(), rows, cols)) * MH(db.map().data(), rows, 1) + MF(dc.map().data(), cols),
                     *device_);
        device_->synchronize();
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
        const Eigen::Tensor<float, 1> got = out.download();
        int wrong = 0;
        std::uint32_t sentinel = 0;
        std::memset(&sentinel, 0xff, sizeof sentinel);
        for (Eigen::Index r = 0; r < rows; ++r)
            for (Eigen::Index c = 0; c < cols; ++c) {
                if (!mixt_test::same_result(got(r * 2 * cols + 2 * c), want(r, c)) && ++wrong <= 3)
                    ADD_FAILURE() << "broadcast into a strided destination: element (" << r << ", " << c << ")";
                std::uint32_t skipped = 0;
                std::memcpy(&skipped, &got(r * 2 * cols + 2 * c + 1), sizeof skipped);
                if (skipped != sentinel && ++wrong <= 3) ADD_FAILURE() << "written between the strided elements: (" << r << ", " << c << ")";
            }
        EXPECT_EQ(wrong, 0);
    }
    {
        // Column-major: [rows, cols] f16 plus a [1, cols] i8 row times a [rows, 1] bf16 column (an outer
        // product broadcast), into a column-major destination.
        const Eigen::Index rows = 173, cols = 191;
        constexpr int CM = Eigen::ColMajor;
        Eigen::Tensor<Eigen::half, 2, CM> a(rows, cols);
        Eigen::Tensor<std::int8_t, 2, CM> row(1, cols);
        Eigen::Tensor<Eigen::half, 2, CM> column(rows, 1);
        std::memcpy(a.data(), f16.data(), sizeof(Eigen::half) * static_cast<std::size_t>(rows * cols));
        std::memcpy(row.data(), i8.data(), sizeof(std::int8_t) * static_cast<std::size_t>(cols));
        std::memcpy(column.data(), f16.data() + 7, sizeof(Eigen::half) * static_cast<std::size_t>(rows));
        const Eigen::Tensor<Eigen::half, 2, CM> want = mixt::eval(mixt::lazy(a) + mixt::lazy(row) * column);
        using MH = Eigen::TensorMap<const Eigen::Tensor<const Eigen::half, 2, CM>>;
        using MI = Eigen::TensorMap<const Eigen::Tensor<const std::int8_t, 2, CM>>;
        const device_tensor<Eigen::half> out(rows * cols);
        Eigen::TensorMap<Eigen::Tensor<Eigen::half, 2, CM>> o(out.map().data(), rows, cols);
        mixt::assign(o, mixt::lazy(MH(db.map().data(), rows, cols)) + mixt::lazy(MI(da.map().data(), 1, cols)) * MH(db.map().data() + 7, rows, 1),
                     *device_);
        device_->synchronize();
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
        const Eigen::Tensor<Eigen::half, 1> got = out.download();
        const auto same = [](const auto& g, const auto& w) { return mixt_test::same_result(g, w); };
        expect_all("column-major broadcast", rows * cols, got, [&](Eigen::Index i) { return want.data()[i]; }, same,
                   [&](Eigen::Index i) { return " (row " + std::to_string(i % rows) + ", column " + std::to_string(i / rows) + ")"; });
    }
}

// Sizes around the vector width (n < V, n % V == 0, one element) and an assignment in place (`a = a * 2 + b`).
TEST_F(gpu, small_sizes_and_in_place) {
    for (const Eigen::Index m : {Eigen::Index{1}, Eigen::Index{15}, Eigen::Index{16}, Eigen::Index{17}, Eigen::Index{64}}) {
        const auto u8 = make<std::uint8_t>(30);
        const auto i8 = make<std::int8_t>(31);
        const Eigen::TensorMap<const Eigen::Tensor<const std::uint8_t, 1>> hu(u8.data(), m);
        const Eigen::TensorMap<const Eigen::Tensor<const std::int8_t, 1>> hi(i8.data(), m);
        const Eigen::Tensor<std::int16_t, 1> want = mixt::eval(mixt::lazy(hu) + hi);
        const device_tensor<std::uint8_t> du(u8);
        const device_tensor<std::int8_t> di(i8);
        const device_tensor<std::int16_t> out(n);
        ASSERT_EQ(cudaMemset(out.map().data(), 0xff, sizeof(std::int16_t) * static_cast<std::size_t>(n)), cudaSuccess);
        Eigen::TensorMap<Eigen::Tensor<std::int16_t, 1>> o(out.map().data(), m);
        mixt::assign(o, mixt::lazy(Eigen::TensorMap<const Eigen::Tensor<const std::uint8_t, 1>>(du.map().data(), m)) +
                            Eigen::TensorMap<const Eigen::Tensor<const std::int8_t, 1>>(di.map().data(), m),
                     *device_);
        device_->synchronize();
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
        const Eigen::Tensor<std::int16_t, 1> got = out.download();
        for (Eigen::Index i = 0; i < m; ++i) EXPECT_EQ(got(i), want(i)) << m << " elements: element " << i;
        EXPECT_EQ(got(m), std::int16_t{-1}) << m << " elements: written past the end";
    }
    const auto f32 = make<float>(32);
    const auto bf16 = make<Eigen::bfloat16>(33);
    Eigen::Tensor<float, 1> want = f32;
    {
        Eigen::TensorMap<Eigen::Tensor<float, 1>> w(want.data(), n);
        mixt::assign(w, mixt::lazy(w) * 2 + bf16);
    }
    const device_tensor<float> a(f32);
    const device_tensor<Eigen::bfloat16> b(bf16);
    mixt::assign(a.map(), mixt::lazy(a.map()) * 2 + b.map(), *device_);
    device_->synchronize();
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    const Eigen::Tensor<float, 1> got = a.download();
    expect_same("in place", n, got, want);
}

TEST_F(gpu, errors_before_the_kernel) {
    const auto u8 = make<std::uint8_t>(15);
    const device_tensor<std::uint8_t> a(u8);
    const device_tensor<std::uint8_t> out(n);
    EXPECT_THROW(mixt::assign(out.map(), mixt::lazy(a.map()) + 300, *device_), mixt::overflow_error);
    const device_tensor<std::uint8_t> shorter(n - 1);
    EXPECT_THROW(mixt::assign(shorter.map(), mixt::lazy(a.map()) + 1, *device_), mixt::shape_error);
}

} // namespace
