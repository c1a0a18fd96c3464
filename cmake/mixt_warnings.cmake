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

function(mixt_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang|AppleClang)$")
    target_compile_options(${target} PRIVATE
      -Wall -Wextra -Wpedantic -Wshadow
      -ftemplate-backtrace-limit=0
      $<$<BOOL:${MIXT_WERROR}>:-Werror>)
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
    # float-cast-overflow is not part of -fsanitize=undefined: it proves float -> int conversions defined.
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
