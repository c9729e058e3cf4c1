# Warp-level emulation of gdn-solve-planes (branch gdn-solve-planes): k's and q's rows split into
# bf16 hi/lo planes by the kernel's fill mapping (256 threads, float4 per thread and step), then
# k k^T and q k^T tiles from ldmatrix fragments of those planes, as the PTX ISA lays out ldmatrix
# and mma.m16n8k16 (bf16); checked against the plain products, for the tiny and the model's key
# dims and a short chunk (padding rows zero). Prints the largest errors; python3, no dependencies.
import random, struct
def bf16(x):
    u = struct.unpack('<I', struct.pack('<f', x))[0]
    u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000
    return struct.unpack('<f', struct.pack('<I', u))[0]
def split(x):
    h = bf16(x); return h, bf16(x - h)
def ldmatrix(addr_of_lane):  # per lane (plane, element index of its row); 4 regs of 2 halves each
    out = [[None]*4 for _ in range(32)]
    for l in range(32):
        for i in range(4):
            plane, e = addr_of_lane[8*i + l//4]
            out[l][i] = (plane[e + 2*(l % 4)], plane[e + 2*(l % 4) + 1])
    return out
def mma(C, Afr, Bfr):
    A = [[0.0]*16 for _ in range(16)]; B = [[0.0]*8 for _ in range(16)]
    for l in range(32):
        g, t = l//4, l % 4
        for r, (row, col) in enumerate([(g, 2*t), (g+8, 2*t), (g, 2*t+8), (g+8, 2*t+8)]):
            A[row][col], A[row][col+1] = Afr[l][r]
        for r, k in enumerate([2*t, 2*t+8]):
            B[k][g], B[k+1][g] = Bfr[l][r]
    for l in range(32):
        g, t = l//4, l % 4
        for e, (row, col) in enumerate([(g, 2*t), (g, 2*t+1), (g+8, 2*t), (g+8, 2*t+1)]):
            C[l][e] += sum(A[row][k]*B[k][col] for k in range(16))
def run(KD, n, seed):
    random.seed(seed)
    CH, THREADS = 64, 256
    KDP = (KD + 15)//16*16; KBP = KDP + 8; F4 = KDP//4; PER = (CH*F4 + THREADS - 1)//THREADS
    k = [[random.uniform(-1, 1) for _ in range(KD)] for _ in range(CH)]
    q = [[random.uniform(-1, 1) for _ in range(KD)] for _ in range(CH)]
    planes = {name: [float('nan')]*(CH*KBP) for name in ('kh', 'kl', 'qh', 'ql')}
    for tid in range(THREADS):
        for i in range(PER):
            c = tid + i*THREADS; r, col = c//F4, 4*(c % F4)
            if c >= CH*F4: continue
            real = r < n and col < KD
            for src, hi, lo in ((k, 'kh', 'kl'), (q, 'qh', 'ql')):
                v = [src[r][col + e] if real else 0.0 for e in range(4)]
                at = r*KBP + col
                for e in range(4):
                    planes[hi][at + e], planes[lo][at + e] = split(v[e])
    kz = [[k[r][c] if r < n and c < KD else 0.0 for c in range(KDP)] for r in range(CH)]
    qz = [[q[r][c] if r < n and c < KD else 0.0 for c in range(KDP)] for r in range(CH)]
    err = [0.0, 0.0]
    for mt in range(4):
        for nt in range(2*mt + 2):
            kk = [[0.0]*4 for _ in range(32)]; qk = [[0.0]*4 for _ in range(32)]
            for k0 in range(0, KDP, 16):
                b = ldmatrix([(planes['kh' if l < 16 else 'kl'], (8*nt + (l & 7))*KBP + 8*((l >> 3) & 1) + k0)
                              for l in range(32)])
                bh = [[b[l][0], b[l][1]] for l in range(32)]; bl = [[b[l][2], b[l][3]] for l in range(32)]
                for acc, (ph, pl) in ((kk, ('kh', 'kl')), (qk, ('qh', 'ql'))):
                    at = [(16*mt + (l & 15))*KBP + 8*(l >> 4) + k0 for l in range(32)]
                    ah = ldmatrix([(planes[ph], at[l]) for l in range(32)])
                    al = ldmatrix([(planes[pl], at[l]) for l in range(32)])
                    mma(acc, al, bh); mma(acc, ah, bl); mma(acc, ah, bh)
            for l in range(32):
                g, t = l//4, l % 4
                for e in range(4):
                    i, j = 16*mt + g + 8*(e >> 1), 8*nt + 2*t + (e & 1)
                    for x, (acc, rows) in enumerate(((kk, kz), (qk, qz))):
                        ref = sum(rows[i][c]*kz[j][c] for c in range(KDP))
                        err[x] = max(err[x], abs(acc[l][e] - ref))
    # W's right-hand side reads k back as hi + lo
    wrhs = max(abs(planes['kh'][r*KBP + c] + planes['kl'][r*KBP + c] - kz[r][c]) for r in range(CH) for c in range(KDP))
    print(f"KD {KD}, {n} tokens: k k^T max abs error {err[0]:.2e}, q k^T {err[1]:.2e}, k from hi + lo {wrhs:.2e}")
run(24, 64, 1)
run(24, 37, 2)
run(128, 64, 3)
