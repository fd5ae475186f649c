#!/usr/bin/env bash
# Fuzzes the tokenizer image parser, encoder and decoder (tests/fuzz/fuzz_tokenizer.cpp) alone,
# over the seeds in tests/fuzz/corpus_tokenizer/: tools/scripts/fuzz.sh does the work.
#   usage: tools/scripts/fuzz-tokenizer.sh [SECONDS]   (default 60)
exec "$(dirname "$0")/fuzz.sh" "${1:-60}" tokenizer
