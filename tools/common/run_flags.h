// The session options every model tool takes, declared once for the shared parser: -c/--ctx-size,
// --window, --sinks, --kv, -b/--batch-size (einfer-run, einfer-pack, einfer-bench), bounded by
// RunOptions' limits (kMaxRunPositions, kMaxRunBatch) so no value wraps an int32 or a size.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/run_options.h"
#include "tools/common/cli.h"

namespace einfer::tools {

struct RunFlags {
  int64_t context = -1, window = -1, sinks = -1, batch = -1;  // -1: not given
  std::string kv;

  // Adds the options to `p`; `with_context` false leaves out -c (einfer-bench sizes it itself).
  void declare(cli::Parser& p, bool with_context = true);
  // Overrides the fields of *run that were given.
  void apply(RunOptions* run) const;
};

}  // namespace einfer::tools
