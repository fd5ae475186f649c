// Issue 32 families (Qwen3, Gemma 2, Gemma 3, Phi-3), imported from Hugging Face folders and GGUF
// files, packed and run: every position's logits against float64 references written from the
// transformers source of each model (llama.cpp's semantics for the GGUF forms; tests/gen/
// gen_families.py), batched and token by token, f32 within 1e-4 of each position's largest logit
// and q8 within the quantized bounds; the configs become the right options; what einfer does not
// run is refused by name.
// einfer-test: no-bare-metal
#include <doctest/doctest.h>

#if EINFER_HAS_PACK_LIB

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "models/einfer.h"
#include "models/llama.h"
#include "models/session.h"
#include "tests/import_reference.h"
#include "tests/session_fixtures.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;
using namespace einfer::pack;
using einfer_test::check_against_reference;
using einfer_test::compare_to_reference;
using einfer_test::Run;

namespace {

const std::string kDir = std::string(EINFER_TEST_DATA_DIR) + "/families/";

// float32 runtime against the float64 reference on identical weights: rounding stays near 1e-6
// of each position's scale; every feature the references were checked against (gen_families.py
// prints each one's effect: 7e-3 for the bf16 embedding scale, 0.13 to 1.9 for the others) moves
// the logits far beyond this.
constexpr double kTol = 1e-4;

SourceModel import_case(const std::string& name) {
  return name.rfind("gguf_", 0) == 0 ? import_gguf(read_file(kDir + name + ".gguf"))
                                     : import_hf_llama(kDir + name);
}

}  // namespace

TEST_CASE("families: Qwen3, Gemma 2/3 and Phi-3 match the float64 references, f32 weights") {
  struct Case {
    const char* name;
    const char* what;
  };
  const Case cases[] = {
      {"hf_qwen3", "qwen3: q/k norm, head_dim 16 != hidden / heads"},
      {"hf_qwen3_window", "qwen3: use_sliding_window, window 8 from layer 1"},
      {"hf_gemma2",
       "gemma2: GeGLU, sandwich norms, sqrt(d) embeddings, query scale 32^-0.5, "
       "soft-capping 2 / 3, window 16 on layers 0 and 2"},
      {"hf_gemma2_bf16", "gemma2 bfloat16: the embedding scale in bf16"},
      {"hf_gemma3",
       "gemma3_text: q/k norm, 5:1 window 8, local RoPE base, linear scaling on the "
       "full layer"},
      {"hf_gemma3_types", "gemma3_text: layer_types of period 3"},
      {"hf_phi3", "phi3: fused qkv (GQA) and gate_up, window 48, longrope long factors"},
      {"gguf_qwen3", "GGUF qwen3"},
      {"gguf_gemma2", "GGUF gemma2"},
      {"gguf_gemma3", "GGUF gemma3"},
      {"gguf_phi3", "GGUF phi3 (attn_qkv, fused ffn_up, rope_factors_long)"},
  };
  for (const Case& c : cases) {
    const SourceModel src = import_case(c.name);
    // Whole prompts, chunks of 5 that cut across the windows' boundaries, and token by token
    // (the decode path against the KV cache).
    for (int32_t max_batch : {0, 5, 1}) {
      Run r(src, DType::f32, 0, max_batch);
      CAPTURE(max_batch);
      MESSAGE(std::string(c.name) << " (" << std::string(c.what) << ") f32, max_batch " << max_batch
                                  << ": max error / scale "
                                  << check_against_reference(r, kDir + c.name + "_fwd", kTol));
    }
  }
  // Phi-3 within its original context: a run of context 32 (the model's window of 48 then cuts
  // nothing, so there is none) takes the short factors, as transformers does for sequences up to
  // original_max_position_embeddings.
  const SourceModel phi3 = import_case("hf_phi3");
  RunOptions short_ctx;
  short_ctx.context = 32;
  Run r(phi3, DType::f32, 0, short_ctx);
  MESSAGE("hf_phi3 context 32 (short factors) f32: max error / scale "
          << check_against_reference(r, kDir + "hf_phi3_short_fwd", kTol));
}

// The largest |a - b| / max(1, max |b|) over positions of two [n, vocab] logit files.
double relative_distance(const std::string& a_path, const std::string& b_path, int32_t vocab) {
  const std::vector<float> a = einfer_test::read_raw<float>(a_path);
  const std::vector<float> b = einfer_test::read_raw<float>(b_path);
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); i += static_cast<size_t>(vocab)) {
    double scale = 1, err = 0;
    for (int32_t j = 0; j < vocab; ++j) {
      const double m = std::fabs(b[i + j]), e = std::fabs(static_cast<double>(a[i + j]) - b[i + j]);
      if (m > scale) scale = m;
      if (e > err) err = e;
    }
    if (err / scale > worst) worst = err / scale;
  }
  return worst;
}

TEST_CASE("families: q8 weights stay within the quantized bounds") {
  // Group-8 int8 weights alone move these tiny random models' logits by 2-13% of a position's scale
  // (the <case>_q8w references: the same float64 semantics on q8-rounded weights, gen_families.py).
  // einfer also rounds the activations to int8 in the same groups, which should move them about as
  // much again: against the q8-weight reference every position stays within twice the weights' own
  // effect, and the argmax agrees at >= 90% of the positions against it and against the float
  // reference (the q8 floor of tests/test_llama.cpp along a float path).
  for (const char* name :
       {"hf_qwen3", "hf_qwen3_window", "hf_gemma2", "hf_gemma3", "hf_gemma3_types", "hf_phi3",
        "gguf_qwen3", "gguf_gemma2", "gguf_gemma3", "gguf_phi3"}) {
    CAPTURE(name);
    Run r(import_case(name), DType::q8, 8);
    const std::string ref = kDir + name + "_fwd", ref_q8w = kDir + name + "_q8w_fwd";
    const double weights = relative_distance(ref_q8w + ".f32", ref + ".f32", r.vocab());
    const einfer_test::ReferenceAgreement q8w = compare_to_reference(r, ref_q8w, /*rel_tol=*/0);
    const einfer_test::ReferenceAgreement f64 = compare_to_reference(r, ref, /*rel_tol=*/0);
    MESSAGE(std::string(name) << " q8: weights alone " << weights << "; einfer against the "
                              << "q8-weight reference " << q8w.worst_rel << ", top-1 " << q8w.top1
                              << "; against the float reference " << f64.worst_rel << ", top-1 "
                              << f64.top1);
    CHECK(q8w.worst_rel <= 2 * weights);
    CHECK(q8w.top1 >= 0.9);
    CHECK(f64.top1 >= 0.9);
  }
}

TEST_CASE("families: config.json and GGUF metadata become the right options") {
  const ModelConfig qwen3 = import_case("hf_qwen3").config;
  CHECK(qwen3.family == ArchFamily::qwen3);
  CHECK(qwen3.qk_norm == 1);
  CHECK(qwen3.head_dim == 16);
  CHECK(qwen3.rope == RopeMode::half_split);
  CHECK(qwen3.sliding_window == 0);
  const ModelConfig qwen3w = import_case("hf_qwen3_window").config;
  CHECK(qwen3w.sliding_window == 8);
  CHECK(qwen3w.sliding_window_first_layer == 1);
  CHECK(qwen3w.tied_classifier == 1);

  const ModelConfig g2 = import_case("hf_gemma2").config;
  CHECK(g2.family == ArchFamily::gemma2);
  CHECK(g2.activation == Activation::geglu_tanh);
  CHECK(g2.post_norms == 1);
  CHECK(g2.qk_norm == 0);
  CHECK(g2.tied_classifier == 1);  // Gemma2Config's default: config.json does not say
  CHECK(g2.embed_scale == std::sqrt(24.f));
  CHECK(g2.attn_scale == static_cast<float>(std::pow(32.0, -0.5)));
  CHECK(g2.attn_softcap == 2.f);
  CHECK(g2.final_softcap == 3.f);
  CHECK(g2.sliding_window == 16);
  CHECK(g2.sliding_window_period == 2);
  CHECK(llama_layer_slides(g2, 0));
  CHECK_FALSE(llama_layer_slides(g2, 1));
  CHECK(llama_layer_slides(g2, 2));
  const ModelConfig g2b = import_case("hf_gemma2_bf16").config;
  CHECK(g2b.embed_scale == 4.90625f);  // sqrt(24) = 4.89898 in bfloat16
  CHECK(g2b.weight_dtype == DType::bf16);

  const ModelConfig g3 = import_case("hf_gemma3").config;
  CHECK(g3.family == ArchFamily::gemma3);
  CHECK(g3.qk_norm == 1);
  CHECK(g3.post_norms == 1);
  CHECK(g3.sliding_window_period == 6);
  CHECK(g3.rope_local_theta == 10000.f);
  CHECK(g3.rope_theta == 1e6f);
  CHECK(g3.rope_scaling == RopeScaling::linear);
  CHECK(g3.attn_softcap == 0.f);
  CHECK(g3.final_softcap == 0.f);
  for (int32_t l = 0; l < 6; ++l) CHECK(llama_layer_slides(g3, l) == (l != 5));
  CHECK(import_case("hf_gemma3_types").config.sliding_window_period == 3);

  const ModelConfig phi3 = import_case("hf_phi3").config;
  CHECK(phi3.family == ArchFamily::phi3);
  CHECK(phi3.rope_scaling == RopeScaling::longrope);
  CHECK(phi3.rope_freq_factors == 1);
  CHECK(phi3.rope_original_context == 32);
  CHECK(phi3.rope_attn_factor ==
        static_cast<float>(std::sqrt(1.0 + std::log(4.0) / std::log(32.0))));
  CHECK(phi3.sliding_window == 48);
  CHECK(phi3.sliding_window_first_layer == 0);
  CHECK(phi3.sliding_window_period == 0);
  RunOptions resolved, asked;
  REQUIRE(llama_resolve_options(phi3, asked, &resolved).ok());
  CHECK(resolved.window == 48);  // a window on every layer is the run's default (Mistral's rule)
  CHECK(resolved.context == 48);
  CHECK(llama_rope_long_factors(phi3, resolved));  // a windowed stream passes 32 positions
  asked.context = 32;
  REQUIRE(llama_resolve_options(phi3, asked, &resolved).ok());
  CHECK(resolved.window == 0);  // a window of 48 over 32 positions cuts nothing
  CHECK(resolved.context == 32);
  CHECK_FALSE(llama_rope_long_factors(phi3, resolved));

  // GGUF: llama.cpp's rules.
  const ModelConfig gg2 = import_case("gguf_gemma2").config;
  CHECK(gg2.embed_scale == std::sqrt(24.f));
  CHECK(gg2.attn_scale == 1.f / std::sqrt(8.f));  // 1/sqrt(head_dim): not the 27B layer count
  CHECK(gg2.attn_softcap == 2.f);
  CHECK(gg2.sliding_window_period == 2);
  const ModelConfig gg3 = import_case("gguf_gemma3").config;
  CHECK(gg3.rope_local_theta == 10000.f);
  CHECK(gg3.sliding_window_period == 6);
  CHECK(gg3.rope_scaling == RopeScaling::linear);
  const ModelConfig gp3 = import_case("gguf_phi3").config;
  CHECK(gp3.rope_scaling == RopeScaling::longrope);
  CHECK(gp3.rope_original_context == 32);
  CHECK(gp3.rope == RopeMode::half_split);
}

TEST_CASE("families: partial windows keep the whole context; a run window narrows every layer") {
  const ModelConfig g3 = import_case("hf_gemma3").config;
  RunOptions resolved, asked;
  REQUIRE(llama_resolve_options(g3, asked, &resolved).ok());
  CHECK(resolved.window == 0);
  CHECK(resolved.context == g3.context_length);
  CHECK(llama_layer_window(g3, resolved, 0) == 8);
  CHECK(llama_layer_window(g3, resolved, 5) == 0);
  asked.window = 4;
  REQUIRE(llama_resolve_options(g3, asked, &resolved).ok());
  CHECK(llama_layer_window(g3, resolved, 0) == 4);
  CHECK(llama_layer_window(g3, resolved, 5) == 4);
}

TEST_CASE("families: the packed image keeps every feature and --inspect names the family") {
  for (const char* name : {"hf_gemma2", "hf_gemma3", "hf_phi3", "hf_qwen3", "gguf_gemma2"}) {
    CAPTURE(name);
    const SourceModel src = import_case(name);
    const AlignedBuffer image(write_ein(pack_source(src, DType::f32, 0, nullptr)));
    Model m;
    REQUIRE(load_model(image.data, image.size, LoadOptions{}, &m).ok());
    const ModelConfig& a = src.config;
    const ModelConfig& b = m.config;
    CHECK(b.family == a.family);
    CHECK(b.qk_norm == a.qk_norm);
    CHECK(b.post_norms == a.post_norms);
    CHECK(b.activation == a.activation);
    CHECK(b.embed_scale == a.embed_scale);
    CHECK(b.attn_scale == a.attn_scale);
    CHECK(b.attn_softcap == a.attn_softcap);
    CHECK(b.final_softcap == a.final_softcap);
    CHECK(b.sliding_window_period == a.sliding_window_period);
    CHECK(b.rope_local_theta == a.rope_local_theta);
    CHECK(b.rope_attn_factor == a.rope_attn_factor);
    CHECK(b.rope_scaling == a.rope_scaling);
    const std::string text = describe_model(m, RunOptions{}, false);
    CHECK(text.find(std::string("architecture: llama (") + arch_family_name(a.family) + ")") !=
          std::string::npos);
    const std::string json = describe_model(m, RunOptions{}, true);
    CHECK(json.find(std::string("\"family\": \"") + arch_family_name(a.family) + "\"") !=
          std::string::npos);
  }
  const AlignedBuffer image(write_ein(pack_source(import_case("hf_phi3"), DType::f32, 0, nullptr)));
  Model m;
  REQUIRE(load_model(image.data, image.size, LoadOptions{}, &m).ok());
  CHECK(describe_model(m, RunOptions{}, false).find("rope_factors long") != std::string::npos);
  RunOptions short_ctx;
  short_ctx.context = 32;
  CHECK(describe_model(m, short_ctx, false).find("rope_factors short") != std::string::npos);
}

TEST_CASE("families: the C API's arena figure is exact for every family") {
  // einfer_arena_bytes is what einfer_session_create needs, to the byte (the second RoPE table of
  // Gemma 3, longrope, windows), also with 2 workers' scratch slots and an int8 cache.
  for (const char* name : {"hf_qwen3_window", "hf_gemma2", "hf_gemma3", "hf_phi3", "gguf_gemma3"}) {
    CAPTURE(name);
    const AlignedBuffer image(write_ein(pack_source(import_case(name), DType::q8, 8, nullptr)));
    for (int threads : {1, 2}) {
      einfer_options o;
      einfer_options_default(&o);
      o.threads.n = threads;  // sizing only: the sessions below run on the caller
      o.kv_int8 = threads == 2 ? 1 : 0;
      {  // one byte less is refused
        const einfer_test::AlignedMemory mem = einfer_test::capi_memory(image.data, image.size, o);
        char err[160];
        einfer_session* s = nullptr;
        CHECK(einfer_session_create(image.data, image.size, &o, mem.base, mem.bytes - 1, &s, err,
                                    sizeof err) != EINFER_OK);
      }
      const einfer_test::CapiSession run(image.data, image.size, o);  // uses every byte
      einfer_session* s = run.s;
      const int32_t prompt[] = {1, 5, 9, 17, 3, 40, 2, 11};
      REQUIRE(einfer_prefill(s, prompt, 8) == EINFER_OK);
      REQUIRE(einfer_decode(s, einfer_next_token(s)) == EINFER_OK);
    }
  }
}

TEST_CASE("families: what einfer does not run is refused by name") {
  struct Refusal {
    const char* folder;
    const char* expect;
  };
  const Refusal hf[] = {
      {"bad_gemma3_bidirectional", "use_bidirectional_attention true is not supported"},
      {"bad_gemma2_activation", "hidden_activation 'gelu' is not supported for gemma2"},
      {"bad_phi3_partial_rotary", "partial_rotary_factor != 1 is not supported"},
      {"bad_phi3_yarn", "rope_scaling type 'yarn' is not supported"},
      {"bad_phi3_factors", "long_factor has 3 entries, expected 4"},
      {"bad_gemma3_layer_types", "layer_types is not supported"},
      {"bad_qwen3_rope_yarn", "rope_scaling type 'yarn' is not supported"},
  };
  for (const Refusal& r : hf) {
    CAPTURE(r.folder);
    CHECK_THROWS_WITH_AS(import_hf_llama(kDir + r.folder), doctest::Contains(r.expect), PackError);
  }
}

#endif  // EINFER_HAS_PACK_LIB
