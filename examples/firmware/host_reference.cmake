# Runs a host command (CMD, a ;-list) and writes its stdout to OUT; fails on a non-zero status.
execute_process(COMMAND ${CMD} OUTPUT_FILE ${OUT} ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT})
  message(FATAL_ERROR "host reference failed (${rc}): ${CMD}\n${err}")
endif()
