# einfer-run --tokenize with the packed vocabulary and with -z TOK give the same ids, BOS (1)
# first, for a few prompts.   cmake -DRUN="emu;einfer-run" -DA=m.ein -DTOK=tok.bin -P ...
include(${CMAKE_CURRENT_LIST_DIR}/../run_checked.cmake)
foreach(prompt "Once upon a time" "Lily's mom said, \"Lily, let's go!\"" "  two  spaces\nand 42")
  run_checked(${RUN} ${A} --tokenize -p "${prompt}")
  set(a "${out}")
  run_checked(${RUN} ${A} -z ${TOK} --tokenize -p "${prompt}")
  set(b "${out}")
  message("${prompt}: ${a}")
  if(NOT a STREQUAL b OR NOT a MATCHES "^1 [0-9]")
    message(FATAL_ERROR "packed vocabulary and -z must give the same ids, BOS (1) first:\n"
                        "  packed: ${a}\n  -z:     ${b}")
  endif()
endforeach()
