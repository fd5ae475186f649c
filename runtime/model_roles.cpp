// Names of tensor roles, as printed by the loader's messages and `einfer-pack --inspect`.
#include "runtime/model.h"

namespace einfer {

const char* tensor_role_name(TensorRole role) {
  switch (role) {
    case TensorRole::token_embedding:
      return "token_embedding";
    case TensorRole::attn_norm:
      return "attn_norm";
    case TensorRole::attn_norm_bias:
      return "attn_norm_bias";
    case TensorRole::wq:
      return "wq";
    case TensorRole::wk:
      return "wk";
    case TensorRole::wv:
      return "wv";
    case TensorRole::wo:
      return "wo";
    case TensorRole::bq:
      return "bq";
    case TensorRole::bk:
      return "bk";
    case TensorRole::bv:
      return "bv";
    case TensorRole::bo:
      return "bo";
    case TensorRole::ffn_norm:
      return "ffn_norm";
    case TensorRole::ffn_norm_bias:
      return "ffn_norm_bias";
    case TensorRole::w1:
      return "w1";
    case TensorRole::w2:
      return "w2";
    case TensorRole::w3:
      return "w3";
    case TensorRole::b1:
      return "b1";
    case TensorRole::b2:
      return "b2";
    case TensorRole::final_norm:
      return "final_norm";
    case TensorRole::final_norm_bias:
      return "final_norm_bias";
    case TensorRole::classifier:
      return "classifier";
    case TensorRole::cross_wq:
      return "cross_wq";
    case TensorRole::cross_wk:
      return "cross_wk";
    case TensorRole::cross_wv:
      return "cross_wv";
    case TensorRole::cross_wo:
      return "cross_wo";
    case TensorRole::cross_bq:
      return "cross_bq";
    case TensorRole::cross_bk:
      return "cross_bk";
    case TensorRole::cross_bv:
      return "cross_bv";
    case TensorRole::cross_bo:
      return "cross_bo";
    case TensorRole::cross_norm:
      return "cross_norm";
    case TensorRole::cross_norm_bias:
      return "cross_norm_bias";
    case TensorRole::decoder_norm:
      return "decoder_norm";
    case TensorRole::decoder_norm_bias:
      return "decoder_norm_bias";
    case TensorRole::rope_freq_factors:
      return "rope_freq_factors";
    case TensorRole::q_norm:
      return "q_norm";
    case TensorRole::k_norm:
      return "k_norm";
    case TensorRole::attn_post_norm:
      return "attn_post_norm";
    case TensorRole::ffn_post_norm:
      return "ffn_post_norm";
    case TensorRole::rope_freq_factors_long:
      return "rope_freq_factors_long";
    case TensorRole::position_embedding:
      return "position_embedding";
    case TensorRole::token_type_embedding:
      return "token_type_embedding";
    case TensorRole::embed_norm:
      return "embed_norm";
    case TensorRole::embed_norm_bias:
      return "embed_norm_bias";
  }
  return "?";
}

const char* arch_family_name(ArchFamily family) {
  switch (family) {
    case ArchFamily::unspecified:
      break;
    case ArchFamily::llama:
      return "llama";
    case ArchFamily::mistral:
      return "mistral";
    case ArchFamily::qwen2:
      return "qwen2";
    case ArchFamily::qwen3:
      return "qwen3";
    case ArchFamily::gemma2:
      return "gemma2";
    case ArchFamily::gemma3:
      return "gemma3";
    case ArchFamily::phi3:
      return "phi3";
  }
  return "unspecified";
}

}  // namespace einfer
