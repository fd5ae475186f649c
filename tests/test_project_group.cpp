// einfer-test: no-bare-metal (std::thread workers)
// The column-block forms the fused projection groups are built from (matmul_quant_rows/columns,
// execute_einsum_columns) give the whole product's bits for any cut, and project_group (q/k/v,
// gate/up) equals one linear() per projection, hooks covering every row and column exactly once,
// with and without workers. Also built into einfer_tsan_tests (the tsan preset).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/einsum/einsum.h"
#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/quant/quant.h"
#include "models/mha.h"
#include "tests/test_pool.h"
#include "tests/test_util.h"

using namespace einfer;
using einfer_test::Rng;

namespace {

// A weight [n, k] in f32, q8 or q4 (group 32), with the storage it points into.
struct Weight {
  std::vector<float> f;
  std::vector<uint8_t> q;
  std::vector<float> scales;
  TensorView view;
};

Weight make_weight(DType dt, int64_t n, int64_t k, Rng& rng) {
  Weight w;
  w.f.resize(static_cast<size_t>(n * k));
  for (float& x : w.f) x = rng.uniform();
  if (dt == DType::f32) {
    w.view = make_view(DType::f32, w.f.data(), {n, k});
    return w;
  }
  const size_t rb = quant_row_bytes(dt, k);
  const int64_t groups = quant_groups(k, 32);
  w.q.resize(rb * static_cast<size_t>(n));
  w.scales.resize(static_cast<size_t>(n * groups));
  for (int64_t j = 0; j < n; ++j) {
    if (dt == DType::q8) {
      quantize_row_q8(w.f.data() + j * k, k, 32, reinterpret_cast<int8_t*>(w.q.data() + j * rb),
                      w.scales.data() + j * groups);
    } else {
      quantize_row_q4(w.f.data() + j * k, k, 32, w.q.data() + j * rb, w.scales.data() + j * groups);
    }
  }
  w.view = make_view(dt, w.q.data(), {n, k});
  w.view.scales = w.scales.data();
  w.view.group_size = 32;
  return w;
}

// 64-byte aligned scratch.
struct Scratch {
  std::vector<unsigned char> mem;
  void* p;
  size_t bytes;
  explicit Scratch(size_t n) : mem(n + 64), bytes(n) {
    p = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Records the hooks' calls: rows seen, columns seen per projection.
struct Coverage {
  std::vector<float>* x;  // before_rows doubles the rows it is given (so a late call shows)
  int64_t d;
  std::vector<int> rows;
  std::vector<int> cols[kMaxGroupProjections];
  int count;
};

void double_rows(void* ctx, int64_t r0, int64_t r1) {
  Coverage& c = *static_cast<Coverage*>(ctx);
  for (int64_t i = r0; i < r1; ++i) {
    ++c.rows[static_cast<size_t>(i)];
    for (int64_t e = 0; e < c.d; ++e) (*c.x)[static_cast<size_t>(i * c.d + e)] *= 2.f;
  }
}

void count_columns(void* ctx, const int64_t* j0, const int64_t* j1) {
  Coverage& c = *static_cast<Coverage*>(ctx);
  for (int p = 0; p < c.count; ++p)
    for (int64_t j = j0[p]; j < j1[p]; ++j) ++c.cols[p][static_cast<size_t>(j)];
}

}  // namespace

TEST_CASE("matmul_quant_rows/columns: any 16-column cut gives matmul_f32_quant's bits") {
  Rng rng{11};
  for (DType dt : {DType::q8, DType::q4}) {
    CAPTURE(dtype_name(dt));
    const int64_t m = 5, n = 83, k = 96;
    const Weight w = make_weight(dt, n, k, rng);
    std::vector<float> a(static_cast<size_t>(m * k));
    for (float& x : a) x = rng.uniform();
    Scratch s(matmul_quant_scratch_bytes(m, k, 32));
    std::vector<float> whole(static_cast<size_t>(m * n)), parts(whole.size(), -1.f);
    REQUIRE(matmul_f32_quant(a.data(), k, m, w.view, whole.data(), n, s.p, s.bytes).ok());
    REQUIRE(matmul_quant_rows(a.data(), k, m, w.view, 0, 2, s.p, s.bytes).ok());
    REQUIRE(matmul_quant_rows(a.data(), k, m, w.view, 2, m, s.p, s.bytes).ok());
    const int64_t cuts[] = {0, 16, 48, 64, n};
    for (int b = 0; b + 1 < 5; ++b) {
      REQUIRE(matmul_quant_columns(m, w.view, parts.data(), n, cuts[b], cuts[b + 1], s.p, s.bytes)
                  .ok());
    }
    CHECK(same_bits(whole, parts));
    // Off the 16-column grid, past the end, rows outside A, scratch too small: refused.
    CHECK(matmul_quant_columns(m, w.view, parts.data(), n, 8, 32, s.p, s.bytes).code ==
          StatusCode::invalid_argument);
    CHECK(matmul_quant_columns(m, w.view, parts.data(), n, 64, n + 1, s.p, s.bytes).code ==
          StatusCode::invalid_argument);
    CHECK(matmul_quant_rows(a.data(), k, m, w.view, 3, m + 1, s.p, s.bytes).code ==
          StatusCode::invalid_argument);
    CHECK(matmul_quant_rows(a.data(), k, m, w.view, 0, m, s.p, 64).code ==
          StatusCode::out_of_memory);
  }
}

TEST_CASE("execute_einsum_columns: GEMM and GEMV blocks give the whole product's bits") {
  Rng rng{5};
  const int64_t e = 70, d = 40;
  const Weight w = make_weight(DType::f32, e, d, rng);
  for (int64_t n : {1, 7}) {
    CAPTURE(n);
    std::vector<float> x(static_cast<size_t>(n * d));
    for (float& v : x) v = rng.uniform();
    const TensorView in[2] = {make_view(DType::f32, x.data(), {n, d}), w.view};
    EinsumPlan p;
    REQUIRE(plan<"nd,ed->ne">(in[0], in[1], &p).ok());
    std::vector<float> whole(static_cast<size_t>(n * e)), parts(whole.size(), -1.f);
    Scratch s(p.scratch_bytes + 64);
    REQUIRE(
        execute_einsum(p, in, 2, make_view(DType::f32, whole.data(), {n, e}), s.p, s.bytes).ok());
    const TensorView out = make_view(DType::f32, parts.data(), {n, e});
    REQUIRE(einsum_split_columns(p, in, 2, out) == e);
    for (int64_t j0 : {0, 32, 48}) {
      const int64_t j1 = j0 == 0 ? 32 : (j0 == 32 ? 48 : e);
      REQUIRE(execute_einsum_columns(p, in, 2, out, j0, j1, s.p, s.bytes).ok());
    }
    CHECK(same_bits(whole, parts));
    CHECK(execute_einsum_columns(p, in, 2, out, 4, 32, s.p, s.bytes).code ==
          StatusCode::invalid_argument);
  }
}

TEST_CASE("project_group: one linear() per projection, hooks cover every row and column once") {
  Rng rng{3};
  const int64_t d = 64;
  const int64_t widths[3] = {96, 48, 48};  // q, k, v with grouped keys/values
  for (DType dt : {DType::f32, DType::q8, DType::q4}) {
    for (int64_t n : {1, 9}) {
      for (int workers : {1, 2, 3}) {
        CAPTURE(dtype_name(dt));
        CAPTURE(n);
        CAPTURE(workers);
        Weight w[3] = {make_weight(dt, widths[0], d, rng), make_weight(dt, widths[1], d, rng),
                       make_weight(dt, widths[2], d, rng)};
        std::vector<float> bias(static_cast<size_t>(widths[0]));
        for (float& b : bias) b = rng.uniform();
        const TensorView bias_view = make_view(DType::f32, bias.data(), {widths[0]});
        std::vector<float> src(static_cast<size_t>(n * d)), x(src.size());
        for (float& v : src) v = rng.uniform();

        // Expected: x doubled, then one linear() each (bias on the first).
        std::vector<float> doubled(src);
        for (float& v : doubled) v *= 2.f;
        size_t need = 0;
        for (const Weight& wi : w) {
          size_t b = 0;
          REQUIRE(linear_scratch_bytes(n, wi.view, &b).ok());
          need = b > need ? b : need;
        }
        const size_t slot = (need + 63) / 64 * 64;
        Scratch s(slot * 3 + 64);
        std::vector<float> expect[3], got[3];
        for (int p = 0; p < 3; ++p) {
          expect[p].assign(static_cast<size_t>(n * widths[p]), 0.f);
          got[p].assign(expect[p].size(), -1.f);
          REQUIRE(linear(doubled.data(), n, w[p].view, p == 0 ? bias_view : TensorView{},
                         expect[p].data(), s.p, s.bytes)
                      .ok());
        }

        einfer_test::TestPool pool(workers);
        const einfer_threads threads =
            workers > 1 ? pool.threads() : einfer_threads{nullptr, 1, nullptr};
        LinearPlan plans[3];
        x = src;
        Coverage cov{&x, d, std::vector<int>(static_cast<size_t>(n)), {}, 3};
        for (int p = 0; p < 3; ++p) cov.cols[p].assign(static_cast<size_t>(widths[p]), 0);
        ProjectionHooks hooks;
        hooks.before_rows = double_rows;
        hooks.after_columns = count_columns;
        hooks.ctx = &cov;
        hooks.align = 32;
        const Projection group[3] = {{&w[0].view, &bias_view, got[0].data(), &plans[0]},
                                     {&w[1].view, nullptr, got[1].data(), &plans[1]},
                                     {&w[2].view, nullptr, got[2].data(), &plans[2]}};
        const Status st = project_group(x.data(), n, group, 3, hooks, s.p, s.bytes, &threads);
        REQUIRE_MESSAGE(st.ok(), st.message);
        for (int p = 0; p < 3; ++p) CHECK(same_bits(expect[p], got[p]));
        for (int r : cov.rows) CHECK(r == 1);
        for (int p = 0; p < 3; ++p)
          for (int c : cov.cols[p]) CHECK(c == 1);
        if (workers > 1) CHECK(pool.remote_tasks() > 0);
      }
    }
  }
  // Refused: no projections, an align off the 16 grid, inputs of different widths.
  Rng r2{9};
  const Weight a = make_weight(DType::f32, 16, 32, r2), b = make_weight(DType::f32, 16, 48, r2);
  std::vector<float> x(48), y(16), z(16);
  Scratch s(4096);
  ProjectionHooks bad;
  bad.align = 8;
  const Projection one{&a.view, nullptr, y.data(), nullptr};
  CHECK(project_group(x.data(), 1, &one, 0, ProjectionHooks{}, s.p, s.bytes, nullptr).code ==
        StatusCode::invalid_argument);
  CHECK(project_group(x.data(), 1, &one, 1, bad, s.p, s.bytes, nullptr).code ==
        StatusCode::invalid_argument);
  const Projection two[2] = {{&a.view, nullptr, y.data(), nullptr},
                             {&b.view, nullptr, z.data(), nullptr}};
  CHECK(project_group(x.data(), 1, two, 2, ProjectionHooks{}, s.p, s.bytes, nullptr).code ==
        StatusCode::shape_mismatch);
}

TEST_CASE(
    "mha_forward: the head-parted prefill (q/k/v biases, RoPE, grouped heads) gives one "
    "thread's bits") {
  // 6 query heads on 2 kv heads of 16: on 2 workers each task projects, ropes and attends its own
  // kv head and 3 query heads (models/mha_parts.h), biases added to its slice of every projection.
  const int32_t d = 96, heads = 6, kv_heads = 2, head_dim = 16, n = 40;
  std::vector<unsigned char> rope_mem(rope_table_bytes(head_dim, n));
  RopeTable rope;
  REQUIRE(rope_table_init(&rope, rope_mem.data(), rope_mem.size(), head_dim, n, 10000.f).ok());
  for (DType dt : {DType::q8, DType::q4}) {
    CAPTURE(dtype_name(dt));
    Rng rng{0x5eed5eedULL};
    Weight wq = make_weight(dt, heads * head_dim, d, rng),
           wk = make_weight(dt, kv_heads * 16, d, rng), wv = make_weight(dt, kv_heads * 16, d, rng),
           wo = make_weight(dt, d, heads * 16, rng);
    std::vector<float> bq(heads * 16), bk(kv_heads * 16), bv(kv_heads * 16), x(n * d);
    for (std::vector<float>* v : {&bq, &bk, &bv, &x})
      for (float& f : *v) f = rng.uniform();
    MhaWeights w;
    w.wq = wq.view;
    w.wk = wk.view;
    w.wv = wv.view;
    w.wo = wo.view;
    w.bq = make_view(DType::f32, bq.data(), {heads * 16});
    w.bk = make_view(DType::f32, bk.data(), {kv_heads * 16});
    w.bv = make_view(DType::f32, bv.data(), {kv_heads * 16});
    MhaConfig c;
    c.dim = d;
    c.n_heads = heads;
    c.n_kv_heads = kv_heads;
    c.head_dim = head_dim;
    c.rope = &rope;
    size_t bytes = 0;
    REQUIRE(mha_scratch_bytes(c, w, n, &bytes).ok());
    // Room for the parted form: the quantized rows and a page-aligned attention slot per task.
    Scratch s(bytes + 64 * 1024);
    auto run = [&](const Threads* threads) {
      std::vector<float> q(n * d), k(n * d), v(n * d), att(n * d), out(n * d);
      c.threads = threads;
      const MhaBuffers b{q.data(), k.data(), v.data(), att.data(), s.p, s.bytes};
      REQUIRE(mha_forward(w, c, x.data(), n, 0, nullptr, 0, b, out.data()).ok());
      return std::pair{att, out};
    };
    const auto one = run(nullptr);
    einfer_test::TestPool pool(2);
    const einfer_threads two_workers = pool.threads();
    const auto two = run(&two_workers);
    CHECK(same_bits(one.first, two.first));
    CHECK(same_bits(one.second, two.second));
    CHECK(pool.remote_tasks() > 0);
    // The biases count: without them the attention output changes.
    w.bq = w.bk = w.bv = TensorView{};
    CHECK_FALSE(same_bits(run(nullptr).first, one.first));
  }
}
