// With umbrella_tu2.cpp: two translation units that include the umbrella link
// together, so no header defines a non-inline function or variable.
#include <mixt/mixt.hpp>

#include <gtest/gtest.h>

TEST(umbrella_odr, first_translation_unit) { SUCCEED(); }
