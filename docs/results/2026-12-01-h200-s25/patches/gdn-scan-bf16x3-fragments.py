# Warp-level emulation of gdn-scan-bf16x3's step 1 (X = W S0) and step 3 (K^T D') index math,
# with ldmatrix and mma.m16n8k16 bf16 semantics as the PTX ISA describes them.
import random, struct
def bf16(x):
    u = struct.unpack('<I', struct.pack('<f', x))[0]
    u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000
    return struct.unpack('<f', struct.pack('<I', u))[0]
def split(x):
    h = bf16(x); return h, bf16(x - h)
random.seed(1)
KD, CH, SC = 24, 64, 32
KDP = (KD + 15)//16*16; KP = KDP + 4; SBP = KDP + 8; DBP = CH + 8
W = [[random.uniform(-1,1) if c < KD else 0.0 for c in range(KP)] for r in range(CH)]
S = [[random.uniform(-1,1) if k < KD else 0.0 for _ in range(SC)] for k in range(KDP)]
sh = [0.0]*(SC*SBP); sl = [0.0]*(SC*SBP)
for k in range(KD):
    for j in range(SC):
        h, l = split(S[k][j]); sh[j*SBP+k] = h; sl[j*SBP+k] = l
def ldmatrix(addr_of_lane):  # addr: (plane, element index) per lane; returns per lane 4 regs of 2 halves
    out = [[None]*4 for _ in range(32)]
    for l in range(32):
        for i in range(4):
            plane, e = addr_of_lane[8*i + l//4]
            out[l][i] = (plane[e + 2*(l%4)], plane[e + 2*(l%4) + 1])
    return out
def mma(C, Afr, Bfr):  # C[lane][4]; Afr[lane][4] of (lo, hi) pairs; Bfr[lane][2]
    A = [[0.0]*16 for _ in range(16)]; B = [[0.0]*8 for _ in range(16)]
    for l in range(32):
        g, t = l//4, l%4
        for r, (row, col) in enumerate([(g, 2*t), (g+8, 2*t), (g, 2*t+8), (g+8, 2*t+8)]):
            A[row][col], A[row][col+1] = Afr[l][r]
        for r, k in enumerate([2*t, 2*t+8]):
            B[k][g], B[k+1][g] = Bfr[l][r]
    for l in range(32):
        g, t = l//4, l%4
        for e, (row, col) in enumerate([(g, 2*t), (g, 2*t+1), (g+8, 2*t), (g+8, 2*t+1)]):
            C[l][e] += sum(A[row][k]*B[k][col] for k in range(16))
maxerr = 0.0
for mt in range(4):
    acc = [[[0.0]*4 for _ in range(32)] for nt in range(4)]
    for k0 in range(0, KDP, 16):
        ah = [[None]*4 for _ in range(32)]; al = [[None]*4 for _ in range(32)]
        for l in range(32):
            g, t = l//4, l%4
            for r in range(4):
                row = 16*mt + g + (r & 1)*8; col = 2*t + k0 + (r >> 1)*8
                h0, l0 = split(W[row][col]); h1, l1 = split(W[row][col+1])
                ah[l][r] = (h0, h1); al[l][r] = (l0, l1)
        for nt in range(4):
            addrs = []
            for l in range(32):
                plane = sh if l < 16 else sl
                addrs.append((plane, (l & 7)*SBP + 8*((l >> 3) & 1) + 8*nt*SBP + k0))
            br = ldmatrix(addrs)
            bh = [[br[l][0], br[l][1]] for l in range(32)]; bl = [[br[l][2], br[l][3]] for l in range(32)]
            mma(acc[nt], al, bh); mma(acc[nt], ah, bl); mma(acc[nt], ah, bh)
    for nt in range(4):
        for l in range(32):
            g, t = l//4, l%4
            for e in range(4):
                r = 16*mt + g + 8*(e >> 1); c = 8*nt + 2*t + (e & 1)
                ref = sum(W[r][k]*S[k][c] for k in range(KDP))
                maxerr = max(maxerr, abs(acc[nt][l][e] - ref))
print('step 1 max abs error', maxerr)
# step 3: acc = K^T D' for m-tiles over KDP, n-tiles over SC, k over CH tokens.
K = [[random.uniform(-1,1) if c < KD else 0.0 for c in range(KP)] for r in range(CH)]
D = [[random.uniform(-1,1) for _ in range(SC)] for r in range(CH)]
dh = [0.0]*(SC*DBP); dl = [0.0]*(SC*DBP)
for r in range(CH):
    for c in range(SC):
        h, l = split(D[r][c]); dh[c*DBP + r] = h; dl[c*DBP + r] = l
maxerr = 0.0
for mt in range(KDP//16):
    acc = [[[0.0]*4 for _ in range(32)] for nt in range(4)]
    for k0 in range(0, CH, 16):
        ah = [[None]*4 for _ in range(32)]; al = [[None]*4 for _ in range(32)]
        for l in range(32):
            g, t = l//4, l%4
            for r in range(4):
                tok = 2*t + k0 + (r >> 1)*8; kd = 16*mt + g + (r & 1)*8
                h0, l0 = split(K[tok][kd]); h1, l1 = split(K[tok+1][kd])
                ah[l][r] = (h0, h1); al[l][r] = (l0, l1)
        for nt in range(4):
            addrs = [((dh if l < 16 else dl), (l & 7)*DBP + 8*((l >> 3) & 1) + 8*nt*DBP + k0) for l in range(32)]
            br = ldmatrix(addrs)
            bh = [[br[l][0], br[l][1]] for l in range(32)]; bl = [[br[l][2], br[l][3]] for l in range(32)]
            mma(acc[nt], al, bh); mma(acc[nt], ah, bl); mma(acc[nt], ah, bh)
    for nt in range(4):
        for l in range(32):
            g, t = l//4, l%4
            for e in range(4):
                m = 16*mt + g + 8*(e >> 1); c = 8*nt + 2*t + (e & 1)
                ref = sum(K[tok][m]*D[tok][c] for tok in range(CH))
                maxerr = max(maxerr, abs(acc[nt][l][e] - ref))
print('step 3 max abs error', maxerr)
