# Runs CMD and writes its stdout to OUT (fails when the command fails or prints nothing).
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(STRIP "${out}" out)
if(NOT rc EQUAL 0 OR out STREQUAL "")
  message(FATAL_ERROR "failed (${rc}): ${CMD}\n${out}\n${err}")
endif()
file(WRITE ${OUT} "${out}\n")
