// mixt/dtype/storage.hpp: tags <-> C++ types. The list of tags is generated from the dtype enum, and which
// of them must have storage is derived from the dtype facts (neither weak nor small), not written out.

#include <mixt/dtype/storage.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <gtest/gtest.h>

namespace {

namespace mp = boost::mp11;
using mixt::dtype;
namespace dt = mixt::dtypes;

template <class Seq>
struct tags_of;
template <std::size_t... I>
struct tags_of<std::index_sequence<I...>> {
    using type = mp::mp_list<mixt::dtype_tag<static_cast<dtype>(I)>...>;
};
using all_tags = typename tags_of<std::make_index_sequence<mixt::dtype_count>>::type;

template <class Tag>
constexpr bool concrete_v = !mixt::is_weak(Tag::value);
template <class Tag>
using is_concrete = std::bool_constant<concrete_v<Tag>>;
using concrete_tags = mp::mp_copy_if<all_tags, is_concrete>;
static_assert(mp::mp_size<concrete_tags>::value == 30);

// Compile-time: storage exists exactly for the concrete tags, and the round trip is the identity.
template <class Tag>
constexpr bool storage_fact() {
    if constexpr (concrete_v<Tag>) {
        if constexpr (!mixt::has_storage_v<Tag>)
            return false;
        else
            return std::is_same_v<mixt::tag_of_t<mixt::storage_t<Tag>>, Tag> &&
                   mixt::dtype_of_v<mixt::storage_t<Tag>> == Tag::value &&
                   mixt::is_storage_type_v<mixt::storage_t<Tag>>;
    } else {
        return !mixt::has_storage_v<Tag>;
    }
}
template <class... Tags>
constexpr bool all_storage_facts(mp::mp_list<Tags...>) {
    return (storage_fact<Tags>() && ...);
}
static_assert(all_storage_facts(all_tags{}));

TEST(storage, concrete_tags_round_trip) {
    mp::mp_for_each<concrete_tags>([](auto tag) {
        using Tag = decltype(tag);
        SCOPED_TRACE(std::string(mixt::name(Tag::value)));
        ASSERT_TRUE(mixt::has_storage_v<Tag>);
        if constexpr (mixt::has_storage_v<Tag>) {
            using T = mixt::storage_t<Tag>;
            EXPECT_TRUE((std::is_same_v<mixt::tag_of_t<T>, Tag>));
            EXPECT_TRUE((std::is_same_v<mixt::tag_of_t<const T>, Tag>));
            EXPECT_EQ(mixt::dtype_of_v<T>, Tag::value);
            EXPECT_TRUE(mixt::is_storage_type_v<T>);
            // The storage holds exactly the node's bits (bool is a byte); the narrow nodes, 2 to 8 bits, a byte.
            if (mixt::is_small(Tag::value))
                EXPECT_EQ(sizeof(T), 1u);
            else
                EXPECT_EQ(static_cast<int>(sizeof(T) * 8), mixt::info(Tag::value).bits);
        }
    });
}

TEST(storage, storage_types_are_the_documented_ones) {
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::bool_>, bool>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::u8>, std::uint8_t>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::i8>, std::int8_t>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::u64>, std::uint64_t>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::i64>, std::int64_t>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::bf16>, Eigen::bfloat16>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::f16>, Eigen::half>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::f32>, float>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::f64>, double>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::c64>, std::complex<float>>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::c128>, std::complex<double>>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::float8_e4m3fn>, mixt::float8_e4m3fn>));
    EXPECT_TRUE((std::is_same_v<mixt::storage_t<dt::int4>, mixt::int4>));
}

TEST(storage, weak_tags_have_no_storage) {
    mp::mp_for_each<all_tags>([](auto tag) {
        using Tag = decltype(tag);
        if constexpr (!concrete_v<Tag>) {
            EXPECT_FALSE(mixt::has_storage_v<Tag>) << mixt::name(Tag::value);
        }
    });
    EXPECT_TRUE(mixt::has_storage_v<dt::float8_e4m3fn>);
    EXPECT_TRUE(mixt::has_storage_v<dt::float4_e2m1fn>);
    EXPECT_TRUE(mixt::has_storage_v<dt::int4>);
    EXPECT_FALSE(mixt::has_storage_v<dt::weak_float>);
    EXPECT_FALSE(mixt::has_storage_v<int>); // not a tag at all
}

template <class T>
using same_width_fixed_t =
    std::conditional_t<std::is_signed_v<T>,
                       mp::mp_at_c<mp::mp_list<std::int8_t, std::int16_t, void, std::int32_t, void, void, void,
                                               std::int64_t>,
                                   sizeof(T) - 1>,
                       mp::mp_at_c<mp::mp_list<std::uint8_t, std::uint16_t, void, std::uint32_t, void, void, void,
                                               std::uint64_t>,
                                   sizeof(T) - 1>>;

TEST(storage, builtin_integer_types_map_like_the_fixed_width_type_of_their_size) {
    using ints = mp::mp_list<char, signed char, unsigned char, short, unsigned short, int, unsigned, long,
                             unsigned long, long long, unsigned long long, char8_t, char16_t, char32_t, wchar_t>;
    mp::mp_for_each<mp::mp_transform<std::type_identity, ints>>([](auto id) {
        using T = typename decltype(id)::type;
        EXPECT_TRUE((std::is_same_v<mixt::tag_of_t<T>, mixt::tag_of_t<same_width_fixed_t<T>>>))
            << "sizeof " << sizeof(T) << (std::is_signed_v<T> ? " signed" : " unsigned");
        EXPECT_TRUE(mixt::is_storage_type_v<T>);
    });
    EXPECT_TRUE((std::is_same_v<mixt::tag_of_t<long long>, dt::i64>));
    EXPECT_TRUE((std::is_same_v<mixt::tag_of_t<unsigned long long>, dt::u64>));
    EXPECT_TRUE((std::is_same_v<mixt::tag_of_t<signed char>, dt::i8>));
    EXPECT_TRUE((std::is_same_v<mixt::tag_of_t<int>, dt::i32>));
    EXPECT_TRUE((std::is_same_v<mixt::tag_of_t<const volatile int>, dt::i32>));
    EXPECT_TRUE((std::is_same_v<mixt::tag_of_t<char>, std::conditional_t<std::is_signed_v<char>, dt::i8, dt::u8>>));
    EXPECT_EQ(mixt::dtype_of_v<long long>, dtype::int64);
}

TEST(storage, non_storage_types_have_no_tag) {
    EXPECT_FALSE(mixt::is_storage_type_v<void>);
    EXPECT_FALSE(mixt::is_storage_type_v<int*>);
    EXPECT_FALSE(mixt::is_storage_type_v<long double>);
    EXPECT_FALSE(mixt::is_storage_type_v<std::complex<long double>>);
    EXPECT_FALSE(mixt::is_storage_type_v<std::string>);
    EXPECT_FALSE(mixt::is_storage_type_v<dt::f32>); // a tag is not a storage type
    EXPECT_FALSE(mixt::is_storage_type_v<int&>);
}

TEST(storage, literal_tags) {
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<int>, dt::weak_int>));
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<long long>, dt::weak_int>));
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<unsigned>, dt::weak_int>));
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<char>, dt::weak_int>));
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<const int>, dt::weak_int>));
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<double>, dt::weak_float>));
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<float>, dt::weak_float>));
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<long double>, dt::weak_float>));
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<std::complex<double>>, dt::weak_complex>));
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<std::complex<float>>, dt::weak_complex>));
    // bool is never weak.
    EXPECT_TRUE((std::is_same_v<mixt::literal_tag_t<bool>, dt::bool_>));
    EXPECT_FALSE(mixt::is_weak(mixt::literal_tag_t<bool>::value));
}

template <class T>
concept has_literal_tag = requires { typename mixt::literal_tag_t<T>; };
template <class T>
concept has_tag = requires { typename mixt::tag_of_t<T>; };
template <class T>
concept has_storage = requires { typename mixt::storage_t<T>; };

TEST(storage, traits_are_sfinae_friendly) {
    EXPECT_FALSE(has_literal_tag<std::string>);
    EXPECT_FALSE(has_literal_tag<int*>);
    EXPECT_FALSE(has_literal_tag<Eigen::half>);
    EXPECT_FALSE(has_tag<std::string>);
    EXPECT_FALSE(has_tag<long double>);
    EXPECT_TRUE(has_storage<dt::float8_e5m2>);
    EXPECT_FALSE(has_storage<dt::weak_int>);
    EXPECT_TRUE(has_storage<dt::f16>);
}

} // namespace
