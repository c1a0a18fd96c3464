# cmake -D MIXT_README=<README.md> -D MIXT_EXAMPLE=<file.cpp> -D MIXT_MARKER=<name>
#       -D MIXT_MODE=check|update -P readme_example.cmake
#
# The README's code block that follows `<!-- ${MIXT_MARKER} -->` must be the
# text of MIXT_EXAMPLE. `check` fails when they differ; `update` rewrites the
# block from the file.
file(READ "${MIXT_README}" readme)
file(READ "${MIXT_EXAMPLE}" example)
string(REGEX REPLACE "\n+$" "" example "${example}")

set(marker "<!-- ${MIXT_MARKER} -->")
string(FIND "${readme}" "${marker}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "mixt: ${MIXT_README} has no '${marker}' line")
endif()
string(SUBSTRING "${readme}" 0 ${at} head)
string(SUBSTRING "${readme}" ${at} -1 rest)

# rest = marker, blank lines, ```cpp, body, ```, tail
string(FIND "${rest}" "```" open)
if(open EQUAL -1)
  message(FATAL_ERROR "mixt: no code block after '${marker}' in ${MIXT_README}")
endif()
string(SUBSTRING "${rest}" 0 ${open} before_block)
string(SUBSTRING "${rest}" ${open} -1 block)
string(FIND "${block}" "\n" eol)
math(EXPR body_at "${eol} + 1")
string(SUBSTRING "${block}" 0 ${body_at} fence)
string(SUBSTRING "${block}" ${body_at} -1 block)
string(FIND "${block}" "```" close)
if(close EQUAL -1)
  message(FATAL_ERROR "mixt: the code block after '${marker}' in ${MIXT_README} is not closed")
endif()
string(SUBSTRING "${block}" 0 ${close} body)
string(SUBSTRING "${block}" ${close} -1 tail)
string(REGEX REPLACE "\n+$" "" body "${body}")

if(body STREQUAL example)
  message(STATUS "mixt: the README block '${MIXT_MARKER}' matches ${MIXT_EXAMPLE}")
elseif(MIXT_MODE STREQUAL "update")
  file(WRITE "${MIXT_README}" "${head}${before_block}${fence}${example}\n${tail}")
  message(STATUS "mixt: rewrote the README block '${MIXT_MARKER}' from ${MIXT_EXAMPLE}")
else()
  message(FATAL_ERROR "mixt: the README block after '${marker}' differs from ${MIXT_EXAMPLE}; "
    "run `cmake --build <build dir> --target readme-sync` and commit README.md")
endif()
