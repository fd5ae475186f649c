// Einsum planner and executor (see einsum.h).
//
// plan_einsum binds labels to sizes and strides. The kernel layout (which labels become the GEMM's
// M, N, K and which are looped outside) is derived from that table and the output's strides, both
// at plan time (assuming a contiguous output, to size scratch) and again at execute time (the
// output may be strided): the derivation is cheap and allocation-free.
#include "kernels/einsum.h"

#include <cstring>

#include "kernels/gemm_f32.h"
#include "kernels/matmul_quant.h"
#include "kernels/quant.h"
#include "kernels/vec.h"

namespace einfer {

namespace {

constexpr int kLetterIds = 52;

int label_id(char c) {
  return c >= 'a' ? c - 'a' : 26 + (c - 'A');
}

Status einsum_error(StatusCode code, const char* msg, int64_t need = -1, int64_t have = -1,
                    int32_t index = -1) {
  return make_status(code, msg, need, have, index);
}

size_t align64(size_t n) {
  return (n + 63) / 64 * 64;
}

// One loop dimension after label grouping: size and stride in A, B and the output.
struct Dim {
  int64_t size = 1;
  int64_t sa = 0, sb = 0, so = 0;
  bool is_k = false;  // summed: the first iteration overwrites, later ones accumulate
};

struct Layout {
  EinsumKernel kind = EinsumKernel::generic;
  int n_outer = 0;
  Dim outer[kEinsumMaxLabels];
  Dim m, n, k;           // GEMM family; elementwise/copy/reduction use `k` as the inner dimension
  Dim n_split;           // GEMM: N split in the output (size 1: none), contiguous with n in B
  bool swapped = false;  // A and B exchanged (so the output's unit stride lands on N)
  // quant_matmul
  bool pack_a = false, pack_c = false;
  int64_t mt = 1, nt = 1, kt = 1;
  size_t scratch = 0;
};

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

Dim dim_of(const EinsumPlan& p, int i, const int64_t* out_strides) {
  const EinsumLabel& l = p.labels[i];
  Dim d;
  d.size = l.size;
  d.sa = l.stride[0];
  d.sb = p.n_inputs > 1 ? l.stride[1] : 0;
  d.so = out_stride_of(l, out_strides);
  d.is_k = l.out_axis < 0;
  return d;
}

// Merges dims of one group that are adjacent in memory in every tensor (stride chains), after
// sorting by descending stride in `key` (0: A, 1: B, 2: out). Returns the new count.
int merge_dims(Dim* d, int n, int key) {
  auto stride = [key](const Dim& x) { return key == 0 ? x.sa : key == 1 ? x.sb : x.so; };
  for (int i = 1; i < n; ++i)  // insertion sort, n is tiny
    for (int j = i; j > 0 && stride(d[j - 1]) < stride(d[j]); --j) {
      const Dim t = d[j];
      d[j] = d[j - 1];
      d[j - 1] = t;
    }
  int out = 0;
  for (int i = 0; i < n; ++i) {
    if (out > 0) {
      Dim& o = d[out - 1];
      const Dim& x = d[i];
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
int pick_dim(const Dim* d, int n, int pref) {
  int best = 0;
  auto score = [pref](const Dim& x) {
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

Status derive_quant(const EinsumPlan& p, const int64_t* out_strides, Layout* L) {
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
  L->scratch = align64(matmul_quant_scratch_bytes(L->mt, L->kt, p.in_group[1])) + 64;
  if (L->pack_a) L->scratch += align64(static_cast<size_t>(L->mt * L->kt) * sizeof(float));
  if (L->pack_c) L->scratch += align64(static_cast<size_t>(L->mt * L->nt) * sizeof(float));
  return ok_status();
}

// Derives the kernel and its loops for the given output strides. Works in place in L->outer (no
// per-group arrays on the stack): the groups are laid out there as ranges [batch | N | M | K] (N
// and M after the operand swap), merged within their ranges, and what is not picked as the kernel's
// M, N, K is compacted to the front as the outer loops, in that order.
// L must be default-initialized (assigning a fresh Layout would put a second one on the stack).
void derive_layout(const EinsumPlan& p, const int64_t* out_strides, Layout* L) {
  for (int i = 0; i < p.n_labels; ++i)
    if (p.labels[i].size == 0) return;  // empty tensors: the generic loop handles them
  for (int t = 0; t < p.n_inputs; ++t) {
    if (dtype_is_quantized(p.in_dtype[t])) {
      derive_quant(p, out_strides, L);
      return;
    }
    if (!is_f32_input(p, t)) return;  // f16: generic (converts on load)
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
  Dim* d = L->outer;

  if (p.n_inputs == 1) {
    // Copy / reduction: one loop nest, innermost = the dim with unit input stride.
    int n = 0;
    for (int g : {1, 3})
      for (int i = 0; i < p.n_labels; ++i)
        if (group_of(i) == g) d[n++] = dim_of(p, i, out_strides);
    L->kind = nk > 0 ? EinsumKernel::reduction : EinsumKernel::copy;
    if (n == 0) {
      L->k = Dim{};
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
      L->k = Dim{};
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
  Dim* batch = d;
  Dim* ng = batch + nb;
  Dim* mg = ng + nn;
  Dim* kg = mg + nm;
  {
    int fill[4] = {0, 0, 0, 0};
    Dim* base[4] = {batch, nullptr, nullptr, kg};
    base[m_group] = mg;
    base[n_group] = ng;
    for (int i = 0; i < p.n_labels; ++i) {
      const int g = group_of(i);
      if (g < 0) continue;
      Dim x = dim_of(p, i, out_strides);
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
  auto take = [L](Dim* g, int n, int pick, Dim* into) {
    if (n == 0) {
      *into = Dim{};
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
    const Dim chosen = ng[np];
    ng[nsplit] = ng[--nn];  // drop the folded dim, then find the chosen one again
    for (int i = 0; i < nn; ++i)
      if (std::memcmp(&ng[i], &chosen, sizeof(Dim)) == 0) {
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
void for_each_outer(const Layout& L, F&& body) {
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
      const Dim& x = L.outer[d];
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

void run_gemm_family(const Layout& L, const float* a, const float* b, float* o, void* scratch) {
  // After a swap, A and B are exchanged (every stride in the layout was swapped with them).
  const float* x = L.swapped ? b : a;
  const float* y = L.swapped ? a : b;
  const Dim &M = L.m, &N = L.n, &K = L.k;
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
        // Matrix W[j, p] and vector v[p]; j is N (when M == 1) or M (when N == 1).
        const bool m_is_one = M.size == 1;
        const float* w = m_is_one ? pb : pa;
        const float* v = m_is_one ? pa : pb;
        const int64_t w_j = m_is_one ? N.sb : M.sa, w_p = m_is_one ? K.sb : K.sa;
        const int64_t v_s = m_is_one ? K.sa : K.sb;
        const int64_t nj = m_is_one ? N.size : M.size, ys = m_is_one ? N.so : M.so;
        if (v_s != 1) {
          for (int64_t i = 0; i < K.size; ++i) aligned[i] = v[i * v_s];
          v = aligned;
        }
        if (w_p == 1 || w_j == 1) {
          gemv_f32(nj, K.size, w, w_j, w_p, v, pc, ys, acc);
        }
        break;
      }
      default: {
        GemmF32Args g;
        g.m = M.size;
        g.n = N.size;
        g.k = K.size;
        g.a = pa;
        g.a_m = M.sa;
        g.a_k = K.sa;
        g.b = pb;
        g.b_k = K.sb;
        g.b_n = N.sb;
        g.c = pc;
        g.c_m = M.so;
        g.c_n = N.so;
        if (L.n_split.size > 1) {
          g.n_inner = N.size;
          g.n = N.size * L.n_split.size;
          g.c_n_outer = L.n_split.so;
        }
        g.accumulate = acc;
        gemm_f32(g, aligned);
      }
    }
  });
}

void run_elementwise(const Layout& L, const float* a, const float* b, float* o) {
  const Dim& I = L.k;
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

void run_one_operand(const Layout& L, const float* a, const TensorView& out) {
  const Dim& I = L.k;
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

Status run_quant(const EinsumPlan& p, const Layout& L, const TensorView* inputs,
                 const TensorView& out, void* scratch, size_t scratch_bytes) {
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

  unsigned char* s = static_cast<unsigned char*>(scratch);
  s = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(s) + 63) & ~uintptr_t{63});
  const size_t qbytes = align64(matmul_quant_scratch_bytes(L.mt, L.kt, wv.group_size));
  void* qscratch = s;
  s += qbytes;
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
  }
  EINFER_TRY(
      matmul_f32_quant(a, lda, L.mt, w2, c, ldc, qscratch,
                       scratch_bytes - static_cast<size_t>(static_cast<unsigned char*>(qscratch) -
                                                           static_cast<unsigned char*>(scratch))));
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
      same = same && v.group_size == p.in_group[t] && v.scales != nullptr;
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

void contiguous_strides(const EinsumPlan& p, int64_t* strides) {
  int64_t s = 1;
  for (int i = p.out_rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= p.out_shape[i];
  }
}

// *p = EinsumPlan{} field by field: the assignment would build a temporary plan on the stack.
void reset_plan(EinsumPlan* p) {
  std::memset(static_cast<void*>(p), 0, sizeof *p);
  p->kind = EinsumKernel::generic;
  for (EinsumLabel& l : p->labels) {
    l.size = 1;
    l.out_axis = -1;
  }
  p->quant_k_axis0 = -1;
}

// The kernel and scratch for a contiguous output. Not inlined into plan_einsum, so its Layout and
// the binder's tables are never on the stack together.
__attribute__((noinline)) void choose_kernel(EinsumPlan* p) {
  int64_t strides[kMaxRank];
  contiguous_strides(*p, strides);
  Layout L;
  derive_layout(*p, strides, &L);
  p->kind = L.kind;
  p->scratch_bytes = L.scratch;
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
    if (v.dtype != DType::f32 && v.dtype != DType::f16 && !dtype_is_quantized(v.dtype)) {
      return einsum_error(StatusCode::unsupported,
                          "einsum: operand dtype must be f32, f16, q8 or q4", -1, -1, t);
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
    if (!ok) {
      return einsum_error(StatusCode::invalid_argument,
                          "einsum: quantized operand must be contracted along its last axis", -1,
                          -1, 1);
    }
    p.quant_k_axis0 = k0;
  }

  choose_kernel(&p);
  return ok_status();
}

Status execute_einsum(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                      const TensorView& out, void* scratch, size_t scratch_bytes) {
  EINFER_TRY(check_inputs(plan, inputs, n_inputs));
  EINFER_TRY(check_output(plan, out));
  if (scratch_bytes < plan.scratch_bytes || (plan.scratch_bytes > 0 && scratch == nullptr)) {
    return einsum_error(StatusCode::out_of_memory, "einsum: scratch too small",
                        static_cast<int64_t>(plan.scratch_bytes),
                        static_cast<int64_t>(scratch_bytes));
  }
  Layout L;
  derive_layout(plan, out.strides, &L);
  if (L.scratch > scratch_bytes) L.kind = EinsumKernel::generic;  // a strided output needs more
  const float* a = plan.in_dtype[0] == DType::f32 ? inputs[0].f32() : nullptr;
  const float* b = n_inputs > 1 && plan.in_dtype[1] == DType::f32 ? inputs[1].f32() : nullptr;
  switch (L.kind) {
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
      return run_quant(plan, L, inputs, out, scratch, scratch_bytes);
    case EinsumKernel::generic:
      break;
  }
  run_generic(plan, inputs, out);
  return ok_status();
}

Status execute_einsum_reference(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                                const TensorView& out) {
  EINFER_TRY(check_inputs(plan, inputs, n_inputs));
  EINFER_TRY(check_output(plan, out));
  run_generic(plan, inputs, out);
  return ok_status();
}

const char* einsum_kernel_name(const EinsumPlan& plan) {
  switch (plan.kind) {
    case EinsumKernel::generic:
      return "generic";
    case EinsumKernel::gemm:
      return "gemm";
    case EinsumKernel::gemv:
      return "gemv";
    case EinsumKernel::dot:
      return "dot";
    case EinsumKernel::outer:
      return "outer";
    case EinsumKernel::elementwise:
      return "elementwise";
    case EinsumKernel::reduction:
      return "reduction";
    case EinsumKernel::copy:
      return "copy";
    case EinsumKernel::quant_matmul:
      return "quant_matmul";
  }
  return "?";
}

}  // namespace einfer
