# The verdict of ctest's mpi/cli_<routine>_grid: runs the command given after `--` (the CLI under
# mpiexec with --json) and passes when it exits with status 0 and prints exactly one JSON object
# (the result line is printed by one process only), naming ROUTINE and order N, with a finite
# residual below 10. Anything else fails, with the reason and the run's output:
#
#   cmake -DROUTINE=posv -DN=600 -P cli_grid.cmake -- mpiexec -n 4 ... tessera posv ... --json
foreach(_var IN ITEMS ROUTINE N)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "cli_grid.cmake: -D${_var}=... is missing")
  endif()
endforeach()

set(_cmd "")
set(_after_dashes OFF)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE ${_last})
  if(_after_dashes)
    list(APPEND _cmd "${CMAKE_ARGV${_i}}")
  elseif(CMAKE_ARGV${_i} STREQUAL "--")
    set(_after_dashes ON)
  endif()
endforeach()
list(LENGTH _cmd _words)
if(_words EQUAL 0)
  message(FATAL_ERROR "cli_grid.cmake: no command after `--`")
endif()

# (a bound under ctest's 300 s, so that a hang ends with the run's output and the reason)
execute_process(COMMAND ${_cmd} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err
                TIMEOUT 280)
message("${_out}${_err}")

# fail(<sentence>): the test fails, saying why.
macro(fail why)
  message(FATAL_ERROR "mpi/cli_${ROUTINE}_grid: ${why}")
endmacro()

if(NOT _rc STREQUAL "0")
  fail("the run exited with status ${_rc}")
endif()
string(REGEX MATCHALL "(^|\n)\\{[^\n]*" _objects "${_out}")
list(LENGTH _objects _count)
if(NOT _count EQUAL 1)
  fail("the run printed ${_count} JSON objects, expected one")
endif()
string(STRIP "${_objects}" _json)
string(JSON _routine ERROR_VARIABLE _bad GET "${_json}" routine)
string(JSON _n ERROR_VARIABLE _bad_n GET "${_json}" n)
string(JSON _residual_type ERROR_VARIABLE _bad_residual TYPE "${_json}" residual)
string(JSON _residual ERROR_VARIABLE _bad_residual GET "${_json}" residual)
if(_bad OR _bad_n OR _bad_residual)
  fail("the JSON object lacks routine, n or residual: ${_json}")
endif()
if(NOT _routine STREQUAL ROUTINE OR NOT _n EQUAL N)
  fail("the result is for ${_routine} of order ${_n}, expected ${ROUTINE} of order ${N}")
endif()
# A number (null stands for a NaN or an infinity) below 10.
if(NOT _residual_type STREQUAL "NUMBER")
  fail("the residual is ${_residual_type}, expected a number below 10")
elseif(NOT _residual MATCHES "^[0-9.]+(e[-+]?[0-9]+)?$" OR _residual GREATER_EQUAL 10)
  fail("the residual is ${_residual}, expected a number below 10")
endif()
