// Device code of mixt's per-element functions, compiled to PTX by ptx_check.cmake (test gpu.ptx), which
// asserts the instructions each kernel must contain. No GPU is needed: this is how a host without one sees a
// device miscompile, such as nvcc 13 + libstdc++ 12 compiling std::complex's `+` to nothing (a + b == a).
//
// Each kernel is extern "C" so that its PTX entry has the name ptx_check.cmake looks for. The file is
// compiled with nvcc's default -fmad=true: products must still be rounded before the sums that consume them.

#define EIGEN_USE_GPU

#include <mixt/mixt.hpp>

#include <complex>
#include <cstdint>

namespace {
namespace d = mixt::detail;
using c64 = std::complex<float>;
using c128 = std::complex<double>;
} // namespace

#define MIXT_PTX_BINARY(NAME, FN, T)                                                                           \
    extern "C" __global__ void NAME(const T* a, const T* b, T* out) {                                          \
        const unsigned i = threadIdx.x;                                                                        \
        out[i] = d::FN{}(a[i], b[i]);                                                                          \
    }
#define MIXT_PTX_UNARY(NAME, FN, T)                                                                            \
    extern "C" __global__ void NAME(const T* a, T* out) {                                                      \
        const unsigned i = threadIdx.x;                                                                        \
        out[i] = d::FN{}(a[i]);                                                                                \
    }

MIXT_PTX_BINARY(add_c64, add_fn, c64)
MIXT_PTX_BINARY(add_c128, add_fn, c128)
MIXT_PTX_BINARY(sub_c64, sub_fn, c64)
MIXT_PTX_BINARY(sub_c128, sub_fn, c128)
MIXT_PTX_BINARY(mul_c64, mul_fn, c64)
MIXT_PTX_BINARY(mul_c128, mul_fn, c128)
MIXT_PTX_BINARY(div_c64, div_fn, c64)
MIXT_PTX_BINARY(div_c128, div_fn, c128)
MIXT_PTX_UNARY(neg_c64, neg_fn, c64)
MIXT_PTX_UNARY(conj_c128, conj_fn, c128)

// Equality of complex values compares both parts.
extern "C" __global__ void equal_c64(const c64* a, const c64* b, bool* out) {
    const unsigned i = threadIdx.x;
    out[i] = d::equal_fn{}(a[i], b[i]);
}

// A product feeding a sum: two roundings (mul.rn, then add), never one fused multiply-add.
extern "C" __global__ void mul_add_f32(const float* a, const float* b, const float* c, float* out) {
    const unsigned i = threadIdx.x;
    out[i] = d::add_fn{}(d::mul_fn{}(a[i], b[i]), c[i]);
}
extern "C" __global__ void mul_add_f64(const double* a, const double* b, const double* c, double* out) {
    const unsigned i = threadIdx.x;
    out[i] = d::sub_fn{}(d::mul_fn{}(a[i], b[i]), c[i]);
}

// A whole expression through mixt's own evaluation of one element (the functors the Eigen executor calls):
// c64 * c64 + conj(c64) - c64, the case that was wrong on an H200.
extern "C" __global__ void expression_c64(const c64* a, const c64* b, c64* out) {
    const unsigned i = threadIdx.x;
    out[i] = d::sub_fn{}(d::add_fn{}(d::mul_fn{}(a[i], a[i]), d::conj_fn{}(a[i])), d::mul_fn{}(a[i], b[i]));
}

// Powers of complex values: by repeated squaring for an integer exponent, exp(w log z) otherwise.
extern "C" __global__ void pow_c64_i32(const c64* a, const std::int32_t* e, c64* out) {
    const unsigned i = threadIdx.x;
    out[i] = d::pow_fn{}(a[i], e[i]);
}
extern "C" __global__ void pow_c128_c128(const c128* a, const c128* e, c128* out) {
    const unsigned i = threadIdx.x;
    out[i] = d::pow_fn{}(a[i], e[i]);
}

// mixt's own GPU kernels (eval/gpu.hpp), instantiated by assign on an Eigen::GpuDevice. Never called here:
// only their device code is checked (16-byte loads and stores, the GPU's f16 conversions, no fused products).
void assign_i8_f16_f32(Eigen::TensorMap<Eigen::Tensor<float, 1>> out, Eigen::TensorMap<Eigen::Tensor<const std::int8_t, 1>> a,
                       Eigen::TensorMap<Eigen::Tensor<const Eigen::half, 1>> b, Eigen::TensorMap<Eigen::Tensor<const float, 1>> c,
                       const Eigen::GpuDevice& device) {
    mixt::assign(out, mixt::lazy(a) + mixt::lazy(b) * c, device);
}
void assign_f16_bf16(Eigen::TensorMap<Eigen::Tensor<Eigen::bfloat16, 1>> out,
                     Eigen::TensorMap<Eigen::Tensor<const Eigen::half, 1>> a,
                     Eigen::TensorMap<Eigen::Tensor<const Eigen::bfloat16, 1>> b, const Eigen::GpuDevice& device) {
    mixt::assign(out, mixt::cast<Eigen::bfloat16>(mixt::lazy(a) * 2) + b, device);
}

// A complex power with a complex exponent, exp(w log z) in complex128 (the path pow takes for an exponent that
// is not an integer).
extern "C" __global__ void general_pow_c64(const c64* a, const c64* e, c64* out) {
    const unsigned i = threadIdx.x;
    out[i] = d::complex_general_pow(a[i], e[i]);
}
