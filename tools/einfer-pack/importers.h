// Importers: read a checkpoint into a SourceModel (architecture + float or natively quantized
// tensors), which pack.h turns into a .ein image. Host only; errors throw PackError.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/format.h"
#include "runtime/run_options.h"
#include "tools/einfer-pack/ein_writer.h"

namespace einfer::pack {

struct SourceTensor {
  TensorRole role = TensorRole::token_embedding;
  int32_t layer = -1;
  std::vector<int64_t> shape;
  std::vector<float> values;  // float32 values (empty when only the native encoding is held)
  // Native quantized encoding, kept so packing to the same dtype and group is lossless.
  DType native = DType::f32;  // f32: none
  int32_t native_group = 0;
  std::vector<uint8_t> native_data;  // einfer layout (runtime/tensor.h)
  std::vector<float> native_scales;
};

struct SourceModel {
  std::string kind;    // "llama2c-v0", "hf-llama", "gguf", ...
  ModelConfig config;  // weight_dtype/group_size: the source's natural choice
  std::vector<SourceTensor> tensors;
  std::string notes;  // importer remarks for metadata (e.g. "rope: q/k permuted to interleaved")
  std::string chat_template;  // the Jinja chat template the checkpoint ships ("" when none)
  // config.json bos_token_id / eos_token_id (a list for models with several ends of generation);
  // -1 / empty when absent. einfer-pack adds them to the tokenizer (add_model_special_ids).
  int32_t bos = -1;
  std::vector<int32_t> eos;
  std::string metadata;  // further "key=value\n" lines for the image (e.g. max_seq_length=256)
};

// Appends a float32 tensor (values in C order, as many as the shape holds) to m.tensors.
void add_float_tensor(SourceModel& m, TensorRole role, int32_t layer, std::vector<int64_t> shape,
                      std::vector<float> values);

// Progress callback: done and total bytes of input processed.
using Progress = void (*)(uint64_t done, uint64_t total);

// Whole file (tools/common/file.h); throws PackError("cannot open PATH: reason").
std::vector<uint8_t> read_file(const std::string& path);

// llama2.c checkpoints v0 (legacy), v1 (ak42 fp32), v2 (ak42 int8 groups).
bool looks_like_llama2c(const std::vector<uint8_t>& bytes);
SourceModel import_llama2c(const std::vector<uint8_t>& bytes);

// Hugging Face Llama folder: config.json + model.safetensors or model.safetensors.index.json.
SourceModel import_hf_llama(const std::string& folder);

// Hugging Face BERT sentence encoder folder (config.json model_type "bert", model.safetensors,
// modules.json / 1_Pooling / 2_Normalize as sentence-transformers writes them).
bool hf_folder_is_bert(const std::string& folder);
SourceModel import_hf_bert(const std::string& folder);

struct TorchEncoderOptions {
  int heads = 0;           // required (from the flag or the safetensors metadata)
  std::string activation;  // relu | gelu ("" : metadata or relu)
  int norm_first = -1;     // -1: metadata or false
  int causal = -1;
  float eps = 0.f;  // 0: metadata or 1e-5
  int context = 0;  // 0: metadata or 0 (unbounded)
};
SourceModel import_torch_encoder(const std::vector<uint8_t>& safetensors_bytes,
                                 const TorchEncoderOptions& options);
// PyTorch nn.Transformer state dicts (encoder.layers.N., decoder.layers.N., encoder.norm,
// decoder.norm; models/arch/arch_transformer.cpp): the same options, the mask is always causal.
SourceModel import_torch_transformer(const std::vector<uint8_t>& safetensors_bytes,
                                     const TorchEncoderOptions& options);

// GGUF (v2/v3), llama architecture, F32/F16/Q8_0/Q4_0 tensors.
bool looks_like_gguf(const std::vector<uint8_t>& bytes);
SourceModel import_gguf(const std::vector<uint8_t>& bytes);

// Deterministic synthetic llama models of any shape (tools/einfer-pack/synthetic.cpp), used by
// einfer-pack --synthetic and einfer-bench --synthetic.
// SPEC: comma-separated key=value, e.g. "dim=64,hidden=172,layers=4,heads=4,kv_heads=4,vocab=512,
// seq=128"; keys: dim hidden layers heads kv_heads (default: heads) vocab seq tied (0|1)
// dtype (f32|f16|q8|q4) group seed family (llama|qwen3|gemma2|gemma3|phi3: the family's
// features with typical settings, see synthetic.cpp). Missing keys keep the values of the
// `defaults` passed in.
struct SyntheticSpec {
  int32_t dim = 64, hidden = 172, layers = 4, heads = 4, kv_heads = 0, vocab = 512, seq = 128;
  int32_t tied = 1;          // classifier shares the token embedding
  DType dtype = DType::f32;  // the source's natural dtype (einfer-pack --dtype overrides it)
  int32_t group = 32;        // quantization group for q8/q4
  uint64_t seed = 1;
  ArchFamily family = ArchFamily::unspecified;  // unspecified / llama: a plain llama
};
// aidreams260K's shape (the firmware example's model): einfer-pack's defaults.
constexpr SyntheticSpec kSyntheticAidreams{};
// Strict: an unknown key, a value that is not an integer in its range, or a shape einfer cannot run
// (dim not heads x an even head size, heads not a multiple of kv_heads, odd group) throws
// PackError naming the key and the accepted values.
SyntheticSpec parse_synthetic_spec(const std::string& spec,
                                   const SyntheticSpec& defaults = kSyntheticAidreams);
// The model as float tensors (weights uniform in +-1/sqrt(fan_in), norms 1).
SourceModel make_synthetic(const SyntheticSpec& spec);
// The same model packed as spec.dtype / spec.group, generated and encoded one tensor at a time
// (no float copy of the whole model: benchmark shapes may be large).
EinImage make_synthetic_image(const SyntheticSpec& spec);
// A llama2.c tokenizer.bin for `vocab` ids: specials, the 256 byte pieces, then letter pieces.
std::vector<uint8_t> make_synthetic_tokenizer(int32_t vocab);

// C API options for the arena constant --emit-c writes (einfer_arena_bytes, models/einfer.h):
// the run options plus the tokenizer tables and encode scratch when with_tokenizer.
struct CApiSizing {
  int32_t with_tokenizer = 0;
  int32_t max_prompt_bytes = 0;  // 0: the C API default (512)
};

// Packs a source model as `dtype` (f32/f16/q8/q4) with `group` (q8/q4). Matrices take dtype;
// norms and biases stay f32.
EinImage pack_source(const SourceModel& source, DType dtype, int32_t group, Progress progress);

// Human-readable (or JSON) description of a loaded model: architecture, every tensor, totals and
// the arena bytes session_arena_bytes() reports for `run` ("n/a (reason)" when it cannot).
std::string describe_model(const Model& model, const RunOptions& run, bool json);

// --emit-c output: a C source defining the image and a header declaring it, for firmware.
struct EmitCNames {
  std::string symbol = "einfer_model";    // prefixes every name: einfer_model_data, EINFER_MODEL_*
  std::string header_name;                // the header's file name, #included by the source
  std::string source_name;                // the source's file name, named in the header
  std::string section = ".einfer_model";  // the array's linker section (flash placement)
};
struct EmittedC {
  std::string header;  // extern declaration, size/alignment/section and arena-bytes constants
  std::string source;  // the const array: aligned to 64, in `section`, marked used
};

// The header also holds <SYMBOL>_ARENA_BYTES, the exact arena einfer_session_create needs for
// `run` and `capi`, and the options themselves as macros (<SYMBOL>_CONTEXT, _WINDOW, _SINKS,
// _KV_INT8, _MAX_BATCH, _WITH_TOKENIZER, _MAX_PROMPT_BYTES) so firmware builds its
// einfer_options from the same figures the constant was computed for.
EmittedC emit_c(const std::vector<uint8_t>& image, const Model& model, const RunOptions& run,
                const CApiSizing& capi, const EmitCNames& names);

}  // namespace einfer::pack
