#include "tools/common/run_flags.h"

namespace einfer::tools {

void RunFlags::declare(cli::Parser& p, bool with_context) {
  if (with_context)
    p.option({"-c", "--ctx-size", "--context"}, &context, "N",
             "KV cache positions (default: the model's context)")
        .range(0, kMaxRunPositions);
  p.option(
       {"--window"}, &window, "W",
       "sliding window of W positions, the current one included (query i attends i-W < j <= i), "
       "over a ring cache: decode past the context (default: the model's sliding_window; none for "
       "a model that windows only its later layers, like Qwen2, whose windowed layers then take "
       "the smaller of the two)")
      .range(0, kMaxRunPositions);
  p.option(
       {"--sinks"}, &sinks, "S",
       "attention sinks: positions 0..S-1 stay attended, plus the W-S most recent (HF SinkCache)")
      .range(0, 1 << 20);
  p.option({"--kv"}, &kv, "f32|q8", "KV cache type (default f32)").choices({"f32", "q8", "i8"});
  p.option({"-b", "--batch-size", "--batch"}, &batch, "B",
           "prompt tokens per prefill step (default 128, at most the context)")
      .range(1, kMaxRunBatch);
}

void RunFlags::apply(RunOptions* run) const {
  if (context >= 0) run->context = static_cast<int32_t>(context);
  if (window >= 0) run->window = static_cast<int32_t>(window);
  if (sinks >= 0) run->sinks = static_cast<int32_t>(sinks);
  if (batch >= 0) run->max_batch = static_cast<int32_t>(batch);
  if (!kv.empty()) run->kv_dtype = kv == "f32" ? DType::f32 : DType::i8;
}

}  // namespace einfer::tools
