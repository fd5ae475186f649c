#!/usr/bin/python3
"""Independent check of how much group quantization alone changes a llama2.c checkpoint's greedy path.

A float64 numpy forward pass (llama2.c semantics) runs the float greedy path for 96 tokens, then
the same path teacher-forced with weights quantized and dequantized exactly as einfer's q8/q4
(absmax group scales, group 32; activations stay float) and reports top-1 agreement. The floors in
tests/test_llama.cpp are set from these figures: einfer (which also quantizes activations to int8)
must come close to them. Measured (2026-11-21):
  stories260K.bin q8 88/96, q4 23/96     aidreams260K.bin q8 95/96, q4 91/96
Run: /usr/bin/python3 tests/gen/quant_agreement.py ../shared/models/stories260K.bin
"""
import struct
import sys

import numpy as np
path=sys.argv[1]; G=32
raw=open(path,'rb').read()
dim,hid,L,H,KV,V,S=struct.unpack('7i',raw[:28]); shared=V>0; V=abs(V)
w=np.frombuffer(raw,dtype=np.float32,offset=28)
hd=dim//H; o=0
def take(*shape):
    global o; n=int(np.prod(shape)); a=w[o:o+n].reshape(shape); o+=n; return a
emb=take(V,dim); an=take(L,dim); wq=take(L,H*hd,dim); wk=take(L,KV*hd,dim); wv=take(L,KV*hd,dim); wo=take(L,dim,H*hd)
fn=take(L,dim); w1=take(L,hid,dim); w2=take(L,dim,hid); w3=take(L,hid,dim); final=take(dim)
def q(x, bits):
    x=x.astype(np.float64); k=x.shape[-1]; out=np.empty_like(x)
    qmax=127 if bits==8 else 7
    for g0 in range(0,k,G):
        blk=x[...,g0:g0+G]; s=np.abs(blk).max(-1,keepdims=True)/qmax; s[s==0]=1
        lo=-127 if bits==8 else -8
        out[...,g0:g0+G]=np.clip(np.rint(blk/s),lo,qmax)*s
    return out
def run(mats, path_ids=None, n=96):
    emb_,wq_,wk_,wv_,wo_,w1_,w2_,w3_=mats
    kc=[[] for _ in range(L)]; vc=[[] for _ in range(L)]
    tok=1; out=[]
    freqs=1.0/(10000**(np.arange(0,hd,2)/hd))
    for pos in range(n):
        x=emb_[tok].astype(np.float64)
        for l in range(L):
            h=x/np.sqrt((x*x).mean()+1e-5)*an[l]
            qv=wq_[l]@h; kv=wk_[l]@h; vv=wv_[l]@h
            ang=pos*freqs; c=np.cos(ang); s=np.sin(ang)
            def rope(v,nh):
                v=v.reshape(nh,hd//2,2).copy(); a=v[...,0]*c-v[...,1]*s; b=v[...,0]*s+v[...,1]*c
                return np.stack([a,b],-1).reshape(-1)
            qv=rope(qv,H); kv=rope(kv,KV)
            kc[l].append(kv.reshape(KV,hd)); vc[l].append(vv.reshape(KV,hd))
            K=np.stack(kc[l]); Vv=np.stack(vc[l]); att=np.zeros(H*hd)
            for hh in range(H):
                g=hh//(H//KV); sc=K[:,g]@qv[hh*hd:(hh+1)*hd]/np.sqrt(hd); p=np.exp(sc-sc.max()); p/=p.sum()
                att[hh*hd:(hh+1)*hd]=p@Vv[:,g]
            x=x+wo_[l]@att
            h=x/np.sqrt((x*x).mean()+1e-5)*fn[l]
            a=w1_[l]@h; b=w3_[l]@h; x=x+w2_[l]@(a/(1+np.exp(-a))*b)
        h=x/np.sqrt((x*x).mean()+1e-5)*final
        logits=emb_@h; nxt=int(np.argmax(logits)); out.append(nxt)
        tok = path_ids[pos] if path_ids is not None else nxt
    return out
f=[emb,wq,wk,wv,wo,w1,w2,w3]
ref=run(f)
for bits in (8,4):
    qm=[q(m,bits) for m in f]
    got=run(qm, ref)
    print(path.split('/')[-1], 'q%d'%bits, 'agreement', sum(a==b for a,b in zip(ref,got)), '/', len(ref))
