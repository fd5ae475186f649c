# einfer-pack -z and einfer-run --tokenize with the tokenizer kinds of issue 32 (the committed
# fixtures): the ids printed for a prompt, special tokens added, are Hugging Face's (the
# fixture's .hf.special line) or sentencepiece's (.spm.ids line with BOS in front); einfer-run -z
# with the tokenizer file gives the same as the packed image; a BERT folder with only vocab.txt
# packs too.
#   cmake "-DRUN=[emulator;]einfer-run" "-DPACK=[emulator;]einfer-pack" -DDATA=tests/data/tokenizer
#         -DWORK=dir -P tokenize_families.cmake
file(MAKE_DIRECTORY ${WORK})

# Line `index` of a file (empty lines count).
function(line_of file index out_var)
  file(READ ${file} content)
  string(REGEX MATCHALL "[^\n]*\n" lines "${content}")
  list(GET lines ${index} line)
  string(STRIP "${line}" line)
  set(${out_var} "${line}" PARENT_SCOPE)
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake)

# Corpus lines 14, 16 and 20: "Hello world", "Hello  world", "Once upon a time, there was ...".
foreach(kind qwen3-mini.json nfkc-mini.json gemma-mini.json split-mini.json bert-mini.json
             bert-cased-mini.json bert-vocab gemma-like.model)
  string(REGEX REPLACE "\\.(json|model)$" "" name ${kind})
  if(name STREQUAL "bert-vocab")
    set(name bert-mini)
  endif()
  set(model ${WORK}/${name}.ein)
  run_ok(packed ${PACK} --synthetic "dim=16,hidden=32,layers=1,heads=2,vocab=4096,seq=32"
                -z ${DATA}/fixtures/${kind} -o ${model})
  foreach(index 14 16 20)
    line_of(${DATA}/corpus.txt ${index} hex)
    set(text "")  # the corpus line is hex of its bytes (ASCII here)
    string(LENGTH "${hex}" n)
    math(EXPR last "${n} - 2")
    foreach(i RANGE 0 ${last} 2)
      string(SUBSTRING "${hex}" ${i} 2 byte)
      math(EXPR code "0x${byte}")
      string(ASCII ${code} ch)
      string(APPEND text "${ch}")
    endforeach()
    if(kind MATCHES "\\.model$")
      line_of(${DATA}/fixtures/${name}.spm.ids ${index} want)
      string(REGEX REPLACE "^[01]\\|" "2 " want "${want}")  # <bos> is 2
    else()
      line_of(${DATA}/fixtures/${name}.hf.special ${index} want)
    endif()
    run_ok(got ${RUN} ${model} --tokenize -p "${text}")
    run_ok(via_z ${RUN} ${model} -z ${DATA}/fixtures/${kind} --tokenize -p "${text}")
    message("${kind} \"${text}\": ${got}")
    if(NOT got STREQUAL want)
      message(FATAL_ERROR "${kind}: \"${text}\" gave\n  ${got}\nthe reference\n  ${want}")
    endif()
    if(NOT via_z STREQUAL got)
      message(FATAL_ERROR "${kind}: -z gave ${via_z}, the packed image ${got}")
    endif()
  endforeach()
endforeach()
