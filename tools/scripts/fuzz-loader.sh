#!/usr/bin/env bash
# The loader's libFuzzer target alone (kept for existing callers): tools/scripts/fuzz.sh does the work.
#   usage: tools/scripts/fuzz-loader.sh [SECONDS]      (default 60)
exec "$(dirname "$0")/fuzz.sh" "${1:-60}" loader
