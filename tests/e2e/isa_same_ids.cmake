# Runs a command with EINFER_ISA=scalar and with EINFER_ISA=${LEVEL}; their stdout must be equal
# and non-empty (the dispatched kernels give the scalar reference level's greedy ids).
#   cmake -DCMD="a;b;c" -DLEVEL=avx2 -P isa_same_ids.cmake
foreach(isa scalar ${LEVEL})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env EINFER_ISA=${isa} ${CMD} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("EINFER_ISA=${isa}: ${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}) with EINFER_ISA=${isa}: ${CMD}\n${out}")
  endif()
  string(STRIP "${out}" out)
  message("stdout (${isa}): ${out}")
  set(out_${isa} "${out}")
endforeach()
if(out_scalar STREQUAL "")
  message(FATAL_ERROR "no ids printed")
endif()
if(NOT out_scalar STREQUAL out_${LEVEL})
  message(FATAL_ERROR "EINFER_ISA=${LEVEL} ids differ from the scalar level's:\n  ${out_${LEVEL}}\n  ${out_scalar}")
endif()
