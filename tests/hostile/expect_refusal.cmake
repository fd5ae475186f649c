# Runs a command that must refuse its input: a non-zero exit code (not a signal, not a timeout),
# exactly one line on stderr matching EXPECT (a regex), and, when NO_FILE is given, no file left
# at that path (nor its .tmp).
#   cmake "-DCMD=a;b;c" -DEXPECT=regex [-DNO_FILE=path] -P expect_refusal.cmake
if(DEFINED NO_FILE)
  file(REMOVE "${NO_FILE}" "${NO_FILE}.tmp")
endif()
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 60)
string(STRIP "${err}" err_stripped)
message("exit: ${rc}\nstderr: ${err_stripped}")
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "not a clean exit (signal or timeout): ${rc}")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "exit 0: the hostile input was accepted")
endif()
string(REGEX MATCHALL "\n" newlines "${err_stripped}")
list(LENGTH newlines n_newlines)
if(err_stripped STREQUAL "" OR n_newlines GREATER 0)
  message(FATAL_ERROR "stderr must hold exactly one line")
endif()
if(NOT err_stripped MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not match '${EXPECT}'")
endif()
if(DEFINED NO_FILE AND (EXISTS "${NO_FILE}" OR EXISTS "${NO_FILE}.tmp"))
  message(FATAL_ERROR "a failed run left ${NO_FILE} behind")
endif()
