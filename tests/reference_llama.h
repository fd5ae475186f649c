// An independent, deliberately plain llama forward pass for tests: double accumulation, every key
// and value kept in growing vectors (no ring buffer), attention windows applied by position
// arithmetic alone. It shares no code with models/ or kernels/ beyond reading f32 weight views.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/model.h"

namespace einfer::testing {

class ReferenceLlama {
 public:
  // window 0: attend every earlier position; else sinks + the window - sinks latest positions
  // (the current one included: window positions in all).
  ReferenceLlama(const Model& m, int window, int sinks)
      : m_(m), c_(m.config), window_(window), sinks_(sinks) {
    keys_.resize(c_.n_layers);
    values_.resize(c_.n_layers);
  }

  // Logits after feeding `token` at the next position.
  std::vector<float> step(int32_t token) {
    const int d = c_.dim, hd = c_.head_dim, H = c_.n_heads, G = c_.n_kv_heads, f = c_.hidden_dim;
    const int64_t pos = pos_++;
    std::vector<double> x(d);
    const float* emb = tensor(TensorRole::token_embedding, -1) + static_cast<size_t>(token) * d;
    for (int i = 0; i < d; ++i) x[i] = emb[i];
    for (int l = 0; l < c_.n_layers; ++l) {
      std::vector<double> h = rmsnorm(x, tensor(TensorRole::attn_norm, l));
      std::vector<double> q = matvec(tensor(TensorRole::wq, l), H * hd, d, h);
      std::vector<double> k = matvec(tensor(TensorRole::wk, l), G * hd, d, h);
      std::vector<double> v = matvec(tensor(TensorRole::wv, l), G * hd, d, h);
      rope(q, H, pos);
      rope(k, G, pos);
      keys_[l].push_back(k);
      values_[l].push_back(v);
      std::vector<double> att(H * hd, 0.0);
      for (int head = 0; head < H; ++head) {
        const int g = head / (H / G);
        std::vector<double> scores;
        std::vector<int64_t> attended;
        for (int64_t p = 0; p <= pos; ++p) {
          if (window_ > 0 && p >= sinks_ && p <= pos - (window_ - sinks_)) continue;
          double s = 0;
          for (int i = 0; i < hd; ++i) s += q[head * hd + i] * keys_[l][p][g * hd + i];
          scores.push_back(s / std::sqrt(static_cast<double>(hd)));
          attended.push_back(p);
        }
        double mx = scores[0];
        for (double s : scores) mx = s > mx ? s : mx;
        double sum = 0;
        for (double& s : scores) sum += (s = std::exp(s - mx));
        for (size_t j = 0; j < scores.size(); ++j) {
          for (int i = 0; i < hd; ++i)
            att[head * hd + i] += scores[j] / sum * values_[l][attended[j]][g * hd + i];
        }
      }
      std::vector<double> o = matvec(tensor(TensorRole::wo, l), d, H * hd, att);
      for (int i = 0; i < d; ++i) x[i] += o[i];
      h = rmsnorm(x, tensor(TensorRole::ffn_norm, l));
      std::vector<double> g1 = matvec(tensor(TensorRole::w1, l), f, d, h);
      std::vector<double> g3 = matvec(tensor(TensorRole::w3, l), f, d, h);
      for (int i = 0; i < f; ++i) g1[i] = g1[i] / (1.0 + std::exp(-g1[i])) * g3[i];
      std::vector<double> down = matvec(tensor(TensorRole::w2, l), d, f, g1);
      for (int i = 0; i < d; ++i) x[i] += down[i];
    }
    std::vector<double> h = rmsnorm(x, tensor(TensorRole::final_norm, -1));
    const float* cls = c_.tied_classifier ? tensor(TensorRole::token_embedding, -1)
                                          : tensor(TensorRole::classifier, -1);
    std::vector<double> logits = matvec(cls, c_.vocab_size, d, h);
    return std::vector<float>(logits.begin(), logits.end());
  }

 private:
  const float* tensor(TensorRole role, int layer) const {
    TensorView t;
    if (!model_tensor(m_, role, layer, &t).ok() || t.dtype != DType::f32) return nullptr;
    return static_cast<const float*>(t.data);
  }
  std::vector<double> rmsnorm(const std::vector<double>& x, const float* w) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + c_.norm_eps);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * w[i];
    return y;
  }
  static std::vector<double> matvec(const float* w, int rows, int cols,
                                    const std::vector<double>& x) {
    std::vector<double> y(rows, 0.0);
    for (int r = 0; r < rows; ++r) {
      for (int i = 0; i < cols; ++i)
        y[r] += static_cast<double>(w[static_cast<size_t>(r) * cols + i]) * x[i];
    }
    return y;
  }
  void rope(std::vector<double>& x, int heads, int64_t pos) const {
    const int hd = c_.head_dim;
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < hd / 2; ++i) {
        const double freq = std::pow(static_cast<double>(c_.rope_theta), -2.0 * i / hd);
        const double a = static_cast<double>(pos) * freq;
        const int i0 = c_.rope == RopeMode::half_split ? i : 2 * i;
        const int i1 = c_.rope == RopeMode::half_split ? i + hd / 2 : 2 * i + 1;
        const double x0 = x[h * hd + i0], x1 = x[h * hd + i1];
        x[h * hd + i0] = x0 * std::cos(a) - x1 * std::sin(a);
        x[h * hd + i1] = x0 * std::sin(a) + x1 * std::cos(a);
      }
    }
  }

  const Model& m_;
  ModelConfig c_;
  int window_, sinks_;
  int64_t pos_ = 0;
  std::vector<std::vector<std::vector<double>>> keys_, values_;
};

}  // namespace einfer::testing
