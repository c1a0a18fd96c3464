# Reads the version from include/mixt/version.hpp, the one place it lives.
#
#   mixt_read_version(<header> <out_var>)
#
# sets <out_var> to "MAJOR.MINOR.PATCH" and fails the configure step when one
# of the three macros is missing.
function(mixt_read_version header out_var)
  file(STRINGS "${header}" lines REGEX "^#define MIXT_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
  set(parts "")
  foreach(part MAJOR MINOR PATCH)
    if(NOT lines MATCHES "MIXT_VERSION_${part} +([0-9]+)")
      message(FATAL_ERROR "mixt: ${header} does not define MIXT_VERSION_${part}")
    endif()
    list(APPEND parts "${CMAKE_MATCH_1}")
  endforeach()
  list(JOIN parts "." version)
  set(${out_var} "${version}" PARENT_SCOPE)
endfunction()
