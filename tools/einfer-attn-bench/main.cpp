// einfer-attn-bench: measures the fused attention kernel.
//
//   decode:  one query over P cached positions (H query heads, G kv heads, head size k), f32 and
//            int8 KV. Reports K+V bytes read per second next to a streaming read of the same
//            bytes, timed interleaved in the same run, and the int8 / f32 speedup.
//   prefill: n causal tokens, no cache, in GFLOP/s (4*H*k flops per attended (query, key) pair).
//
// Times are thread CPU time (CLOCK_THREAD_CPUTIME_ID), medians over the repetitions.
// Usage: einfer-attn-bench [--positions 4096] [--heads 32] [--kv-heads 8] [--head-dim 128]
//                          [--prefill 512] [--reps 40]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/simd/simd.h"
#include "models/kv_cache.h"
#include "tools/common/bench_probes.h"
#include "tools/common/cli.h"

using namespace einfer;
namespace cli = einfer::tools::cli;

namespace {

// Thread CPU time: the machine is shared, and time spent descheduled is not the kernel's.
double now_s() {
  return double(tools::thread_ns()) * 1e-9;
}

struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  float next() {  // uniform in [-1, 1)
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((s >> 40) & 0xFFFFFF) / 8388608.f - 1.f;
  }
};

using tools::stream_read;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct DecodeResult {
  double attn_s = 0, stream_s = 0;
  size_t bytes = 0;
};

DecodeResult bench_decode(DType dtype, int32_t P, int32_t H, int32_t G, int32_t k, int reps) {
  KVCacheConfig cfg{1, G, k, P, 0, dtype};
  const size_t bytes = kv_cache_bytes(cfg);
  std::vector<unsigned char> mem(bytes + 64);
  Arena arena(mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64, bytes);
  KVCache cache;
  Status s = kv_cache_init(cfg, arena, &cache);
  if (!s.ok()) {
    std::fprintf(stderr, "kv cache: %s\n", s.message);
    std::exit(1);
  }
  Rng rng;
  std::vector<float> krow(size_t(G) * k), vrow(size_t(G) * k);
  for (int32_t p = 0; p < P; ++p) {
    for (auto& x : krow) x = rng.next();
    for (auto& x : vrow) x = rng.next();
    kv_cache_write(cache, 0, p, krow.data(), vrow.data());
  }
  std::vector<float> q(size_t(H) * k), out(size_t(H) * k);
  for (auto& x : q) x = rng.next();
  AttentionShape sh{H, G, k, attention_default_scale(k), 0, 0, true};
  std::vector<unsigned char> scratch(attention_scratch_bytes(sh, 1, dtype));
  const KVLayerView view = kv_cache_layer(cache, 0);
  const size_t kv_bytes = size_t(G) * P * k * dtype_size(dtype);
  // What the kernel reads: K and V values, plus the per-(slot, head) scales for int8.
  DecodeResult r;
  r.bytes = 2 * kv_bytes + (dtype == DType::i8 ? 2 * size_t(G) * P * sizeof(float) : 0);
  std::vector<double> ta, ts;
  uint32_t sink = 0;
  for (int rep = 0; rep < reps + 2; ++rep) {
    double t0 = now_s();
    s = attention_f32(sh, q.data(), krow.data(), vrow.data(), 1, P, &view, out.data(),
                      scratch.data(), scratch.size());
    double t1 = now_s();
    if (!s.ok()) {
      std::fprintf(stderr, "attention: %s\n", s.message);
      std::exit(1);
    }
    sink += stream_read(view.k, kv_bytes) + stream_read(view.v, kv_bytes);
    if (dtype == DType::i8) {
      sink += stream_read(view.k_scales, size_t(G) * P * 4) +
              stream_read(view.v_scales, size_t(G) * P * 4);
    }
    double t2 = now_s();
    if (rep >= 2) {  // first two: warm-up
      ta.push_back(t1 - t0);
      ts.push_back(t2 - t1);
    }
  }
  if (sink == 0x12345678u) std::printf(" ");
  r.attn_s = median(ta);
  r.stream_s = median(ts);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t positions = 4096, heads = 32, kv_heads = 8, head_dim = 128, prefill_len = 512,
          repetitions = 40;
  cli::Parser p(
      "einfer-attn-bench", "[options]",
      "Attention decode and prefill throughput (f32 and int8 KV) against a streaming read "
      "of the same bytes.");
  p.option({"--positions"}, &positions, "N", "cached positions attended over (default 4096)")
      .range(1, 1 << 24);
  p.option({"--heads"}, &heads, "H", "query heads (default 32)").range(1, 4096);
  p.option({"--kv-heads"}, &kv_heads, "G", "key/value heads; H must be a multiple (default 8)")
      .range(1, 4096);
  p.option({"--head-dim"}, &head_dim, "K", "head dimension (default 128)").range(1, 4096);
  p.option({"--prefill"}, &prefill_len, "N", "prefill chunk length (default 512)")
      .range(1, 1 << 20);
  p.option({"-r", "--reps"}, &repetitions, "R", "repetitions, the median is reported (default 40)")
      .range(1, 1 << 20);
  if (int code; !p.parse(argc, argv, &code)) return code;
  if (heads % kv_heads != 0) return p.fail("--heads must be a multiple of --kv-heads");
  const int32_t P = static_cast<int32_t>(positions), H = static_cast<int32_t>(heads),
                G = static_cast<int32_t>(kv_heads), k = static_cast<int32_t>(head_dim),
                prefill = static_cast<int32_t>(prefill_len),
                reps = static_cast<int32_t>(repetitions);
  std::printf(
      "einfer-attn-bench: SIMD %s; decode over %d positions, H=%d G=%d k=%d (median of %d)\n",
      simd_arch_name(), P, H, G, k, reps);
  const DecodeResult f = bench_decode(DType::f32, P, H, G, k, reps);
  const DecodeResult q = bench_decode(DType::i8, P, H, G, k, reps);
  for (auto [name, r] : {std::pair{"f32 ", f}, {"int8", q}}) {
    const double gbs = r.bytes / r.attn_s / 1e9, sgbs = r.bytes / r.stream_s / 1e9;
    std::printf(
        "decode %s KV: %8.3f ms, %6.2f GB/s K+V read; streaming read of the same %.1f MB: "
        "%6.2f GB/s; ratio %.2f\n",
        name, r.attn_s * 1e3, gbs, r.bytes / 1e6, sgbs, gbs / sgbs);
  }
  std::printf("decode int8 KV speedup over f32 KV: %.2fx\n", f.attn_s / q.attn_s);

  // Prefill: causal, no cache.
  const int32_t n = prefill;
  Rng rng;
  std::vector<float> qs(size_t(n) * H * k), ks(size_t(n) * G * k), vs(size_t(n) * G * k),
      out(size_t(n) * H * k);
  for (auto& x : qs) x = rng.next();
  for (auto& x : ks) x = rng.next();
  for (auto& x : vs) x = rng.next();
  AttentionShape sh{H, G, k, attention_default_scale(k), 0, 0, true};
  std::vector<unsigned char> scratch(attention_scratch_bytes(sh, n, DType::f32));
  std::vector<double> tp;
  const int prefill_reps = reps / 8 > 3 ? reps / 8 : 3;
  for (int rep = 0; rep < prefill_reps + 1; ++rep) {
    const double t0 = now_s();
    const Status s = attention_f32(sh, qs.data(), ks.data(), vs.data(), n, 0, nullptr, out.data(),
                                   scratch.data(), scratch.size());
    const double t1 = now_s();
    if (!s.ok()) {
      std::fprintf(stderr, "attention: %s\n", s.message);
      return 1;
    }
    if (rep > 0) tp.push_back(t1 - t0);
  }
  const double pairs = double(n) * (n + 1) / 2;
  const double flops = 4.0 * H * k * pairs;
  const double t = median(tp);
  std::printf("prefill %d tokens (causal): %8.3f ms, %6.2f GFLOP/s\n", n, t * 1e3, flops / t / 1e9);
  return 0;
}
