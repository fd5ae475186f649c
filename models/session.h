// Session sizing: the exact arena bytes a model needs for a set of run options.
//
// Firmware calls this (or uses the constant einfer-pack --emit-c printed) to size its static arena;
// einfer-pack --inspect prints it. The figure is exact: session creation performs the same
// allocation sequence on the arena.
#pragma once

#include <cstddef>

#include "runtime/model.h"
#include "runtime/run_options.h"
#include "runtime/status.h"

namespace einfer {

Status session_arena_bytes(const ModelConfig& config, const RunOptions& options, size_t* bytes);

}  // namespace einfer
