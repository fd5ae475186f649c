// einfer-run with a sentence encoder (bert): the embedding of -p TEXT, of each line of -f FILE, or
// of --prompt-ids, printed one vector per line (space-separated floats, round-trip precision) or as
// JSON (--json: llama-embedding's "list" of {"index", "embedding"}). --pooling none prints every
// token's vector instead. Texts longer than the context (-c, else the max_seq_length the model
// was packed with, else its positions) keep their first tokens and [SEP], as sentence-transformers
// truncates; a note on stderr says so. --tokenize prints the ids each text is embedded from.
#pragma once

#include "runtime/model.h"
#include "tools/common/file.h"
#include "tools/einfer-run/options.h"

namespace einfer::run_tool {

int run_embed(const Args& a, const tools::MappedFile& file, const LoadOptions& load,
              const Model& model);

}  // namespace einfer::run_tool
