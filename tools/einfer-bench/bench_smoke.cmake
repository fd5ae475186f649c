# bench_smoke: einfer-bench on a tiny synthetic model must finish, write a JSON report with every
# required figure (positive and finite), draw the SVG, and (RATIO) show the SIMD f32 GEMV at
# least 2x the scalar one in the same process. Bad --synthetic specs must be refused with exit 2.
#   cmake -DBENCH=... [-DEMULATOR=...] -DRATIO=ON|OFF -DOUT_DIR=... -P bench_smoke.cmake
set(json ${OUT_DIR}/bench_smoke.json)
set(svg ${OUT_DIR}/bench_smoke.svg)
file(REMOVE ${json} ${svg})
set(ratio_flag)
if(NOT RATIO)
  set(ratio_flag --no-ratio-check)
endif()
set(emu ${EMULATOR})  # a ;-list (CMAKE_CROSSCOMPILING_EMULATOR), empty for native builds

execute_process(
  COMMAND ${emu} ${BENCH} --synthetic "dim=64,hidden=176,layers=2,heads=4,kv_heads=2,vocab=512,seq=64,dtype=q8"
          --prompt 16 --gen 4 --repeat 2 --contexts 8,32 --json ${json} --svg ${svg} --smoke ${ratio_flag}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "FAIL: einfer-bench exited with ${rc}")
endif()
if(NOT EXISTS ${svg})
  message(FATAL_ERROR "FAIL: no SVG written")
endif()

file(READ ${json} doc)
string(JSON simd ERROR_VARIABLE e GET "${doc}" simd)
if(e OR simd STREQUAL "")
  message(FATAL_ERROR "FAIL: JSON has no simd: ${e}")
endif()
foreach(path
    "prefill_tokens_per_s" "decode_tokens_per_s" "weights_bytes" "kv_bytes" "arena_bytes"
    "latency_ms;p50" "latency_ms;p90" "latency_ms;p99" "latency_ms;max"
    "roofline;bandwidth_gbps" "roofline;peak_gflops" "roofline;decode_fraction")
  string(JSON v ERROR_VARIABLE e GET "${doc}" ${path})
  if(e)
    message(FATAL_ERROR "FAIL: JSON lacks ${path}: ${e}")
  endif()
  if(NOT v MATCHES "^[0-9.]+(e[-+]?[0-9]+)?$" OR v EQUAL 0)
    message(FATAL_ERROR "FAIL: JSON ${path} = '${v}' is not a positive number")
  endif()
endforeach()
foreach(path "build;compiler" "build;flags" "build;commit" "build;simd")
  string(JSON v ERROR_VARIABLE e GET "${doc}" ${path})
  if(e)
    message(FATAL_ERROR "FAIL: JSON lacks ${path}: ${e}")
  endif()
endforeach()
string(JSON n LENGTH "${doc}" decode)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "FAIL: expected decode figures at 2 contexts, got ${n}")
endif()
string(JSON p99 GET "${doc}" latency_ms p99)
string(JSON p50 GET "${doc}" latency_ms p50)
if(p99 LESS p50)
  message(FATAL_ERROR "FAIL: p99 latency ${p99} below p50 ${p50}")
endif()

# Strict spec parsing: unknown keys and bad values are usage errors (exit 2).
foreach(spec "dim=64,bogus=1" "dim=sixty" "dtype=q5" "dim=64,heads=5" "dim")
  execute_process(COMMAND ${emu} ${BENCH} --synthetic "${spec}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR err STREQUAL "")
    message(FATAL_ERROR "FAIL: --synthetic \"${spec}\" gave exit ${rc}, expected 2 with a message")
  endif()
endforeach()
message("PASS: bench_smoke")
