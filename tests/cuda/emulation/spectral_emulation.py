#!/usr/bin/env python3
# Run by hand (not in CI: needs numpy), e.g. /work/torchvenv/bin/python tests/cuda/emulation/spectral_emulation.py.
# A check made before any GPU ran the code: keep it in step with kernels/cuda/cuda_spectral_ops.cc and spectral.cu.
# Emulates kernels/cuda/cuda_spectral_ops.cc + spectral.cu step by step (numpy FFTs standing in for cuFFT) and
# compares with the formulas computed by numpy slicing.
import numpy as np
from math import prod

class Shape:
    def __init__(s, ext, modes):
        s.dims=len(ext); s.extent=list(ext); s.modes=list(modes)
        s.lead=prod(ext[:-1]); s.half=ext[-1]//2+1
        s.kept=prod([2*m for m in modes[:-1]])*modes[-1]; s.points=prod(ext)
        s.n_last=ext[-1]; s.m_last=modes[-1]

def spectrum_index(r,m,n): return r if r<m else n-2*m+r
def kept_position(sv,m,n):
    if sv<m: return sv
    if sv>=n-m: return sv-n+2*m
    return -1

def lines_to_planes(sh, lines, ch):
    m,lead=sh.m_last,sh.lead; out=np.empty(ch*m*lead,complex)
    for i in range(ch*m*lead):
        c=i//(m*lead); rest=i%(m*lead); j=rest//lead; p=rest%lead
        out[i]=lines[(c*lead+p)*sh.half+j]
    return out

def planes_to_lines(sh, planes, ch):
    m,lead,half,n=sh.m_last,sh.lead,sh.half,sh.n_last; out=np.empty(ch*lead*half,complex)
    for i in range(ch*lead*half):
        c=i//(lead*half); rest=i%(lead*half); p=rest//half; j=rest%half
        v=planes[(c*m+j)*lead+p] if j<m else 0j
        if j==0 or (n%2==0 and j==n//2): v=complex(v.real,0.0)
        out[i]=v
    return out

def gather_kept(sh, planes, ch):
    out=np.empty(ch*sh.kept,complex)
    for i in range(ch*sh.kept):
        c=i//sh.kept; k=i%sh.kept; rest=k//sh.m_last; p=0; stride=1
        for d in range(sh.dims-2,-1,-1):
            r=rest%(2*sh.modes[d]); rest//=2*sh.modes[d]
            p+=spectrum_index(r,sh.modes[d],sh.extent[d])*stride; stride*=sh.extent[d]
        out[i]=planes[(c*sh.m_last+k%sh.m_last)*sh.lead+p]
    return out

def scatter_kept(sh, kept, ch):
    m,lead=sh.m_last,sh.lead; out=np.empty(ch*m*lead,complex)
    for i in range(ch*m*lead):
        c=i//(m*lead); rest=i%(m*lead); j=rest//lead; p=rest%lead; kl=0; stride=1; ok=True
        for d in range(sh.dims-2,-1,-1):
            r=kept_position(p%sh.extent[d],sh.modes[d],sh.extent[d]); p//=sh.extent[d]
            ok = ok and r>=0; kl+=r*stride; stride*=2*sh.modes[d]
        out[i]=kept[c*sh.kept+kl*m+j] if ok else 0j
    return out

# cuFFT stand-ins (basic layout, unnormalized)
def exec_r2c(n, batch, inp, out, ioff, ooff):
    h=n//2+1
    for b in range(batch): out[ooff+b*h:ooff+(b+1)*h]=np.fft.rfft(inp[ioff+b*n:ioff+(b+1)*n])
def exec_c2r(n, batch, inp, out, ioff, ooff):
    h=n//2+1
    for b in range(batch):
        line=inp[ioff+b*h:ioff+(b+1)*h].copy()
        # a real inverse that does not read Im of DC / Nyquist (we zero them anyway)
        out[ooff+b*n:ooff+(b+1)*n]=np.fft.irfft(line,n=n)*n
        inp[ioff+b*h:ioff+(b+1)*h]=np.nan  # C2R may destroy its input
def exec_c2c(ns, batch, data, off, direction):
    L=prod(ns)
    for b in range(batch):
        a=data[off+b*L:off+(b+1)*L].reshape(ns)
        r=np.fft.fftn(a) if direction<0 else np.fft.ifftn(a)*L
        data[off+b*L:off+(b+1)*L]=r.reshape(-1)

def lead_transforms(sh, planes, samples, ch, direction):
    if sh.dims==1: return
    per=ch*sh.m_last*sh.lead
    for n in range(samples): exec_c2c(sh.extent[:-1], ch*sh.m_last, planes, n*per, direction)

def kept_spectra(sh, field, ch):  # field [samples][ch*points]
    samples,cols=field.shape; lps=ch*sh.lead*sh.half; stride=(cols+63)//64*64
    real=np.full(samples*stride,np.nan); real.reshape(samples,stride)[:,:cols]=field  # copy_rows
    lines=np.full(samples*lps,np.nan,complex)
    for n in range(samples): exec_r2c(sh.n_last, ch*sh.lead, real, lines, n*stride, n*lps)
    planes=lines_to_planes(sh, lines, samples*ch)
    lead_transforms(sh, planes, samples, ch, -1)
    return gather_kept(sh, planes, samples*ch)

def field_from_kept(sh, kept, ch, samples):
    lps=ch*sh.lead*sh.half; cols=ch*sh.points
    planes=scatter_kept(sh, kept, samples*ch)
    lead_transforms(sh, planes, samples, ch, +1)
    lines=planes_to_lines(sh, planes, samples*ch)
    stride=(cols+63)//64*64; real=np.full(samples*stride,np.nan)
    for n in range(samples): exec_c2r(sh.n_last, ch*sh.lead, lines, real, n*lps, n*stride)
    field=real.reshape(samples,stride)[:,:cols].copy()  # copy_rows
    return field*(1.0/sh.points)

def mix(sh, cin, cout, frm, weight, backward, samples):
    kept=sh.kept; F=cout if backward else cin; T=cin if backward else cout; sign=-1.0 if backward else 1.0
    to=np.empty(samples*T*kept,complex)
    for i in range(samples*T*kept):
        n=i//(T*kept); t=(i//kept)%T; k=i%kept; re=im=0.0
        for f in range(F):
            x=frm[(n*F+f)*kept+k]; pair=t*cout+f if backward else f*cout+t
            c=weight[(pair*kept+k)*2]; d=sign*weight[(pair*kept+k)*2+1]; a,b=x.real,x.imag
            re+= a*c-b*d; im+= a*d+b*c
        to[i]=complex(re,im)
    return to

def weight_grad(sh, cin, cout, xk, dyk, wg, samples):
    kept=sh.kept; wg=wg.copy()
    for e in range(cin*cout*kept):
        i=e//(cout*kept); o=(e//kept)%cout; k=e%kept; j=k%sh.m_last
        single= j==0 or (sh.n_last%2==0 and j==sh.n_last//2)
        s=(1.0 if single else 2.0)/sh.points
        re,im=wg[2*e],wg[2*e+1]
        for n in range(samples):
            x=xk[(n*cin+i)*kept+k]; dy=dyk[(n*cout+o)*kept+k]
            a,b,c,d=x.real,-x.imag,dy.real*s,dy.imag*s
            re+=a*c-b*d; im+=a*d+b*c
        wg[2*e],wg[2*e+1]=re,im
    return wg

# ---- reference by slicing
def kept_slices(ext, modes):
    # list of index arrays per dim in kept order
    idx=[]
    for d,(n,m) in enumerate(zip(ext,modes)):
        if d==len(ext)-1: idx.append(np.arange(m))
        else: idx.append(np.concatenate([np.arange(m), np.arange(n-m,n)]))
    return idx

def ref_kept(field, ch, ext, modes):
    S=field.shape[0]; f=field.reshape((S,ch)+tuple(ext))
    F=np.fft.rfftn(f, axes=tuple(range(2,2+len(ext))))
    return F[np.ix_(range(S),range(ch),*kept_slices(ext,modes))]

def ref_field(K, ext, modes):
    S,ch=K.shape[:2]; full=np.zeros((S,ch)+tuple(ext[:-1])+(ext[-1]//2+1,),complex)
    full[np.ix_(range(S),range(ch),*kept_slices(ext,modes))]=K
    return np.fft.irfftn(full, s=ext, axes=tuple(range(2,2+len(ext)))).reshape(S,-1)

def check(cin,cout,ext,modes,S=2,seed=0):
    rng=np.random.default_rng(seed); sh=Shape(ext,modes); P=prod(ext)
    x=rng.uniform(-1,1,(S,cin*P)); dy=rng.uniform(-1,1,(S,cout*P))
    w=rng.uniform(-1,1,cin*cout*sh.kept*2); wg0=rng.uniform(-1,1,cin*cout*sh.kept*2)
    # emulated GPU
    xk=kept_spectra(sh,x,cin); y=field_from_kept(sh, mix(sh,cin,cout,xk,w,False,S), cout, S)
    dyk=kept_spectra(sh,dy,cout); dx=field_from_kept(sh, mix(sh,cin,cout,dyk,w,True,S), cin, S)
    wg=weight_grad(sh,cin,cout,xk,dyk,wg0,S)
    # reference
    W=(w[0::2]+1j*w[1::2]).reshape((cin,cout)+tuple(2*m for m in modes[:-1])+(modes[-1],))
    X=ref_kept(x,cin,ext,modes); D=ref_kept(dy,cout,ext,modes)
    Z=np.einsum('si...,io...->so...',X,W); yr=ref_field(Z,ext,modes)
    G=np.einsum('so...,io...->si...',D,np.conj(W)); dxr=ref_field(G,ext,modes)
    n_last=ext[-1]; j=np.arange(modes[-1]); c=np.where((j==0)|((n_last%2==0)&(j==n_last//2)),1.0,2.0)
    dW=np.einsum('si...,so...->io...',np.conj(X),D*c/P)
    wgr=wg0+np.stack([dW.real.reshape(-1),dW.imag.reshape(-1)],-1).reshape(-1)
    errs=[np.abs(y-yr).max(), np.abs(dx-dxr).max(), np.abs(wg-wgr).max()]
    print(cin,cout,ext,modes,'max abs err y dx wg: %.2e %.2e %.2e'%tuple(errs))
    assert max(errs)<1e-10
    # adjoint check: <y, dy> = <x, dx>? only for the real-linear map; here verify dW by finite difference too
    return

for case in [(2,3,[8],[3]),(3,2,[9],[5]),(2,3,[8,6],[2,4]),(2,2,[6,4,5],[3,1,2]),(3,3,[16,16],[4,4]),(1,2,[4,6],[2,4])]:
    check(*case)
print("ok")
