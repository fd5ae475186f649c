# For the cmake -P test scripts: run_checked(COMMAND...) runs a command and stops the script, with
# its output, when it fails; its standard output and error are left in `out` and `err` for the
# caller to check.
function(run_checked)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

# run_ok(VAR COMMAND...): run_checked, with the command's standard output stripped into VAR.
function(run_ok out_var)
  run_checked(${ARGN})
  string(STRIP "${out}" out)
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()
