// einfer-variants-bench [--quick]: times issue 19's attention variants against dense softmax
// attention, alternating runs and reporting medians (the machine is shared and noisy).
//   sparse:  attention_pattern_f32 vs the fused dense kernel (attention_f32, bidirectional) on one
//            sequence of N = 4096 and 16384 positions, H=2 heads of 32; plus the encoder arena
//            bytes (the same O(N d) for both: neither ever holds an N x N matrix) and the bytes of
//            the N x N float mask a masked dense implementation would need.
//   linear:  one decode step of linear-elu attention (O(H k^2) state) vs softmax decode over an
//            f32 KV cache holding 1024 and 16384 positions, H=8 heads of 64; and a whole causal
//            linear-elu encoder stack streamed to 16384 positions (encoder_stream_step).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/attention_variants/attention_variants.h"
#include "models/encoder.h"
#include "runtime/arena.h"
#include "runtime/tensor.h"
#include "tools/common/cli.h"

using namespace einfer;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// n uniform values in [-1, 1) from seed.
std::vector<float> noise(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  std::generate(v.begin(), v.end(), [&] { return u(g); });
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "einfer-variants-bench: %s\n", s.message);
    std::exit(1);
  }
}

// A PyTorch-style encoder (LayerNorm, ReLU, no RoPE) of `layers` layers of `heads` heads of
// head_dim each, feed-forward 4 x wider.
ModelConfig encoder_config(int32_t layers, int32_t heads, int32_t head_dim) {
  ModelConfig c;
  c.arch = ArchKind::encoder;
  c.dim = heads * head_dim;
  c.hidden_dim = 4 * c.dim;
  c.n_layers = layers;
  c.n_heads = c.n_kv_heads = heads;
  c.head_dim = head_dim;
  c.norm = NormKind::layernorm;
  c.activation = Activation::relu;
  c.rope = RopeMode::none;
  return c;
}

size_t encoder_bytes(int32_t n, const AttentionPattern& p) {
  ModelConfig c = encoder_config(1, 2, 32);
  c.pattern_window = p.window;
  c.pattern_global = p.global;
  c.pattern_stride = p.stride;
  c.pattern_block = p.block;
  c.pattern_block_summary = p.block_summary;
  size_t bytes = 0;
  check(encoder_arena_bytes(c, n, &bytes));
  return bytes;
}

void bench_sparse(int32_t n, int reps) {
  const int32_t H = 2, k = 32;
  const size_t row = static_cast<size_t>(H * k);
  const std::vector<float> q = noise(n * row, 1), kk = noise(n * row, 2), v = noise(n * row, 3);
  std::vector<float> out(n * row);
  AttentionShape dense{};
  dense.n_heads = dense.n_kv_heads = H;
  dense.head_dim = k;
  dense.scale = attention_default_scale(k);
  dense.causal = false;
  std::vector<unsigned char> scratch(
      std::max(attention_scratch_bytes(dense, n), attention_pattern_scratch_bytes(H)) + 64);
  struct Case {
    const char* name;
    AttentionPattern p;
  };
  const Case cases[] = {{"window:128+global:4", {128, 4, 0, 0, 0, false}},
                        {"window:64+strided:256", {64, 0, 256, 0, 0, false}},
                        {"fixed:64,2", {0, 0, 0, 64, 2, false}}};
  std::vector<double> t_dense;
  std::vector<std::vector<double>> t_pat(3);
  for (int r = 0; r < reps; ++r) {  // alternate dense and patterns
    double t0 = now_s();
    check(attention_f32(dense, q.data(), kk.data(), v.data(), n, 0, nullptr, out.data(),
                        scratch.data(), scratch.size()));
    t_dense.push_back(now_s() - t0);
    for (int c = 0; c < 3; ++c) {
      t0 = now_s();
      check(attention_pattern_f32(cases[c].p, H, k, dense.scale, q.data(), kk.data(), v.data(), n,
                                  out.data(), scratch.data(), scratch.size()));
      t_pat[c].push_back(now_s() - t0);
    }
  }
  const double td = median(t_dense);
  const double mask_mib = double(n) * n * 4 / (1 << 20);
  std::printf(
      "sparse N=%d H=%d k=%d: dense fused %.1f ms (%lld pairs), arena %zu B, "
      "an N x N f32 mask would be %.0f MiB\n",
      n, H, k, td * 1e3, static_cast<long long>(int64_t{n} * n),
      encoder_bytes(n, AttentionPattern{}), mask_mib);
  for (int c = 0; c < 3; ++c) {
    const double tp = median(t_pat[c]);
    std::printf("  %-22s %8.2f ms  %10lld pairs (%.2f%% of dense)  speedup x%.1f  arena %zu B\n",
                cases[c].name, tp * 1e3,
                static_cast<long long>(attention_pattern_pairs(cases[c].p, n)),
                100.0 * attention_pattern_pairs(cases[c].p, n) / (double(n) * n), td / tp,
                encoder_bytes(n, cases[c].p));
  }
}

void bench_decode(int32_t ctx, int steps) {
  const int32_t H = 8, k = 64;
  const size_t row = static_cast<size_t>(H * k);
  // Linear: the state after ctx positions (its values do not change the cost), then steps.
  LinearAttentionShape ls;
  ls.n_heads = H;
  ls.head_dim = k;
  ls.causal = true;
  std::vector<float> state(attention_linear_state_floats(ls), 0.01f);
  std::vector<float> q = noise(row, 4), kk = noise(row, 5), out(row);
  const std::vector<float> v = noise(row, 6);
  // Softmax: an f32 cache of ctx positions, one new query per step.
  const std::vector<float> kc = noise(size_t(ctx + 1) * row, 7),
                           vc = noise(size_t(ctx + 1) * row, 8);
  KVLayerView view{};
  view.dtype = DType::f32;
  view.n_kv_heads = H;
  view.head_dim = k;
  view.capacity = ctx + 1;
  view.k = kc.data();
  view.v = vc.data();
  view.head_stride = int64_t{ctx + 1} * k;
  view.row_stride = k;
  AttentionShape s{};
  s.n_heads = s.n_kv_heads = H;
  s.head_dim = k;
  s.scale = attention_default_scale(k);
  std::vector<unsigned char> scratch(attention_scratch_bytes(s, 1, DType::f32) + 64);
  std::vector<double> t_lin, t_soft;
  for (int r = 0; r < 5; ++r) {
    double t0 = now_s();
    for (int i = 0; i < steps; ++i) {
      attention_linear_elu_step_f32(ls, state.data(), q.data(), kk.data(), v.data(), out.data());
    }
    t_lin.push_back((now_s() - t0) / steps);
    t0 = now_s();
    for (int i = 0; i < steps; ++i)
      check(attention_f32(s, q.data(), kk.data(), v.data(), 1, ctx, &view, out.data(),
                          scratch.data(), scratch.size()));
    t_soft.push_back((now_s() - t0) / steps);
  }
  std::printf(
      "decode ctx=%d H=%d k=%d: linear-elu step %.2f us (state %zu B)  softmax+KV %.2f us "
      "(cache %zu B)  softmax/linear x%.1f\n",
      ctx, H, k, median(t_lin) * 1e6, state.size() * 4, median(t_soft) * 1e6,
      2 * size_t(ctx) * row * 4, median(t_soft) / median(t_lin));
}

// A causal linear-elu encoder stack (d=256, 4 heads of 64, ff 1024, 2 layers, random f32 weights)
// streamed one position at a time up to 16384 positions: the per-position time near 1K and 16K.
void bench_stream() {
  ModelConfig c = encoder_config(2, 4, 64);
  c.causal = 1;
  c.attention = AttentionKind::linear_elu;
  const int64_t d = c.dim, f = c.hidden_dim;
  std::vector<std::vector<float>> keep;
  auto tensor = [&](int64_t a, int64_t b) {
    keep.push_back(
        noise(static_cast<size_t>(a * (b > 0 ? b : 1)), static_cast<unsigned>(keep.size())));
    for (float& x : keep.back()) x *= b > 0 ? 1.f / 16 : 1.f;
    return b > 0 ? make_view(DType::f32, keep.back().data(), {a, b})
                 : make_view(DType::f32, keep.back().data(), {a});
  };
  std::vector<EncoderLayerWeights> layers(c.n_layers);
  for (EncoderLayerWeights& L : layers) {
    L.attn.wq = tensor(d, d);
    L.attn.wk = tensor(d, d);
    L.attn.wv = tensor(d, d);
    L.attn.wo = tensor(d, d);
    L.w1 = tensor(f, d);
    L.w2 = tensor(d, f);
    L.norm1_w = tensor(d, 0);
    L.norm1_b = tensor(d, 0);
    L.norm2_w = tensor(d, 0);
    L.norm2_b = tensor(d, 0);
  }
  EncoderWeights w;
  w.config = c;
  w.layers = layers.data();
  size_t bytes = 0;
  check(encoder_arena_bytes(c, 1, &bytes));
  std::vector<unsigned char> mem(bytes + 64);
  Arena arena(mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64, bytes);
  EncoderState s;
  check(encoder_state_init(c, 1, arena, &s));
  const std::vector<float> x = noise(static_cast<size_t>(d), 99);
  std::vector<float> y(static_cast<size_t>(d));
  std::vector<double> near_1k, near_16k;
  for (int32_t i = 0; i < 16384; ++i) {
    const double t0 = now_s();
    check(encoder_stream_step(w, &s, x.data(), y.data()));
    const double t = now_s() - t0;
    if (i >= 1024 - 256 && i < 1024) near_1k.push_back(t);
    if (i >= 16384 - 256) near_16k.push_back(t);
  }
  std::printf(
      "stream (causal linear-elu encoder d=256 H=4 k=64 ff=1024 L=2): position ~1K %.1f us, "
      "~16K %.1f us per position (16K/1K x%.2f), arena %zu B whatever the length\n",
      median(near_1k) * 1e6, median(near_16k) * 1e6, median(near_16k) / median(near_1k), bytes);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  einfer::tools::cli::Parser p(
      "einfer-variants-bench", "[--quick]",
      "Issue 19's attention variants against dense softmax attention in one run: sparse "
      "patterns\nat 4K/16K positions, linear-attention decode at 1K/16K context, a streamed "
      "linear encoder.");
  p.flag({"--quick"}, &quick, "the short version: 1K positions, fewer steps, no 16K runs");
  if (int code; !p.parse(argc, argv, &code)) return code;
  bench_sparse(quick ? 1024 : 4096, 3);
  if (!quick) bench_sparse(16384, 1);
  bench_decode(1024, quick ? 20 : 200);
  if (!quick) bench_decode(16384, 200);
  if (!quick) bench_stream();
  return 0;
}
