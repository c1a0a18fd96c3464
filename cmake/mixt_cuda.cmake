# mixt_enable_cuda(<found-var>): enables CUDA (C++20) where CMake finds nvcc (in PATH, CUDACXX, or the
# toolkit's default /usr/local/cuda) and sets <found-var> to whether it did. The GPU test (test/gpu) and the
# GPU benchmark (bench/gpu) use it; without nvcc both are left out with a status line.
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
    set(${_found} ON)
  endif()
endmacro()
