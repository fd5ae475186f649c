// Einsum planner (see einsum.h): binds labels to sizes and strides, then chooses the kernel and
// its layout (which labels become the GEMM's M, N, K and which are looped outside) once, for a
// contiguous output, and stores both in the plan. einsum_execute.cpp runs the stored layout.
#include <cstring>

#include "kernels/einsum/einsum.h"
#include "kernels/einsum/einsum_internal.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/half/half.h"

namespace einfer {

using namespace einsum_internal;

namespace {

constexpr int kLetterIds = 52;

int label_id(char c) {
  return c >= 'a' ? c - 'a' : 26 + (c - 'A');
}

// Labels of a group (indices into plan.labels).
struct Group {
  int n = 0;
  int id[kEinsumMaxLabels];
  int64_t total = 1;
  void add(int i, int64_t size) {
    id[n++] = i;
    total *= size;
  }
};

int64_t out_stride_of(const EinsumLabel& l, const int64_t* out_strides) {
  return l.out_axis >= 0 ? out_strides[l.out_axis] : 0;
}

EinsumDim dim_of(const EinsumPlan& p, int i, const int64_t* out_strides) {
  const EinsumLabel& l = p.labels[i];
  EinsumDim d;
  d.size = l.size;
  d.sa = l.stride[0];
  d.sb = p.n_inputs > 1 ? l.stride[1] : 0;
  d.so = out_stride_of(l, out_strides);
  d.is_k = l.out_axis < 0;
  return d;
}

// Merges dims of one group that are adjacent in memory in every tensor (stride chains), after
// sorting by descending stride in `key` (0: A, 1: B, 2: out). Returns the new count.
int merge_dims(EinsumDim* d, int n, int key) {
  auto stride = [key](const EinsumDim& x) { return key == 0 ? x.sa : key == 1 ? x.sb : x.so; };
  for (int i = 1; i < n; ++i)  // insertion sort, n is tiny
    for (int j = i; j > 0 && stride(d[j - 1]) < stride(d[j]); --j) {
      const EinsumDim t = d[j];
      d[j] = d[j - 1];
      d[j - 1] = t;
    }
  int out = 0;
  for (int i = 0; i < n; ++i) {
    if (out > 0) {
      EinsumDim& o = d[out - 1];
      const EinsumDim& x = d[i];
      if (o.sa == x.sa * x.size && o.sb == x.sb * x.size && o.so == x.so * x.size) {
        o.size *= x.size;
        o.sa = x.sa;
        o.sb = x.sb;
        o.so = x.so;
        continue;
      }
    }
    d[out++] = d[i];
  }
  return out;
}

// Picks the index of the best dim: unit stride in `pref` first, then the largest.
int pick_dim(const EinsumDim* d, int n, int pref) {
  int best = 0;
  auto score = [pref](const EinsumDim& x) {
    const int64_t s = pref == 0 ? x.sa : pref == 1 ? x.sb : x.so;
    return (s == 1 ? (int64_t{1} << 40) : 0) + x.size;
  };
  for (int i = 1; i < n; ++i)
    if (score(d[i]) > score(d[best])) best = i;
  return best;
}

// True when `ids` (outer to inner) form one stride chain in tensor `t` (0: A, 1: B, 2: out);
// *inner gets the innermost stride.
bool chain(const EinsumPlan& p, const int* ids, int n, int t, const int64_t* out_strides,
           int64_t* inner) {
  auto stride = [&](int i) {
    return t == 2 ? out_stride_of(p.labels[i], out_strides) : p.labels[i].stride[t];
  };
  *inner = n > 0 ? stride(ids[n - 1]) : 0;
  for (int i = 0; i + 1 < n; ++i)
    if (stride(ids[i]) != stride(ids[i + 1]) * p.labels[ids[i + 1]].size) return false;
  return true;
}

bool is_f32_input(const EinsumPlan& p, int t) {
  return p.in_dtype[t] == DType::f32;
}

Status derive_quant(const EinsumPlan& p, const int64_t* out_strides, EinsumLayout* L) {
  L->kind = EinsumKernel::generic;
  if (!is_f32_input(p, 0)) return ok_status();
  Group mg, ng, kg;
  // N and K in the quantized operand's axis order; M in the output's axis order.
  for (int ax = 0; ax < p.in_rank[1]; ++ax) {
    const int i = p.axis_label[1][ax];
    const EinsumLabel& l = p.labels[i];
    if (ax < p.quant_k_axis0) {
      if (l.in_input[0]) return ok_status();  // batch label: generic
      ng.add(i, l.size);
    } else {
      kg.add(i, l.size);
    }
  }
  int out_order[kMaxRank];
  int n_out = 0;
  for (int ax = 0; ax < p.out_rank; ++ax)
    for (int i = 0; i < p.n_labels; ++i)
      if (p.labels[i].out_axis == ax && p.labels[i].in_input[0] && !p.labels[i].in_input[1])
        out_order[n_out++] = i;
  for (int i = 0; i < n_out; ++i) mg.add(out_order[i], p.labels[out_order[i]].size);
  for (int i = 0; i < p.n_labels; ++i) {
    const EinsumLabel& l = p.labels[i];
    if (l.in_input[0] && !l.in_input[1] && l.out_axis < 0) return ok_status();  // A-only sum
  }
  int64_t sa_m = 0, sa_k = 0, so_m = 0, so_n = 0;
  const bool a_m_ok = chain(p, mg.id, mg.n, 0, out_strides, &sa_m);
  const bool a_k_ok = chain(p, kg.id, kg.n, 0, out_strides, &sa_k) && (kg.n == 0 || sa_k == 1);
  const bool o_m_ok = chain(p, mg.id, mg.n, 2, out_strides, &so_m);
  const bool o_n_ok = chain(p, ng.id, ng.n, 2, out_strides, &so_n) && (ng.n == 0 || so_n == 1);
  L->kind = EinsumKernel::quant_matmul;
  L->mt = mg.total;
  L->nt = ng.total;
  L->kt = kg.total;
  L->pack_a = !(a_m_ok && a_k_ok) || (mg.total > 1 && sa_m == 0);
  L->pack_c = !(o_m_ok && o_n_ok) || (mg.total > 1 && so_m == 0);
  L->m.sa = mg.n ? sa_m : 0;
  L->m.so = mg.n ? so_m : 0;
  L->scratch = align64(dtype_is_half(p.in_dtype[1])
                           ? matmul_half_scratch_bytes(L->mt, L->nt, L->kt)
                           : matmul_quant_scratch_bytes(L->mt, L->kt, p.in_group[1])) +
               64;
  if (L->pack_a) L->scratch += align64(static_cast<size_t>(L->mt * L->kt) * sizeof(float));
  if (L->pack_c) L->scratch += align64(static_cast<size_t>(L->mt * L->nt) * sizeof(float));
  return ok_status();
}

}  // namespace

namespace einsum_internal {

// Derives the kernel and its loops for the given output strides. Works in place in L->outer (no
// per-group arrays on the stack): the groups are laid out there as ranges [batch | N | M | K] (N
// and M after the operand swap), merged within their ranges, and what is not picked as the kernel's
// M, N, K is compacted to the front as the outer loops, in that order.
// L must be default-initialized (assigning a fresh EinsumLayout would put a second one on the
// stack).
void derive_layout(const EinsumPlan& p, const int64_t* out_strides, EinsumLayout* L) {
  for (int i = 0; i < p.n_labels; ++i)
    if (p.labels[i].size == 0) return;  // empty tensors: the generic loop handles them
  for (int t = 0; t < p.n_inputs; ++t) {
    if (dtype_is_quantized(p.in_dtype[t]) ||
        (dtype_is_half(p.in_dtype[t]) && p.quant_k_axis0 >= 0)) {
      derive_quant(p, out_strides, L);
      return;
    }
    if (!is_f32_input(p, t)) return;  // f16/bf16 not in weight position: generic (widens on load)
  }

  // Group of label i: 0 batch, 1 M (A and out), 2 N (B and out), 3 K (contracted); one operand:
  // 1 kept, 3 summed. -1: size 1 (dropped); -2: summed within one operand.
  auto group_of = [&p](int i) {
    const EinsumLabel& l = p.labels[i];
    if (l.size == 1) return -1;
    const bool a = l.in_input[0], b = p.n_inputs > 1 && l.in_input[1], o = l.out_axis >= 0;
    if (p.n_inputs == 1) return o ? 1 : 3;
    if (a && b) return o ? 0 : 3;
    if (a && o) return 1;
    if (b && o) return 2;
    return -2;
  };
  int count[4] = {0, 0, 0, 0};
  int64_t total[4] = {1, 1, 1, 1};
  bool unit[4] = {false, false, false, false};  // output unit stride in the group
  for (int i = 0; i < p.n_labels; ++i) {
    const int g = group_of(i);
    if (g == -2) return;  // a label summed within one operand: generic
    if (g < 0) continue;
    ++count[g];
    total[g] *= p.labels[i].size;
    unit[g] |= out_stride_of(p.labels[i], out_strides) == 1;
  }
  int nb = count[0], nm = count[1], nn = count[2], nk = count[3];
  EinsumDim* d = L->outer;

  if (p.n_inputs == 1) {
    // Copy / reduction: one loop nest, innermost = the dim with unit input stride.
    int n = 0;
    for (int g : {1, 3})
      for (int i = 0; i < p.n_labels; ++i)
        if (group_of(i) == g) d[n++] = dim_of(p, i, out_strides);
    L->kind = nk > 0 ? EinsumKernel::reduction : EinsumKernel::copy;
    if (n == 0) {
      L->k = EinsumDim{};
      return;
    }
    const int inner = pick_dim(d, n, 0);
    L->k = d[inner];
    for (int i = 0; i < n; ++i)
      if (i != inner) d[L->n_outer++] = d[i];
    return;
  }

  if (nm == 0 && nn == 0 && nk == 0) {
    L->kind = EinsumKernel::elementwise;
    if (nb == 0) {
      L->k = EinsumDim{};
      return;
    }
    for (int i = 0, n = 0; i < p.n_labels; ++i)
      if (group_of(i) == 0) d[n++] = dim_of(p, i, out_strides);
    const int inner = pick_dim(d, nb, 2);
    L->k = d[inner];
    for (int i = 0; i < nb; ++i)
      if (i != inner) d[L->n_outer++] = d[i];
    return;
  }

  // Put the output's unit stride on N: swap operands when it sits in M.
  L->swapped = (unit[1] && !unit[2]) || (nn == 0 && nm > 0);
  const int m_group = L->swapped ? 2 : 1, n_group = L->swapped ? 1 : 2;
  if (L->swapped) {
    const int t = nm;
    nm = nn;
    nn = t;
  }
  const int64_t mt = total[m_group], nt = total[n_group], kt = total[3];
  EinsumDim* batch = d;
  EinsumDim* ng = batch + nb;
  EinsumDim* mg = ng + nn;
  EinsumDim* kg = mg + nm;
  {
    int fill[4] = {0, 0, 0, 0};
    EinsumDim* base[4] = {batch, nullptr, nullptr, kg};
    base[m_group] = mg;
    base[n_group] = ng;
    for (int i = 0; i < p.n_labels; ++i) {
      const int g = group_of(i);
      if (g < 0) continue;
      EinsumDim x = dim_of(p, i, out_strides);
      if (L->swapped) {
        const int64_t t = x.sa;
        x.sa = x.sb;
        x.sb = t;
      }
      base[g][fill[g]++] = x;
    }
  }
  nm = merge_dims(mg, nm, 2);
  nn = merge_dims(ng, nn, 2);
  nk = merge_dims(kg, nk, 0);
  // Moves the picked dim into `into` and the others to the outer loops (writes never pass reads:
  // the ranges sit in output order and only shrink).
  auto take = [L](EinsumDim* g, int n, int pick, EinsumDim* into) {
    if (n == 0) {
      *into = EinsumDim{};
      return;
    }
    *into = g[pick];
    for (int i = 0; i < n; ++i)
      if (i != pick) L->outer[L->n_outer++] = g[i];
  };
  L->n_outer = nb;  // batch dims are in place already
  const int np = nn > 0 ? pick_dim(ng, nn, 2) : 0;
  // A second N dim that continues n in B but not in the output (heads written head-major): fold it
  // into the GEMM's N with split output columns instead of looping GEMMs that repack A each time.
  int nsplit = -1;
  if (nn >= 2 && nm > 0 && ng[np].so == 1 && ng[np].size % 16 == 0) {
    for (int i = 0; i < nn; ++i)
      if (i != np && ng[i].sb == ng[np].sb * ng[np].size) nsplit = i;
  }
  if (nsplit >= 0) {
    L->n_split = ng[nsplit];
    const EinsumDim chosen = ng[np];
    ng[nsplit] = ng[--nn];  // drop the folded dim, then find the chosen one again
    for (int i = 0; i < nn; ++i)
      if (std::memcmp(&ng[i], &chosen, sizeof(EinsumDim)) == 0) {
        take(ng, nn, i, &L->n);
        break;
      }
  } else {
    take(ng, nn, np, &L->n);
  }
  take(mg, nm, pick_dim(mg, nm, 0), &L->m);
  // K: prefer unit stride in A (then B), then size.
  int kp = 0;
  if (nk > 0) {
    kp = pick_dim(kg, nk, 0);
    if (kg[kp].sa != 1) kp = pick_dim(kg, nk, 1);
  }
  take(kg, nk, kp, &L->k);

  const int64_t M = L->m.size, N = L->n.size * L->n_split.size, K = L->k.size;
  if (M == 1 && N == 1) {
    L->kind = EinsumKernel::dot;
    L->scratch = 0;
  } else if ((M == 1 && (L->n.sb == 1 || L->k.sb == 1)) ||
             (N == 1 && (L->m.sa == 1 || L->k.sa == 1))) {
    L->kind = EinsumKernel::gemv;
    L->scratch = align64(static_cast<size_t>(K) * sizeof(float)) + 64;  // strided vector packing
  } else {
    L->kind = K == 1 ? EinsumKernel::outer : EinsumKernel::gemm;
    // Both orientations from group totals, so the bound holds for any output strides.
    const size_t s1 = gemm_f32_scratch_bytes(mt, nt, kt), s2 = gemm_f32_scratch_bytes(nt, mt, kt);
    L->scratch = (s1 > s2 ? s1 : s2) + 64;
  }
}

}  // namespace einsum_internal

namespace {

// *p = EinsumPlan{} field by field: the assignment would build a temporary plan on the stack.
void reset_plan(EinsumPlan* p) {
  std::memset(static_cast<void*>(p), 0, sizeof *p);
  p->kind = EinsumKernel::generic;
  for (EinsumLabel& l : p->labels) {
    l.size = 1;
    l.out_axis = -1;
  }
  p->quant_k_axis0 = -1;
  EinsumLayout& L = p->layout;  // EinsumLayout{} field by field, as above
  for (EinsumDim& d : L.outer) d.size = 1;
  L.m.size = L.n.size = L.k.size = L.n_split.size = 1;
  L.mt = L.nt = L.kt = 1;
}

// The kernel, its layout and scratch for a contiguous output, stored in the plan. Not inlined into
// plan_einsum, so the binder's tables are not on the stack while the layout is derived.
__attribute__((noinline)) void choose_kernel(EinsumPlan* p) {
  int64_t strides[kMaxRank];
  contiguous_strides(*p, strides);
  derive_layout(*p, strides, &p->layout);
  p->kind = p->layout.kind;
  p->scratch_bytes = p->layout.scratch;
  if (p->kind != EinsumKernel::generic) return;
  p->generic_reason = EinsumGenericReason::no_fast_kernel;
  for (int i = 0; i < p->n_labels; ++i)
    if (p->labels[i].size == 0) p->generic_reason = EinsumGenericReason::empty;
  if (p->generic_reason == EinsumGenericReason::empty) return;
  for (int t = 0; t < p->n_inputs; ++t)
    if (dtype_is_half(p->in_dtype[t])) p->generic_reason = EinsumGenericReason::f16_operand;
}

}  // namespace

Status plan_einsum(const char* spec, const TensorView* inputs, int n_inputs, EinsumPlan* plan) {
  EinsumSpec s;
  EINFER_TRY(parse_einsum(spec, &s));
  return plan_einsum(s, inputs, n_inputs, plan);
}

Status plan_einsum(const EinsumSpec& spec, const TensorView* inputs, int n_inputs,
                   EinsumPlan* plan) {
  if (plan == nullptr) return einsum_error(StatusCode::invalid_argument, "einsum: plan is null");
  reset_plan(plan);
  EINFER_TRY(spec.status);
  if (n_inputs != spec.n_inputs || inputs == nullptr) {
    return einsum_error(StatusCode::invalid_argument,
                        "einsum: number of operands does not match the spec", spec.n_inputs,
                        n_inputs);
  }
  EinsumPlan& p = *plan;
  p.n_inputs = n_inputs;

  // Ellipsis widths.
  int ell[kEinsumMaxInputs] = {};
  int ell_max = 0;
  for (int t = 0; t < n_inputs; ++t) {
    const TensorView& v = inputs[t];
    const EinsumTerm& term = spec.in[t];
    if (v.rank < 0 || v.rank > kMaxRank) {
      return einsum_error(StatusCode::invalid_argument, "einsum: operand rank out of range",
                          kMaxRank, v.rank, t);
    }
    if (v.dtype != DType::f32 && !dtype_is_half(v.dtype) && !dtype_is_quantized(v.dtype)) {
      return einsum_error(StatusCode::unsupported,
                          "einsum: operand dtype must be f32, f16, bf16, q8 or q4", -1, -1, t);
    }
    if (term.ellipsis >= 0) {
      ell[t] = v.rank - term.n;
      if (ell[t] < 0) {
        return einsum_error(StatusCode::shape_mismatch,
                            "einsum: operand has fewer dimensions than its labels", term.n, v.rank,
                            t);
      }
    } else if (v.rank != term.n) {
      return einsum_error(StatusCode::shape_mismatch,
                          "einsum: operand rank does not match its labels", term.n, v.rank, t);
    }
    if (ell[t] > ell_max) ell_max = ell[t];
    p.in_dtype[t] = v.dtype;
    p.in_rank[t] = v.rank;
    p.in_group[t] = v.group_size;
    if constexpr (kLayoutsBuilt) p.in_layout[t] = v.layout;
    for (int i = 0; i < v.rank; ++i) {
      p.in_shape[t][i] = v.shape[i];
      p.in_strides[t][i] = v.strides[i];
    }
  }

  // Bind sizes: ids 0..51 letters, 52.. ellipsis dims (right-aligned across operands).
  int64_t size[kLetterIds + kMaxRank];
  bool seen[kLetterIds + kMaxRank] = {};
  auto axis_label = [&](int t, int ax) -> int {
    const EinsumTerm& term = spec.in[t];
    if (term.ellipsis < 0 || ax < term.ellipsis) return label_id(term.labels[ax]);
    if (ax < term.ellipsis + ell[t]) return kLetterIds + (ell_max - ell[t]) + (ax - term.ellipsis);
    return label_id(term.labels[ax - ell[t]]);
  };
  for (int t = 0; t < n_inputs; ++t) {
    for (int ax = 0; ax < inputs[t].rank; ++ax) {
      const int id = axis_label(t, ax);
      const int64_t n = inputs[t].shape[ax];
      if (!seen[id]) {
        seen[id] = true;
        size[id] = n;
      } else if (size[id] != n) {
        if (id >= kLetterIds && (size[id] == 1 || n == 1)) {
          if (size[id] == 1) size[id] = n;
        } else {
          return einsum_error(StatusCode::shape_mismatch,
                              id < kLetterIds ? "einsum: a label is bound to two different sizes"
                                              : "einsum: '...' dimensions do not broadcast",
                              size[id], n, t);
        }
      }
    }
  }
  // Compact label table.
  int8_t slot[kLetterIds + kMaxRank];
  for (int id = 0; id < kLetterIds + kMaxRank; ++id) {
    slot[id] = -1;
    if (!seen[id]) continue;
    slot[id] = static_cast<int8_t>(p.n_labels);
    p.labels[p.n_labels++].size = size[id];
  }
  for (int t = 0; t < n_inputs; ++t)
    for (int ax = 0; ax < inputs[t].rank; ++ax) {
      p.axis_label[t][ax] = static_cast<int8_t>(slot[axis_label(t, ax)]);
      EinsumLabel& l = p.labels[slot[axis_label(t, ax)]];
      l.in_input[t] = 1;
      if (inputs[t].shape[ax] != 1) l.stride[t] += inputs[t].strides[ax];  // repeats: diagonal
    }

  // Output axes.
  const EinsumTerm& out = spec.out;
  if (out.ellipsis < 0 && ell_max > 0) {
    return einsum_error(StatusCode::shape_mismatch,
                        "einsum: operands have '...' dimensions but the output has no '...'", 0,
                        ell_max);
  }
  const int out_ell = out.ellipsis >= 0 ? ell_max : 0;
  p.out_rank = out.n + out_ell;
  if (p.out_rank > kMaxRank) {
    return einsum_error(StatusCode::invalid_argument, "einsum: too many dimensions in the output",
                        kMaxRank, p.out_rank);
  }
  for (int ax = 0; ax < p.out_rank; ++ax) {
    int id;
    if (out.ellipsis < 0 || ax < out.ellipsis)
      id = label_id(out.labels[ax]);
    else if (ax < out.ellipsis + out_ell)
      id = kLetterIds + (ax - out.ellipsis);
    else
      id = label_id(out.labels[ax - out_ell]);
    if (slot[id] < 0) {
      return einsum_error(StatusCode::invalid_argument,
                          "einsum: output label does not appear in any input", -1, -1, ax);
    }
    p.labels[slot[id]].out_axis = ax;
    p.out_shape[ax] = p.labels[slot[id]].size;
  }

  // The start of the trailing contracted axes of operand 1 (its K), or -1 when they do not form a
  // weight-matrix product: axes before them all in the output, none after, no diagonal.
  auto weight_k_axis0 = [&](const TensorView& w) {
    int k0 = w.rank;
    while (k0 > 0) {
      const EinsumLabel& l = p.labels[slot[axis_label(1, k0 - 1)]];
      if (!(l.in_input[0] && l.out_axis < 0)) break;
      --k0;
    }
    bool ok = k0 < w.rank;
    for (int ax = 0; ok && ax < w.rank; ++ax) {
      const EinsumLabel& l = p.labels[slot[axis_label(1, ax)]];
      if (ax < k0 && l.out_axis < 0) ok = false;  // contracted or summed label before the tail
      for (int bx = 0; ok && bx < ax; ++bx)
        ok = axis_label(1, bx) != axis_label(1, ax);  // diagonal
    }
    return ok ? k0 : -1;
  };

  // f16/bf16 weights (a contiguous second operand of an f32 first one, contracted along its
  // trailing axes) take the half-precision matmul; other f16/bf16 operands the generic loop.
  if (n_inputs == 2 && inputs[0].dtype == DType::f32 && dtype_is_half(inputs[1].dtype) &&
      inputs[1].rank > 0 && inputs[1].is_contiguous())
    p.quant_k_axis0 = weight_k_axis0(inputs[1]);

  // Quantized operands: only the second of two, contracted along exactly its trailing axes.
  for (int t = 0; t < n_inputs; ++t) {
    if (!dtype_is_quantized(inputs[t].dtype)) continue;
    if (t != 1 || inputs[0].dtype != DType::f32) {
      return einsum_error(
          StatusCode::unsupported,
          "einsum: only the second operand (with an f32 first operand) may be quantized", -1, -1,
          t);
    }
    const TensorView& w = inputs[1];
    // Scales are checked when executing: a plan may be made from shapes alone (arena sizing).
    if (w.group_size <= 0 || w.rank == 0 || !w.is_contiguous()) {
      return einsum_error(StatusCode::invalid_argument,
                          "einsum: quantized operand needs a group size and a contiguous layout",
                          -1, -1, 1);
    }
    const int k0 = weight_k_axis0(w);
    if (k0 < 0) {
      return einsum_error(StatusCode::invalid_argument,
                          "einsum: quantized operand must be contracted along its last axis", -1,
                          -1, 1);
    }
    // An interleaved layout tiles the rows of a [N, K] matrix: N and K must be single axes.
    if (layout_interleaved(w.layout) && (w.rank != 2 || k0 != 1)) {
      return einsum_error(StatusCode::invalid_argument,
                          "einsum: an interleaved weight layout needs a [N, K] operand contracted "
                          "along K alone",
                          -1, -1, 1);
    }
    p.quant_k_axis0 = k0;
  }

  choose_kernel(&p);
  return ok_status();
}

}  // namespace einfer
