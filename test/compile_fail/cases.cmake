# Compile-fail cases. Each case is its own target and its own ctest test
# (compile_fail.<name>); it passes only when the snippet fails to compile AND
# the compiler output matches REGEX. Make REGEX mixt's own static_assert text,
# so the test proves the intended error fired, not just any error.
#
#   mixt_expect_compile_fail(<name>
#     CODE "#include <mixt/mixt.hpp>\n<code>"      (or FILE <path to a .cpp>)
#     REGEX "<mixt's message>")
#   mixt_expect_compiles(<name> CODE "...")          a snippet that must compile
#
# Append cases below, or add another *.cmake file to this folder (every one is
# included), grouped by layer. Run them with `ctest -L compile_fail`.

# The machinery itself: a snippet that fails with the expected text passes.
mixt_expect_compile_fail(version_check
  CODE "#include <mixt/version.hpp>\nstatic_assert(MIXT_VERSION_MAJOR < 0, \"mixt: version check\");"
  REGEX "mixt: version check")
