#ifndef MIXT_EVAL_STRIDED_HPP
#define MIXT_EVAL_STRIDED_HPP

// The fused loop over an iteration space (eval/space.hpp): broadcast operands, strided views, destinations that
// are views. The space is cut into runs (run_plan); each run is one call of the contiguous loop of
// eval/fused.hpp (run_range_of) with the kernel's leaf pointers moved to the run's first elements, so every
// run is vectorized exactly as a flat pass is. Operands that are not contiguous along a run are staged
// (iteration_space says when), those with one value along it as a few copies read as a literal is
// (stage_broadcast); a destination that is not contiguous is computed into a stage and scattered.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <utility>

#include "mixt/dtype/packed.hpp"
#include "mixt/eval/fused.hpp"
#include "mixt/eval/space.hpp"
#include "mixt/expr/expression.hpp"
#include "mixt/simd/packed.hpp"

namespace mixt::detail {


/// How many of the first I elements of the tuple type Tuple are pointers (leaf pointers of kernel_args).
template <class Tuple, std::size_t I>
constexpr std::size_t pointers_before() {
    return []<std::size_t... J>(std::index_sequence<J...>) {
        return (std::size_t{0} + ... + std::size_t{std::is_pointer_v<std::tuple_element_t<J, Tuple>>});
    }(std::make_index_sequence<I>{});
}

/// Whether element I of kernel_args' tuple type is a leaf's mask (the element after its pointer).
template <class Tuple, std::size_t I>
constexpr bool is_leaf_mask() {
    if constexpr (I == 0)
        return false;
    else
        return std::is_pointer_v<std::tuple_element_t<I - 1, Tuple>>;
}

/// kernel_args `t` with its leaf pointers replaced by `p` and their masks by `m` (in order).
template <class Tuple, std::size_t L>
Tuple with_leaf_pointers(const Tuple& t, const std::array<const void*, L>& p, const std::array<index_t, L>& m) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return Tuple{[&] {
            using A = std::tuple_element_t<I, Tuple>;
            if constexpr (std::is_pointer_v<A>)
                return static_cast<A>(p[pointers_before<Tuple, I>()]);
            else if constexpr (is_leaf_mask<Tuple, I>())
                return static_cast<A>(m[pointers_before<Tuple, I>() - 1]);
            else
                return std::get<I>(t);
        }()...};
    }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

/// An element of N bytes and alignment A as the widest unsigned integers that divide both (so that an element
/// at any address its type allows is aligned for them: a complex<float> is 8 bytes aligned to 4, moved as two
/// 32-bit words), in a type that may alias any object: the stage copies move the operands' element objects as
/// these and read them back as elements.
template <std::size_t N, std::size_t A>
using element_word_t = std::conditional_t<
    N % 8 == 0 && A % 8 == 0, std::uint64_t,
    std::conditional_t<N % 4 == 0 && A % 4 == 0, std::uint32_t,
                       std::conditional_t<N % 2 == 0 && A % 2 == 0, std::uint16_t, std::uint8_t>>>;
template <std::size_t N, std::size_t A>
struct
#if defined(__GNUC__)
    __attribute__((__may_alias__))
#endif
    element_bits {
    element_word_t<N, A> w[N / sizeof(element_word_t<N, A>)];
};

/// Copies `rows` rows of `cols` elements of N bytes (aligned to A), rows `row_stride` and elements `stride` elements apart
/// from src, to out (contiguous); `Scatter` copies the other way. A stride of 0 fills. The elements move as
/// integers of their width (a fill or gather of integers vectorizes; one of Eigen::half objects stays scalar),
/// and as such the function is compiled once per element size, not once per expression (MIXT_NOINLINE).
template <bool Scatter, std::size_t N, std::size_t A>
MIXT_NOINLINE void copy_strided_bytes(void* out, const void* src, index_t rows, index_t cols, index_t row_stride,
                                      index_t stride) {
    using alias_u = element_bits<N, A>;
    static_assert(sizeof(alias_u) == N && alignof(alias_u) <= A);
    alias_u* const o0 = static_cast<alias_u*>(out);
    alias_u* const s0 = static_cast<alias_u*>(const_cast<void*>(src));
    if (!Scatter && row_stride == 0 && rows > 1) {
        // The same row `rows` times (an operand broadcast across rows, e.g. a channel vector): the first row,
        // then the copies made so far copied after them, doubling (not a call per row of a few elements).
        copy_strided_bytes<false, N, A>(out, src, 1, cols, 0, stride);
        const std::size_t row_bytes = static_cast<std::size_t>(cols) * N;
        for (index_t done = 1; done < rows;) {
            const index_t more = std::min(done, rows - done);
            std::memcpy(static_cast<void*>(o0 + done * cols), static_cast<const void*>(o0),
                        static_cast<std::size_t>(more) * row_bytes);
            done += more;
        }
        return;
    }
    for (index_t r = 0; r < rows; ++r) {
        alias_u* o = o0 + r * cols;
        alias_u* p = s0 + r * row_stride;
        if constexpr (Scatter) {
            for (index_t j = 0; j < cols; ++j) p[j * stride] = o[j];
        } else if (stride == 0) {
            if constexpr (sizeof(element_word_t<N, A>) == N) {
                // One word per element: a fill of integers, which vectorizes.
                using word = element_word_t<N, A>;
#if defined(__GNUC__)
                typedef word __attribute__((__may_alias__)) alias_word;
#else
                using alias_word = word;
#endif
                alias_word v;
                std::memcpy(&v, static_cast<const void*>(p), N);
                alias_word* const ow = reinterpret_cast<alias_word*>(o);
                index_t j = 0;
#if MIXT_SIMD_AVX2
                if constexpr (N <= 4) {
                    const std::size_t bytes = static_cast<std::size_t>(cols) * N;
                    if (bytes >= 32) {
                        // 32 bytes of copies a store, the last one ending at the row's end (it overlaps the one
                        // before with the same values): a row of 32 one-byte elements (a scale broadcast along
                        // blocks of 32) is one broadcast and one store.
                        const __m256i b = N == 1   ? _mm256_set1_epi8(static_cast<char>(v))
                                          : N == 2 ? _mm256_set1_epi16(static_cast<short>(v))
                                                   : _mm256_set1_epi32(static_cast<int>(v));
                        auto* const d = reinterpret_cast<unsigned char*>(o);
                        std::size_t k = 0;
                        for (; k + 32 <= bytes; k += 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + k), b);
                        if (k < bytes) _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + bytes - 32), b);
                        continue;
                    }
                }
#endif
                if (N < 8 && cols < 64) {
                    // A short row of narrow elements: 8 bytes of copies at a time (GCC makes the loop below a call
                    // to memset for 1-byte elements, which costs more than such a row: a scale broadcast along
                    // rows of 32).
                    std::uint64_t pattern = 0;
                    for (std::size_t k = 0; k < 8 / N; ++k) pattern |= static_cast<std::uint64_t>(v) << (8 * N * k);
                    for (; j + static_cast<index_t>(8 / N) <= cols; j += static_cast<index_t>(8 / N))
                        std::memcpy(static_cast<void*>(ow + j), &pattern, 8);
                } else {
                    for (; j + 32 <= cols; j += 32) // a fixed trip count: vectorized at -O2 too
                        for (index_t q = 0; q < 32; ++q) ow[j + q] = v;
                }
                // Fewer than 32 copies are left; the bound written out keeps GCC's -O3 from versioning this loop
                // for 2^61 iterations (and warning that one of them overflows).
                for (index_t q = 0; q < 32 && j + q < cols; ++q) ow[j + q] = v;
            } else {
                const alias_u v = *p;
                for (index_t j = 0; j < cols; ++j) o[j] = v;
            }
        } else if (stride == 1) {
            std::memcpy(static_cast<void*>(o), static_cast<const void*>(p), static_cast<std::size_t>(cols) * N);
        } else {
            for (index_t j = 0; j < cols; ++j) o[j] = p[j * stride];
        }
    }
}

/// copy_strided_bytes for elements of type T (trivially copyable: every element type of mixt is).
template <bool Scatter, class T>
inline void copy_strided(T* out, const T* src, index_t rows, index_t cols, index_t row_stride, index_t stride) {
    static_assert(std::is_trivially_copyable_v<T>);
    copy_strided_bytes<Scatter, sizeof(T), alignof(T)>(out, src, rows, cols, row_stride, stride);
}

// --- Packed operands and destinations (dtype/packed.hpp): unpacked into a stage, packed from one --------------

/// The n elements of the packed run at p (stride 1) into out, one per byte: the elements before p's first whole
/// byte and after its last one by one, the whole bytes between a register at a time (simd::unpack_bytes).
template <class S>
void unpack_run(S* out, packed_ptr<S> p, index_t n) {
    constexpr int per = packed_ptr<S>::per_byte;
    index_t j = 0;
    for (; j < n && !(p + j).byte_aligned(); ++j) out[j] = p.get(j);
    const index_t whole = (n - j) / per;
    simd::unpack_bytes<8 / per>(reinterpret_cast<std::uint8_t*>(out + j), (p + j).byte_of(0), whole);
    for (j += whole * per; j < n; ++j) out[j] = p.get(j);
}

/// copy_strided from packed memory: `rows` rows of `cols` elements, rows `row_stride` and elements `stride`
/// elements apart from src, unpacked into out (contiguous). A stride of 0 fills.
template <class S>
MIXT_NOINLINE void unpack_strided(S* out, packed_ptr<S> src, index_t rows, index_t cols, index_t row_stride,
                                  index_t stride) {
    if (stride == 1 && (rows == 1 || row_stride == cols)) { // rows one after another: one run
        unpack_run(out, src, rows * cols);
        return;
    }
    for (index_t r = 0; r < rows; ++r) {
        S* o = out + r * cols;
        const packed_ptr<S> p = src + r * row_stride;
        if (stride == 1) {
            unpack_run(o, p, cols);
        } else if (stride == 0) {
            const S v = p.get(0);
            for (index_t j = 0; j < cols; ++j) o[j] = v;
        } else {
            for (index_t j = 0; j < cols; ++j) o[j] = p.get(j * stride);
        }
    }
}

/// The n elements at in packed into the run at p (stride 1): the whole bytes a register at a time
/// (simd::pack_bytes); an element that shares its byte with elements outside the run (at either end) by an
/// atomic read-modify-write of the byte (packed_ptr::set_shared), so that threads writing neighbouring runs
/// never lose each other's bits.
template <class S>
void pack_run(packed_ptr<S> p, const S* in, index_t n) {
    constexpr int per = packed_ptr<S>::per_byte;
    index_t j = 0;
    for (; j < n && !(p + j).byte_aligned(); ++j) p.set_shared(j, in[j]);
    const index_t whole = (n - j) / per;
    simd::pack_bytes<8 / per>((p + j).byte_of(0), reinterpret_cast<const std::uint8_t*>(in + j), whole);
    for (j += whole * per; j < n; ++j) p.set_shared(j, in[j]);
}

/// copy_strided<true> into packed memory: the rows of `in` (contiguous) packed into the view at dst.
template <class S>
MIXT_NOINLINE void pack_strided(packed_ptr<S> dst, const S* in, index_t rows, index_t cols, index_t row_stride,
                                index_t stride) {
    if (stride == 1 && (rows == 1 || row_stride == cols)) { // rows one after another: one run
        pack_run(dst, in, rows * cols);
        return;
    }
    for (index_t r = 0; r < rows; ++r) {
        const S* o = in + r * cols;
        const packed_ptr<S> p = dst + r * row_stride;
        if (stride == 1) {
            pack_run(p, o, cols);
        } else {
            for (index_t j = 0; j < cols; ++j) p.set_shared(j * stride, o[j]);
        }
    }
}

/// Copies the operand at src, whose stride along the run is 0 (one value broadcast along it), for a kernel K
/// writing D: as broadcast_copies copies read with mask 0 (leaf_kernel), or, where the block loop may run
/// (it reads every element's address), `len` copies. Returns the leaf's mask.
template <class D, class K, class T>
index_t stage_broadcast(T* buffer, const T* src, index_t len) {
    if constexpr (block_loop_v<false, D, K> || block_loop_v<true, D, K>) {
        copy_strided<false>(buffer, src, 1, len, 0, 0);
        return ~index_t{0};
    } else {
        copy_strided<false>(buffer, src, 1, broadcast_copies, 0, 0);
        return 0;
    }
}

/// How a space is cut into runs, and which operands are read (or written) in place: direct[k] for operand k
/// (0: the destination); per_row: the leaves (bit k - 1 for operand k) read in place once per row of a run of
/// rows, their value broadcast along it (run_rows_of), neither in place nor staged.
template <std::size_t M>
struct run_layout {
    run_plan plan;
    std::array<bool, M> direct{};
    leaf_set per_row = 0;
};

/// Which leaves a pass's runs of short rows may read once per row (its kernel's hoisted_kernel variants):
/// `hoistable[k]` for operand k, of a hoistable_v type; every row's length a multiple of `lanes` (0: never).
template <std::size_t M>
struct row_hoisting {
    std::array<bool, M> hoistable{};
    index_t lanes = 0;
};

/// `packed[k]`: operand k is packed memory, staged whatever its strides. `rows`: the pass's row_hoisting.
template <int R, std::size_t M>
run_layout<M> plan_runs(const iteration_space<R, M>& s, index_t stage = stage_elements,
                        const std::array<bool, M>& packed = {}, const row_hoisting<M>& rows = {}) {
    run_layout<M> out;
    const auto rk = static_cast<std::size_t>(s.rank);
    const index_t n = s.inner();
    // A short innermost dimension runs several rows at a time where the destination is contiguous across
    // them; an operand is then in place if it is too, else staged row by row.
    // As many rows as a stage holds, a multiple of the rows that make 64 elements where that fits, so that
    // every run but the last of a row group is whole batches (no partial batch per run).
    index_t fold_rows = 1;
    if (rk >= 2 && n < short_run && s.strides[0][rk - 1] == 1 && s.strides[0][rk - 2] == n && n > 0) {
        const index_t whole = 64 / std::gcd(n, index_t{64});
        fold_rows = stage / n;
        if (fold_rows >= whole) fold_rows -= fold_rows % whole;
        fold_rows = std::min(fold_rows, s.dims[rk - 2]);
    }
    const bool fold = fold_rows >= 2;
    // In runs of rows of whole batches, the leaves of hoistable types broadcast along the rows (a scale per
    // block) are read once per row: all of them, or the first where not all are (the kernel variants the pass
    // compiles); the others are staged as copies.
    if (fold && rows.lanes > 0 && n % rows.lanes == 0) {
        leaf_set all = 0, broadcast = 0;
        for (std::size_t k = 1; k < M && k <= 64; ++k)
            if (rows.hoistable[k]) {
                all |= leaf_set{1} << (k - 1);
                if (!packed[k] && s.strides[k][rk - 1] == 0) broadcast |= leaf_set{1} << (k - 1);
            }
        out.per_row = broadcast == all ? broadcast : broadcast & (~broadcast + 1);
    }
    bool staged = false;
    for (std::size_t k = 0; k < M; ++k) {
        const bool per_row = k > 0 && k <= 64 && ((out.per_row >> (k - 1)) & 1) != 0;
        out.direct[k] = !packed[k] && !per_row && s.strides[k][rk - 1] == 1 && (!fold || s.strides[k][rk - 2] == n);
        staged = staged || (!out.direct[k] && !per_row);
    }
    run_plan& p = out.plan;
    if (fold) {
        p.rows = fold_rows;
        p.row_groups = (s.dims[rk - 2] + p.rows - 1) / p.rows;
        for (std::size_t d = 0; d + 2 < rk; ++d) p.outer *= s.dims[d];
        p.items = p.outer * p.row_groups;
    } else {
        // Pieces of at most a stage, or of 64K elements where nothing is staged (so a pool has pieces to share).
        p.piece = std::min(n, staged ? stage : index_t{1} << 16);
        p.per_row = p.piece == 0 ? 0 : (n + p.piece - 1) / p.piece;
        for (std::size_t d = 0; d + 1 < rk; ++d) p.outer *= s.dims[d];
        p.items = p.outer * p.per_row;
    }
    return out;
}

/// A pass of the kernel type K (with its run-time values `args`, leaf pointers to be replaced) writing the
/// elements Dst over a space of R dimensions, the leaves' elements of types Ts (a packed_element where the
/// memory is packed: unpacked into a stage, or packed from one).
template <class Dst, class K, int R, class... Ts>
struct strided_pass {
    static constexpr std::size_t L = sizeof...(Ts);
    static constexpr std::size_t M = L + 1;
    using args_t = decltype(kernel_args(std::declval<const K&>()));
    using D = stage_t<Dst>; // what the kernel writes

    view_pointer_t<Dst> dst;
    std::tuple<view_pointer_t<const Ts>...> data;
    iteration_space<R, M> space;
    run_layout<M> layout;
    args_t args;
    pass_options options;

    /// Elements per stage: stage_elements, fewer where the operands are wide or many (at most 16 KiB per
    /// operand and 256 KiB in all, on the stack of the thread running the pass).
    static constexpr index_t capacity = [] {
        constexpr std::size_t widest = std::max({sizeof(D), sizeof(stage_t<Ts>)...});
        constexpr std::size_t all = (sizeof(D) + ... + sizeof(stage_t<Ts>));
        const std::size_t fits = (std::size_t{16} << 10) / widest;
        return std::min(stage_elements, static_cast<index_t>(std::min(fits, (std::size_t{256} << 10) / all)));
    }();
    static_assert(capacity >= broadcast_copies, "mixt: a stage holds the copies of a broadcast operand");
    // Each operand's stage: `capacity` elements of its type, one after the other.
    static constexpr std::array<std::size_t, M + 1> stage_offsets = [] {
        std::array<std::size_t, M + 1> o{};
        constexpr std::size_t sizes[] = {sizeof(D), sizeof(stage_t<Ts>)...};
        for (std::size_t k = 0; k < M; ++k)
            o[k + 1] = o[k] + ((static_cast<std::size_t>(capacity) * sizes[k] + 63) & ~std::size_t{63});
        return o;
    }();

    /// Runs items [first, last) of the plan.
    void run(index_t first, index_t last) const {
        alignas(64) unsigned char stage[stage_offsets[M]];
        std::array<const void*, L> cached{};
        std::array<index_t, L> cached_len{};
        std::array<index_t, L> cached_mask{};
        std::array<index_t, L> cached_first{}; // (packed operands: the element cached[J] starts at)
        const auto rk = static_cast<std::size_t>(space.rank);
        const index_t n = space.inner();
        const run_plan& plan = layout.plan;
        for (index_t item = first; item < last; ++item) {
            std::array<index_t, M> off{};
            index_t rows, len, outer;
            std::size_t outer_dims;
            if (plan.rows == 1) {
                const index_t c0 = (item % plan.per_row) * plan.piece;
                rows = 1;
                len = std::min(plan.piece, n - c0);
                for (std::size_t k = 0; k < M; ++k) off[k] = c0 * space.strides[k][rk - 1];
                outer = item / plan.per_row;
                outer_dims = rk - 1;
            } else {
                const index_t r0 = (item % plan.row_groups) * plan.rows;
                rows = std::min(plan.rows, space.dims[rk - 2] - r0);
                len = rows * n;
                for (std::size_t k = 0; k < M; ++k) off[k] = r0 * space.strides[k][rk - 2];
                outer = item / plan.row_groups;
                outer_dims = rk - 2;
            }
            for (std::size_t d = outer_dims; d-- > 0;) {
                const index_t i = outer % space.dims[d];
                outer /= space.dims[d];
                for (std::size_t k = 0; k < M; ++k) off[k] += i * space.strides[k][d];
            }
            const index_t cols = rows == 1 ? len : n;
            const auto strides_of = [&](std::size_t k) {
                return std::pair{rk >= 2 ? space.strides[k][rk - 2] : index_t{0}, space.strides[k][rk - 1]};
            };
            std::array<const void*, L> ptrs{};
            std::array<index_t, L> masks;
            masks.fill(~index_t{0});
            [&]<std::size_t... J>(std::index_sequence<J...>) {
                (
                    [&] {
                        using E = std::tuple_element_t<J, std::tuple<Ts...>>;
                        using T = stage_t<E>;
                        const auto src = std::get<J>(data) + off[J + 1];
                        T* buffer = reinterpret_cast<T*>(stage + stage_offsets[J + 1]);
                        const auto [row_stride, stride] = strides_of(J + 1);
                        if (J < 64 && ((layout.per_row >> J) & 1) != 0) {
                            // Read once per row by run_rows_of: its value of row r at src[r * row_stride].
                            if constexpr (!is_packed_element_v<E>) {
                                ptrs[J] = src;
                                masks[J] = row_stride;
                            }
                        } else if constexpr (is_packed_element_v<E>) {
                            // Packed memory: unpacked into the stage (unless the stage holds these elements).
                            if (cached[J] != src.bytes || cached_first[J] != src.first || cached_len[J] < len) {
                                unpack_strided(buffer, src, rows, cols, row_stride, stride);
                                cached[J] = src.bytes;
                                cached_first[J] = src.first;
                                cached_len[J] = len;
                            }
                            ptrs[J] = buffer;
                        } else if (layout.direct[J + 1]) {
                            ptrs[J] = src;
                        } else {
                            if (rows == 1 && stride == 0) {
                                // One value along the run: copies of it read with mask 0, or the run's length
                                // of them for the block loop (cached while the value's address stays).
                                if (cached[J] != src || cached_len[J] < len) {
                                    cached_mask[J] = stage_broadcast<D, K>(buffer, src, len);
                                    cached[J] = src;
                                    cached_len[J] = len;
                                }
                                masks[J] = cached_mask[J];
                            } else if (cached[J] != src || cached_len[J] < len) {
                                copy_strided<false>(buffer, src, rows, cols, row_stride, stride);
                                cached[J] = src;
                                cached_len[J] = len;
                                cached_mask[J] = ~index_t{0}; // a full copy, whatever the cached value was before
                            }
                            ptrs[J] = buffer;
                        }
                    }(),
                    ...);
            }(std::make_index_sequence<L>{});
            const auto run_args = with_leaf_pointers(args, ptrs, masks);
            const bool hoist = hoists_leaves<stage_t<Ts>...>(masks);
            // The kernel over the run's elements, into out: row by row where leaves are read once per row.
            const auto compute_run = [&](D* out, pass_options o) {
                if (layout.per_row != 0)
                    compute_rows(out, rows, n, run_args, o.stream, layout.per_row);
                else
                    compute(out, len, run_args, o, hoist);
            };
            if constexpr (is_packed_element_v<Dst>) {
                D* buffer = reinterpret_cast<D*>(stage + stage_offsets[0]);
                compute_run(buffer, pass_options{false, into_buffer(options.prefetch)});
                const auto [row_stride, stride] = strides_of(0);
                pack_strided(dst + off[0], buffer, rows, cols, row_stride, stride);
            } else if (layout.direct[0]) {
                compute_run(dst + off[0], pass_options{options.stream, options.prefetch, false});
            } else {
                D* buffer = reinterpret_cast<D*>(stage + stage_offsets[0]);
                compute_run(buffer, pass_options{false, into_buffer(options.prefetch)});
                const auto [row_stride, stride] = strides_of(0);
                copy_strided<true>(buffer, dst + off[0], rows, cols, row_stride, stride);
            }
        }
        if (options.stream) simd::stream_fence(); // once for all the runs (pass_options::fence)
    }

    /// Whether runs whose f16 and bf16 leaves are all broadcast take hoisted_kernel_t<K> (hoists_leaves): where K
    /// has such a leaf and no block loop (which reads every element's address: stage_broadcast makes it full
    /// copies instead).
    static constexpr bool hoists =
        has_small_float_leaf_v<K> && !block_loop_v<false, D, K> && !block_loop_v<true, D, K>;

    /// The leaves of hoistable types, and the row length runs of rows need to read them once per row (0:
    /// never): where the kernel runs the batch loops (not the block loop, nor the loop on words) of a SIMD target.
    static constexpr leaf_set row_hoistable = leaves_where_v<K, is_hoistable>;
    static constexpr bool hoists_rows = simd::avx2 && row_hoistable != 0 && !block_loop_v<false, D, K> &&
                                        !block_loop_v<true, D, K> && !word_loop_v<D, K>;
    static constexpr row_hoisting<M> row_rule = [] {
        row_hoisting<M> r;
        if constexpr (hoists_rows) {
            for (std::size_t j = 0; j < L && j < 64; ++j) r.hoistable[j + 1] = ((row_hoistable >> j) & 1) != 0;
            r.lanes = row_lanes_v<D, K>;
        }
        return r;
    }();

    /// Computes `rows` rows of n elements into out with the leaves of the set `per_row` (run_layout::per_row: all
    /// of the kernel's hoistable leaves, or one) read once per row; streamed where `stream` and out allows.
    static void compute_rows(D* out, index_t rows, index_t n, const args_t& a, bool stream, leaf_set per_row) {
        if constexpr (hoists_rows) {
            const auto with = [&]<leaf_set S>(std::integral_constant<leaf_set, S>) {
                using Kern = typename hoisted_kernel<K, S>::type;
                if constexpr (rows_stream_v<D, Kern>) {
                    constexpr std::size_t alignment = simd::wide::stream_group_alignment;
                    if (stream && reinterpret_cast<std::uintptr_t>(out) % alignment == 0 &&
                        static_cast<std::size_t>(n) * sizeof(D) % alignment == 0) {
                        std::apply([&](const auto&... x) { run_rows_of<true, D, Kern>(out, rows, n, x...); }, a);
                        return;
                    }
                }
                std::apply([&](const auto&... x) { run_rows_of<false, D, Kern>(out, rows, n, x...); }, a);
            };
            if constexpr (std::popcount(row_hoistable) > 1) {
                if (per_row == row_hoistable) {
                    with(std::integral_constant<leaf_set, row_hoistable>{});
                    return;
                }
            }
            [&]<std::size_t... J>(std::index_sequence<J...>) {
                (
                    [&] {
                        if constexpr (J < 64 && ((row_hoistable >> J) & 1) != 0)
                            if (per_row == leaf_set{1} << J) with(std::integral_constant<leaf_set, leaf_set{1} << J>{});
                    }(),
                    ...);
            }(std::make_index_sequence<L>{});
        } else {
            (void)out, (void)rows, (void)n, (void)a, (void)stream, (void)per_row;
            eigen_assert(false && "mixt: a run of rows without a pass that reads leaves once per row");
        }
    }

    /// Computes elements [0, len) of the run whose kernel values are `a` into out; `hoist`: hoists_leaves.
    static void compute(D* out, index_t len, const args_t& a, pass_options o, bool hoist = false) {
        if constexpr (hoists) {
            if (hoist) {
                compute_with<hoisted_kernel_t<K>>(out, len, a, o);
                return;
            }
        }
        compute_with<K>(out, len, a, o);
    }
    template <class Kern>
    static void compute_with(D* out, index_t len, const args_t& a, pass_options o) {
        if (o.stream || o.prefetch != prefetch_kind::none) {
            const Kern k = std::apply([](const auto&... x) { return kernel_from_args<Kern>(x...); }, a);
            run_kernel(out, k, 0, len, o);
        } else {
            std::apply([&](const auto&... x) { run_range_of<prefetch_kind::none, false, D, Kern>(out, 0, len, x...); }, a);
        }
    }
};

} // namespace mixt::detail

#endif // MIXT_EVAL_STRIDED_HPP
