// Shapes: NumPy broadcasting, Eigen Dense operands, and views as destinations, each in one fused pass.
#include <mixt/mixt.hpp>

#include <cstdint>
#include <type_traits>

int main() {
    // Broadcasting: a per-channel normalization of a channel-last uint8 image. mean and std have shape [3];
    // they stretch over the image's [4, 6, 3] as in NumPy. u8 / 255 is f32 (true division of ints).
    Eigen::Tensor<std::uint8_t, 3, Eigen::RowMajor> image(4, 6, 3);
    image.setConstant(51);
    Eigen::Tensor<float, 1> mean(3), stddev(3);
    mean.setValues({0.1f, 0.2f, 0.3f});
    stddev.setValues({0.5f, 0.5f, 0.25f});
    Eigen::Tensor<float, 3, Eigen::RowMajor> normalized = mixt::eval((mixt::lazy(image) / 255 - mean) / stddev);
    if (normalized(3, 5, 2) != (51 / 255.0f - 0.3f) / 0.25f) return 1;
    // A bias on every row ([2, 3] + [3]) and a scale per row ([2, 3] * [2, 1]).
    Eigen::Tensor<std::int8_t, 2> q(2, 3);
    q.setValues({{1, 2, 3}, {4, 5, 6}});
    Eigen::Tensor<Eigen::half, 2> scale(2, 1);
    scale.setValues({{Eigen::half(0.5f)}, {Eigen::half(2.0f)}});
    Eigen::Tensor<float, 1> bias(3);
    bias.setValues({10, 20, 30});
    Eigen::Tensor<float, 2> y = mixt::eval(mixt::lazy(q) * scale + bias);
    if (y(1, 2) != 6 * 2.0f + 30) return 2;
    // Operands whose shapes do not broadcast: mixt::shape_error before anything is written.
    Eigen::Tensor<float, 1> four(4);
    four.setZero();
    try {
        mixt::assign(y, mixt::lazy(q) + four);
        return 3;
    } catch (const mixt::shape_error&) {
    }

    // Dense: Arrays, Matrices, Maps, Blocks and Refs are operands and destinations. With only Dense operands,
    // eval returns an Eigen::Array. mixt::operators makes `+` between two Dense arrays of different scalars mixt's.
    Eigen::ArrayXf x = Eigen::ArrayXf::LinSpaced(8, 0.0f, 7.0f);
    Eigen::Array<std::int8_t, Eigen::Dynamic, 1> k = Eigen::Array<std::int8_t, Eigen::Dynamic, 1>::Constant(8, 3);
    using namespace mixt::operators;
    Eigen::ArrayXf sum = mixt::eval(x + k);
    static_assert(std::is_same_v<decltype(mixt::eval(x + k)), Eigen::ArrayXf>);
    if (sum(7) != 10.0f) return 4;
    Eigen::MatrixXf m = Eigen::MatrixXf::Zero(4, 5);
    Eigen::Matrix<Eigen::half, Eigen::Dynamic, Eigen::Dynamic> h(2, 3);
    h.setConstant(Eigen::half(1.5f));
    mixt::assign(m.block(1, 1, 2, 3), mixt::lazy(h) * 2); // into a block of a bigger matrix
    mixt::assign(m.row(3), mixt::lazy(x.head(5)) + 1);    // a row: elements 4 floats apart
    if (m(2, 3) != 3.0f || m(3, 4) != 5.0f || m(0, 0) != 0.0f) return 5;

    // Views as destinations: a chip, a slice or a stride of a tensor, as long as it is strided memory.
    Eigen::Tensor<float, 2> t(3, 4);
    t.setZero();
    mixt::assign(t.chip(1, 0), mixt::lazy(bias.slice(Eigen::array<Eigen::Index, 1>{0}, Eigen::array<Eigen::Index, 1>{1})) + four);
    if (t(1, 3) != 10.0f || t(0, 3) != 0.0f) return 6;
    return 0;
}
