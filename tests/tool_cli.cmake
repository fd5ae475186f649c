# Every tool speaks the same command line (tools/common/cli.h):
#   TOOL --help      exit 0, usage on stdout, nothing on stderr
#   TOOL --version   exit 0, "<tool> <version>" on stdout
#   TOOL --temp-typo exit 2, "unknown option" with a suggestion on stderr, nothing on stdout
#   cmake "-DCMD=[emulator;]tool" -DNAME=einfer-run -DVERSION=0.1.0 -P tool_cli.cmake
execute_process(COMMAND ${CMD} --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^usage: ${NAME} " OR NOT err STREQUAL "")
  message(FATAL_ERROR "${NAME} --help: status ${rc} (want 0), stdout:\n${out}\nstderr:\n${err}")
endif()
execute_process(COMMAND ${CMD} --version RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "${NAME} ${VERSION}\n")
  message(FATAL_ERROR "${NAME} --version: status ${rc}, stdout '${out}' (want '${NAME} ${VERSION}')")
endif()
execute_process(COMMAND ${CMD} --hepl RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "unknown option '--hepl' \\(did you mean --help\\?\\)"
   OR NOT out STREQUAL "")
  message(FATAL_ERROR "${NAME} --hepl: status ${rc} (want 2), stderr:\n${err}\nstdout:\n${out}")
endif()
message("${NAME}: --help, --version and unknown options behave")
