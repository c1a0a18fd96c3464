# mixt_enable_cuda(<found-var>): enables CUDA (C++20) where CMake finds nvcc (in PATH, CUDACXX, or the
# toolkit's default /usr/local/cuda) and sets <found-var> to whether it did. The GPU test (test/gpu) and the
# GPU benchmark (bench/gpu) use it; without nvcc both are left out with a status line.
# mixt_cuda_target(<target> [PTX]): the options of every CUDA target of the project (below).
include_guard(GLOBAL)
include(CheckLanguage)

macro(mixt_enable_cuda _found)
  set(${_found} OFF)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    # check_language looks in PATH only; the toolkit's default place is /usr/local/cuda.
    find_program(MIXT_NVCC nvcc HINTS ENV CUDA_PATH /usr/local/cuda PATH_SUFFIXES bin)
    if(MIXT_NVCC)
      set(CMAKE_CUDA_COMPILER "${MIXT_NVCC}")
    endif()
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA"
       AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      # CMake before 3.26 does not know the C++20 flag of nvcc 12 and later.
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    # The host compiler's own include directories (/usr/include, where GTest lives) must not reach nvcc as
    # -isystem: that breaks the #include_next chain of <cmath>.
    list(APPEND CMAKE_CUDA_IMPLICIT_INCLUDE_DIRECTORIES ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES})
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
    set(MIXT_CUDA_ARCHITECTURES "90-real;75-virtual" CACHE STRING
      "mixt: CUDA architectures of the GPU test and benchmark (CI, which has no GPU, compiles 90-virtual: PTX only)")
    set(${_found} ON)
  endif()
endmacro()

# A CUDA target of the project, built with nvcc's defaults otherwise (no -fmad=false: mixt's device code
# rounds each product on its own, so its results do not depend on it):
#   --expt-relaxed-constexpr  Eigen's device code calls constexpr host functions (std::numeric_limits, ...).
#   --diag-suppress=20012     Eigen's own "__host__ annotation is ignored on a defaulted function" noise.
#   --Werror all-warnings     under MIXT_WERROR, and the host compiler's -Wall -Wextra on the host pass.
#   architectures             MIXT_CUDA_ARCHITECTURES: sm_90 code (H100/H200) plus compute_75 PTX, which
#                             newer GPUs JIT-compile; nvcc links, so that the CUDA runtime is found where the
#                             toolkit keeps it.
# With PTX, the target is compiled to PTX for sm_90 only (an OBJECT library whose objects are .ptx files).
function(mixt_cuda_target target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "PTX" "" "")
  target_link_libraries(${target} PRIVATE mixt::mixt)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr --diag-suppress=20012>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${MIXT_WERROR}>>:SHELL:--Werror all-warnings>)
  if(arg_PTX)
    set_target_properties(${target} PROPERTIES CUDA_PTX_COMPILATION ON CUDA_ARCHITECTURES 90)
  else()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${MIXT_CUDA_ARCHITECTURES}" LINKER_LANGUAGE CUDA)
  endif()
endfunction()
