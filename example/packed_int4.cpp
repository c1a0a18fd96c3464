// y = sum(W * s * x, axis 1) with W int4, packed two a byte; no unpacked copy of W is made.
#include <mixt/mixt.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

int main() {
    const Eigen::Index rows = 64, cols = 256;
    std::vector<std::uint8_t> bytes(mixt::packed_bytes<mixt::int4>(rows * cols));
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 37);
    const auto w = mixt::packed<const mixt::int4, Eigen::RowMajor>(bytes.data(), rows, cols); // [rows, cols]
    Eigen::Tensor<Eigen::half, 2, Eigen::RowMajor> s(rows, 1); // a scale per row
    Eigen::Tensor<float, 2, Eigen::RowMajor> x(1, cols);        // the input vector
    s.setConstant(Eigen::half(0.125f));
    x.setConstant(2.0f);
    Eigen::Tensor<float, 1> y = mixt::eval(mixt::sum(mixt::cast<float>(mixt::lazy(w)) * s * x, 1));

    // Element (r, c) is byte (r * cols + c) / 2, the low nibble first, sign-extended.
    float want = 0;
    for (Eigen::Index c = 0; c < cols; ++c) {
        const int nibble = (bytes[static_cast<std::size_t>(c / 2)] >> (c % 2 * 4)) & 15;
        want += static_cast<float>(nibble >= 8 ? nibble - 16 : nibble) * 0.125f * 2.0f;
    }
    return std::fabs(y(0) - want) <= 1e-3f * (1 + std::fabs(want)) ? 0 : 1;
}
