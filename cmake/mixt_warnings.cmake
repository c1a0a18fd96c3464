# Build settings for mixt's own targets (tests, tools, benchmarks, examples).
# The INTERFACE target mixt::mixt carries none of them: users pick their own
# warnings and -march.
#
#   mixt_set_warnings(<target>)   warnings, as errors when MIXT_WERROR is ON
#   mixt_set_flags(<target>)      MIXT_SANITIZE and MIXT_MARCH
#   mixt_setup_target(<target>)   both, plus C++20 without extensions
#
# Eigen, Boost and GoogleTest reach the compiler as -isystem (they come from
# imported targets, whose include directories CMake marks SYSTEM), so their
# own warnings never trip -Werror.

# GCC before 13 on an AVX-512 target: its AVX-512 intrinsics pass a self-initialized `_mm512_undefined_*()`
# register to their builtins, which -W(maybe-)uninitialized reports wherever Eigen's AVX-512 packet code is
# inlined into our code (GCC bug 105593, fixed in GCC 13); -isystem does not hide a warning raised after
# inlining. mixt's own AVX-512 code silences it locally (include/mixt/simd/wide.hpp, lanes.hpp); Eigen's cannot
# be, so these two warnings are off in such builds (the other configurations keep them).
#   mixt_gcc_avx512_bug(<out> <flags>)  sets <out> to whether the compiler is such a GCC and the build's flags
#       (CMAKE_CXX_FLAGS: a user's `-DCMAKE_CXX_FLAGS=-march=native`), then <flags> (a target's own -march),
#       make the target an AVX-512 one.
#   mixt_flags_have(<out> <condition> <flags>)  sets <out> to whether the preprocessor <condition> holds under the
#       build's flags, then <flags>; cached per condition and set of flags.
function(mixt_flags_have out condition flags)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "${flags}")
  string(MD5 hash "${CMAKE_CXX_FLAGS} ${flags} ${condition}")
  string(SUBSTRING "${hash}" 0 8 hash)
  check_cxx_source_compiles("#if !(${condition})\n#error no\n#endif\nint main() { return 0; }" MIXT_FLAGS_HAVE_${hash})
  set(result OFF)
  if(MIXT_FLAGS_HAVE_${hash})
    set(result ON)
  endif()
  set(${out} ${result} PARENT_SCOPE)
endfunction()
function(mixt_gcc_avx512_bug out flags)
  set(result OFF)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    mixt_flags_have(result "defined(__AVX512F__)" "${flags}")
  endif()
  set(${out} ${result} PARENT_SCOPE)
endfunction()
set(_mixt_march_flags "")
if(MIXT_MARCH)
  set(_mixt_march_flags "-march=${MIXT_MARCH}")
endif()
mixt_gcc_avx512_bug(_mixt_gcc_avx512_bug "${_mixt_march_flags}")

# GCC 12 at -O2 and above: bogus -Warray-bounds, -Wstringop-overflow and -Wrestrict inside libstdc++'s
# std::string once a concatenation (`std::string(name) + "(" + ...`) is inlined (GCC bugs 105329, 105545,
# 105651 and their duplicates, fixed in GCC 13). Whether they fire depends on inlining decisions alone: a test
# that was quiet warned after an unrelated change of what the translation unit instantiates. They are off for
# GCC 12 only; other compilers keep them.
set(_mixt_gcc12_string_bugs OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  set(_mixt_gcc12_string_bugs ON)
endif()

function(mixt_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang|AppleClang)$")
    target_compile_options(${target} PRIVATE
      -Wall -Wextra -Wpedantic -Wshadow
      -ftemplate-backtrace-limit=0
      $<$<BOOL:${MIXT_WERROR}>:-Werror>)
    if(_mixt_gcc_avx512_bug)
      target_compile_options(${target} PRIVATE -Wno-uninitialized -Wno-maybe-uninitialized)
    endif()
    if(_mixt_gcc12_string_bugs)
      target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow -Wno-restrict)
    endif()
  elseif(MSVC)
    target_compile_options(${target} PRIVATE /W4 /permissive- $<$<BOOL:${MIXT_WERROR}>:/WX>)
  endif()
endfunction()

function(mixt_set_flags target)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang|AppleClang)$")
    if(MIXT_SANITIZE OR MIXT_MARCH)
      message(WARNING "mixt: MIXT_SANITIZE and MIXT_MARCH are only applied with GCC and Clang")
    endif()
    return()
  endif()
  # Each node of an expression rounds once: no fused multiply-add across nodes, in the scalar reference
  # paths as in the vector ones, so the two can be compared bit for bit.
  target_compile_options(${target} PRIVATE -ffp-contract=off)
  if(MIXT_SANITIZE)
    # float-cast-overflow proves float -> int conversions defined (GCC's -fsanitize=undefined leaves it out).
    set(sanitize -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer)
    target_compile_options(${target} PRIVATE ${sanitize})
    target_link_options(${target} PRIVATE ${sanitize})
  endif()
  if(MIXT_MARCH)
    target_compile_options(${target} PRIVATE -march=${MIXT_MARCH})
  endif()
endfunction()

function(mixt_setup_target target)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_features(${target} PRIVATE cxx_std_20)
  mixt_set_warnings(${target})
  mixt_set_flags(${target})
endfunction()
