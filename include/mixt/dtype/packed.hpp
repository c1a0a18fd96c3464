#ifndef MIXT_DTYPE_PACKED_HPP
#define MIXT_DTYPE_PACKED_HPP

// Packed sub-byte arrays: int4, uint4 and float4_e2m1fn two to a byte, int2 and uint2 four to a byte, as
// quantized weights are shipped. The layout is ONNX's: the elements in the array's memory order (its layout's
// linear index), element i in byte i / per_byte at bits (i % per_byte) * bits, the first element in the low
// bits. `mixt::packed<mixt::int4>(bytes, 4096, 4096)` is a `packed_map`: an Eigen tensor expression of the
// element type (an operand of mixt's expressions and of Eigen's), and a destination of mixt::assign. mixt's CPU
// passes never read it element by element: each run of it is unpacked into a stage (or a stage packed into it)
// a register at a time (eval/strided.hpp); Eigen's evaluator (TensorEvaluator below) reads one element per call.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/dtype/storage.hpp"

namespace mixt {

/// Whether T (without const) is an element type that packs: int4, uint4, float4_e2m1fn, int2, uint2.
template <class T>
inline constexpr bool packs_v = [] {
    using U = std::remove_const_t<T>;
    if constexpr (detail::is_narrow_v<U>)
        return info(dtype_of_v<U>).bits == 4 || info(dtype_of_v<U>).bits == 2;
    else
        return false;
}();

/// Elements of T per byte in a packed array (2 for the 4-bit types, 4 for the 2-bit ones).
template <class T>
    requires packs_v<T>
inline constexpr int per_byte_v = 8 / info(dtype_of_v<std::remove_const_t<T>>).bits;

/// The bytes a packed array of n elements of T takes: n / per_byte, rounded up.
template <class T>
    requires packs_v<T>
constexpr Eigen::Index packed_bytes(Eigen::Index n) noexcept {
    return (n + per_byte_v<T> - 1) / per_byte_v<T>;
}

namespace detail {

/// Where element 0 of a packed run lies: `first` elements after the start of `bytes` (first >= 0). Adding an
/// element count moves it, as adding to a pointer does.
template <class S>
struct packed_ptr {
    static_assert(packs_v<S> && !std::is_const_v<S>);
    static constexpr int per_byte = per_byte_v<S>;
    static constexpr int bits = 8 / per_byte;
    static constexpr std::uint8_t mask = static_cast<std::uint8_t>((1u << bits) - 1u);

    std::uint8_t* bytes = nullptr;
    Eigen::Index first = 0;

    EIGEN_DEVICE_FUNC friend constexpr packed_ptr operator+(packed_ptr p, Eigen::Index k) noexcept {
        return {p.bytes, p.first + k};
    }
    EIGEN_DEVICE_FUNC constexpr packed_ptr& operator+=(Eigen::Index k) noexcept {
        first += k;
        return *this;
    }
    /// The byte of element k, and its shift in it.
    EIGEN_DEVICE_FUNC constexpr std::uint8_t* byte_of(Eigen::Index k) const noexcept { return bytes + (first + k) / per_byte; }
    EIGEN_DEVICE_FUNC constexpr int shift_of(Eigen::Index k) const noexcept {
        return static_cast<int>((first + k) % per_byte) * bits;
    }
    /// Whether element 0 starts a byte.
    EIGEN_DEVICE_FUNC constexpr bool byte_aligned() const noexcept { return first % per_byte == 0; }
    /// Element k.
    EIGEN_DEVICE_FUNC S get(Eigen::Index k) const noexcept {
        return S::from_bits(static_cast<std::uint8_t>((*byte_of(k) >> shift_of(k)) & mask));
    }
    /// Writes element k, leaving the byte's other elements as they are, without a race against another thread
    /// writing another element of the same byte (an atomic read-modify-write of the byte).
    void set_shared(Eigen::Index k, S v) const noexcept {
        std::atomic_ref<std::uint8_t> b(*byte_of(k));
        const int s = shift_of(k);
        const auto keep = static_cast<std::uint8_t>(~(mask << s));
        const auto bits_of = static_cast<std::uint8_t>((v.bits() & mask) << s);
        std::uint8_t old = b.load(std::memory_order_relaxed);
        while (!b.compare_exchange_weak(old, static_cast<std::uint8_t>((old & keep) | bits_of), std::memory_order_relaxed)) {
        }
    }
};

/// The element type of a view of packed memory (strided_view<packed_element<S>, R>, eval/space.hpp): its
/// pointer is a packed_ptr<S>; the kernel reads and writes S, one byte each, from and to stages.
template <class S>
struct packed_element {
    using storage = S;
};
template <class T>
inline constexpr bool is_packed_element_v = false;
template <class S>
inline constexpr bool is_packed_element_v<packed_element<S>> = true;
template <class S>
inline constexpr bool is_packed_element_v<const packed_element<S>> = true;

/// The pointer of a view of elements T: T*, or for packed elements a packed_ptr.
template <class T>
struct view_pointer {
    using type = T*;
};
template <class S>
struct view_pointer<packed_element<S>> {
    using type = packed_ptr<S>;
};
template <class S>
struct view_pointer<const packed_element<S>> {
    using type = packed_ptr<S>;
};
template <class T>
using view_pointer_t = typename view_pointer<T>::type;

/// The type a kernel reads or writes for a view's element T: T, or S for packed_element<S> (unpacked in a stage).
template <class T>
struct stage_type {
    using type = std::remove_const_t<T>;
};
template <class S>
struct stage_type<packed_element<S>> {
    using type = S;
};
template <class S>
struct stage_type<const packed_element<S>> {
    using type = S;
};
template <class T>
using stage_t = typename stage_type<T>::type;

} // namespace detail

/// A packed array of Rank dimensions of the element type T (const T: read-only) in the layout Layout, over bytes
/// someone else owns: an Eigen tensor expression whose elements are T (read through Eigen's evaluator, or by
/// mixt's passes a run at a time), and a destination of mixt::assign. Eigen cannot write it (no element has an
/// address); mixt::assign does.
template <class T, int Rank, int Layout = Eigen::ColMajor>
class packed_map : public Eigen::TensorBase<packed_map<T, Rank, Layout>,
                                            std::is_const_v<T> ? Eigen::ReadOnlyAccessors : Eigen::WriteAccessors> {
    static_assert(packs_v<T>, "mixt: packed_map<T, ...>: T must be mixt::int4, uint4, float4_e2m1fn, int2 or uint2 "
                              "(the types narrower than a byte); other types are one byte or more per element");

public:
    using Self = packed_map;
    using Scalar = std::remove_const_t<T>;
    using Index = Eigen::Index;
    using Dimensions = Eigen::DSizes<Index, Rank>;
    using CoeffReturnType = Scalar;
    using Nested = packed_map;
    using byte_type = std::conditional_t<std::is_const_v<T>, const std::uint8_t, std::uint8_t>;
    static constexpr int NumIndices = Rank;
    static constexpr int Options = Layout;

    EIGEN_DEVICE_FUNC packed_map(byte_type* bytes, const Dimensions& dims) : bytes_(bytes), dims_(dims) {}
    template <class... I>
        requires(sizeof...(I) == Rank && (std::is_integral_v<I> && ...))
    EIGEN_DEVICE_FUNC packed_map(byte_type* bytes, I... dims) : bytes_(bytes), dims_(static_cast<Index>(dims)...) {}

    EIGEN_DEVICE_FUNC const Dimensions& dimensions() const { return dims_; }
    EIGEN_DEVICE_FUNC Index dimension(std::size_t d) const { return dims_[d]; }
    EIGEN_DEVICE_FUNC Index size() const { return dims_.TotalSize(); }
    EIGEN_DEVICE_FUNC byte_type* bytes() const { return bytes_; }
    /// The packed pointer of element 0.
    EIGEN_DEVICE_FUNC detail::packed_ptr<Scalar> pointer() const {
        return {const_cast<std::uint8_t*>(bytes_), 0};
    }
    /// Element (i0, i1, ...), read.
    template <class... I>
        requires(sizeof...(I) == Rank)
    EIGEN_DEVICE_FUNC Scalar operator()(I... i) const {
        return pointer().get(linear(Eigen::array<Index, static_cast<std::size_t>(Rank)>{static_cast<Index>(i)...}));
    }
    /// Element at linear index k (in the layout's memory order).
    EIGEN_DEVICE_FUNC Scalar coeff(Index k) const { return pointer().get(k); }

private:
    EIGEN_DEVICE_FUNC Index linear(const Eigen::array<Index, static_cast<std::size_t>(Rank)>& idx) const {
        Index k = 0;
        if constexpr (Layout == Eigen::RowMajor) {
            for (int d = 0; d < Rank; ++d) k = k * dims_[d] + idx[static_cast<std::size_t>(d)];
        } else {
            for (int d = Rank; d-- > 0;) k = k * dims_[d] + idx[static_cast<std::size_t>(d)];
        }
        return k;
    }

    byte_type* bytes_;
    Dimensions dims_;
};

/// A packed array of the element type T over writable bytes, of the given dimensions (Eigen's default layout,
/// column-major, unless Layout says otherwise): `mixt::packed<mixt::int4, Eigen::RowMajor>(w, 4096, 4096)`.
template <class T, int Layout = Eigen::ColMajor, class... I>
    requires(packs_v<T> && (std::is_integral_v<I> && ...))
packed_map<T, static_cast<int>(sizeof...(I)), Layout> packed(std::uint8_t* bytes, I... dims) {
    return {bytes, dims...};
}
/// The same over read-only bytes: an operand only.
template <class T, int Layout = Eigen::ColMajor, class... I>
    requires(packs_v<T> && (std::is_integral_v<I> && ...))
packed_map<const T, static_cast<int>(sizeof...(I)), Layout> packed(const std::uint8_t* bytes, I... dims) {
    return {bytes, dims...};
}

template <class T>
struct is_packed_map : std::false_type {};
template <class T, int R, int L>
struct is_packed_map<packed_map<T, R, L>> : std::true_type {};
/// Whether X is a packed_map.
template <class X>
inline constexpr bool is_packed_map_v = is_packed_map<std::remove_cvref_t<X>>::value;

} // namespace mixt

// --- Eigen's view of a packed_map: an expression of its elements, read one at a time -------------------------------

namespace Eigen {
namespace internal {
template <class T, int R, int L>
struct traits<mixt::packed_map<T, R, L>> {
    using Scalar = std::remove_const_t<T>;
    using StorageKind = Dense;
    using Index = Eigen::Index;
    static constexpr int NumDimensions = R;
    static constexpr int Layout = L;
    enum { Options = L, Flags = 0 };
    template <class U>
    struct MakePointer {
        using Type = U*;
    };
    using PointerType = Scalar*;
};
template <class T, int R, int L>
struct eval<mixt::packed_map<T, R, L>, Eigen::Dense> {
    using type = const mixt::packed_map<T, R, L>&;
};
template <class T, int R, int L>
struct nested<mixt::packed_map<T, R, L>, 1, typename eval<mixt::packed_map<T, R, L>>::type> {
    using type = mixt::packed_map<T, R, L>;
};
} // namespace internal

template <class T, int R, int L, class Device>
struct TensorEvaluator<const mixt::packed_map<T, R, L>, Device> {
    using XprType = mixt::packed_map<T, R, L>;
    using Index = Eigen::Index;
    using Scalar = std::remove_const_t<T>;
    using CoeffReturnType = Scalar;
    using PacketReturnType = typename PacketType<CoeffReturnType, Device>::type;
    using Dimensions = DSizes<Index, R>;
    using Storage = StorageMemory<Scalar, Device>;
    using EvaluatorPointerType = typename Storage::Type;
    static constexpr int PacketSize = PacketType<CoeffReturnType, Device>::size;
    static constexpr int NumDims = R;
    enum {
        IsAligned = false,
        PacketAccess = false,
        BlockAccess = false,
        PreferBlockAccess = false,
        Layout = L,
        CoordAccess = false,
        RawAccess = false
    };
    using TensorBlock = internal::TensorBlockNotImplemented;

    EIGEN_DEVICE_FUNC TensorEvaluator(const XprType& m, const Device&) : p_(m.pointer()), dims_(m.dimensions()) {}

    EIGEN_DEVICE_FUNC const Dimensions& dimensions() const { return dims_; }
    EIGEN_DEVICE_FUNC bool evalSubExprsIfNeeded(EvaluatorPointerType) { return true; }
    EIGEN_DEVICE_FUNC void cleanup() {}
    EIGEN_DEVICE_FUNC CoeffReturnType coeff(Index k) const { return p_.get(k); }
    EIGEN_DEVICE_FUNC TensorOpCost costPerCoeff(bool vectorized) const {
        return TensorOpCost(1, 0, 3, vectorized, PacketSize);
    }
    EIGEN_DEVICE_FUNC EvaluatorPointerType data() const { return nullptr; }

private:
    mixt::detail::packed_ptr<Scalar> p_;
    Dimensions dims_;
};
template <class T, int R, int L, class Device>
struct TensorEvaluator<mixt::packed_map<T, R, L>, Device> : TensorEvaluator<const mixt::packed_map<T, R, L>, Device> {
    using TensorEvaluator<const mixt::packed_map<T, R, L>, Device>::TensorEvaluator;
};
} // namespace Eigen

#endif // MIXT_DTYPE_PACKED_HPP
