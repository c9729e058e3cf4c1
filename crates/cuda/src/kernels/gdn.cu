// Gated DeltaNet decode. Needs: GDN_KEY_HEADS, GDN_VALUE_HEADS, GDN_KEY_DIM, GDN_VALUE_DIM, CONV_K.
//
// `proj` is the output of the one concatenated input projection:
//   [ q (K*KD) | k (K*KD) | v (V*VD) | z (V*VD) | b (V) | a (V) ]   (f32)
// The conv state is a ring of the last CONV_K raw inputs (slot = position % CONV_K) rather than
// a shifted window: several blocks read the same q/k channels in one launch, and with a ring the
// slot being written this step is never one that any block reads, so there is no race.
// The recurrent state S is f32 [V][KD][VD] because rounding compounds across tokens.

#define GDN_C (2 * GDN_KEY_HEADS * GDN_KEY_DIM + GDN_VALUE_HEADS * GDN_VALUE_DIM)
#define GDN_Z (GDN_C)
#define GDN_B (GDN_C + GDN_VALUE_HEADS * GDN_VALUE_DIM)
#define GDN_A (GDN_B + GDN_VALUE_HEADS)
#define GDN_ROWS (GDN_A + GDN_VALUE_HEADS)
// Each block owns CPB value columns of one value head: the columns of S are independent, so a
// head splits across blocks and 32 heads become 128 blocks (real model) instead of 32.
#define GDN_CPB (GDN_VALUE_DIM < 32 ? GDN_VALUE_DIM : 32)
#define GDN_KG 8
#define GDN_RPT (GDN_KEY_DIM / GDN_KG)

__device__ __forceinline__ float conv_channel(const float* __restrict__ proj, const bf16* __restrict__ conv_w,
                                              float* ring, int c, int p, bool write) {
    const float cur = proj[c];
    float acc = bf2f(conv_w[c * CONV_K + CONV_K - 1]) * cur;
#pragma unroll
    for (int i = 0; i < CONV_K - 1; i++) {
        const int q = p - (CONV_K - 1) + i;
        const float v = q < 0 ? 0.f : ring[(q % CONV_K) * GDN_C + c];
        acc += bf2f(conv_w[c * CONV_K + i]) * v;
    }
    if (write) ring[(p % CONV_K) * GDN_C + c] = cur;
    return silu(acc);
}

__device__ __forceinline__ float softplus(float x) { return x > 20.f ? x : log1pf(expf(x)); }

// conv1d update + SiLU + L2 norm of q, k + gating + delta-rule update + read-out, fused.
// grid (V, VD / CPB), block CPB * KG threads. Writes o [V][VD] (f32, before the gated norm).
extern "C" __global__ void __launch_bounds__(GDN_CPB * GDN_KG)
gdn_decode(const float* __restrict__ proj, const bf16* __restrict__ conv_w, float* ring,
           const float* __restrict__ a_log, const float* __restrict__ dt_bias, float* __restrict__ state,
           float* __restrict__ o, const int* __restrict__ pos_ptr, float eps) {
    __shared__ float qs[GDN_KEY_DIM], ks[GDN_KEY_DIM], vs[GDN_CPB];
    __shared__ float part_k[GDN_KG][GDN_CPB], part_q[GDN_KG][GDN_CPB], scratch[32];
    pdl_launch_next();
    pdl_wait();
    const int h = blockIdx.x, col0 = blockIdx.y * GDN_CPB;
    const int kh = h / (GDN_VALUE_HEADS / GDN_KEY_HEADS);
    const int p = *pos_ptr;
    // This thread's slice of S, loaded first so that the loads overlap the conv and the norms.
    const int col = threadIdx.x % GDN_CPB, kg = threadIdx.x / GDN_CPB;
    float* S = state + (long)h * GDN_KEY_DIM * GDN_VALUE_DIM + col0 + col;
    float s[GDN_RPT];
#pragma unroll
    for (int r = 0; r < GDN_RPT; r++) s[r] = S[(kg * GDN_RPT + r) * GDN_VALUE_DIM];
    const bool writes_qk = blockIdx.y == 0 && h % (GDN_VALUE_HEADS / GDN_KEY_HEADS) == 0;
    for (int t = threadIdx.x; t < 2 * GDN_KEY_DIM; t += blockDim.x) {
        const bool is_q = t < GDN_KEY_DIM;
        const int i = is_q ? t : t - GDN_KEY_DIM;
        const int c = (is_q ? 0 : GDN_KEY_HEADS * GDN_KEY_DIM) + kh * GDN_KEY_DIM + i;
        const float v = conv_channel(proj, conv_w, ring, c, p, writes_qk);
        if (is_q) qs[i] = v; else ks[i] = v;
    }
    for (int t = threadIdx.x; t < GDN_CPB; t += blockDim.x) {
        const int c = 2 * GDN_KEY_HEADS * GDN_KEY_DIM + h * GDN_VALUE_DIM + col0 + t;
        vs[t] = conv_channel(proj, conv_w, ring, c, p, true);
    }
    __syncthreads();
    float qq = 0.f, kk = 0.f, kq = 0.f;
    for (int i = threadIdx.x; i < GDN_KEY_DIM; i += blockDim.x) {
        qq += qs[i] * qs[i];
        kk += ks[i] * ks[i];
        kq += qs[i] * ks[i];
    }
    qq = block_sum(qq, scratch);
    kk = block_sum(kk, scratch);
    kq = block_sum(kq, scratch);
    const float qscale = rsqrtf(qq + eps) * rsqrtf((float)GDN_KEY_DIM);
    const float kscale = rsqrtf(kk + eps);
    kq *= qscale * kscale;
    const float beta = sigmoid(proj[GDN_B + h]);
    const float decay = expf(-expf(a_log[h]) * softplus(proj[GDN_A + h] + dt_bias[h]));

    float sk = 0.f, sq = 0.f;
#pragma unroll
    for (int r = 0; r < GDN_RPT; r++) {
        const int row = kg * GDN_RPT + r;
        s[r] *= decay;
        sk += s[r] * ks[row];
        sq += s[r] * qs[row];
    }
    part_k[kg][col] = sk * kscale;
    part_q[kg][col] = sq * qscale;
    __syncthreads();
    float SK = 0.f, SQ = 0.f;
#pragma unroll
    for (int g = 0; g < GDN_KG; g++) {
        SK += part_k[g][col];
        SQ += part_q[g][col];
    }
    const float d = beta * (vs[col] - SK);
#pragma unroll
    for (int r = 0; r < GDN_RPT; r++) {
        const int row = kg * GDN_RPT + r;
        S[row * GDN_VALUE_DIM] = s[r] + ks[row] * kscale * d;
    }
    if (kg == 0) o[h * GDN_VALUE_DIM + col0 + col] = SQ + d * kq;
}

// out = bf16(w * rmsnorm(o) * silu(z)) per value head (plain weight, not 1 + w). One warp per
// row (token, head) of `rows` = tokens * V, GDN_NORM_WARPS rows per block: a block per row was
// mostly launch overhead at 8K tokens. Token t's o, proj and out rows follow each other.
#define GDN_NORM_WARPS 8
extern "C" __global__ void __launch_bounds__(GDN_NORM_WARPS * 32)
gdn_gated_norm(const float* __restrict__ o, const float* __restrict__ proj, const bf16* __restrict__ w,
               bf16* __restrict__ out, float eps, int rows) {
    pdl_launch_next();
    pdl_wait();
    const int row = blockIdx.x * GDN_NORM_WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= rows) return;
    const long t = row / GDN_VALUE_HEADS;
    const int h = row % GDN_VALUE_HEADS;
    const float* oh = o + (long)row * GDN_VALUE_DIM;
    const float* z = proj + t * GDN_ROWS + GDN_Z + h * GDN_VALUE_DIM;
    bf16* dst = out + (long)row * GDN_VALUE_DIM;
    constexpr int PER_LANE = (GDN_VALUE_DIM + 31) / 32;
    float x[PER_LANE];
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < PER_LANE; j++) {
        const int i = lane + 32 * j;
        x[j] = i < GDN_VALUE_DIM ? oh[i] : 0.f;
        ss += x[j] * x[j];
    }
    const float r = rsqrtf(warp_sum(ss) / GDN_VALUE_DIM + eps);
#pragma unroll
    for (int j = 0; j < PER_LANE; j++) {
        const int i = lane + 32 * j;
        if (i < GDN_VALUE_DIM) dst[i] = f2bf(bf2f(w[i]) * (x[j] * r) * silu(z[i]));
    }
}

// ---- Prefill: a chunk of `tokens` tokens at positions start .. start + tokens - 1. ----
// Three passes: conv + activations for every token at once (parallel over tokens), the delta
// rule (sequential over tokens, parallel over value columns), then gdn_gated_norm over all rows.
// Between the first two, gdn_prefill_ring leaves the conv ring as gdn_decode expects it.

// Prep: tokens per block (the conv window slides along them in registers, so each raw input is
// read once per block) and threads per block (one per channel of a head).
#define GDN_PREP_TOKENS 8
#define GDN_MAXD (GDN_KEY_DIM > GDN_VALUE_DIM ? GDN_KEY_DIM : GDN_VALUE_DIM)
#define GDN_PREP_THREADS ((GDN_MAXD + 31) / 32 * 32)

// Raw conv input of channel c at absolute position p: this chunk's proj rows, else the ring
// (positions before the chunk), else zero (before the sequence).
__device__ __forceinline__ float conv_input(const float* __restrict__ proj, const float* __restrict__ ring,
                                            int c, int p, int start) {
    if (p >= start) return proj[(long)(p - start) * GDN_ROWS + c];
    if (p >= 0) return ring[(p % CONV_K) * GDN_C + c];
    return 0.f;
}

// One channel's causal conv over consecutive tokens: weights and the last CONV_K - 1 inputs held
// in registers. Taps are summed oldest first, as the CPU reference does.
struct ConvWindow {
    float w[CONV_K];
    float past[CONV_K - 1];
    __device__ __forceinline__ void init(const float* proj, const bf16* conv_w, const float* ring, int c, int p0,
                                         int start) {
#pragma unroll
        for (int i = 0; i < CONV_K; i++) w[i] = bf2f(conv_w[c * CONV_K + i]);
#pragma unroll
        for (int i = 0; i < CONV_K - 1; i++) past[i] = conv_input(proj, ring, c, p0 - (CONV_K - 1) + i, start);
    }
    __device__ __forceinline__ float next(float cur) {
        float acc = 0.f;
#pragma unroll
        for (int i = 0; i < CONV_K - 1; i++) acc += w[i] * past[i];
        acc += w[CONV_K - 1] * cur;
#pragma unroll
        for (int i = 0; i + 1 < CONV_K - 1; i++) past[i] = past[i + 1];
        past[CONV_K - 2] = cur;
        return silu(acc);
    }
};

// Three block-wide sums with one pair of barriers; every thread gets all three.
__device__ __forceinline__ void block_sum3(float& a, float& b, float& c, float (*scratch)[32]) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    a = warp_sum(a);
    b = warp_sum(b);
    c = warp_sum(c);
    __syncthreads();
    if (lane == 0) {
        scratch[0][warp] = a;
        scratch[1][warp] = b;
        scratch[2][warp] = c;
    }
    __syncthreads();
    a = warp_sum(lane < warps ? scratch[0][lane] : 0.f);
    b = warp_sum(lane < warps ? scratch[1][lane] : 0.f);
    c = warp_sum(lane < warps ? scratch[2][lane] : 0.f);
}

// This block's raw inputs of channel c, all issued before any is used (one memory latency per
// block instead of one per token).
__device__ __forceinline__ void load_tokens(const float* __restrict__ proj, int c, int t0, int tokens, bool live,
                                            float x[GDN_PREP_TOKENS]) {
#pragma unroll
    for (int j = 0; j < GDN_PREP_TOKENS; j++)
        x[j] = live && t0 + j < tokens ? proj[(long)(t0 + j) * GDN_ROWS + c] : 0.f;
}

// grid (ceil(tokens / GDN_PREP_TOKENS), K + V), block GDN_PREP_THREADS.
// Blocks y < K: key head y's q and k: conv + SiLU, L2-normalised (q also scaled by KD^-0.5),
// written to qn, kn [tokens, K, KD], with their dot product kq [tokens, K].
// Blocks y >= K: value head y - K: v [tokens, V, VD] (conv + SiLU), beta and the multiplicative
// decay exp(g) [tokens, V].
extern "C" __global__ void __launch_bounds__(GDN_PREP_THREADS)
gdn_prefill_prep(const float* __restrict__ proj, const bf16* __restrict__ conv_w, const float* __restrict__ ring,
                 const float* __restrict__ a_log, const float* __restrict__ dt_bias, float* __restrict__ qn,
                 float* __restrict__ kn, float* __restrict__ kq, float* __restrict__ vv, float* __restrict__ beta,
                 float* __restrict__ decay, int start, int tokens, float l2_eps) {
    __shared__ float scratch[3][32];
    pdl_launch_next();
    pdl_wait();
    const int t0 = blockIdx.x * GDN_PREP_TOKENS, i = threadIdx.x;
    if (blockIdx.y < GDN_KEY_HEADS) {
        const int kh = blockIdx.y;
        const bool live = i < GDN_KEY_DIM;
        const int cq = kh * GDN_KEY_DIM + i, ck = GDN_KEY_HEADS * GDN_KEY_DIM + cq;
        float rq[GDN_PREP_TOKENS], rk[GDN_PREP_TOKENS];
        load_tokens(proj, cq, t0, tokens, live, rq);
        load_tokens(proj, ck, t0, tokens, live, rk);
        ConvWindow wq, wk;
        if (live) {
            wq.init(proj, conv_w, ring, cq, start + t0, start);
            wk.init(proj, conv_w, ring, ck, start + t0, start);
        }
#pragma unroll
        for (int j = 0; j < GDN_PREP_TOKENS; j++) {
            const int t = t0 + j;
            if (t >= tokens) break;
            float q = 0.f, k = 0.f;
            if (live) {
                q = wq.next(rq[j]);
                k = wk.next(rk[j]);
            }
            float qq = q * q, kk = k * k, qk = q * k;
            block_sum3(qq, kk, qk, scratch);
            const float qscale = rsqrtf(qq + l2_eps) * rsqrtf((float)GDN_KEY_DIM);
            const float kscale = rsqrtf(kk + l2_eps);
            const long at = ((long)t * GDN_KEY_HEADS + kh) * GDN_KEY_DIM + i;
            if (live) {
                qn[at] = q * qscale;
                kn[at] = k * kscale;
            }
            if (i == 0) kq[(long)t * GDN_KEY_HEADS + kh] = qk * qscale * kscale;
        }
    } else {
        const int h = blockIdx.y - GDN_KEY_HEADS;
        const bool live = i < GDN_VALUE_DIM;
        const int c = 2 * GDN_KEY_HEADS * GDN_KEY_DIM + h * GDN_VALUE_DIM + i;
        float rv[GDN_PREP_TOKENS];
        load_tokens(proj, c, t0, tokens, live, rv);
        ConvWindow wv;
        if (live) wv.init(proj, conv_w, ring, c, start + t0, start);
#pragma unroll
        for (int j = 0; j < GDN_PREP_TOKENS; j++) {
            const int t = t0 + j;
            if (t >= tokens) break;
            if (live) vv[((long)t * GDN_VALUE_HEADS + h) * GDN_VALUE_DIM + i] = wv.next(rv[j]);
        }
        // The gates: one thread per token of the tile.
        if (i < GDN_PREP_TOKENS && t0 + i < tokens) {
            const float* row = proj + (long)(t0 + i) * GDN_ROWS;
            const long at = (long)(t0 + i) * GDN_VALUE_HEADS + h;
            beta[at] = sigmoid(row[GDN_B + h]);
            decay[at] = expf(-expf(a_log[h]) * softplus(row[GDN_A + h] + dt_bias[h]));
        }
    }
}

// Writes the chunk's last min(tokens, CONV_K) raw inputs to their ring slots (position % CONV_K),
// so gdn_decode at start + tokens continues exactly. A separate launch after gdn_prefill_prep:
// those slots may hold positions before the chunk that prep still reads.
// grid ceil(GDN_C / 256), block 256.
extern "C" __global__ void gdn_prefill_ring(const float* __restrict__ proj, float* __restrict__ ring, int start,
                                            int tokens) {
    pdl_launch_next();
    pdl_wait();
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= GDN_C) return;
    for (int t = max(0, tokens - CONV_K); t < tokens; t++)
        ring[((start + t) % CONV_K) * GDN_C + c] = proj[(long)t * GDN_ROWS + c];
}

// The delta rule over the chunk. The columns of S [KD, VD] are independent: GDN_RG lanes share a
// column, each holding KD / GDN_RG of its rows in registers for the whole chunk, so S^T k and
// S^T q are a few FMAs and a 3-step shuffle reduction per token (no block barrier per token).
// With o = (decayed S)^T q + d (k . q), S is read once and written once per token.
// The token loop is a serial chain of ~200 cycles per token, shorter than an L2 round trip, so
// the inputs are staged through shared memory GDN_TB tokens at a time with cp.async, the next
// stage loading while the current one is processed (loading one token ahead from L2 left the
// chain waiting on memory: 3.9 ms per layer at 8K tokens).
#define GDN_RG 8
#define GDN_CPW (32 / GDN_RG)
#define GDN_R (GDN_KEY_DIM / GDN_RG)
#define GDN_PWARPS ((GDN_VALUE_DIM < 32 ? GDN_VALUE_DIM + GDN_CPW - 1 : 32) / GDN_CPW)
#define GDN_PCOLS (GDN_PWARPS * GDN_CPW)
#define GDN_TB 32
// One stage: k and q rows of the key head, the block's v columns, beta, decay and k.q per token.
#define GDN_STAGE_FLOATS (GDN_TB * (2 * GDN_KEY_DIM + GDN_PCOLS + 3))

__device__ __forceinline__ unsigned gdn_smem_addr(const void* p) {
    unsigned r;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
    return r;
}
__device__ __forceinline__ void gdn_cp16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void gdn_cp4(unsigned dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(src) : "memory");
}

// grid (V, ceil(VD / GDN_PCOLS)), block GDN_PWARPS * 32, dynamic shared memory
// 2 * GDN_STAGE_FLOATS floats. o: [tokens, V, VD] before the gated norm.
extern "C" __global__ void __launch_bounds__(GDN_PWARPS * 32)
gdn_prefill_recurrent(const float* __restrict__ qn, const float* __restrict__ kn, const float* __restrict__ kq,
                      const float* __restrict__ vv, const float* __restrict__ beta,
                      const float* __restrict__ decay, float* __restrict__ state, float* __restrict__ o,
                      int tokens) {
    extern __shared__ __align__(16) float gdn_stage[];
    pdl_launch_next();
    pdl_wait();
    const int h = blockIdx.x, kh = h / (GDN_VALUE_HEADS / GDN_KEY_HEADS);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane / GDN_CPW;
    const int local_col = warp * GDN_CPW + lane % GDN_CPW;
    const int col0 = blockIdx.y * GDN_PCOLS, col = col0 + local_col;
    const bool live = col < GDN_VALUE_DIM;
    float* S = state + (long)h * GDN_KEY_DIM * GDN_VALUE_DIM + col;
    float s[GDN_R];
#pragma unroll
    for (int r = 0; r < GDN_R; r++) s[r] = live ? S[(g * GDN_R + r) * GDN_VALUE_DIM] : 0.f;

    // Stage layout (floats): k [TB][KD] | q [TB][KD] | v [TB][PCOLS] | beta [TB] | decay [TB] | kq [TB].
    constexpr int K_OFF = 0, Q_OFF = GDN_TB * GDN_KEY_DIM, V_OFF = 2 * GDN_TB * GDN_KEY_DIM;
    constexpr int B_OFF = V_OFF + GDN_TB * GDN_PCOLS, D_OFF = B_OFF + GDN_TB, KQ_OFF = D_OFF + GDN_TB;
    const long qk_stride = GDN_KEY_HEADS * GDN_KEY_DIM;
    auto stage_in = [&](int buf, int t0) {
        const unsigned base = gdn_smem_addr(gdn_stage + buf * GDN_STAGE_FLOATS);
        const int n = min(GDN_TB, tokens - t0);
        constexpr int ROW_CHUNKS = GDN_KEY_DIM / 4;
        for (int i = threadIdx.x; i < 2 * n * ROW_CHUNKS; i += blockDim.x) {
            const int which = i / (n * ROW_CHUNKS), rest = i % (n * ROW_CHUNKS);
            const int tt = rest / ROW_CHUNKS, c = rest % ROW_CHUNKS;
            const float* src = (which ? qn : kn) + (t0 + tt) * qk_stride + kh * GDN_KEY_DIM + 4 * c;
            gdn_cp16(base + 4 * ((which ? Q_OFF : K_OFF) + tt * GDN_KEY_DIM + 4 * c), src);
        }
        for (int i = threadIdx.x; i < n * GDN_PCOLS; i += blockDim.x) {
            const int tt = i / GDN_PCOLS, c = i % GDN_PCOLS;
            if (col0 + c < GDN_VALUE_DIM)
                gdn_cp4(base + 4 * (V_OFF + i), vv + ((long)(t0 + tt) * GDN_VALUE_HEADS + h) * GDN_VALUE_DIM + col0 + c);
        }
        for (int tt = threadIdx.x; tt < n; tt += blockDim.x) {
            const long t = t0 + tt;
            gdn_cp4(base + 4 * (B_OFF + tt), beta + t * GDN_VALUE_HEADS + h);
            gdn_cp4(base + 4 * (D_OFF + tt), decay + t * GDN_VALUE_HEADS + h);
            gdn_cp4(base + 4 * (KQ_OFF + tt), kq + t * GDN_KEY_HEADS + kh);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    };

    // The registers hold S / scale: the decay then costs one multiply of `scale` per token instead
    // of one per element. When scale falls below 1e-8 it is folded into the registers and reset,
    // so 1 / scale stays finite (a decay that underflows to 0 just clears the state).
    float scale = 1.f;
    const int stages = (tokens + GDN_TB - 1) / GDN_TB;
    if (stages > 0) stage_in(0, 0);
    for (int c = 0; c < stages; c++) {
        if (c + 1 < stages) {
            stage_in((c + 1) & 1, (c + 1) * GDN_TB);
            asm volatile("cp.async.wait_group 1;" ::: "memory");
        } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        }
        __syncthreads();
        const float* st = gdn_stage + (c & 1) * GDN_STAGE_FLOATS;
        const int t0 = c * GDN_TB, n = min(GDN_TB, tokens - t0);
        for (int tt = 0; tt < n; tt++) {
            float k[GDN_R], q[GDN_R];
#pragma unroll
            for (int r = 0; r < GDN_R; r++) {
                k[r] = st[K_OFF + tt * GDN_KEY_DIM + g * GDN_R + r];
                q[r] = st[Q_OFF + tt * GDN_KEY_DIM + g * GDN_R + r];
            }
            const float v = st[V_OFF + tt * GDN_PCOLS + local_col];
            scale *= st[D_OFF + tt];
            if (scale < 1e-8f) {
#pragma unroll
                for (int r = 0; r < GDN_R; r++) s[r] *= scale;
                scale = 1.f;
            }
            const float inv_scale = 1.f / scale;
            float sk0 = 0.f, sk1 = 0.f, sq0 = 0.f, sq1 = 0.f;
#pragma unroll
            for (int r = 0; r < GDN_R; r += 2) {
                sk0 = fmaf(s[r], k[r], sk0);
                sq0 = fmaf(s[r], q[r], sq0);
                if (r + 1 < GDN_R) {
                    sk1 = fmaf(s[r + 1], k[r + 1], sk1);
                    sq1 = fmaf(s[r + 1], q[r + 1], sq1);
                }
            }
            float sk = sk0 + sk1, sq = sq0 + sq1;
#pragma unroll
            for (int m = GDN_CPW; m < 32; m <<= 1) {
                sk += __shfl_xor_sync(0xffffffffu, sk, m);
                sq += __shfl_xor_sync(0xffffffffu, sq, m);
            }
            const float d = st[B_OFF + tt] * (v - scale * sk);
            const float d_scaled = d * inv_scale;
#pragma unroll
            for (int r = 0; r < GDN_R; r++) s[r] = fmaf(k[r], d_scaled, s[r]);
            if (g == 0 && live) o[((long)(t0 + tt) * GDN_VALUE_HEADS + h) * GDN_VALUE_DIM + col] = scale * sq + d * st[KQ_OFF + tt];
        }
        // The next iteration stages into the buffer just read.
        __syncthreads();
    }
    if (live) {
#pragma unroll
        for (int r = 0; r < GDN_R; r++) S[(g * GDN_R + r) * GDN_VALUE_DIM] = s[r] * scale;
    }
}
