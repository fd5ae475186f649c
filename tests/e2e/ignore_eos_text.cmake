# --ignore-eos streams on through BOS/EOS but never prints control tokens: the greedy ids must
# contain BOS (1) or EOS (2) (else the test proves nothing) and the text no "<s>" or "</s>".
#   cmake -DRUN="emu;einfer-run" -DMODEL=m.ein -DSTEPS=500 -P ignore_eos_text.cmake
execute_process(COMMAND ${RUN} ${MODEL} -n ${STEPS} --ignore-eos --ids RESULT_VARIABLE rc
                OUTPUT_VARIABLE ids)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "einfer-run --ids failed: ${rc}")
endif()
if(NOT " ${ids} " MATCHES " [12][ \n]")
  message(FATAL_ERROR "no BOS/EOS among the ${STEPS} greedy ids: the check would be empty")
endif()
execute_process(COMMAND ${RUN} ${MODEL} -n ${STEPS} --ignore-eos RESULT_VARIABLE rc
                OUTPUT_VARIABLE text)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "einfer-run failed: ${rc}")
endif()
string(FIND "${text}" "<s>" a)
string(FIND "${text}" "</s>" b)
if(NOT a EQUAL -1 OR NOT b EQUAL -1)
  message(FATAL_ERROR "control tokens printed into the text:\n${text}")
endif()
