#ifndef MIXT_ERRORS_HPP
#define MIXT_ERRORS_HPP

// The run-time errors of mixt, in the bottom layer so that every layer may throw them. Each is thrown before the
// first element is written, so on error the destination is untouched.

#include <stdexcept>
#include <string>

namespace mixt {

/// A weak integer literal does not fit the dtype it is converted to: `lazy(u8) + 300`.
struct overflow_error : std::overflow_error {
    using std::overflow_error::overflow_error;
};

/// The operands of an expression, or the expression and the destination, have different shapes.
struct shape_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

/// The destination overlaps an operand in a way an element-wise loop cannot handle (anything but the very same
/// elements of the same width).
struct aliasing_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

} // namespace mixt

#endif // MIXT_ERRORS_HPP
