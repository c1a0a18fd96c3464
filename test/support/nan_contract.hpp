#ifndef MIXT_TEST_SUPPORT_NAN_CONTRACT_HPP
#define MIXT_TEST_SUPPORT_NAN_CONTRACT_HPP

// mixt's NaN contract, as the tests compare results (README, "NaN"): every path and device gives the same
// result bit for bit, except that the sign and payload of a NaN are unspecified. Where an operation has a NaN
// operand, x86 returns the payload of one of them (its first source operand, and which operand comes first is
// the compiler's choice for + and *), CUDA a canonical NaN; an element that is NaN on one path is NaN on every
// other, and nothing else may differ.

#include <bit>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <Eigen/Core>

#include <mixt/dtype/narrow_float.hpp>

namespace mixt_test {

/// Whether the bit pattern `bits` of a value of type T is a NaN (T a floating-point type of 2, 4 or 8 bytes).
template <class T>
constexpr bool is_nan_bits(std::uint64_t bits) {
    if constexpr (std::is_same_v<T, Eigen::half>)
        return (bits & 0x7c00u) == 0x7c00u && (bits & 0x03ffu) != 0;
    else if constexpr (std::is_same_v<T, Eigen::bfloat16>)
        return (bits & 0x7f80u) == 0x7f80u && (bits & 0x007fu) != 0;
    else if constexpr (std::is_same_v<T, float>)
        return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
    else if constexpr (std::is_same_v<T, double>)
        return (bits & 0x7ff0000000000000u) == 0x7ff0000000000000u && (bits & 0x000fffffffffffffu) != 0;
    else if constexpr (mixt::is_narrow_float_v<T>)
        return mixt::detail::narrow_float_traits<T::value_dtype>::is_nan_code(static_cast<std::uint8_t>(bits));
    else
        return false;
}

/// Two bit patterns of a T are the same result under the contract: equal, or both NaN.
template <class T>
constexpr bool same_result_bits(std::uint64_t a, std::uint64_t b) {
    return a == b || (is_nan_bits<T>(a) && is_nan_bits<T>(b));
}

template <class T>
std::uint64_t bits_of_value(const T& x) {
    if constexpr (sizeof(T) == 1) return std::bit_cast<std::uint8_t>(x);
    else if constexpr (sizeof(T) == 2) return std::bit_cast<std::uint16_t>(x);
    else if constexpr (sizeof(T) == 4) return std::bit_cast<std::uint32_t>(x);
    else return std::bit_cast<std::uint64_t>(x);
}

template <class T>
inline constexpr bool is_complex_v = false;
template <class R>
inline constexpr bool is_complex_v<std::complex<R>> = true;

/// Two values are the same result under the contract: the same bits, or both NaN (a complex value part by part).
template <class T>
bool same_result(const T& a, const T& b) {
    if constexpr (is_complex_v<T>)
        return same_result(a.real(), b.real()) && same_result(a.imag(), b.imag());
    else
        return same_result_bits<T>(bits_of_value(a), bits_of_value(b));
}

/// Element by element over two arrays of n values.
template <class T>
bool same_results(const T* a, const T* b, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (!same_result(a[i], b[i])) return false;
    return true;
}

} // namespace mixt_test

#endif // MIXT_TEST_SUPPORT_NAN_CONTRACT_HPP
