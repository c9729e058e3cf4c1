// Gated DeltaNet, for decode and for prefill. Needs: GDN_KEY_HEADS, GDN_VALUE_HEADS,
// GDN_KEY_DIM, GDN_VALUE_DIM, CONV_K.
//
// Decode, one token: gdn_decode (conv, activations, gates, q/k norms and the delta-rule update
// of the recurrent state, in one launch), then the gated norm (gdn_gated_norm_decode). Prefill, a
// chunk of tokens (below, "Prefill"): gdn_prefill_prep (conv and activations for every token),
// gdn_prefill_ring (the conv ring as decode expects it), the chunked gated delta rule on the
// tensor cores (gdn_chunk_solve within each chunk, gdn_chunk_scan across chunks), then
// gdn_gated_norm. Both leave the same conv ring and recurrent state, so decode continues where
// a prefill ends.
//
// `proj` is the output of the one concatenated input projection:
//   [ q (K*KD) | k (K*KD) | v (V*VD) | z (V*VD) | b (V) | a (V) ]   (f32)
// The conv state is a ring of the last CONV_K raw inputs (slot = position % CONV_K) rather than
// a shifted window: several blocks read the same q/k channels in one launch, and with a ring the
// slot being written this step is never one that any block reads, so there is no race.
// The recurrent state S is f32 [V][KD][VD] because rounding compounds across tokens. Decode
// keeps two of them per layer, [2][V][KD][VD]: the step at position p reads S[p % 2] and writes
// S[(p + 1) % 2], so a step run ahead of the host (steps.rs: pick_after) is undone by not
// advancing the position: the state it started from is still there.
#define GDN_STATE_HALF ((long)GDN_VALUE_HEADS * GDN_KEY_DIM * GDN_VALUE_DIM)

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
static_assert(2 * GDN_KEY_DIM <= GDN_CPB * GDN_KG, "gdn_decode: a thread per q|k channel");

// One conv channel of the decode step: its weights and its history (the ring's last CONV_K - 1
// inputs, zero before position 0), both asked for before the PDL wait, then the output.
struct ConvChannel {
    float w[CONV_K], hist[CONV_K - 1];
    __device__ __forceinline__ void weights(const bf16* __restrict__ conv_w, int c) {
#pragma unroll
        for (int i = 0; i < CONV_K; i++) w[i] = bf2f(ld_early(conv_w + c * CONV_K + i));
    }
    __device__ __forceinline__ void history(const float* ring, int c, int p) {
#pragma unroll
        for (int i = 0; i < CONV_K - 1; i++) {
            const int q = p - (CONV_K - 1) + i;
            hist[i] = q < 0 ? 0.f : __ldcg(ring + (q % CONV_K) * GDN_C + c);
        }
    }
    __device__ __forceinline__ float out(float cur) const {
        float acc = w[CONV_K - 1] * cur;
#pragma unroll
        for (int i = 0; i < CONV_K - 1; i++) acc += w[i] * hist[i];
        return silu(acc);
    }
};

__device__ __forceinline__ float softplus(float x) { return x > 20.f ? x : log1pf(expf(x)); }

// conv1d update + SiLU + L2 norm of q, k + gating + delta-rule update + read-out, fused.
// grid (V, VD / CPB), block CPB * KG threads. Writes o [V][VD] (f32, before the gated norm).
// state: the layer's pair [2][V][KD][VD] (above).
extern "C" __global__ void __launch_bounds__(GDN_CPB * GDN_KG)
gdn_decode(const float* __restrict__ proj, const bf16* __restrict__ conv_w, float* ring,
           const float* __restrict__ a_log, const float* __restrict__ dt_bias, float* __restrict__ state,
           float* __restrict__ o, const int* __restrict__ pos_ptr, int pos_lag, float eps) {
    __shared__ float qs[GDN_KEY_DIM], ks[GDN_KEY_DIM], vs[GDN_CPB];
    __shared__ float part_k[GDN_KG][GDN_CPB], part_q[GDN_KG][GDN_CPB];
    pdl_launch_next();
    const int h = blockIdx.x, col0 = blockIdx.y * GDN_CPB;
    const int kh = h / (GDN_VALUE_HEADS / GDN_KEY_HEADS);
    // This thread's slice of S, asked for before the PDL wait so that the loads overlap the
    // in_proj still streaming: S is this layer's own, last written a step ago (a previous graph
    // launch) or by the prefill, complete before this step began. Read at L2: before the wait a
    // line in this SM's L1 may be older than that.
    const int col = threadIdx.x % GDN_CPB, kg = threadIdx.x / GDN_CPB;
    float* const S0 = state + (long)h * GDN_KEY_DIM * GDN_VALUE_DIM + col0 + col;
    float s[GDN_RPT];
    auto load_state = [&](int at) {
        const float* S = S0 + (at & 1) * GDN_STATE_HALF;
#pragma unroll
        for (int r = 0; r < GDN_RPT; r++) s[r] = __ldcg(S + (kg * GDN_RPT + r) * GDN_VALUE_DIM);
    };
    // The half is the position's: the guess below, checked after the wait. Where the step
    // before is still ending (the first GDN layer of a step that follows another in a captured
    // run: its blocks wait here during the last step's lm_head), the position read now is that
    // step's, one behind: pos_lag says so.
    const int guess = __ldcg(pos_ptr) + pos_lag;
    load_state(guess);
    const float a_log_h = ld_early(a_log + h), dt_bias_h = ld_early(dt_bias + h);
    // Thread t < 2 KD convolves channel t of q|k (its key head's), thread t < CPB value column
    // t of the block. The history is an earlier step's (the slot written this step is never one
    // read), so it too is asked for before the wait, at the position read then: a guess (a
    // plain early read of the position was stale on the H200, see common.cuh), checked after
    // the wait, when a wrong one is asked for again. The wait's path is then one round trip
    // (the position, this step's inputs and gates together) instead of two.
    const bool has_qk = threadIdx.x < 2 * GDN_KEY_DIM, has_v = threadIdx.x < GDN_CPB;
    const bool is_q = threadIdx.x < GDN_KEY_DIM;
    const int i_qk = is_q ? threadIdx.x : threadIdx.x - GDN_KEY_DIM;
    const int c_qk = (is_q ? 0 : GDN_KEY_HEADS * GDN_KEY_DIM) + kh * GDN_KEY_DIM + i_qk;
    const int c_v = 2 * GDN_KEY_HEADS * GDN_KEY_DIM + h * GDN_VALUE_DIM + col0 + threadIdx.x;
    ConvChannel conv_qk, conv_v;
    if (has_qk) conv_qk.weights(conv_w, c_qk);
    if (has_v) conv_v.weights(conv_w, c_v);
    auto history = [&](int at) {
        if (has_qk) conv_qk.history(ring, c_qk, at);
        if (has_v) conv_v.history(ring, c_v, at);
    };
    history(guess);
    pdl_wait();
    const int p = __ldcg(pos_ptr);
    if ((p ^ guess) & 1) load_state(p);
    const float cur_qk = has_qk ? __ldcg(proj + c_qk) : 0.f, cur_v = has_v ? __ldcg(proj + c_v) : 0.f;
    // The gates' inputs now, not after the block sums: a memory round trip off the path.
    const float b_in = __ldcg(proj + GDN_B + h), a_in = __ldcg(proj + GDN_A + h);
    if (p != guess) history(p);
    if (has_qk) {
        const float v = conv_qk.out(cur_qk);
        if (is_q) qs[i_qk] = v; else ks[i_qk] = v;
        if (blockIdx.y == 0 && h % (GDN_VALUE_HEADS / GDN_KEY_HEADS) == 0) ring[(p % CONV_K) * GDN_C + c_qk] = cur_qk;
    }
    if (has_v) {
        vs[threadIdx.x] = conv_v.out(cur_v);
        ring[(p % CONV_K) * GDN_C + c_v] = cur_v;
    }
    __syncthreads();
    // Every warp sums q.q, k.k and q.k over the whole head itself: no block sums, whose six
    // barriers were on the path.
    float qq = 0.f, kk = 0.f, kq = 0.f;
    for (int i = threadIdx.x & 31; i < GDN_KEY_DIM; i += 32) {
        qq += qs[i] * qs[i];
        kk += ks[i] * ks[i];
        kq += qs[i] * ks[i];
    }
    qq = warp_sum(qq);
    kk = warp_sum(kk);
    kq = warp_sum(kq);
    const float qscale = rsqrtf(qq + eps) * rsqrtf((float)GDN_KEY_DIM);
    const float kscale = rsqrtf(kk + eps);
    kq *= qscale * kscale;
    const float beta = sigmoid(b_in);
    const float decay = expf(-expf(a_log_h) * softplus(a_in + dt_bias_h));

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
    float* S = S0 + ((p + 1) & 1) * GDN_STATE_HALF;
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
// EARLY (the decode step's): the weight asked for before the PDL wait (at L2) and z with o, so
// the only round trip after the wait is theirs; the prefill's warps read both after the sum,
// through L1, since the early loads at L2 slowed the prefill by more than they save a decode
// step (docs/TRIED.md, "Decode: GDN").
#define GDN_NORM_WARPS 8
template <bool EARLY>
__device__ __forceinline__ void gated_rmsnorm_rows(const float* __restrict__ o, const float* __restrict__ proj,
                                                const bf16* __restrict__ w, bf16* __restrict__ out, float eps,
                                                int rows) {
    constexpr int PER_LANE = (GDN_VALUE_DIM + 31) / 32;
    pdl_launch_next();
    const int row = blockIdx.x * GDN_NORM_WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    float wf[PER_LANE], zf[PER_LANE];
    if constexpr (EARLY) {
#pragma unroll
        for (int j = 0; j < PER_LANE; j++) {
            const int i = lane + 32 * j;
            wf[j] = i < GDN_VALUE_DIM ? bf2f(ld_early(w + i)) : 0.f;
        }
    }
    pdl_wait();
    if (row >= rows) return;
    const long t = row / GDN_VALUE_HEADS;
    const int h = row % GDN_VALUE_HEADS;
    const float* oh = o + (long)row * GDN_VALUE_DIM;
    const float* z = proj + t * GDN_ROWS + GDN_Z + h * GDN_VALUE_DIM;
    bf16* dst = out + (long)row * GDN_VALUE_DIM;
    float x[PER_LANE];
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < PER_LANE; j++) {
        const int i = lane + 32 * j;
        x[j] = i < GDN_VALUE_DIM ? oh[i] : 0.f;
        if constexpr (EARLY) zf[j] = i < GDN_VALUE_DIM ? __ldcg(z + i) : 0.f;
        ss += x[j] * x[j];
    }
    const float r = rsqrtf(warp_sum(ss) / GDN_VALUE_DIM + eps);
#pragma unroll
    for (int j = 0; j < PER_LANE; j++) {
        const int i = lane + 32 * j;
        if (i >= GDN_VALUE_DIM) continue;
        if constexpr (!EARLY) {
            wf[j] = bf2f(w[i]);
            zf[j] = z[i];
        }
        dst[i] = f2bf(wf[j] * (x[j] * r) * silu(zf[j]));
    }
}
extern "C" __global__ void __launch_bounds__(GDN_NORM_WARPS * 32)
gdn_gated_norm(const float* __restrict__ o, const float* __restrict__ proj, const bf16* __restrict__ w,
               bf16* __restrict__ out, float eps, int rows) {
    gated_rmsnorm_rows<false>(o, proj, w, out, eps, rows);
}
extern "C" __global__ void __launch_bounds__(GDN_NORM_WARPS * 32)
gdn_gated_norm_decode(const float* __restrict__ o, const float* __restrict__ proj, const bf16* __restrict__ w,
                      bf16* __restrict__ out, float eps, int rows) {
    gated_rmsnorm_rows<true>(o, proj, w, out, eps, rows);
}

// ---- Prefill: a chunk of `tokens` tokens at positions start .. start + tokens - 1. ----
// Four passes: conv + activations for every token at once (parallel over tokens), the delta
// rule in chunks of GDN_CH tokens (gdn_chunk_solve: everything within a chunk that does not
// depend on the incoming state, parallel over chunks; gdn_chunk_scan: sequential over chunks,
// parallel over value columns), then gdn_gated_norm over all rows.
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

// Two block-wide sums with one pair of barriers; every thread gets both.
__device__ __forceinline__ void block_sum2(float& a, float& b, float (*scratch)[32]) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    a = warp_sum(a);
    b = warp_sum(b);
    __syncthreads();
    if (lane == 0) {
        scratch[0][warp] = a;
        scratch[1][warp] = b;
    }
    __syncthreads();
    a = warp_sum(lane < warps ? scratch[0][lane] : 0.f);
    b = warp_sum(lane < warps ? scratch[1][lane] : 0.f);
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
// written to qn, kn [tokens, K, KD].
// Blocks y >= K: value head y - K: v [tokens, V, VD] (conv + SiLU), beta and the log decay
// g <= 0 [tokens, V] (the chunked delta rule takes differences of its running sums; exp(g) itself
// may underflow to 0, whose log is not usable).
extern "C" __global__ void __launch_bounds__(GDN_PREP_THREADS)
gdn_prefill_prep(const float* __restrict__ proj, const bf16* __restrict__ conv_w, const float* __restrict__ ring,
                 const float* __restrict__ a_log, const float* __restrict__ dt_bias, float* __restrict__ qn,
                 float* __restrict__ kn, float* __restrict__ vv, float* __restrict__ beta,
                 float* __restrict__ log_decay, int start, int tokens, float l2_eps) {
    __shared__ float scratch[2][32];
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
            float qq = q * q, kk = k * k;
            block_sum2(qq, kk, scratch);
            const float qscale = rsqrtf(qq + l2_eps) * rsqrtf((float)GDN_KEY_DIM);
            const float kscale = rsqrtf(kk + l2_eps);
            const long at = ((long)t * GDN_KEY_HEADS + kh) * GDN_KEY_DIM + i;
            if (live) {
                qn[at] = q * qscale;
                kn[at] = k * kscale;
            }
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
            log_decay[at] = -expf(a_log[h]) * softplus(row[GDN_A + h] + dt_bias[h]);
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

// ---- The delta rule in chunks of GDN_CH tokens (the chunked gated delta rule). ----
// Per value head, with G_i the running sum of the log decay within the chunk, Gam_i = exp(G_i):
//   A_ij = beta_i exp(G_i - G_j) k_i.k_j (j < i),  P_ij = exp(G_i - G_j) q_i.k_j (j <= i),
//   [U | W] = (I + A)^-1 [beta v | beta Gam k],
//   D = U - W S0,  O = Gam (q S0) + P D,  S = Gam_last S0 + sum_i exp(G_last - G_i) k_i D_i^T.
// gdn_chunk_solve computes A, P, U and W for every chunk at once; gdn_chunk_scan carries S
// across the chunks. Every exponent is <= 0 (G falls along the chunk), so nothing overflows.
#define GDN_CH 64
// KD rounded up to 16 (the tensor-core tiles' k step, and K^T D's 16-row tiles); the padding is zero.
#define GDN_KDP ((GDN_KEY_DIM + 15) / 16 * 16)
// Row stride of gdn_chunk_scan's staged k, q and W rows: GDN_KDP plus 4, so that the 8 rows of a
// fragment start on different banks.
#define GDN_KP (GDN_KDP + 4)
#define GDN_AP (GDN_CH + 4)
#define GDN_CHUNK_THREADS 256
// gdn_chunk_solve holds k's and q's rows as bf16 hi/lo planes ([GDN_CH][GDN_KBP] halves each, two
// planes in GDN_CH * GDN_KBP floats; rows of GDN_KDP + 8 halves: ldmatrix's 8 rows of 16 bytes
// 4 banks apart). q's planes are dead once P is written; T = (I + A)^-1 goes over them: its bf16
// halves (two [GDN_CH][GDN_TP] planes, GDN_CH * GDN_TP floats), and behind them T in f32 as it
// is built ([GDN_CH][GDN_CH]).
#define GDN_KBP (GDN_KDP + 8)
#define GDN_TP (GDN_CH + 8)
#define GDN_QT_FLOATS (GDN_CH * GDN_KBP > GDN_CH * (GDN_TP + GDN_CH) ? GDN_CH * GDN_KBP : GDN_CH * (GDN_TP + GDN_CH))
// gdn_chunk_solve's warps take U's first n-tiles (v's columns 0 .. GDN_V0) from registers
// loaded early; v's columns from GDN_V0 up to the n-tiles' end (GDN_VS of them) it stages in
// shared memory, row stride GDN_VSP (32 k + 8: the 4 rows of a B fragment on different banks).
#define GDN_V0 (8 * (GDN_CHUNK_THREADS / 32))
#define GDN_VS ((GDN_VALUE_DIM + 7) / 8 * 8 > GDN_V0 ? (GDN_VALUE_DIM + 7) / 8 * 8 - GDN_V0 : 0)
#define GDN_VSP (GDN_VS > 0 ? GDN_VS + 8 : 0)
#define GDN_SOLVE_FLOATS (GDN_CH * GDN_KBP + GDN_QT_FLOATS + GDN_CH * GDN_AP + 3 * GDN_CH + GDN_CH * GDN_VSP)
// gdn_chunk_scan: value columns per block, and the row stride of its [.][GDN_SC] tiles, which
// puts the 4 rows of a tf32 B fragment on different banks.
#define GDN_SC 32
#define GDN_SCP (GDN_SC + 8)
// Row strides (bf16 elements) of gdn_chunk_scan's transposed bf16 halves of S ([GDN_SC][GDN_SBP])
// and of the decay-weighted D ([GDN_SC][GDN_DBP]): whole 16-byte ldmatrix rows, 8 rows 4 banks
// apart. Two such planes take GDN_SC * stride floats.
#define GDN_SBP (GDN_KDP + 8)
#define GDN_DBP (GDN_CH + 8)
#define GDN_SCAN_FLOATS                                                                                   \
    (GDN_KDP * GDN_SCP + GDN_SC * GDN_SBP + 3 * GDN_CH * GDN_KP + GDN_CH * GDN_AP + 3 * GDN_CH * GDN_SCP + \
     GDN_SC * GDN_DBP + 2 * GDN_CH)

__device__ __forceinline__ float4 gdn_ld4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ __forceinline__ void gdn_st4(float* p, float a, float b, float c, float d) {
    float4 v;
    v.x = a;
    v.y = b;
    v.z = c;
    v.w = d;
    *reinterpret_cast<float4*>(p) = v;
}
__device__ __forceinline__ void gdn_zero4(float* p) { gdn_st4(p, 0.f, 0.f, 0.f, 0.f); }

// Stages rows 0 .. GDN_CH - 1 of F4 float4s each, global row r at src + r * src_stride, into
// shared rows dst + r * dst_stride, with cp.async (the caller commits). A float4 that
// real(r, c) rejects is zeroed instead, or with ZERO false left as it was. Each thread keeps
// one float4 column and steps by whole rows, so a copy costs a pointer add: dividing the
// element index for every copy, with its 64-bit address arithmetic, was ~15% of
// gdn_chunk_scan's instructions (Nsight Compute).
template <int F4, bool ZERO, typename Real>
__device__ __forceinline__ void gdn_stage_rows(float* dst, int dst_stride, const float* src, long src_stride,
                                               Real real) {
    static_assert(F4 <= GDN_CHUNK_THREADS, "a row wider than the block");
    constexpr int RP = GDN_CHUNK_THREADS / F4;
    const int r0 = threadIdx.x / F4, c = 4 * (threadIdx.x % F4);
    if (r0 >= RP) return;
    dst += r0 * dst_stride + c;
    src += r0 * src_stride + c;
    for (int r = r0; r < GDN_CH; r += RP, dst += RP * dst_stride, src += RP * src_stride) {
        if (real(r, c))
            cp_async16(dst, src);
        else if (ZERO)
            gdn_zero4(dst);
    }
}

// 3xTF32 on the tensor cores: x = hi + lo with both halves tf32, and a b = a_lo b_hi + a_hi b_lo +
// a_hi b_hi, which keeps about f32 accuracy (plain tf32 left the state ~5e-4 off).
struct Tf32Split {
    unsigned hi, lo;
};
// hi is x rounded to tf32's 10 mantissa bits by hand and lo = x - hi, exact. The tensor cores
// read only a tf32 operand's top 19 bits, so lo goes in unrounded (truncated there, an error
// below 2^-21 |x|). cvt.rna.tf32.f32 compiles to 4 instructions for hi and 3 for lo on sm_90
// (it also handles NaN and infinity, which these finite operands never are): with the address
// arithmetic, the largest share of the chunked delta rule's instructions when the scan was
// issue-bound at 2 warps per scheduler (Nsight Compute).
__device__ __forceinline__ Tf32Split gdn_split(float x) {
    const unsigned hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    return {hi, __float_as_uint(x - __uint_as_float(hi))};
}
__device__ __forceinline__ void gdn_mma_tf32(float c[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                             unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// c + cs += A B for one m16n8k8 step: a holds A's (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)
// and b holds B's (t, g), (t + 4, g), g = lane / 4, t = lane % 4 (PTX ISA, mma.m16n8k8 .tf32).
// The small terms go to cs, which may be c itself: apart, the dependent chain of tensor-core
// ops a k-loop builds is 2 long per step instead of 3 (the scan waits on it), at 4 registers
// per tile.
__device__ __forceinline__ void gdn_mma3(float c[4], float cs[4], const Tf32Split a[4], const Tf32Split b[2]) {
    gdn_mma_tf32(cs, a[0].lo, a[1].lo, a[2].lo, a[3].lo, b[0].hi, b[1].hi);
    gdn_mma_tf32(cs, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b[0].lo, b[1].lo);
    gdn_mma_tf32(c, a[0].hi, a[1].hi, a[2].hi, a[3].hi, b[0].hi, b[1].hi);
}

// The same accuracy class from bf16 halves: x = hi + lo + e with hi = bf16(x), lo = bf16(x - hi),
// |e| <= 2^-17 |x|, and a b = a_lo b_hi + a_hi b_lo + a_hi b_hi (the dropped a_lo b_lo is below
// 2^-16 |a b|). A bf16 m16n8k16 op does twice the k of a tf32 m16n8k8 one at twice the rate, and
// ldmatrix loads 16-bit fragments as they are. A pair of floats (the lower index in the low half).
struct Bf16Split {
    unsigned hi, lo;
};
__device__ __forceinline__ Bf16Split gdn_split_bf16(float x0, float x1) {
    const unsigned hi = pack_bf16(x0, x1);
    return {hi, pack_bf16(x0 - __uint_as_float(hi << 16), x1 - __uint_as_float(hi & 0xffff0000u))};
}
__device__ __forceinline__ void gdn_mma3_bf16(float c[4], float cs[4], const unsigned ah[4], const unsigned al[4],
                                              const unsigned bh[2], const unsigned bl[2]) {
    mma_bf16(cs, al, bh[0], bh[1]);
    mma_bf16(cs, ah, bl[0], bl[1]);
    mma_bf16(c, ah, bh[0], bh[1]);
}
// A bf16 m16n8k16 A fragment's hi and lo halves from f32 rows (row-major, row stride GDN_KP):
// `rows` points at row g, column 2t of the tile (g = lane / 4, t = lane % 4); a register holds
// rows g, g + 8 at columns 2t, 2t + 1, then 2t + 8, 2t + 9, of the k-step at k0.
__device__ __forceinline__ void gdn_split_rows_bf16(const float* rows, int k0, unsigned ah[4], unsigned al[4]) {
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const float2 x = *reinterpret_cast<const float2*>(rows + (r & 1) * 8 * GDN_KP + k0 + (r >> 1) * 8);
        const Bf16Split v = gdn_split_bf16(x.x, x.y);
        ah[r] = v.hi;
        al[r] = v.lo;
    }
}

// grid (ceil(tokens / GDN_CH), V), block GDN_CHUNK_THREADS, dynamic shared memory
// GDN_SOLVE_FLOATS floats. Inputs as gdn_prefill_prep writes them. Writes, for the chunk's real
// tokens t: W [tokens, V, KD], U [tokens, V, VD], row t of the chunk's P [tokens, V, GDN_CH]
// (only its 4-column groups up to the diagonal; the diagonal group is zero right of it) and
// G [tokens, V].
// Two blocks per SM (the shared memory allows two): the substitution keeps only two warps of a
// block busy, the other block fills the SM meanwhile.
extern "C" __global__ void __launch_bounds__(GDN_CHUNK_THREADS, 2)
gdn_chunk_solve(const float* __restrict__ qn, const float* __restrict__ kn, const float* __restrict__ vv,
                const float* __restrict__ beta, const float* __restrict__ log_decay, float* __restrict__ w_out,
                float* __restrict__ u_out, float* __restrict__ p_out, float* __restrict__ g_out, int tokens) {
    extern __shared__ __align__(16) float gdn_solve_smem[];
    pdl_launch_next();
    pdl_wait();
    bf16* kh = reinterpret_cast<bf16*>(gdn_solve_smem);  // k rows' hi halves [GDN_CH][GDN_KBP]
    bf16* kl = kh + GDN_CH * GDN_KBP;                     // and lo halves
    float* qs = gdn_solve_smem + GDN_CH * GDN_KBP;        // q's planes likewise; later T's
    bf16* qh = reinterpret_cast<bf16*>(qs);
    bf16* ql = qh + GDN_CH * GDN_KBP;
    float* as = qs + GDN_QT_FLOATS;    // A [GDN_CH][GDN_AP]
    float* bs = as + GDN_CH * GDN_AP;  // beta [GDN_CH]
    float* gs = bs + GDN_CH;           // G [GDN_CH]
    float* wsc = gs + GDN_CH;          // beta Gam, W's right-hand side scale per row
    float* vsm = wsc + GDN_CH;         // v's columns GDN_V0 .. [GDN_CH][GDN_VSP]
    bf16* th = reinterpret_cast<bf16*>(qs);
    bf16* tl = th + GDN_CH * GDN_TP;
    const int tid = threadIdx.x;
    const int h = blockIdx.y, key_head = h / (GDN_VALUE_HEADS / GDN_KEY_HEADS);
    const int t0 = blockIdx.x * GDN_CH, n = min(GDN_CH, tokens - t0);

    // VD is a multiple of 4, so each 4 columns are all real or all padding.
    if (GDN_VS > 0)
        gdn_stage_rows<(GDN_VS > 0 ? GDN_VS / 4 : 1), true>(
            vsm, GDN_VSP, vv + ((long)t0 * GDN_VALUE_HEADS + h) * GDN_VALUE_DIM + GDN_V0,
            GDN_VALUE_HEADS * GDN_VALUE_DIM, [&](int r, int c) { return r < n && GDN_V0 + c < GDN_VALUE_DIM; });
    cp_async_commit();
    if (tid < GDN_CH) {
        const long at = (long)(t0 + tid) * GDN_VALUE_HEADS + h;
        bs[tid] = tid < n ? beta[at] : 0.f;
        gs[tid] = tid < n ? log_decay[at] : 0.f;
    }
    // This warp's first n-tile of [U | W] (a U tile for the full model) takes its right-hand side
    // from v in global memory: those loads are issued now, so that their latency passes under
    // the products and the substitution instead of stalling the last product (the kernel's main
    // stall when they were loaded there). More tiles' worth of registers would spill; U's later
    // tiles read v from shared memory (vsm): loaded from global memory in the product, they were
    // the solve's largest stall left (Nsight Compute: FMULs waiting on them).
    const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    constexpr int UT = (GDN_VALUE_DIM + 7) / 8, NT = UT + GDN_KDP / 8, MT = GDN_CH / 16;
    constexpr int NQ = (NT + GDN_CHUNK_THREADS / 32 - 1) / (GDN_CHUNK_THREADS / 32);
    auto v_at = [&](int nt, int j) {
        const int col = 8 * nt + g;
        return j < n && col < GDN_VALUE_DIM ? vv[((long)(t0 + j) * GDN_VALUE_HEADS + h) * GDN_VALUE_DIM + col] : 0.f;
    };
    // A bf16 B fragment's rows for k-step k0: k0 + 2t, k0 + 2t + 1, k0 + 2t + 8, k0 + 2t + 9.
    auto b_row = [&](int k0, int r) { return k0 + 2 * t + (r & 1) + 8 * (r >> 1); };
    float vpre[GDN_CH / 16][4];
#pragma unroll
    for (int k16 = 0; k16 < GDN_CH / 16; k16++)
#pragma unroll
        for (int r = 0; r < 4; r++) vpre[k16][r] = warp < UT ? v_at(warp, b_row(16 * k16, r)) : 0.f;
    // k's and q's rows, split into their bf16 halves once: every tile that reads an element (as A
    // along its row of tiles, as B down its column) split it again when the rows were f32 (ncu:
    // the splits were most of the products' instructions). All loads are issued before the first
    // split. Padding rows past the chunk's last token are zero (k = q = beta = g = 0: their A
    // rows are zero and their G repeats the last real one), and so are columns past KD.
    {
        constexpr int F4 = GDN_KDP / 4, PER = (GDN_CH * F4 + GDN_CHUNK_THREADS - 1) / GDN_CHUNK_THREADS;
        const long at = ((long)t0 * GDN_KEY_HEADS + key_head) * GDN_KEY_DIM, stride = GDN_KEY_HEADS * GDN_KEY_DIM;
        float4 kv[PER], qv[PER];
#pragma unroll
        for (int i = 0; i < PER; i++) {
            const int c = tid + i * GDN_CHUNK_THREADS, r = c / F4, col = 4 * (c % F4);
            const bool real = c < GDN_CH * F4 && r < n && col < GDN_KEY_DIM;
            kv[i] = real ? gdn_ld4(kn + at + r * stride + col) : make_float4(0.f, 0.f, 0.f, 0.f);
            qv[i] = real ? gdn_ld4(qn + at + r * stride + col) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        auto put = [&](bf16* hi, bf16* lo, int at, float4 v) {
            const Bf16Split a = gdn_split_bf16(v.x, v.y), b = gdn_split_bf16(v.z, v.w);
            *reinterpret_cast<uint2*>(hi + at) = make_uint2(a.hi, b.hi);
            *reinterpret_cast<uint2*>(lo + at) = make_uint2(a.lo, b.lo);
        };
#pragma unroll
        for (int i = 0; i < PER; i++) {
            const int c = tid + i * GDN_CHUNK_THREADS, at = c / F4 * GDN_KBP + 4 * (c % F4);
            if (c < GDN_CH * F4) {
                put(kh, kl, at, kv[i]);
                put(qh, ql, at, qv[i]);
            }
        }
    }
    cp_async_wait<0>();
    __syncthreads();
    if (tid == 0) {
        float acc = 0.f;
        for (int i = 0; i < GDN_CH; i++) {
            acc += gs[i];
            gs[i] = acc;
        }
    }
    __syncthreads();

    // k k^T and q k^T on the tensor cores (three bf16 passes on hi/lo halves), by 16 x 8 tiles
    // (mt, nt) that reach the lower triangle (nt <= 2 mt + 1): 20 of them, both products per
    // tile sharing the k_j fragment, spread over the warps. P is written for every column of
    // those tiles, which covers the 4-column groups up to the diagonal that gdn_chunk_scan reads.
    // Fragments by ldmatrix from the planes: lane l gives A's row l % 16 at k offset 8 (l / 16),
    // one load per plane, and B's (k_j^T: 8 rows of k) row l % 8 at k offset 8 (l / 8 % 2), from
    // the hi plane for l < 16, so a B load's registers are b0, b1 of hi, then of lo.
    {
        constexpr int TRI = MT * (MT + 1);  // the sum over mt of 2 mt + 2
        const int a_row = lane & 15, a_k = 8 * (lane >> 4), b_row8 = lane & 7, b_k = 8 * ((lane >> 3) & 1);
        for (int idx = warp; idx < TRI; idx += GDN_CHUNK_THREADS / 32) {
            int mt = 0;
            while (idx >= (mt + 1) * (mt + 2)) mt++;
            const int nt = idx - mt * (mt + 1);
            float kk[4] = {0.f, 0.f, 0.f, 0.f}, qk[4] = {0.f, 0.f, 0.f, 0.f};
            const int a_at = (16 * mt + a_row) * GDN_KBP + a_k;
            const unsigned kh_at = smem_u32(kh + a_at), kl_at = smem_u32(kl + a_at);
            const unsigned qh_at = smem_u32(qh + a_at), ql_at = smem_u32(ql + a_at);
            const unsigned b_at = smem_u32((lane < 16 ? kh : kl) + (8 * nt + b_row8) * GDN_KBP + b_k);
#pragma unroll 2
            for (int k0 = 0; k0 < GDN_KDP; k0 += 16) {
                unsigned br[4], ah[4], al[4];
                ldsm_x4(b_at + 2 * k0, br);
                const unsigned bh[2] = {br[0], br[1]}, bl[2] = {br[2], br[3]};
                ldsm_x4(kh_at + 2 * k0, ah);
                ldsm_x4(kl_at + 2 * k0, al);
                gdn_mma3_bf16(kk, kk, ah, al, bh, bl);
                ldsm_x4(qh_at + 2 * k0, ah);
                ldsm_x4(ql_at + 2 * k0, al);
                gdn_mma3_bf16(qk, qk, ah, al, bh, bl);
            }
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = 16 * mt + g + 8 * (e >> 1), j = 8 * nt + 2 * t + (e & 1);
                // exp only where j <= i: above the diagonal G_i - G_j > 0 could overflow.
                const float x = j <= i ? expf(gs[i] - gs[j]) : 0.f;
                as[i * GDN_AP + j] = j < i ? bs[i] * x * kk[e] : 0.f;
                if (i < n) p_out[((long)(t0 + i) * GDN_VALUE_HEADS + h) * GDN_CH + j] = x * qk[e];
            }
        }
    }
    if (tid < n) g_out[(long)(t0 + tid) * GDN_VALUE_HEADS + h] = gs[tid];
    __syncthreads();

    // [U | W] = T [beta v | beta Gam k] with T = (I + A)^-1 (unit lower triangular), then the
    // product on the tensor cores from T's bf16 halves. Substituting the 256 right-hand columns
    // directly was 4x the FMAs and the kernel's main cost; substituting the identity's 64 columns
    // (one per thread) kept two warps busy for ~2,000 dependent FMAs while six waited at the
    // barrier behind it (a fifth of the kernel's stall samples). So T goes by 16 x 16 blocks
    // on every warp: the diagonal blocks T_pp = (I + A_pp)^-1 by substitution (64 columns of 16
    // rows), then the blocks d below the diagonal, d = 1, 2, 3, from
    //   T_pq = -T_pp X_pq,  X_pq = sum over r = q .. p - 1 of A_pr T_rq  (p = q + d),
    // each thread the same element (i, c) of every block of a diagonal. T is built in f32 (Tf,
    // rows of 64, behind T's halves in q's dead planes); X_pq waits in A's unused upper block
    // (q, p). Only T's lower blocks are written: the upper ones read as zero.
    static_assert(GDN_CH == 64, "the blocked inverse is written for 4 x 4 blocks of 16");
    float* Tf = qs + GDN_CH * GDN_TP;
    if (tid < GDN_CH) wsc[tid] = bs[tid] * expf(gs[tid]);
    if (tid < GDN_CH) {
        const int p = tid >> 4, c = tid & 15;
        const float* a = as + 16 * p * GDN_AP + 16 * p;
        float x[16];
#pragma unroll
        for (int i = 0; i < 16; i++) x[i] = i == c ? 1.f : 0.f;
#pragma unroll
        for (int i = 1; i < 16; i++) {
            float acc[2] = {x[i], 0.f};
#pragma unroll
            for (int j = 0; j < i; j++) acc[j & 1] = fmaf(-a[i * GDN_AP + j], x[j], acc[j & 1]);
            x[i] = acc[0] + acc[1];
        }
#pragma unroll
        for (int i = 0; i < 16; i++) Tf[(16 * p + i) * 64 + 16 * p + c] = x[i];
    }
    __syncthreads();
    {
        const int i = tid >> 4, c = tid & 15;
#pragma unroll
        for (int d = 1; d < 4; d++) {
#pragma unroll
            for (int q = 0; q + d < 4; q++) {
                const int p = q + d;
                float acc[2] = {0.f, 0.f};
#pragma unroll
                for (int r = q; r < p; r++)
#pragma unroll
                    for (int k = 0; k < 16; k++)
                        acc[k & 1] = fmaf(as[(16 * p + i) * GDN_AP + 16 * r + k], Tf[(16 * r + k) * 64 + 16 * q + c],
                                          acc[k & 1]);
                as[(16 * q + i) * GDN_AP + 16 * p + c] = acc[0] + acc[1];
            }
            __syncthreads();
#pragma unroll
            for (int q = 0; q + d < 4; q++) {
                const int p = q + d;
                // T_pp's diagonal is 1 and its upper triangle zero: k < i, then X_pq's row i.
                float acc[2] = {-as[(16 * q + i) * GDN_AP + 16 * p + c], 0.f};
#pragma unroll
                for (int k = 0; k < 15; k++)
                    if (k < i)
                        acc[k & 1] = fmaf(-Tf[(16 * p + i) * 64 + 16 * p + k], as[(16 * q + k) * GDN_AP + 16 * p + c],
                                          acc[k & 1]);
                Tf[(16 * p + i) * 64 + 16 * q + c] = acc[0] + acc[1];
            }
            __syncthreads();
        }
    }
    // T's bf16 halves, a column pair per thread and step.
#pragma unroll
    for (int m = 0; m < GDN_CH * GDN_CH / 2 / GDN_CHUNK_THREADS; m++) {
        const int e = tid + m * GDN_CHUNK_THREADS, i = e / (GDN_CH / 2), j = 2 * (e % (GDN_CH / 2));
        const float2 v = (i >> 4) < (j >> 4) ? make_float2(0.f, 0.f) : *reinterpret_cast<const float2*>(Tf + i * 64 + j);
        const Bf16Split b = gdn_split_bf16(v.x, v.y);
        *reinterpret_cast<unsigned*>(th + i * GDN_TP + j) = b.hi;
        *reinterpret_cast<unsigned*>(tl + i * GDN_TP + j) = b.lo;
    }
    __syncthreads();

    // n-tiles of 8 columns: U's (VD rounded up to 8), then W's (KD rounded up to 16; k's padding
    // columns are zero). Each warp takes whole n-tiles, all four m-tiles of rows; T's zero upper
    // triangle skips the k-steps right of an m-tile's last row. Three bf16 passes on hi/lo
    // halves; T's fragments by ldmatrix (lane l gives row l % 16 of the m-tile at k offset
    // 8 (l / 16)).
#pragma unroll 1
    for (int q = 0; q < NQ; q++) {
        const int nt = warp + 8 * q;
        if (nt >= NT) break;
        const bool is_u = nt < UT;
        const int col = 8 * (is_u ? nt : nt - UT) + g;
        float acc[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[mt][e] = 0.f;
#pragma unroll
        for (int k0 = 0; k0 < GDN_CH; k0 += 16) {
            float bv[4];
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int j = b_row(k0, r);
                if (!is_u)
                    bv[r] = wsc[j] * (bf2f(kh[j * GDN_KBP + col]) + bf2f(kl[j * GDN_KBP + col]));
                else if (q == 0)
                    bv[r] = bs[j] * vpre[k0 / 16][r];
                else
                    bv[r] = bs[j] * vsm[j * GDN_VSP + col - GDN_V0];
            }
            const Bf16Split b0 = gdn_split_bf16(bv[0], bv[1]), b1 = gdn_split_bf16(bv[2], bv[3]);
            const unsigned bh[2] = {b0.hi, b1.hi}, bl[2] = {b0.lo, b1.lo};
#pragma unroll
            for (int mt = k0 / 16; mt < MT; mt++) {
                const int a0 = (16 * mt + (lane & 15)) * GDN_TP + k0 + 8 * (lane >> 4);
                unsigned ah[4], al[4];
                ldsm_x4(smem_u32(th + a0), ah);
                ldsm_x4(smem_u32(tl + a0), al);
                gdn_mma3_bf16(acc[mt], acc[mt], ah, al, bh, bl);
            }
        }
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = 16 * mt + g + 8 * (e >> 1), c = col - g + 2 * t + (e & 1);
                if (i >= n) continue;
                const long row = (long)(t0 + i) * GDN_VALUE_HEADS + h;
                if (is_u && c < GDN_VALUE_DIM)
                    u_out[row * GDN_VALUE_DIM + c] = acc[mt][e];
                else if (!is_u && c < GDN_KEY_DIM)
                    w_out[row * GDN_KEY_DIM + c] = acc[mt][e];
            }
    }
}

// grid (V, ceil(VD / GDN_SC)), block GDN_CHUNK_THREADS, dynamic shared memory GDN_SCAN_FLOATS
// floats. Sequential over the chunks; the block's columns of S stay in shared memory from the
// first chunk to the last. Every product runs on the tensor cores: the three with KD in them
// (W S0, q S0, K^T D) one 16-row tile per warp, the triangle P D two 16 x 8 tiles per warp (the
// FMAs it took before were a quarter of the kernel's instructions). W S0, q S0 and K^T D run on
// bf16 halves (gdn_mma3_bf16), P D on tf32 halves (gdn_mma3). The pre-split S and D are kept
// transposed as bf16 ([column][k]: a B fragment's 8 columns are then 8 rows of 8 halves, as
// ldmatrix reads them). Copies of S in and out: 8 x 32 threads, tx picks 4 of the block's
// columns. o: [tokens, V, VD] before the gated norm.
extern "C" __global__ void __launch_bounds__(GDN_CHUNK_THREADS)
gdn_chunk_scan(const float* __restrict__ qn, const float* __restrict__ kn, const float* __restrict__ w_in,
               const float* __restrict__ u_in, const float* __restrict__ p_in, const float* __restrict__ g_in,
               float* __restrict__ state, float* __restrict__ o, int tokens) {
    extern __shared__ __align__(16) float gdn_scan_smem[];
    pdl_launch_next();
    pdl_wait();
    float* ss = gdn_scan_smem;               // S [GDN_KDP][GDN_SCP], rows past KD zero
    // S's bf16 halves, transposed [GDN_SC][GDN_SBP], written with S: step 1's 8 warps read S as
    // their B operand, and splitting it there cost each of them the same ALU work.
    bf16* sh = reinterpret_cast<bf16*>(ss + GDN_KDP * GDN_SCP);
    bf16* sl = sh + GDN_SC * GDN_SBP;
    float* ws = reinterpret_cast<float*>(sl + GDN_SC * GDN_SBP);  // W rows [GDN_CH][GDN_KP], columns past KD zero
    float* qs = ws + GDN_CH * GDN_KP;        // q rows
    float* ks = qs + GDN_CH * GDN_KP;        // k rows
    float* ps = ks + GDN_CH * GDN_KP;        // P [GDN_CH][GDN_AP]
    float* us = ps + GDN_CH * GDN_AP;        // U [GDN_CH][GDN_SCP]
    float* ds = us + GDN_CH * GDN_SCP;       // D
    // exp(G_last - G_i) D_i, split into its bf16 halves once (step 3's 8 warps all read it),
    // transposed [GDN_SC][GDN_DBP].
    bf16* dh = reinterpret_cast<bf16*>(ds + GDN_CH * GDN_SCP);
    bf16* dl = dh + GDN_SC * GDN_DBP;
    float* ys = reinterpret_cast<float*>(dl + GDN_SC * GDN_DBP);  // Gam_i q_i S0
    float* gam = ys + GDN_CH * GDN_SCP;      // exp(G_i)
    float* ed = gam + GDN_CH;                // exp(G_last - G_i)
    const int tid = threadIdx.x, tx = tid % 8, ty = tid / 8;
    const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int h = blockIdx.x, kh = h / (GDN_VALUE_HEADS / GDN_KEY_HEADS);
    const int col0 = blockIdx.y * GDN_SC, c4 = 4 * tx;
    // VD is a multiple of 4, so a thread's 4 columns are all real or all padding.
    const bool live = col0 + c4 < GDN_VALUE_DIM;
    float* S = state + (long)h * GDN_KEY_DIM * GDN_VALUE_DIM + col0 + c4;

    // The padding (rows of S, columns of the k/q/W rows past KD) is zeroed once; no copy writes it.
    for (int i = tid; i < GDN_KDP * GDN_SCP + GDN_SC * GDN_SBP + 3 * GDN_CH * GDN_KP; i += GDN_CHUNK_THREADS)
        gdn_scan_smem[i] = 0.f;
    __syncthreads();
    // S's element (k, column j) and its transposed bf16 halves.
    auto put_s = [&](int k, int j, float x) {
        const Bf16Split v = gdn_split_bf16(x, 0.f);
        ss[k * GDN_SCP + j] = x;
        sh[j * GDN_SBP + k] = (bf16)v.hi;
        sl[j * GDN_SBP + k] = (bf16)v.lo;
    };
    for (int k = ty; k < GDN_KEY_DIM; k += 32)
        if (live) {
            const float4 v = gdn_ld4(S + (long)k * GDN_VALUE_DIM);
            put_s(k, c4, v.x);
            put_s(k, c4 + 1, v.y);
            put_s(k, c4 + 2, v.z);
            put_s(k, c4 + 3, v.w);
        }
    // ldmatrix rows of a transposed bf16 B operand (S or D): lane l gives row l % 8 (a column)
    // at k offset 8 (l / 8 % 2), its hi half for l < 16, lo above; a load's registers are then
    // b0, b1 of the hi half and b0, b1 of the lo half.
    const int b_row = lane & 7, b_k = 8 * ((lane >> 3) & 1);

    // Staging, in two cp.async groups per chunk so that each loads while the block computes:
    // group A (W, q and U rows: step 1's inputs) is issued once step 1 of the previous chunk has
    // read its buffers, group B (k rows and P: steps 2 and 3) once the previous chunk is done.
    // Padding rows are zero, so D's padding rows are zero (P's diagonal groups and the k-steps
    // of K^T D reach into them).
    constexpr int F4 = GDN_KEY_DIM / 4;
    constexpr long VROW = GDN_VALUE_HEADS, KROW = GDN_KEY_HEADS;  // a token's heads, per row
    auto stage_a = [&](int t0, int n) {
        auto real = [&](int r, int) { return r < n; };
        gdn_stage_rows<F4, true>(ws, GDN_KP, w_in + (t0 * VROW + h) * GDN_KEY_DIM, VROW * GDN_KEY_DIM, real);
        gdn_stage_rows<F4, true>(qs, GDN_KP, qn + (t0 * KROW + kh) * GDN_KEY_DIM, KROW * GDN_KEY_DIM, real);
        gdn_stage_rows<GDN_SC / 4, true>(us, GDN_SCP, u_in + (t0 * VROW + h) * GDN_VALUE_DIM + col0,
                                         VROW * GDN_VALUE_DIM,
                                         [&](int r, int c) { return r < n && col0 + c < GDN_VALUE_DIM; });
        cp_async_commit();
    };
    auto stage_b = [&](int t0, int n) {
        gdn_stage_rows<F4, true>(ks, GDN_KP, kn + (t0 * KROW + kh) * GDN_KEY_DIM, KROW * GDN_KEY_DIM,
                                 [&](int r, int) { return r < n; });
        gdn_stage_rows<GDN_CH / 4, false>(ps, GDN_AP, p_in + (t0 * VROW + h) * GDN_CH, VROW * GDN_CH,
                                          [&](int r, int c) { return r < n && c <= r; });
        cp_async_commit();
    };
    // The chunk's G (threads < GDN_CH, one token each; padding tokens take the last real one),
    // loaded a chunk ahead into registers and turned into gam and ed between chunks.
    auto load_g = [&](int t0, int n, float& gi, float& last) {
        last = g_in[(long)(t0 + n - 1) * GDN_VALUE_HEADS + h];
        gi = tid < n ? g_in[(long)(t0 + tid) * GDN_VALUE_HEADS + h] : last;
    };
    auto set_decay = [&](float gi, float last) {
        gam[tid] = expf(gi);
        ed[tid] = expf(last - gi);
    };

    const int chunks = (tokens + GDN_CH - 1) / GDN_CH;
    stage_a(0, min(GDN_CH, tokens));
    stage_b(0, min(GDN_CH, tokens));
    if (tid < GDN_CH) {
        float gi, last;
        load_g(0, min(GDN_CH, tokens), gi, last);
        set_decay(gi, last);
    }
    for (int c = 0; c < chunks; c++) {
        const int t0 = c * GDN_CH, n = min(GDN_CH, tokens - t0);
        const int t1 = t0 + GDN_CH, n1 = min(GDN_CH, tokens - t1);
        const bool more = c + 1 < chunks;
        // Group A of this chunk is complete; B (issued last) may still be loading.
        cp_async_wait<1>();
        __syncthreads();
        float g_next = 0.f, last_next = 0.f;
        if (more && tid < GDN_CH) load_g(t1, n1, g_next, last_next);

        // Step 1. Warps 0-3: X = W S0 -> D = U - X; warps 4-7: Y = Gam q S0. Rows 16 mt .. 16 mt + 15,
        // all GDN_SC columns (4 n-tiles of 8).
        {
            const int mt = warp & 3;
            const float* A = (warp < 4 ? ws : qs) + (16 * mt + g) * GDN_KP + 2 * t;
            const unsigned b_at = smem_u32((lane < 16 ? sh : sl) + b_row * GDN_SBP + b_k);
            float acc[GDN_SC / 8][4], small[GDN_SC / 8][4];
#pragma unroll
            for (int nt = 0; nt < GDN_SC / 8; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++) acc[nt][i] = small[nt][i] = 0.f;
#pragma unroll
            for (int k0 = 0; k0 < GDN_KDP; k0 += 16) {
                unsigned ah[4], al[4];
                gdn_split_rows_bf16(A, k0, ah, al);
#pragma unroll
                for (int nt = 0; nt < GDN_SC / 8; nt++) {
                    unsigned br[4];
                    ldsm_x4(b_at + 2 * (8 * nt * GDN_SBP + k0), br);
                    const unsigned bh[2] = {br[0], br[1]}, bl[2] = {br[2], br[3]};
                    gdn_mma3_bf16(acc[nt], small[nt], ah, al, bh, bl);
                }
            }
#pragma unroll
            for (int nt = 0; nt < GDN_SC / 8; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    acc[nt][i] += small[nt][i];
                    const int r = 16 * mt + g + 8 * (i >> 1), at = r * GDN_SCP + 8 * nt + 2 * t + (i & 1);
                    if (warp < 4) {
                        const float d = us[at] - acc[nt][i];
                        ds[at] = d;
                        const Bf16Split v = gdn_split_bf16(ed[r] * d, 0.f);
                        const int at_t = (8 * nt + 2 * t + (i & 1)) * GDN_DBP + r;
                        dh[at_t] = (bf16)v.hi;
                        dl[at_t] = (bf16)v.lo;
                    } else {
                        ys[at] = gam[r] * acc[nt][i];
                    }
                }
        }
        cp_async_wait<0>();
        __syncthreads();
        // Step 1's buffers are free: the next chunk's W, q and U load during steps 2 and 3.
        if (more) stage_a(t1, n1);

        // Step 2. O = Y + P D on the tensor cores (3xTF32 on the unsplit D), in 16 x 8 tiles:
        // P's lower triangle gives tile row mt 2 mt + 2 k-steps, so a warp takes tile rows mt and
        // 3 - mt of one column tile, 10 k-steps for every warp. P is read up to the diagonal only:
        // further right its rows hold an earlier chunk's values (selected away, never multiplied).
        {
            const int nt = warp & 3, c = col0 + 8 * nt + 2 * t;
            const int mts[2] = {warp >> 2, 3 - (warp >> 2)};
#pragma unroll
            for (int m = 0; m < 2; m++) {
                const int mt = mts[m], i0 = 16 * mt + g;
                float acc[4], small[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
                for (int e = 0; e < 4; e++) acc[e] = ys[(i0 + 8 * (e >> 1)) * GDN_SCP + 8 * nt + 2 * t + (e & 1)];
                auto p_at = [&](int i, int j) { return j <= i ? ps[i * GDN_AP + j] : 0.f; };
                for (int k0 = 0; k0 < 16 * mt + 16; k0 += 8) {
                    const int j0 = k0 + t, at = j0 * GDN_SCP + 8 * nt + g;
                    const Tf32Split a[4] = {gdn_split(p_at(i0, j0)), gdn_split(p_at(i0 + 8, j0)),
                                            gdn_split(p_at(i0, j0 + 4)), gdn_split(p_at(i0 + 8, j0 + 4))};
                    const Tf32Split b[2] = {gdn_split(ds[at]), gdn_split(ds[at + 4 * GDN_SCP])};
                    gdn_mma3(acc, small, a, b);
                }
                // VD is even, so a lane's column pair is all real or all padding.
#pragma unroll
                for (int half = 0; half < 2; half++) {
                    const int r = i0 + 8 * half;
                    if (r < n && c < GDN_VALUE_DIM) {
                        float2 v;
                        v.x = acc[2 * half] + small[2 * half];
                        v.y = acc[2 * half + 1] + small[2 * half + 1];
                        *reinterpret_cast<float2*>(o + ((long)(t0 + r) * GDN_VALUE_HEADS + h) * GDN_VALUE_DIM + c) = v;
                    }
                }
            }
        }

        // Step 3. S = Gam_last S0 + K^T (exp(G_last - G) D): rows 16 mt .. 16 mt + 15 of S per warp, each
        // element read and written by the same lane, every other read of S0 behind the barrier
        // above. The k-steps run over the chunk's tokens, padding rows of k and D being zero.
        {
            const float chunk_decay = gam[n - 1];
            for (int mt = warp; mt < GDN_KDP / 16; mt += GDN_CHUNK_THREADS / 32) {
                float acc[GDN_SC / 8][4], small[GDN_SC / 8][4];
#pragma unroll
                for (int nt = 0; nt < GDN_SC / 8; nt++)
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        acc[nt][i] =
                            chunk_decay * ss[(16 * mt + g + 8 * (i >> 1)) * GDN_SCP + 8 * nt + 2 * t + (i & 1)];
                        small[nt][i] = 0.f;
                    }
                // All GDN_CH k-steps, unrolled (constant offsets): a short chunk's padding rows
                // of k and D are zero.
                // A = K^T: k is staged token-major, so a register's two halves (tokens 2t and
                // 2t + 1 of one key row) are two loads a row apart.
                const float* A = ks + 2 * t * GDN_KP + 16 * mt + g;
                const unsigned b_at = smem_u32((lane < 16 ? dh : dl) + b_row * GDN_DBP + b_k);
#pragma unroll
                for (int k0 = 0; k0 < GDN_CH; k0 += 16) {
                    unsigned ah[4], al[4];
#pragma unroll
                    for (int r = 0; r < 4; r++) {
                        const float* x = A + (k0 + (r >> 1) * 8) * GDN_KP + (r & 1) * 8;
                        const Bf16Split v = gdn_split_bf16(x[0], x[GDN_KP]);
                        ah[r] = v.hi;
                        al[r] = v.lo;
                    }
#pragma unroll
                    for (int nt = 0; nt < GDN_SC / 8; nt++) {
                        unsigned br[4];
                        ldsm_x4(b_at + 2 * (8 * nt * GDN_DBP + k0), br);
                        const unsigned bh[2] = {br[0], br[1]}, bl[2] = {br[2], br[3]};
                        gdn_mma3_bf16(acc[nt], small[nt], ah, al, bh, bl);
                    }
                }
#pragma unroll
                for (int nt = 0; nt < GDN_SC / 8; nt++)
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        put_s(16 * mt + g + 8 * (i >> 1), 8 * nt + 2 * t + (i & 1), acc[nt][i] + small[nt][i]);
            }
        }
        // The next chunk's k rows, P and decay factors go over this chunk's, and it reads all of S.
        __syncthreads();
        if (more) {
            stage_b(t1, n1);
            if (tid < GDN_CH) set_decay(g_next, last_next);
        }
    }
    for (int k = ty; k < GDN_KEY_DIM; k += 32)
        if (live) *reinterpret_cast<float4*>(S + (long)k * GDN_VALUE_DIM) = gdn_ld4(ss + k * GDN_SCP + c4);
}
