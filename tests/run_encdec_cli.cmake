# Issue 19's encoder-decoder from the command line: einfer-pack --arch torch-transformer packs an
# nn.Transformer state dict (tests/data/encdec); einfer-run --input SRC --target TGT --output Y
# decodes it whole and with --incremental one target row at a time (q8 weights: the two outputs
# are byte-identical; f32 agreement to 1e-5 and torch to 1e-4 are checked in test_encdec.cpp);
# --inspect shows the decoder layers and the arena's K/V stores; bad input is refused.
#   cmake "-DRUN=[emulator;]einfer-run" "-DPACK=[emulator;]einfer-pack" -DDATA=dir -DWORK=dir -P ...
file(MAKE_DIRECTORY ${WORK})
set(model ${WORK}/gelu_pre.q8.ein)
include(${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake)
run_checked(${PACK} ${DATA}/gelu_pre.safetensors --arch torch-transformer --heads 4 --activation gelu
   --norm-first --dtype q8 --group 8 -o ${model})
run_checked(${RUN} ${model} --input ${DATA}/gelu_pre_src.npy --target ${DATA}/gelu_pre_tgt.npy
   --output ${WORK}/full.npy)
run_checked(${RUN} ${model} --input ${DATA}/gelu_pre_src.npy --target ${DATA}/gelu_pre_tgt.npy
   --output ${WORK}/incremental.npy --incremental)
file(SHA256 ${WORK}/full.npy full)
file(SHA256 ${WORK}/incremental.npy incremental)
if(NOT full STREQUAL incremental)
  message(FATAL_ERROR "--incremental output differs from the full decode")
endif()
run_checked(${PACK} --inspect ${model})
foreach(want "3 decoder layers" "cross-attention K/V" "architecture: transformer")
  string(FIND "${out}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "--inspect lacks '${want}':\n${out}")
  endif()
endforeach()
# A target of the wrong width, and a missing --target, fail with a message, not a crash.
execute_process(COMMAND ${RUN} ${model} --input ${DATA}/gelu_pre_src.npy
                        --target ${DATA}/relu_pre_1head_tgt.npy --output ${WORK}/bad.npy
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "--target must be")
  message(FATAL_ERROR "a target of the wrong width was not refused (${rc}): ${err}")
endif()
execute_process(COMMAND ${RUN} ${model} --input ${DATA}/gelu_pre_src.npy --output ${WORK}/bad.npy
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "needs --input SRC.npy --target TGT.npy")
  message(FATAL_ERROR "a missing --target was not refused (${rc}): ${err}")
endif()
message("encoder-decoder CLI: full == incremental (q8), inspect and errors ok")
