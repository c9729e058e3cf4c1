# One block of gdn_chunk_solve's blocked triangular inverse (branch gdn-solve-blocked), emulated thread by thread with the
# kernel's index math (as: row stride AP, X kept in as's upper blocks; Tf: row stride 64).
import random
CH, AP = 64, 68
random.seed(1)
A = [[(random.uniform(-0.3, 0.3) if j < i else 0.0) for j in range(CH)] for i in range(CH)]
as_ = [float('nan')] * (CH * AP)
# product 1 writes: every tile (mt, nt <= 2mt+1): rows 16mt.., cols 8nt..; j < i -> A, else 0
for mt in range(4):
    for nt in range(2 * mt + 2):
        for i in range(16 * mt, 16 * mt + 16):
            for j in range(8 * nt, 8 * nt + 8):
                as_[i * AP + j] = A[i][j] if j < i else 0.0
Tf = [float('nan')] * (CH * 64)
# stage 0: threads tid < 64
for tid in range(64):
    p, c = tid >> 4, tid & 15
    x = [1.0 if i == c else 0.0 for i in range(16)]
    for i in range(1, 16):
        acc = x[i]
        for j in range(i):
            acc += -as_[(16 * p + i) * AP + 16 * p + j] * x[j]
        x[i] = acc
    for i in range(16):
        Tf[(16 * p + i) * 64 + 16 * p + c] = x[i]
for d in (1, 2, 3):
    nblk = 4 - d
    # X substep (all 256 threads, then a barrier)
    writes = []
    for tid in range(256):
        i, c = tid >> 4, tid & 15
        for q in range(nblk):
            p = q + d
            xv = 0.0
            for r in range(q, p):
                for k in range(16):
                    xv += as_[(16 * p + i) * AP + 16 * r + k] * Tf[(16 * r + k) * 64 + 16 * q + c]
            writes.append(((16 * q + i) * AP + 16 * p + c, xv))
    for a, v in writes:
        as_[a] = v
    # T substep
    writes = []
    for tid in range(256):
        i, c = tid >> 4, tid & 15
        for q in range(nblk):
            p = q + d
            t = -as_[(16 * q + i) * AP + 16 * p + c]
            for k in range(i):
                t -= Tf[(16 * p + i) * 64 + 16 * p + k] * as_[(16 * q + k) * AP + 16 * p + c]
            writes.append(((16 * p + i) * 64 + 16 * q + c, t))
    for a, v in writes:
        Tf[a] = v
# conversion: upper blocks read as zero
T = [[(0.0 if (i >> 4) < (j >> 4) else Tf[i * 64 + j]) for j in range(CH)] for i in range(CH)]
# reference: (I + A)^-1 by forward substitution per column
err = 0.0
for c in range(CH):
    x = [1.0 if i == c else 0.0 for i in range(CH)]
    for i in range(1, CH):
        x[i] -= sum(A[i][j] * x[j] for j in range(i))
    for i in range(CH):
        err = max(err, abs(x[i] - T[i][c]))
        assert T[i][c] == T[i][c], (i, c)  # no NaN (an unwritten slot) reached T
print("max |T - (I + A)^-1| =", err)
