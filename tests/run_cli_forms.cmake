# einfer-run speaks llama.cpp's flags (issue 17 acceptance):
#   -m M -p P -n N --temp 0 -s 1 -c 256 -t 1 behaves as the long forms and as the positional model;
#   -f FILE behaves as -p; the same holds when sampling (--temp 0.8 with a seed);
#   -t 0.8 is an error that points to --temp (threads are whole numbers), not 0 threads;
#   -i keeps the KV cache between turns (the second turn starts where the first ended).
#   cmake "-DRUN=[emulator;]einfer-run" "-DPACK=[emulator;]einfer-pack" -DWORK=dir -P run_cli_forms.cmake
file(MAKE_DIRECTORY ${WORK})
set(model ${WORK}/chat.ein)
execute_process(COMMAND ${PACK} --synthetic "dim=32,hidden=64,layers=2,heads=4,kv_heads=2,vocab=320,seq=256"
                        --chat-template chatml -o ${model} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "einfer-pack: ${err}")
endif()
set(prompt "The robot")
file(WRITE ${WORK}/prompt.txt "${prompt}\n")

include(${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake)
# einfer-run with these arguments, its standard output stripped into VAR.
function(run_einfer out_var)
  run_ok(${out_var} ${RUN} ${ARGN})
  set(${out_var} "${${out_var}}" PARENT_SCOPE)
endfunction()

foreach(sampling "0;1" "0.8;3")
  list(GET sampling 0 temp)
  list(GET sampling 1 seed)
  run_einfer(short -m ${model} -p "${prompt}" -n 12 --temp ${temp} -s ${seed} -c 256 -t 1 --ids)
  run_einfer(long --model ${model} --prompt "${prompt}" --n-predict 12 --temp=${temp} --seed ${seed}
         --ctx-size 256 --threads 1 --ids)
  run_einfer(positional ${model} -p "${prompt}" -n 12 --temperature ${temp} -s ${seed} -c 256 --ids)
  run_einfer(from_file -m ${model} -f ${WORK}/prompt.txt -n 12 --temp ${temp} -s ${seed} -c 256 -t 1 --ids)
  run_einfer(text_short -m ${model} -p "${prompt}" -n 12 --temp ${temp} -s ${seed} -c 256 -t 1)
  run_einfer(text_file -m ${model} -f ${WORK}/prompt.txt -n 12 --temp ${temp} -s ${seed} -c 256 -t 1)
  message("temp ${temp} seed ${seed}: ${short}")
  if(short STREQUAL "")
    message(FATAL_ERROR "no ids generated")
  endif()
  foreach(other long positional from_file)
    if(NOT ${other} STREQUAL short)
      message(FATAL_ERROR "${other} form differs from the short form:\n  ${${other}}\n  ${short}")
    endif()
  endforeach()
  if(NOT text_file STREQUAL text_short)
    message(FATAL_ERROR "-f FILE text differs from -p text:\n  ${text_file}\n  ${text_short}")
  endif()
endforeach()

execute_process(COMMAND ${RUN} -m ${model} -p "${prompt}" -t 0.8 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "-t/--threads: expects a whole number, got '0.8'.*--temp")
  message(FATAL_ERROR "-t 0.8 must be an error pointing to --temp (status ${rc}):\n${err}")
endif()

# Interactive: two turns on stdin; the second is fed at the position where the first ended.
file(WRITE ${WORK}/turns.txt "hello\nsecond turn\n")
execute_process(COMMAND ${RUN} -m ${model} -i -n 5 -v -c 256 INPUT_FILE ${WORK}/turns.txt
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "einfer-run -i failed (${rc}):\n${err}")
endif()
if(NOT err MATCHES "chat template chatml"
   OR NOT err MATCHES "turn 1: ([0-9]+) tokens fed at position 0, ([0-9]+) generated")
  message(FATAL_ERROR "einfer-run -i: no first turn at position 0:\n${err}")
endif()
math(EXPR end_of_first "${CMAKE_MATCH_1} + ${CMAKE_MATCH_2}")
if(NOT err MATCHES "turn 2: [0-9]+ tokens fed at position ${end_of_first},")
  message(FATAL_ERROR "einfer-run -i: the second turn does not continue at position ${end_of_first} (KV cache kept):\n${err}")
endif()
message("einfer-run: short/long/positional/-f forms agree; -t 0.8 rejected; -i keeps the cache")
