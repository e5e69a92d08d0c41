#!/usr/bin/env python3
# Run by hand (not in CI: needs numpy and PyTorch), e.g. /work/torchvenv/bin/python tests/cuda/emulation/attention_emulation.py.
# A check made before any GPU ran the code: keep it in step with kernels/cuda/cuda_attention_ops.cc, tokens.cu and
# cublas_gemm.cc (row_major_gemm_strided_batched).
# Emulates kernels/cuda/cuda_attention_ops.cc (+ row_major_gemm_strided_batched's mapping onto a column-major
# cuBLAS stand-in, tokens.cu's softmax rows, the dropout kernel) and compares with a numpy reference.
import numpy as np

def cublas_strided_batched(opa, opb, m, n, k, alpha, A, a_off, lda, sa, B, b_off, ldb, sb, beta, C, c_off, ldc, sc, batch):
    # column-major: X(r, c) = buf[off + r + c*ld]
    def mat(buf, off, ld, rows, cols):
        r=np.arange(rows)[:,None]; c=np.arange(cols)[None,:]
        idx=off+r+c*ld
        assert idx.min()>=0 and idx.max()<buf.size, "out of bounds"
        return buf[idx], idx
    for t in range(batch):
        Am,_=mat(A,a_off+t*sa,lda,*( (m,k) if opa=='N' else (k,m) ))
        Bm,_=mat(B,b_off+t*sb,ldb,*( (k,n) if opb=='N' else (n,k) ))
        if opa=='T': Am=Am.T
        if opb=='T': Bm=Bm.T
        Cm,idx=mat(C,c_off+t*sc,ldc,m,n)
        res=alpha*(Am@Bm)+(beta*Cm if beta!=0 else 0)
        C[idx]=res

def rm_gemm_sb(ta, tb, m, n, k, alpha, a, a_off, lda, sa, b, b_off, ldb, sb, c, c_off, ldc, sc, batch):
    cublas_strided_batched('T' if tb else 'N', 'T' if ta else 'N', n, m, k, alpha, b, b_off, ldb, sb, a, a_off, lda, sa,
                           0.0, c, c_off, ldc, sc, batch)

def softmax_rows(s, rows, width):
    for r in range(rows):
        row=s[r*width:(r+1)*width]; top=row.max(); row[:]=np.exp(row-top); row*=1.0/row.sum()

def softmax_backward_rows(p, ds, rows, width):
    for r in range(rows):
        pr=p[r*width:(r+1)*width]; row=ds[r*width:(r+1)*width]; dot=(row*pr).sum(); row[:]=pr*(row-dot)

def dropout(inp, p, u, n):
    out=np.where(u[:n]>=p, inp[:n]*(1.0/(1.0-p)), 0.0); return out

def forward(S,T,D,H,qkv,p_drop,u):
    d=D//H; row=3*D; pair=T*T; scale=1.0/np.sqrt(d)
    probs=np.full(S*H*pair,np.nan); out=np.full(S*T*D,np.nan)
    for s in range(S):
        q=s*T*row
        rm_gemm_sb(False,True,T,T,d,scale,qkv,q,row,d,qkv,q+D,row,d,probs,s*H*pair,T,pair,H)
    softmax_rows(probs,S*H*T,T)
    used=probs
    if p_drop>0: used=dropout(probs,p_drop,u,probs.size)
    for s in range(S):
        v=s*T*row+2*D
        rm_gemm_sb(False,False,T,d,T,1.0,used,s*H*pair,T,pair,qkv,v,row,d,out,s*T*D,D,d,H)
    return out,probs

def backward(S,T,D,H,qkv,probs,dout,p_drop,u):
    d=D//H; row=3*D; pair=T*T; scale=1.0/np.sqrt(d)
    used=probs
    if p_drop>0: used=dropout(probs,p_drop,u,probs.size)
    ds=np.full(S*H*pair,np.nan); dqkv=np.full(S*T*row,np.nan)
    for s in range(S):
        v=s*T*row+2*D; do=s*T*D
        rm_gemm_sb(True,False,T,d,T,1.0,used,s*H*pair,T,pair,dout,do,D,d,dqkv,s*T*row+2*D,row,d,H)
        rm_gemm_sb(False,True,T,T,d,1.0,dout,do,D,d,qkv,v,row,d,ds,s*H*pair,T,pair,H)
    if p_drop>0: ds=dropout(ds,p_drop,u,ds.size)
    softmax_backward_rows(probs,ds,S*H*T,T)
    for s in range(S):
        q=s*T*row; dq=s*T*row; dsv=s*H*pair
        rm_gemm_sb(False,False,T,d,T,scale,ds,dsv,T,pair,qkv,q+D,row,d,dqkv,dq,row,d,H)
        rm_gemm_sb(True,False,T,d,T,scale,ds,dsv,T,pair,qkv,q,row,d,dqkv,dq+D,row,d,H)
    return dqkv

def reference(S,T,D,H,qkv,dout,p_drop,u):
    import torch
    d=D//H
    x=torch.tensor(qkv.reshape(S,T,3,H,d),requires_grad=True)
    q,k,v=x[:,:,0].transpose(1,2),x[:,:,1].transpose(1,2),x[:,:,2].transpose(1,2)  # S,H,T,d
    p=torch.softmax(q@k.transpose(-1,-2)/np.sqrt(d),-1)
    U=torch.tensor(u.reshape(S,H,T,T))
    pd=torch.where(U>=p_drop,p/(1-p_drop),torch.zeros_like(p)) if p_drop>0 else p
    o=(pd@v).transpose(1,2).reshape(S*T*D)
    o.backward(torch.tensor(dout))
    return o.detach().numpy(), p.detach().numpy().reshape(-1), x.grad.numpy().reshape(-1)

for (S,T,D,H) in [(3,5,6,2),(3,7,8,1),(2,16,32,4)]:
    for p_drop in [0.0,0.25]:
        rng=np.random.default_rng(1)
        qkv=rng.uniform(-2,2,S*T*3*D); dout=rng.uniform(-1,1,S*T*D); u=rng.uniform(0,1,S*H*T*T)
        out,probs=forward(S,T,D,H,qkv,p_drop,u); dqkv=backward(S,T,D,H,qkv,probs,dout,p_drop,u)
        ro,rp,rg=reference(S,T,D,H,qkv,dout,p_drop,u)
        e=[np.abs(out-ro).max(),np.abs(probs-rp).max(),np.abs(dqkv-rg).max()]
        print(S,T,D,H,p_drop,'err out probs dqkv %.1e %.1e %.1e'%tuple(e))
        assert max(e)<1e-10 and not np.isnan(dqkv).any()
print('ok')
