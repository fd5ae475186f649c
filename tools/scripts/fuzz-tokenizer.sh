#!/usr/bin/env bash
# Fuzzes the tokenizer image parser, encoder and decoder (tests/fuzz/fuzz_tokenizer.cpp) like
# fuzz-loader.sh fuzzes the loader, over the seeds in tests/fuzz/corpus_tokenizer/.
#   usage: tools/scripts/fuzz-tokenizer.sh [SECONDS]   (default 60)
FUZZ_TARGET=fuzz_tokenizer FUZZ_CORPUS=tests/fuzz/corpus_tokenizer \
  exec "$(dirname "$0")/fuzz-loader.sh" "$@"
