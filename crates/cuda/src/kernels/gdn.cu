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

// out = bf16(w * rmsnorm(o) * silu(z)) per value head (plain weight, not 1 + w); grid V.
extern "C" __global__ void gdn_gated_norm(const float* __restrict__ o, const float* __restrict__ proj,
                                          const bf16* __restrict__ w, bf16* __restrict__ out, float eps) {
    __shared__ float scratch[32];
    pdl_launch_next();
    pdl_wait();
    const int h = blockIdx.x;
    const float* oh = o + h * GDN_VALUE_DIM;
    float ss = 0.f;
    for (int i = threadIdx.x; i < GDN_VALUE_DIM; i += blockDim.x) ss += oh[i] * oh[i];
    const float r = rsqrtf(block_sum(ss, scratch) / GDN_VALUE_DIM + eps);
    for (int i = threadIdx.x; i < GDN_VALUE_DIM; i += blockDim.x) {
        const float z = proj[GDN_Z + h * GDN_VALUE_DIM + i];
        out[h * GDN_VALUE_DIM + i] = f2bf(bf2f(w[i]) * (oh[i] * r) * silu(z));
    }
}
