// The tiny synthetic llama the C API tests and fuzzers drive: dim 16, hidden 32, 1 layer, 2 heads,
// vocab 300, context 32, deterministic weights, with einfer-pack's synthetic tokenizer packed in
// (the EITK image einfer-pack embeds). No doctest, so fuzz targets include it too.
#pragma once

#include <cstdint>

#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"

namespace einfer_test {

// kv_heads 0: as many as heads (MHA).
inline einfer::pack::EinImage tiny_tokenized_model(int32_t kv_heads = 0) {
  namespace pack = einfer::pack;
  pack::SyntheticSpec spec =
      pack::parse_synthetic_spec("dim=16,hidden=32,layers=1,heads=2,vocab=300,seq=32");
  spec.kv_heads = kv_heads;
  pack::EinImage e = pack::make_synthetic_image(spec);
  e.tokenizer = pack::tokenizer_image_for_model(
      pack::read_tokenizer_bytes(pack::make_synthetic_tokenizer(spec.vocab), "synthetic"),
      spec.vocab);
  return e;
}

}  // namespace einfer_test
