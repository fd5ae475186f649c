// Einsum executor (see einsum.h): runs a plan's stored layout (or, for an output strided unlike
// the plan's contiguous one, a layout derived for those strides) with the chosen kernel, or the
// generic loop nest (the reference) for everything else.
#include <cstring>

#include "kernels/einsum/einsum.h"
#include "kernels/einsum/einsum_internal.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/half/half.h"
#include "kernels/quant/quant.h"
#include "kernels/vec/vec.h"

namespace einfer {

using namespace einsum_internal;

namespace {

// ---- element access for the generic loop (any dtype) ----

struct Operand {
  const TensorView* v;
  int64_t k_last = 1;  // quantized: row length
  int64_t groups = 0;
  size_t row_bytes = 0;
};

float load_element(const Operand& op, int64_t off) {
  const TensorView& v = *op.v;
  switch (v.dtype) {
    case DType::f32:
      return static_cast<const float*>(v.data)[off];
    case DType::f16:
      return f16_to_f32(static_cast<const uint16_t*>(v.data)[off]);
    case DType::bf16:
      return bf16_to_f32(static_cast<const uint16_t*>(v.data)[off]);
    case DType::q8:
    case DType::q4: {
      const int64_t row = off / op.k_last, col = off % op.k_last;
      const unsigned char* q = static_cast<const unsigned char*>(v.data) + row * op.row_bytes;
      const float s = v.scales[row * op.groups + col / v.group_size];
      const int val = v.dtype == DType::q8
                          ? static_cast<int8_t>(q[col])
                          : ((col & 1) ? (q[col / 2] >> 4) : (q[col / 2] & 0x0F)) - 8;
      return static_cast<float>(val) * s;
    }
    default:
      return 0.f;
  }
}

// Odometer over dims: calls f(offsets) for every index; offsets[t] advance by the dims' strides.
template <int T, typename F>
void for_each_index(const int64_t* sizes, const int64_t (*strides)[T], int n, int64_t* base,
                    F&& f) {
  int64_t idx[kEinsumMaxLabels] = {};
  int64_t off[T];
  for (int t = 0; t < T; ++t) off[t] = base[t];
  for (int i = 0; i < n; ++i)
    if (sizes[i] == 0) return;
  for (;;) {
    f(off);
    int d = n - 1;
    for (; d >= 0; --d) {
      ++idx[d];
      for (int t = 0; t < T; ++t) off[t] += strides[d][t];
      if (idx[d] < sizes[d]) break;
      for (int t = 0; t < T; ++t) off[t] -= strides[d][t] * sizes[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

void run_generic(const EinsumPlan& p, const TensorView* inputs, const TensorView& out) {
  Operand ops[kEinsumMaxInputs];
  for (int t = 0; t < p.n_inputs; ++t) {
    ops[t].v = &inputs[t];
    if (dtype_is_quantized(inputs[t].dtype)) {
      ops[t].k_last = inputs[t].shape[inputs[t].rank - 1];
      ops[t].groups = quant_groups(ops[t].k_last, inputs[t].group_size);
      ops[t].row_bytes = quant_row_bytes(inputs[t].dtype, ops[t].k_last);
    }
  }
  int64_t fsize[kMaxRank], fstr[kMaxRank][3];
  int64_t ssize[kEinsumMaxLabels], sstr[kEinsumMaxLabels][3];
  int nf = 0, ns = 0;
  for (int ax = 0; ax < p.out_rank; ++ax)
    for (int i = 0; i < p.n_labels; ++i)
      if (p.labels[i].out_axis == ax) {
        fsize[nf] = p.labels[i].size;
        fstr[nf][0] = p.labels[i].stride[0];
        fstr[nf][1] = p.n_inputs > 1 ? p.labels[i].stride[1] : 0;
        fstr[nf][2] = out.strides[ax];
        ++nf;
      }
  for (int i = 0; i < p.n_labels; ++i)
    if (p.labels[i].out_axis < 0) {
      ssize[ns] = p.labels[i].size;
      sstr[ns][0] = p.labels[i].stride[0];
      sstr[ns][1] = p.n_inputs > 1 ? p.labels[i].stride[1] : 0;
      sstr[ns][2] = 0;
      ++ns;
    }
  float* o = out.f32();
  int64_t base[3] = {0, 0, 0};
  for_each_index<3>(fsize, fstr, nf, base, [&](const int64_t* off) {
    double acc = 0.0;
    int64_t sbase[3] = {off[0], off[1], 0};
    for_each_index<3>(ssize, sstr, ns, sbase, [&](const int64_t* so) {
      double v = load_element(ops[0], so[0]);
      if (p.n_inputs > 1) v *= load_element(ops[1], so[1]);
      acc += v;
    });
    o[off[2]] = static_cast<float>(acc);
  });
}

// ---- fast paths ----

void zero_output(const TensorView& out) {
  int64_t sizes[kMaxRank], str[kMaxRank][1];
  for (int i = 0; i < out.rank; ++i) {
    sizes[i] = out.shape[i];
    str[i][0] = out.strides[i];
  }
  int64_t base[1] = {0};
  float* o = out.f32();
  for_each_index<1>(sizes, str, out.rank, base, [&](const int64_t* off) { o[off[0]] = 0.f; });
}

// Runs `body(a_off, b_off, o_off, first)` over the outer loops; `first` is false once any summed
// outer index is non-zero (then kernels accumulate).
template <typename F>
void for_each_outer(const EinsumLayout& L, F&& body) {
  // An odometer over L.outer read in place. `summed` adds the summed dims' indices: zero exactly
  // on the first pass over them.
  const int n = L.n_outer;
  for (int i = 0; i < n; ++i)
    if (L.outer[i].size == 0) return;
  int64_t idx[kEinsumMaxLabels] = {};
  int64_t ao = 0, bo = 0, oo = 0, summed = 0;
  for (;;) {
    body(ao, bo, oo, summed == 0);
    int d = n - 1;
    for (; d >= 0; --d) {
      const EinsumDim& x = L.outer[d];
      ++idx[d];
      ao += x.sa;
      bo += x.sb;
      oo += x.so;
      summed += x.is_k ? 1 : 0;
      if (idx[d] < x.size) break;
      ao -= x.sa * x.size;
      bo -= x.sb * x.size;
      oo -= x.so * x.size;
      summed -= x.is_k ? x.size : 0;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// A GEMV's operands: matrix W[j, p] and vector v[p]; j is N (when M == 1) or M (when N == 1).
struct GemvOperands {
  const float* w;
  const float* v;
  int64_t w_j, w_p, v_s, nj, ys;
  bool supported() const { return w_p == 1 || w_j == 1; }  // what gemv_f32 takes
};

GemvOperands gemv_operands(const EinsumLayout& L, const float* pa, const float* pb) {
  const EinsumDim &M = L.m, &N = L.n, &K = L.k;
  const bool m_is_one = M.size == 1;
  return GemvOperands{m_is_one ? pb : pa,     m_is_one ? pa : pb,     m_is_one ? N.sb : M.sa,
                      m_is_one ? K.sb : K.sa, m_is_one ? K.sa : K.sb, m_is_one ? N.size : M.size,
                      m_is_one ? N.so : M.so};
}

// Output columns [j0, j1) of a single GEMM or GEMV (no outer loops; GEMV: rows of its matrix),
// with `slot` as this task's scratch. Every element is summed with the same tiles as the whole
// product would use, so a split never changes a result.
void gemm_columns(const EinsumLayout& L, const float* a, const float* b, float* o, int64_t j0,
                  int64_t j1, unsigned char* slot) {
  if (j1 <= j0) return;
  const float* x = L.swapped ? b : a;
  const float* y = L.swapped ? a : b;
  const EinsumDim &M = L.m, &N = L.n, &K = L.k;
  if (L.kind == EinsumKernel::gemv) {
    GemvOperands g = gemv_operands(L, x, y);
    if (g.v_s != 1) {
      float* packed = reinterpret_cast<float*>(slot);
      for (int64_t i = 0; i < K.size; ++i) packed[i] = g.v[i * g.v_s];
      g.v = packed;
    }
    gemv_f32(j1 - j0, K.size, g.w + j0 * g.w_j, g.w_j, g.w_p, g.v, o + j0 * g.ys, g.ys, false);
    return;
  }
  GemmF32Args g;
  g.m = M.size;
  g.n = j1 - j0;
  g.k = K.size;
  g.a = x;
  g.a_m = M.sa;
  g.a_k = K.sa;
  g.b = y + j0 * N.sb;
  g.b_k = K.sb;
  g.b_n = N.sb;
  g.c = o + j0 * N.so;
  g.c_m = M.so;
  g.c_n = N.so;
  gemm_f32(g, slot);
}

// Columns a single GEMM/GEMV of layout L can be cut into (0: it cannot be cut).
int64_t split_columns(const EinsumLayout& L, EinsumKernel kind, const float* a, const float* b) {
  const bool splittable =
      L.n_outer == 0 && ((kind == EinsumKernel::gemm && L.n_split.size <= 1) ||
                         (kind == EinsumKernel::gemv && gemv_operands(L, a, b).supported()));
  if (!splittable) return 0;
  return kind == EinsumKernel::gemv ? (L.m.size == 1 ? L.n.size : L.m.size) : L.n.size;
}

constexpr long long kColumnAlign = 16;  // a multiple of every microkernel's tile width

// The product cut into blocks of output columns, one per task, each with its own scratch slot.
void run_gemm_split(const EinsumLayout& L, const float* a, const float* b, float* o,
                    int64_t columns, unsigned char* scratch, size_t slot_bytes, int tasks,
                    const Threads* threads) {
  auto body = [&](int task) {
    long long j0 = 0, j1 = 0;
    split_range(columns, task, tasks, kColumnAlign, &j0, &j1);
    gemm_columns(L, a, b, o, j0, j1, scratch + static_cast<size_t>(task) * slot_bytes);
  };
  run_tasks(threads, tasks, body);
}

void run_gemm_family(const EinsumLayout& L, const float* a, const float* b, float* o,
                     void* scratch) {
  // After a swap, A and B are exchanged (every stride in the layout was swapped with them).
  const float* x = L.swapped ? b : a;
  const float* y = L.swapped ? a : b;
  const EinsumDim &M = L.m, &N = L.n, &K = L.k;
  float* aligned =
      reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch) + 63) & ~uintptr_t{63});
  for_each_outer(L, [&](int64_t ao, int64_t bo, int64_t oo, bool first) {
    const float* pa = x + ao;
    const float* pb = y + bo;
    float* pc = o + oo;
    const bool acc = !first;
    switch (L.kind) {
      case EinsumKernel::dot: {
        float s;
        if (K.sa == 1 && K.sb == 1) {
          s = dot_f32(pa, pb, static_cast<size_t>(K.size));
        } else {
          s = 0.f;
          for (int64_t i = 0; i < K.size; ++i) s += pa[i * K.sa] * pb[i * K.sb];
        }
        *pc = acc ? *pc + s : s;
        break;
      }
      case EinsumKernel::gemv: {
        GemvOperands g = gemv_operands(L, pa, pb);
        if (g.v_s != 1) {
          for (int64_t i = 0; i < K.size; ++i) aligned[i] = g.v[i * g.v_s];
          g.v = aligned;
        }
        if (g.supported()) gemv_f32(g.nj, K.size, g.w, g.w_j, g.w_p, g.v, pc, g.ys, acc);
        break;
      }
      default: {
        GemmF32Args g{.m = M.size,
                      .n = N.size,
                      .k = K.size,
                      .a = pa,
                      .a_m = M.sa,
                      .a_k = K.sa,
                      .b = pb,
                      .b_k = K.sb,
                      .b_n = N.sb,
                      .c = pc,
                      .c_m = M.so,
                      .c_n = N.so,
                      .accumulate = acc};
        if (L.n_split.size > 1) {
          g.n_inner = N.size;
          g.n = N.size * L.n_split.size;
          g.c_n_outer = L.n_split.so;
        }
        gemm_f32(g, aligned);
      }
    }
  });
}

void run_elementwise(const EinsumLayout& L, const float* a, const float* b, float* o) {
  const EinsumDim& I = L.k;
  for_each_outer(L, [&](int64_t ao, int64_t bo, int64_t oo, bool) {
    const float* pa = a + ao;
    const float* pb = b + bo;
    float* pc = o + oo;
    if (I.sa == 1 && I.sb == 1 && I.so == 1) {
      mul_f32(pa, pb, pc, static_cast<size_t>(I.size));
    } else {
      for (int64_t i = 0; i < I.size; ++i) pc[i * I.so] = pa[i * I.sa] * pb[i * I.sb];
    }
  });
}

void run_one_operand(const EinsumLayout& L, const float* a, const TensorView& out) {
  const EinsumDim& I = L.k;
  float* o = out.f32();
  if (L.kind == EinsumKernel::reduction) zero_output(out);
  const bool copy = L.kind == EinsumKernel::copy;
  for_each_outer(L, [&](int64_t ao, int64_t, int64_t oo, bool) {
    const float* pa = a + ao;
    float* pc = o + oo;
    if (I.is_k) {  // summed inner dim
      float s;
      if (I.sa == 1) {
        s = sum_f32(pa, static_cast<size_t>(I.size));
      } else {
        s = 0.f;
        for (int64_t i = 0; i < I.size; ++i) s += pa[i * I.sa];
      }
      *pc += s;
    } else if (copy) {
      for (int64_t i = 0; i < I.size; ++i) pc[i * I.so] = pa[i * I.sa];
    } else {
      for (int64_t i = 0; i < I.size; ++i) pc[i * I.so] += pa[i * I.sa];
    }
  });
}

// Flattened index -> offset over `ids` (outer to inner) in tensor t.
int64_t flat_offset(const EinsumPlan& p, const int* ids, int n, int64_t flat, int t,
                    const int64_t* out_strides) {
  int64_t off = 0;
  for (int i = n - 1; i >= 0; --i) {
    const EinsumLabel& l = p.labels[ids[i]];
    const int64_t idx = flat % l.size;
    flat /= l.size;
    off += idx * (t == 2 ? out_stride_of(l, out_strides) : l.stride[t]);
  }
  return off;
}

Status run_quant(const EinsumPlan& p, const EinsumLayout& L, const TensorView* inputs,
                 const TensorView& out, void* scratch, size_t scratch_bytes,
                 const Threads* threads) {
  // Rebuild the label groups in the orders derive_quant used.
  int mg[kMaxRank], kg[kMaxRank];
  int nm = 0, nk = 0;
  for (int ax = 0; ax < p.out_rank; ++ax)
    for (int i = 0; i < p.n_labels; ++i)
      if (p.labels[i].out_axis == ax && p.labels[i].in_input[0] && !p.labels[i].in_input[1])
        mg[nm++] = i;
  int ng[kMaxRank];
  int nn = 0;
  for (int ax = 0; ax < p.in_rank[1]; ++ax) {
    (ax < p.quant_k_axis0 ? ng[nn++] : kg[nk++]) = p.axis_label[1][ax];
  }
  const TensorView& wv = inputs[1];
  TensorView w2 = make_view(wv.dtype, wv.data, {L.nt, L.kt});
  w2.scales = wv.scales;
  w2.group_size = wv.group_size;
  w2.layout = wv.layout;

  // Packed A and C first; the kernel's scratch last, so the half-precision GEMM may take one slot
  // per task from the rest.
  unsigned char* s = static_cast<unsigned char*>(scratch);
  s = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(s) + 63) & ~uintptr_t{63});
  const float* a = inputs[0].f32();
  int64_t lda = L.m.sa;
  if (L.pack_a) {
    float* ap = reinterpret_cast<float*>(s);
    s += align64(static_cast<size_t>(L.mt * L.kt) * sizeof(float));
    for (int64_t r = 0; r < L.mt; ++r) {
      const int64_t ro = flat_offset(p, mg, nm, r, 0, nullptr);
      for (int64_t c = 0; c < L.kt; ++c)
        ap[r * L.kt + c] = a[ro + flat_offset(p, kg, nk, c, 0, nullptr)];
    }
    a = ap;
    lda = L.kt;
  }
  if (L.mt == 1) lda = L.kt;
  float* c = out.f32();
  int64_t ldc = L.mt == 1 ? L.nt : L.m.so;
  if (L.pack_c) {
    c = reinterpret_cast<float*>(s);
    ldc = L.nt;
    s += align64(static_cast<size_t>(L.mt * L.nt) * sizeof(float));
  }
  const size_t used = static_cast<size_t>(s - static_cast<unsigned char*>(scratch));
  const size_t rest = scratch_bytes > used ? scratch_bytes - used : 0;
  if (dtype_is_half(wv.dtype))
    EINFER_TRY(matmul_f32_half(a, lda, L.mt, w2, c, ldc, s, rest, threads));
  else
    EINFER_TRY(matmul_f32_quant(a, lda, L.mt, w2, c, ldc, s, rest, threads));
  if (L.pack_c) {
    float* o = out.f32();
    for (int64_t r = 0; r < L.mt; ++r) {
      const int64_t ro = flat_offset(p, mg, nm, r, 2, out.strides);
      for (int64_t j = 0; j < L.nt; ++j)
        o[ro + flat_offset(p, ng, nn, j, 2, out.strides)] = c[r * L.nt + j];
    }
  }
  return ok_status();
}

Status check_inputs(const EinsumPlan& p, const TensorView* inputs, int n_inputs) {
  if (n_inputs != p.n_inputs || inputs == nullptr) {
    return einsum_error(StatusCode::invalid_argument,
                        "einsum: number of operands does not match the plan", p.n_inputs, n_inputs);
  }
  for (int t = 0; t < n_inputs; ++t) {
    const TensorView& v = inputs[t];
    bool same = v.dtype == p.in_dtype[t] && v.rank == p.in_rank[t] && v.data != nullptr;
    for (int i = 0; same && i < v.rank; ++i)
      same =
          v.shape[i] == p.in_shape[t][i] && (v.shape[i] == 1 || v.strides[i] == p.in_strides[t][i]);
    if (dtype_is_quantized(v.dtype))
      same = same && v.group_size == p.in_group[t] &&
             (!kLayoutsBuilt || v.layout == p.in_layout[t]) &&
             (v.scales != nullptr || layout_interleaved(v.layout));
    if (!same) {
      return einsum_error(StatusCode::shape_mismatch,
                          "einsum: operand does not match the plan (dtype, shape or strides)", -1,
                          -1, t);
    }
  }
  return ok_status();
}

Status check_output(const EinsumPlan& p, const TensorView& out) {
  if (out.dtype != DType::f32) {
    return einsum_error(StatusCode::invalid_argument, "einsum: output must be f32");
  }
  if (out.rank != p.out_rank) {
    return einsum_error(StatusCode::shape_mismatch, "einsum: output rank does not match the plan",
                        p.out_rank, out.rank);
  }
  for (int i = 0; i < out.rank; ++i)
    if (out.shape[i] != p.out_shape[i]) {
      return einsum_error(StatusCode::shape_mismatch,
                          "einsum: output shape does not match the plan", p.out_shape[i],
                          out.shape[i], i);
    }
  if (out.data == nullptr && out.numel() > 0) {
    return einsum_error(StatusCode::invalid_argument, "einsum: output has no data");
  }
  return ok_status();
}

// True when `out` is laid out as the plan's stored layout assumes (contiguous; size-1 axes may
// have any stride, they are never stepped).
bool has_planned_strides(const EinsumPlan& p, const TensorView& out) {
  int64_t strides[kMaxRank];
  contiguous_strides(p, strides);
  for (int i = 0; i < p.out_rank; ++i)
    if (p.out_shape[i] != 1 && out.strides[i] != strides[i]) return false;
  return true;
}

// Runs `plan` with layout L (the stored one, or one derived for a strided output).
Status run_layout(const EinsumPlan& plan, const EinsumLayout& L, const TensorView* inputs,
                  int n_inputs, const TensorView& out, void* scratch, size_t scratch_bytes,
                  const Threads* threads) {
  const float* a = plan.in_dtype[0] == DType::f32 ? inputs[0].f32() : nullptr;
  const float* b = n_inputs > 1 && plan.in_dtype[1] == DType::f32 ? inputs[1].f32() : nullptr;
  EinsumKernel kind = L.kind;
  if (L.scratch > scratch_bytes) kind = EinsumKernel::generic;  // a strided output needs more
  const int64_t cols = split_columns(L, kind, a, b);
  if (cols > 0 && thread_count(threads) > 1) {
    // One scratch slot per task (64-byte aligned); as many tasks as slots and column blocks allow.
    const uintptr_t base = reinterpret_cast<uintptr_t>(scratch);
    const uintptr_t aligned = (base + 63) & ~uintptr_t{63};
    const size_t usable = scratch_bytes - (aligned - base);
    const size_t slot = (L.scratch + 63) & ~size_t{63};
    int64_t tasks = (cols + kColumnAlign - 1) / kColumnAlign;
    if (tasks > thread_count(threads)) tasks = thread_count(threads);
    if (slot > 0 && static_cast<int64_t>(usable / slot) < tasks)
      tasks = static_cast<int64_t>(usable / slot);
    if (tasks > 1) {
      run_gemm_split(L, a, b, out.f32(), cols, reinterpret_cast<unsigned char*>(aligned), slot,
                     static_cast<int>(tasks), threads);
      return ok_status();
    }
  }
  switch (kind) {
    case EinsumKernel::gemm:
    case EinsumKernel::gemv:
    case EinsumKernel::dot:
    case EinsumKernel::outer:
      run_gemm_family(L, a, b, out.f32(), scratch);
      return ok_status();
    case EinsumKernel::elementwise:
      run_elementwise(L, a, b, out.f32());
      return ok_status();
    case EinsumKernel::reduction:
    case EinsumKernel::copy:
      run_one_operand(L, a, out);
      return ok_status();
    case EinsumKernel::quant_matmul:
      return run_quant(plan, L, inputs, out, scratch, scratch_bytes, threads);
    case EinsumKernel::generic:
      break;
  }
  run_generic(plan, inputs, out);
  return ok_status();
}

// A strided output: derive the layout for its strides. Not inlined, so the second layout is on
// the stack only on this path.
__attribute__((noinline)) Status run_strided(const EinsumPlan& plan, const TensorView* inputs,
                                             int n_inputs, const TensorView& out, void* scratch,
                                             size_t scratch_bytes, const Threads* threads) {
  EinsumLayout L;
  derive_layout(plan, out.strides, &L);
  return run_layout(plan, L, inputs, n_inputs, out, scratch, scratch_bytes, threads);
}

}  // namespace

Status execute_einsum(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                      const TensorView& out, void* scratch, size_t scratch_bytes,
                      const Threads* threads) {
  EINFER_TRY(check_inputs(plan, inputs, n_inputs));
  EINFER_TRY(check_output(plan, out));
  if (scratch_bytes < plan.scratch_bytes || (plan.scratch_bytes > 0 && scratch == nullptr)) {
    return einsum_error(StatusCode::out_of_memory, "einsum: scratch too small",
                        static_cast<int64_t>(plan.scratch_bytes),
                        static_cast<int64_t>(scratch_bytes));
  }
  if (has_planned_strides(plan, out))
    return run_layout(plan, plan.layout, inputs, n_inputs, out, scratch, scratch_bytes, threads);
  return run_strided(plan, inputs, n_inputs, out, scratch, scratch_bytes, threads);
}

int64_t einsum_split_columns(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                             const TensorView& out) {
  if (plan.layout.kind == EinsumKernel::quant_matmul || !has_planned_strides(plan, out)) return 0;
  const float* a = plan.in_dtype[0] == DType::f32 ? inputs[0].f32() : nullptr;
  const float* b = n_inputs > 1 && plan.in_dtype[1] == DType::f32 ? inputs[1].f32() : nullptr;
  return split_columns(plan.layout, plan.layout.kind, a, b);
}

Status execute_einsum_columns(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                              const TensorView& out, int64_t j0, int64_t j1, void* slot,
                              size_t slot_bytes) {
  EINFER_TRY(check_inputs(plan, inputs, n_inputs));
  EINFER_TRY(check_output(plan, out));
  const int64_t columns = einsum_split_columns(plan, inputs, n_inputs, out);
  if (j0 < 0 || j1 > columns || j0 > j1 || (j0 % kColumnAlign != 0) ||
      (j1 % kColumnAlign != 0 && j1 != columns)) {
    return einsum_error(StatusCode::invalid_argument,
                        "einsum: column block outside the product or off the 16-column grid", j0,
                        j1);
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(slot);
  if ((base & 63) != 0 || slot_bytes < plan.layout.scratch ||
      (plan.layout.scratch > 0 && slot == nullptr)) {
    return einsum_error(StatusCode::out_of_memory, "einsum: column slot too small or unaligned",
                        static_cast<int64_t>(plan.layout.scratch),
                        static_cast<int64_t>(slot_bytes));
  }
  const float* a = plan.in_dtype[0] == DType::f32 ? inputs[0].f32() : nullptr;
  const float* b = n_inputs > 1 && plan.in_dtype[1] == DType::f32 ? inputs[1].f32() : nullptr;
  gemm_columns(plan.layout, a, b, out.f32(), j0, j1, static_cast<unsigned char*>(slot));
  return ok_status();
}

Status execute_einsum_reference(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                                const TensorView& out) {
  EINFER_TRY(check_inputs(plan, inputs, n_inputs));
  EINFER_TRY(check_output(plan, out));
  run_generic(plan, inputs, out);
  return ok_status();
}

}  // namespace einfer
