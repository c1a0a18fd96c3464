# The GPU test (gpu_test.cu, gpu_reduce_test.cu): mixed-dtype expressions and reductions assigned on an
# Eigen::GpuDevice, compared with the DefaultDevice. Built only where CMake finds a CUDA compiler, with nvcc's
# defaults (mixt_cuda_target, cmake/mixt_cuda.cmake); at run time it skips itself (GTEST_SKIP, saying why) when
# there is no CUDA device or driver.

#
# Included by test/CMakeLists.txt before the other tests rather than added as a subdirectory: Ninja starts the
# ready compiles in the order they are defined, and nvcc's are the longest of the build.

include(mixt_cuda)
mixt_enable_cuda(_mixt_have_cuda)
if(NOT _mixt_have_cuda)
  message(STATUS "mixt: no CUDA compiler found: the GPU tests (gpu.assign, gpu.ptx) are not built")
else()
set(_gpu_dir "${CMAKE_CURRENT_LIST_DIR}")
message(STATUS "mixt: the GPU test (gpu.assign) is built with ${CMAKE_CUDA_COMPILER} "
               "(${CMAKE_CUDA_COMPILER_ID} ${CMAKE_CUDA_COMPILER_VERSION})")

# Elementwise expressions (gpu_test.cu) and reductions (gpu_reduce_test.cu): two translation units, which nvcc
# compiles side by side.
add_executable(test_gpu "${_gpu_dir}/gpu_test.cu" "${_gpu_dir}/gpu_reduce_test.cu")
mixt_cuda_target(test_gpu)
# Where it was while this was a subdirectory (bench/gpu/build_device_check.sh copies it from there).
set_target_properties(test_gpu PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/gpu")
target_link_libraries(test_gpu PRIVATE GTest::gtest_main)
target_include_directories(test_gpu PRIVATE "${PROJECT_SOURCE_DIR}/test")
add_test(NAME gpu.assign COMMAND test_gpu --gtest_color=no)
# Without a device every case skips itself: ctest reports the test as skipped, not passed.
set_tests_properties(gpu.assign PROPERTIES LABELS "unit;gpu" TIMEOUT 600 SKIP_REGULAR_EXPRESSION "no CUDA device: ")

# The test gpu.ptx (ptx_check.cmake): mixt's per-element functions and kernels compiled to PTX with nvcc's own
# defaults (-fmad=true; the project's include directories and flags otherwise), and the instructions each must
# contain checked: a complex + adds both parts, a product that feeds a sum is rounded on its own (mul.rn, never
# fma), the kernel loads 16 bytes at a time. It needs no GPU.
add_library(mixt_ptx_kernels OBJECT "${_gpu_dir}/ptx_kernels.cu")
mixt_cuda_target(mixt_ptx_kernels PTX)
add_test(NAME gpu.ptx
  COMMAND ${CMAKE_COMMAND} "-DPTX=$<TARGET_OBJECTS:mixt_ptx_kernels>" -P "${_gpu_dir}/ptx_check.cmake")
set_tests_properties(gpu.ptx PROPERTIES LABELS "unit;gpu" TIMEOUT 60)

# Compile-fail cases under nvcc (compile_fail/*.cu): what mixt refuses on an Eigen::GpuDevice, with its own
# message (gpu_device_v is only true there). Built by the test, as the C++ cases are (expect_build.cmake).
foreach(_case reduction_of_an_expression_on_gpu eval_on_gpu)
  set(_target mixt_compile_fail_gpu_${_case})
  add_library(${_target} OBJECT EXCLUDE_FROM_ALL "${_gpu_dir}/compile_fail/${_case}.cu")
  mixt_cuda_target(${_target})
  set(_params "${CMAKE_CURRENT_BINARY_DIR}/gpu/compile_fail/gpu.${_case}.cmake")
  if(_case STREQUAL "reduction_of_an_expression_on_gpu")
    set(_regex "mixt: assign: on an Eigen::GpuDevice, a reduction's operands must be arrays in device memory")
  else()
    set(_regex "mixt: eval: the result is allocated in host memory.*assign into a TensorMap")
  endif()
  file(WRITE "${_params}" "set(MIXT_EXPECT fail)\nset(MIXT_TARGET ${_target})\nset(MIXT_SOURCE [==[${_gpu_dir}/compile_fail/${_case}.cu]==])\nset(MIXT_REGEX [==[${_regex}]==])\nset(MIXT_MAX_LINES 60)\n")
  mixt_add_build_test(compile_fail.gpu.${_case} ${_target} "${_params}" LABELS compile_fail gpu)
endforeach()

# The GPU benchmark (bench/gpu) is compiled with the GPU tests, so that CI builds it with nvcc.
if(NOT TARGET mixt-gpu-bench)
  add_subdirectory("${PROJECT_SOURCE_DIR}/bench/gpu" "${PROJECT_BINARY_DIR}/bench/gpu")
endif()
endif()
