// Broadcasting as in NumPy, Eigen Dense operands, and views as destinations, each assignment one fused pass.
#include <mixt/mixt.hpp>

#include <cstdint>

int main() {
    // A per-channel normalization of a channel-last uint8 image: mean and stddev [3] stretch over [4, 6, 3].
    Eigen::Tensor<std::uint8_t, 3, Eigen::RowMajor> image(4, 6, 3);
    image.setConstant(51);
    Eigen::Tensor<float, 1> mean(3), stddev(3);
    mean.setValues({0.1f, 0.2f, 0.3f});
    stddev.setValues({0.5f, 0.5f, 0.25f});
    Eigen::Tensor<float, 3, Eigen::RowMajor> normalized = mixt::eval((mixt::lazy(image) / 255 - mean) / stddev);
    if (normalized(3, 5, 2) != (51 / 255.0f - 0.3f) / 0.25f) return 1;

    // Dense objects: with only Dense operands eval returns an Eigen::Array; blocks and rows are destinations.
    Eigen::ArrayXf x = Eigen::ArrayXf::LinSpaced(8, 0.0f, 7.0f);
    Eigen::Array<std::int8_t, Eigen::Dynamic, 1> k = Eigen::Array<std::int8_t, Eigen::Dynamic, 1>::Constant(8, 3);
    Eigen::ArrayXf sum = mixt::eval(mixt::lazy(x) + k);
    Eigen::MatrixXf m = Eigen::MatrixXf::Zero(4, 5);
    mixt::assign(m.row(3), mixt::lazy(x.head(5)) * k.head(5)); // a row: elements 4 floats apart
    if (sum(7) != 10.0f || m(3, 4) != 12.0f || m(0, 4) != 0.0f) return 2;

    // Views of tensors (chip, slice, stride) are destinations; one may overlap an operand only as the same view.
    Eigen::Tensor<float, 2> t(3, 4);
    t.setConstant(1.0f);
    mixt::assign(t.chip(1, 0), mixt::lazy(t.chip(1, 0)) * k.head(4));
    return t(1, 3) == 3.0f && t(0, 3) == 1.0f ? 0 : 3;
}
