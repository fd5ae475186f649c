# Runs CMD and REF with EINFER_ISA=${LEVEL}; their stdout must be equal and non-empty (an image in
# an interleaved layout gives its rows image's greedy ids on that selection).
#   cmake -DCMD="a;b;c" -DREF="a;b;d" -DLEVEL=dotprod -P same_ids_as.cmake
foreach(which CMD REF)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env EINFER_ISA=${LEVEL} ${${which}}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${which} (EINFER_ISA=${LEVEL}): ${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${${which}}\n${out}")
  endif()
  string(STRIP "${out}" out)
  message("stdout (${which}): ${out}")
  set(out_${which} "${out}")
endforeach()
if(out_REF STREQUAL "")
  message(FATAL_ERROR "no ids printed")
endif()
if(NOT out_CMD STREQUAL out_REF)
  message(FATAL_ERROR "ids differ from the rows image's:\n  ${out_CMD}\n  ${out_REF}")
endif()
