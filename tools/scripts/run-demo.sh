#!/usr/bin/env bash
# The main job, for now: installs prerequisites, builds the release preset and runs einfer-demo,
# a small demo of one attention head computed with the vector primitives in a fixed arena
# (it prints the SIMD path in use and the arena bytes). It is a demo, not a model: the model
# runner replaces it once it exists.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash tools/scripts/setup-debian.sh
cmake --preset release
cmake --build --preset release --target einfer-demo
./build/release/bin/einfer-demo "$@"
