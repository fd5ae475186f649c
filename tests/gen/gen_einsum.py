#!/usr/bin/python3
"""Generates the einsum conformance vectors in tests/data/einsum/ (run with /usr/bin/python3).

Each case writes <name>.a.npy [<name>.b.npy] (float32 operand data, contiguous) and <name>.ref.npy
(float64 numpy.einsum result), plus one line in cases.txt:
    name <TAB> spec <TAB> quant <TAB> view_a <TAB> view_b
view: "-" (the file's own contiguous layout) or "shape;strides;offset" (element units) describing a
non-contiguous numpy view over the file's flat data; the test builds the same strided TensorView.
quant (q8/q4): the second operand is a weight quantized by einfer-einsum --quantize; then
<name>.bound.npy holds a per-output error bound (see quant_bound).
"""
import os
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "einsum")
rng = np.random.default_rng(20240607)
lines = []


def rnd(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def view_desc(base, v):
    if v is base:
        return "-"
    off = (v.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // 4
    return "%s;%s;%d" % (",".join(map(str, v.shape)), ",".join(str(s // 4) for s in v.strides), off)


def case(name, spec, *ops, quant="none", group=32):
    """ops: arrays, or (base, view) pairs for non-contiguous operands."""
    bases, views = [], []
    for o in ops:
        if isinstance(o, tuple):
            bases.append(o[0]); views.append(o[1])
        else:
            bases.append(o); views.append(o)
    ref = np.einsum(spec, *[v.astype(np.float64) for v in views])
    np.save(os.path.join(OUT, name + ".a.npy"), bases[0])
    if len(bases) > 1:
        np.save(os.path.join(OUT, name + ".b.npy"), bases[1])
    np.save(os.path.join(OUT, name + ".ref.npy"), np.array(ref, dtype=np.float64, order="C"))
    if quant != "none":
        np.save(os.path.join(OUT, name + ".bound.npy"), np.array(quant_bound(spec, views[0], views[1], quant, group), order="C"))
    vb = view_desc(bases[1], views[1]) if len(bases) > 1 else "-"
    lines.append("\t".join([name, spec, quant, view_desc(bases[0], views[0]), vb]))


def quant_bound(spec, a, w, quant, group):
    """Per-output bound on |einsum(a, dequant(quant(w))) with int8 activations - exact|.

    Weights: w is permuted to [free, contracted] rows; each group has scale s = absmax/127 (q8) or
    absmax/7 (q4) and rounding error <= s/2 per element. Activations may be quantized to int8 per
    group of the same contracted axis (scale t = absmax/127, error <= t/2). For one output,
    |err| <= sum_k |a_k| s_k/2 + |w_k| t_k/2 + (t_k/2)(s_k/2): computed here elementwise by
    einsum over |a| and the per-element error radii, plus float32 accumulation slack.
    """
    ins, out = spec.replace(" ", "").split("->")
    ta, tb = ins.split(",")
    k_labels = [c for c in tb if c in ta and c not in out]
    free = [c for c in tb if c not in k_labels]
    wp = np.einsum(tb + "->" + "".join(free + k_labels), w.astype(np.float64))
    rows = int(np.prod(wp.shape[:len(free)])); kk = int(np.prod(wp.shape[len(free):]))
    w2 = wp.reshape(rows, kk)
    qmax = 127.0 if quant == "q8" else 7.0
    s = np.zeros_like(w2)
    for g0 in range(0, kk, group):
        s[:, g0:g0 + group] = np.abs(w2[:, g0:g0 + group]).max(axis=1, keepdims=True) / qmax
    werr = (s / 2).reshape(wp.shape)
    # activations: permute a to [other, contracted (in the weight's order)] and take group absmax.
    a_other = [c for c in ta if c not in k_labels]
    ap = np.einsum(ta + "->" + "".join(a_other + k_labels), a.astype(np.float64))
    ar = ap.reshape(-1, kk)
    t = np.zeros_like(ar)
    for g0 in range(0, kk, group):
        t[:, g0:g0 + group] = np.abs(ar[:, g0:g0 + group]).max(axis=1, keepdims=True) / 127.0
    aerr = (t / 2).reshape(ap.shape)
    ak = "".join(a_other + k_labels); wk = "".join(free + k_labels)
    bound = (np.einsum(ak + "," + wk + "->" + out, np.abs(ap), werr)
             + np.einsum(ak + "," + wk + "->" + out, aerr, np.abs(wp))
             + np.einsum(ak + "," + wk + "->" + out, aerr, werr))
    exact = np.einsum(spec, a.astype(np.float64), w.astype(np.float64))
    return bound + 1e-4 * max(1.0, float(np.abs(exact).max()))


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    # Attention einsums and GQA.
    case("attn_proj", "bnd,dhk->bhnk", rnd(2, 5, 16), rnd(16, 4, 8))
    case("attn_scores", "bhnk,bhmk->bhnm", rnd(2, 3, 5, 8), rnd(2, 3, 7, 8))
    case("attn_mix", "bhnm,bhmv->bhnv", rnd(2, 3, 5, 7), rnd(2, 3, 7, 8))
    case("attn_out", "bhnv,hvd->bnd", rnd(2, 3, 5, 8), rnd(3, 8, 16))
    case("gqa_scores", "bgrnk,bgmk->bgrnm", rnd(1, 2, 3, 4, 8), rnd(1, 2, 6, 8))
    case("gqa_mix", "bgrnm,bgmv->bgrnv", rnd(1, 2, 3, 4, 6), rnd(1, 2, 6, 8))
    case("proj_decode", "nd,ed->ne", rnd(1, 64), rnd(48, 64))
    case("proj_prefill", "nd,ed->ne", rnd(7, 64), rnd(48, 64))
    # Matmul with every transpose, batch matmul, matrix-vector, inner, outer.
    case("mm_nn", "ij,jk->ik", rnd(13, 17), rnd(17, 19))
    case("mm_nt", "ij,kj->ik", rnd(13, 17), rnd(19, 17))
    case("mm_tn", "ji,jk->ik", rnd(17, 13), rnd(17, 19))
    case("mm_tt", "ji,kj->ik", rnd(17, 13), rnd(19, 17))
    case("mm_out_t", "ij,jk->ki", rnd(13, 17), rnd(17, 19))
    case("mm_large", "ij,jk->ik", rnd(70, 300), rnd(300, 40))
    case("bmm", "bij,bjk->bik", rnd(3, 9, 11), rnd(3, 11, 10))
    case("bmm_batch_last", "ijb,jkb->ikb", rnd(9, 11, 3), rnd(11, 10, 3))
    case("matvec", "ij,j->i", rnd(33, 21), rnd(21))
    case("vecmat", "i,ij->j", rnd(33), rnd(33, 21))
    case("inner", "i,i->", rnd(100), rnd(100))
    case("outer", "i,j->ij", rnd(9), rnd(13))
    case("hadamard", "ij,ij->ij", rnd(9, 13), rnd(9, 13))
    case("hadamard_t", "ij,ji->ij", rnd(9, 13), rnd(13, 9))
    # Reductions, traces, diagonals, transposes.
    case("sum_axis0", "ijk->jk", rnd(3, 4, 5))
    case("sum_axis1", "ijk->ik", rnd(3, 4, 5))
    case("sum_axis2", "ijk->ij", rnd(3, 4, 5))
    case("sum_all", "ijk->", rnd(3, 4, 5))
    case("trace", "ii->", rnd(7, 7))
    case("trace_implicit", "ii", rnd(7, 7))
    case("diag", "ii->i", rnd(7, 7))
    case("batch_diag", "bii->bi", rnd(3, 5, 5))
    case("transpose", "ij->ji", rnd(7, 9))
    case("permute3", "ijk->kij", rnd(3, 4, 5))
    case("trace_product", "ij,ji->", rnd(6, 8), rnd(8, 6))
    case("sum_then_dot", "ij,jk->", rnd(5, 6), rnd(6, 7))
    # Ellipsis, implicit output, spaces, size-1 dimensions.
    case("ellipsis_bmm", "...ij,...jk->...ik", rnd(2, 3, 4, 5), rnd(3, 5, 6))
    case("ellipsis_broadcast", "...ij,...jk->...ik", rnd(2, 1, 4, 5), rnd(3, 5, 6))
    case("ellipsis_sum", "...i->...", rnd(3, 4, 5))
    case("ellipsis_mid", "i...j->j...i", rnd(2, 3, 4, 5))
    case("implicit_mm", "ij,jk", rnd(4, 5), rnd(5, 6))
    case("implicit_order", "ba", rnd(4, 5))
    case("implicit_upper", "bA,Ac", rnd(3, 4), rnd(4, 5))
    case("spaces", " bn d , d hk -> b h n k ", rnd(2, 3, 8), rnd(8, 2, 4))
    case("size1_dims", "bnd,dhk->bhnk", rnd(1, 1, 16), rnd(16, 1, 8))
    case("size1_contract", "ij,jk->ik", rnd(5, 1), rnd(1, 7))
    # Non-contiguous inputs: transposed / sliced / stepped numpy views over the committed data.
    base = rnd(17, 13)
    case("strided_transposed", "ij,jk->ik", (base, base.T), rnd(17, 19))
    base_b = rnd(20, 40)
    case("strided_sliced", "ij,jk->ik", rnd(13, 17), (base_b, base_b[2:19, 1:39:2]))
    base_x = rnd(64)
    case("strided_vector", "ij,j->i", rnd(9, 21), (base_x, base_x[3:66:3]))
    base_q = rnd(2, 6, 3, 8)
    case("strided_scores", "bhnk,bhmk->bhnm", (base_q, base_q.transpose(0, 2, 1, 3)), rnd(2, 3, 7, 8))
    base_r = rnd(8, 10)
    case("strided_reduce", "ij->j", (base_r, base_r[::2, 1::3]))
    # Quantized weights (CLI --quantize).
    case("q8_proj", "nd,ed->ne", rnd(3, 64), rnd(24, 64), quant="q8")
    case("q4_proj", "nd,ed->ne", rnd(3, 64), rnd(24, 64), quant="q4")
    case("q8_decode", "nd,ed->ne", rnd(1, 96), rnd(16, 96), quant="q8")
    case("q8_attn_proj", "bnd,dhk->bhnk", rnd(2, 5, 64), rnd(64, 4, 8), quant="q8")
    case("q4_attn_out", "bhnv,hvd->bnd", rnd(2, 3, 5, 16), rnd(3, 16, 24), quant="q4")
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d cases to %s" % (len(lines), OUT))


if __name__ == "__main__":
    main()
