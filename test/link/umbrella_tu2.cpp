// See umbrella_tu1.cpp.
#include <mixt/mixt.hpp>

#include <gtest/gtest.h>

TEST(umbrella_odr, second_translation_unit) { SUCCEED(); }
