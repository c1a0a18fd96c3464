# The test gpu.ptx: reads the PTX of ptx_kernels.cu (compiled by the target mixt_ptx_kernels with nvcc's
# defaults, -fmad=true included) and checks the instructions of each kernel: a complex + must add both parts,
# a product feeding a sum must be rounded (mul.rn) and never fused (no fma), and so on. Runs without a GPU.
#
#   cmake -D PTX=<ptx_kernels.ptx> -P ptx_check.cmake

if(NOT DEFINED PTX)
  message(FATAL_ERROR "ptx_check.cmake: -D PTX=<file> is required")
endif()
file(READ "${PTX}" _ptx)

# Each kernel: NAME (or ~TEXT, see below) followed by requirements separated by `&&`: `REGEX>=N` (at least N
# instructions whose opcode matches REGEX) or `REGEX==0` (none). An opcode is the first word of a PTX
# instruction line (after its predicate, if any).
# A fused multiply-add of floats, in any rounding mode; a call (code left out of line, unchecked).
set(_fused "(fma|mad)(\\.r[nzmp])?(\\.ftz)?(\\.sat)?\\.f(32|64)")
set(_call "call[.a-z]*")
set(_f32_add "add(\\.rn)?\\.f32")
set(_f64_add "add(\\.rn)?\\.f64")
set(_f32_sub "sub(\\.rn)?\\.f32")
set(_f64_sub "sub(\\.rn)?\\.f64")
set(_expectations
  "add_c64&&${_f32_add}>=2&&${_call}==0"
  "add_c128&&${_f64_add}>=2&&${_call}==0"
  "sub_c64&&${_f32_sub}>=2&&${_call}==0"
  "sub_c128&&${_f64_sub}>=2&&${_call}==0"
  "mul_c64&&mul\\.rn\\.f32>=4&&${_f32_add}>=1&&${_f32_sub}>=1&&${_fused}==0&&${_call}==0"
  "mul_c128&&mul\\.rn\\.f64>=4&&${_f64_add}>=1&&${_f64_sub}>=1&&${_fused}==0&&${_call}==0"
  "div_c64&&div\\.rn\\.f64>=2&&cvt\\.rn\\.f32\\.f64>=2&&${_fused}==0&&${_call}==0"
  "div_c128&&div\\.rn\\.f64>=2&&${_fused}==0&&${_call}==0"
  "neg_c64&&neg\\.f32>=2&&${_call}==0"
  "conj_c128&&neg\\.f64>=1&&${_call}==0"
  "equal_c64&&setp\\.[a-z]+\\.f32>=2&&${_call}==0"
  "mul_add_f32&&mul\\.rn\\.f32>=1&&${_f32_add}>=1&&${_fused}==0&&${_call}==0"
  "mul_add_f64&&mul\\.rn\\.f64>=1&&${_f64_sub}>=1&&${_fused}==0&&${_call}==0"
  "expression_c64&&mul\\.rn\\.f32>=8&&${_f32_add}>=4&&${_f32_sub}>=4&&${_fused}==0&&${_call}==0"
  "pow_c64_i32&&mul\\.rn\\.f64>=4&&cvt\\.rn\\.f32\\.f64>=2&&${_fused}==0&&${_call}==0"
  "pow_c128_c128&&mul\\.rn\\.f64>=4"
  "general_pow_c64&&mul\\.rn\\.f64>=4&&cvt\\.rn\\.f32\\.f64>=2"
  # mixt's own kernels (eval/gpu.hpp) for i8 + f16 * f32 -> f32 and cast<bf16>(f16 * 2) + bf16: 16 bytes of the
  # widest operand per thread in one load or store (4 elements of f32: the i8 operand's 4 in one 32-bit load, not byte
  # by byte), the GPU's conversions, a rounded product.
  "~flat_vector_kernelIfNS1_7op_nodeINS0_6add_fn&&ld\\.global\\.v4\\.[a-z0-9]+>=1&&st\\.global\\.v4\\.[a-z0-9]+>=1&&ld\\.global\\.[ubs]32>=1&&cvt\\.f32\\.f16>=4&&mul\\.rn\\.f32>=4&&${_fused}==0"
  "~flat_vector_kernelIN5Eigen8bfloat16E&&ld\\.global\\.v4\\.[a-z0-9]+>=2&&st\\.global\\.v4\\.[a-z0-9]+>=1&&cvt\\.f32\\.f16>=8&&cvt\\.rn\\.bf16\\.f32>=8&&${_fused}==0")

set(_failures "")
set(_checked 0)
foreach(_entry IN LISTS _expectations)
  string(REPLACE "&&" ";" _parts "${_entry}")
  list(POP_FRONT _parts _kernel)
  # The kernel's body: from its .entry to the next one (or the end). `~TEXT`: the first entry whose (mangled)
  # name contains TEXT.
  if(_kernel MATCHES "^~(.*)$")
    string(REGEX MATCH "\\.entry [A-Za-z0-9_]*${CMAKE_MATCH_1}[A-Za-z0-9_]*\\(" _name "${_ptx}")
    set(_start -1)
    if(_name)
      string(FIND "${_ptx}" "${_name}" _start)
    endif()
  else()
    string(FIND "${_ptx}" ".entry ${_kernel}(" _start)
  endif()
  if(_start EQUAL -1)
    list(APPEND _failures "${_kernel}: no such entry in the PTX")
    continue()
  endif()
  string(SUBSTRING "${_ptx}" ${_start} -1 _body)
  string(SUBSTRING "${_body}" 7 -1 _rest)
  string(FIND "${_rest}" ".entry " _next)
  if(NOT _next EQUAL -1)
    math(EXPR _length "${_next} + 7")
    string(SUBSTRING "${_body}" 0 ${_length} _body)
  endif()
  # One opcode per line: the first word of each instruction.
  string(REGEX MATCHALL "\n[ \t]+(@!?%p[0-9]+[ \t]+)?[a-z][a-z0-9._]*" _opcodes "${_body}")
  list(TRANSFORM _opcodes REPLACE "^\n[ \t]+(@!?%p[0-9]+[ \t]+)?" "")
  foreach(_rule IN LISTS _parts)
    if(_rule MATCHES "^(.*)(>=|==)([0-9]+)$")
      set(_regex "${CMAKE_MATCH_1}")
      set(_op "${CMAKE_MATCH_2}")
      set(_n "${CMAKE_MATCH_3}")
    else()
      message(FATAL_ERROR "ptx_check: bad rule '${_rule}' for ${_kernel}")
    endif()
    set(_count 0)
    foreach(_opcode IN LISTS _opcodes)
      if(_opcode MATCHES "^${_regex}$")
        math(EXPR _count "${_count} + 1")
      endif()
    endforeach()
    if((_op STREQUAL ">=" AND _count LESS _n) OR (_op STREQUAL "==" AND NOT _count EQUAL _n))
      list(APPEND _failures "${_kernel}: ${_count} instructions match '${_regex}', expected ${_op} ${_n}")
    endif()
    math(EXPR _checked "${_checked} + 1")
  endforeach()
endforeach()

if(_failures)
  list(JOIN _failures "\n  " _text)
  message(FATAL_ERROR "ptx_check: the device code is not what mixt's functions must compile to:\n  ${_text}\n(PTX in ${PTX})")
endif()
list(LENGTH _expectations _kernels)
message(STATUS "ptx_check: ${_checked} rules on ${_kernels} kernels hold")
