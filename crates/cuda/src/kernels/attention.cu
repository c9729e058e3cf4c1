// Gated attention decode with partial RoPE. Needs: ATTN_HEADS, ATTN_KV_HEADS, ATTN_HEAD_DIM,
// ROPE_DIM, ATTN_SPLITS.
//
// `proj` is the output of the concatenated q|k|v projection (f32):
//   [ per head: query (HD) | gate (HD) ] x H | k (KVH*HD) | v (KVH*HD)
// KV cache: bf16 [KVH][max_seq][HD] for k and for v.

#define HD ATTN_HEAD_DIM
#define GROUP (ATTN_HEADS / ATTN_KV_HEADS)
#define LANE_DIMS (HD / 32)
#define Q_ROWS (ATTN_HEADS * 2 * HD)

// Zero-centred RMSNorm per head, then rotate-half RoPE on the first ROPE_DIM dims; q goes to a
// f32 buffer, k and v into the cache at the current position. grid H + KVH, block HD threads.
extern "C" __global__ void attn_prepare(const float* __restrict__ proj, const bf16* __restrict__ q_norm,
                                        const bf16* __restrict__ k_norm, const int* __restrict__ pos_ptr,
                                        float* __restrict__ q_out, bf16* __restrict__ k_cache,
                                        bf16* __restrict__ v_cache, int max_seq, float theta, float eps) {
    __shared__ float xs[HD];
    __shared__ float scratch[32];
    pdl_launch_next();
    pdl_wait();
    const int b = blockIdx.x, i = threadIdx.x, p = *pos_ptr;
    const bool is_q = b < ATTN_HEADS;
    const float* src = is_q ? proj + b * 2 * HD : proj + Q_ROWS + (b - ATTN_HEADS) * HD;
    const bf16* w = is_q ? q_norm : k_norm;
    float x = src[i];
    const float r = rsqrtf(block_sum(x * x, scratch) / HD + eps);
    x = x * r * (1.f + bf2f(w[i]));
    xs[i] = x;
    __syncthreads();
    if (i < ROPE_DIM) {
        // The angle in f64: at position 2^18 an f32 angle has lost most of its fraction.
        const int half = ROPE_DIM / 2, j = i % half;
        const double inv_freq = pow((double)theta, -2.0 * j / ROPE_DIM);
        double s, c;
        sincos((double)p * inv_freq, &s, &c);
        x = i < half ? xs[i] * (float)c - xs[i + half] * (float)s : xs[i] * (float)c + xs[i - half] * (float)s;
    }
    if (is_q) {
        q_out[b * HD + i] = x;
    } else {
        const int kvh = b - ATTN_HEADS;
        const long at = ((long)kvh * max_seq + p) * HD + i;
        k_cache[at] = f2bf(x);
        v_cache[at] = f2bf(proj[Q_ROWS + ATTN_KV_HEADS * HD + kvh * HD + i]);
    }
}

template <int D>
__device__ __forceinline__ void load_dims(const bf16* __restrict__ p, float out[D]) {
    if constexpr (D % 8 == 0) {
#pragma unroll
        for (int k = 0; k < D / 8; k++) unpack8(__ldg(reinterpret_cast<const uint4*>(p) + k), out + 8 * k);
    } else {
#pragma unroll
        for (int k = 0; k < D; k++) out[k] = bf2f(p[k]);
    }
}

// How many splits of the context a step uses: at least 64 positions each (8 per warp), at most
// ATTN_SPLITS. The grid is fixed (it is captured in a graph) and the context grows, so blocks
// past the split count return at once.
__device__ __forceinline__ int active_splits(int len) {
    const int s = (len + 63) / 64;
    return s < ATTN_SPLITS ? s : ATTN_SPLITS;
}

#define ATTN_WARPS 8

// One block per (kv head, split). Each warp takes every ATTN_WARPS-th position of the split and
// scores it against all GROUP query heads of the kv head, so every K/V row is read from memory
// by exactly one warp, and the serial online-softmax chain of a warp is 1/8 of the split.
// The warps' partials are merged in shared memory; the block writes un-normalised partials:
// acc [H][SPLITS][HD], (max, sum) [H][SPLITS][2].
extern "C" __global__ void __launch_bounds__(ATTN_WARPS * 32)
attn_decode_partial(const float* __restrict__ q, const bf16* __restrict__ k_cache,
                    const bf16* __restrict__ v_cache, const int* __restrict__ pos_ptr,
                    float* __restrict__ part_acc, float* __restrict__ part_ml, int max_seq) {
    __shared__ float acc_s[GROUP][HD];
    __shared__ float m_s[ATTN_WARPS][GROUP], l_s[ATTN_WARPS][GROUP];
    pdl_launch_next();
    pdl_wait();
    const int len = *pos_ptr + 1;
    const int splits = active_splits(len), s = blockIdx.y;
    if (s >= splits) return;
    const int kvh = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int start = (int)((long)s * len / splits), end = (int)((long)(s + 1) * len / splits);
    for (int i = threadIdx.x; i < GROUP * HD; i += blockDim.x) (&acc_s[0][0])[i] = 0.f;
    const float scale = rsqrtf((float)HD);
    float qv[GROUP][LANE_DIMS], acc[GROUP][LANE_DIMS], m[GROUP], l[GROUP];
#pragma unroll
    for (int g = 0; g < GROUP; g++) {
        m[g] = -INFINITY;
        l[g] = 0.f;
#pragma unroll
        for (int k = 0; k < LANE_DIMS; k++) {
            qv[g][k] = q[(kvh * GROUP + g) * HD + lane * LANE_DIMS + k] * scale;
            acc[g][k] = 0.f;
        }
    }
    const bf16* kb = k_cache + (long)kvh * max_seq * HD + lane * LANE_DIMS;
    const bf16* vb = v_cache + (long)kvh * max_seq * HD + lane * LANE_DIMS;
    constexpr int U = 2;  // positions whose loads and reductions are interleaved
    for (int t0 = start + warp; t0 < end; t0 += U * ATTN_WARPS) {
        float kr[U][LANE_DIMS], vr[U][LANE_DIMS];
        bool ok[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int t = t0 + u * ATTN_WARPS;
            ok[u] = t < end;
            const int tc = ok[u] ? t : t0;
            load_dims<LANE_DIMS>(kb + (long)tc * HD, kr[u]);
            load_dims<LANE_DIMS>(vb + (long)tc * HD, vr[u]);
        }
        float dots[U][GROUP];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int g = 0; g < GROUP; g++) {
                float d = 0.f;
#pragma unroll
                for (int k = 0; k < LANE_DIMS; k++) d = fmaf(qv[g][k], kr[u][k], d);
                dots[u][g] = d;
            }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int g = 0; g < GROUP; g++) dots[u][g] += __shfl_xor_sync(0xffffffffu, dots[u][g], o);
#pragma unroll
        for (int g = 0; g < GROUP; g++) {
            float m_new = m[g];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (ok[u]) m_new = fmaxf(m_new, dots[u][g]);
            const float corr = __expf(m[g] - m_new);
            float pe[U];
            float psum = 0.f;
#pragma unroll
            for (int u = 0; u < U; u++) {
                pe[u] = ok[u] ? __expf(dots[u][g] - m_new) : 0.f;
                psum += pe[u];
            }
            l[g] = l[g] * corr + psum;
#pragma unroll
            for (int k = 0; k < LANE_DIMS; k++) {
                float a = acc[g][k] * corr;
#pragma unroll
                for (int u = 0; u < U; u++) a = fmaf(pe[u], vr[u][k], a);
                acc[g][k] = a;
            }
            m[g] = m_new;
        }
    }
    // Merge the warps: rescale each to the block's max per head and add them into shared
    // memory one warp at a time, in warp order (atomics would make the sum order, and so the
    // greedy tokens, vary between runs).
    if (lane == 0) {
#pragma unroll
        for (int g = 0; g < GROUP; g++) { m_s[warp][g] = m[g]; l_s[warp][g] = l[g]; }
    }
    __syncthreads();
    float f[GROUP];
#pragma unroll
    for (int g = 0; g < GROUP; g++) {
        float M = -INFINITY;
#pragma unroll
        for (int w = 0; w < ATTN_WARPS; w++) M = fmaxf(M, m_s[w][g]);
        // A warp with no positions has m = -inf and contributes nothing.
        f[g] = m[g] == -INFINITY ? 0.f : __expf(m[g] - M);
    }
    for (int w = 0; w < ATTN_WARPS; w++) {
        if (warp == w) {
#pragma unroll
            for (int g = 0; g < GROUP; g++)
#pragma unroll
                for (int k = 0; k < LANE_DIMS; k++) acc_s[g][lane * LANE_DIMS + k] += f[g] * acc[g][k];
        }
        __syncthreads();
    }
    for (int i = threadIdx.x; i < GROUP * HD; i += blockDim.x) {
        const int g = i / HD, d = i % HD;
        part_acc[((long)(kvh * GROUP + g) * ATTN_SPLITS + s) * HD + d] = acc_s[g][d];
    }
    if (threadIdx.x < GROUP) {
        const int g = threadIdx.x;
        float M = -INFINITY, L = 0.f;
        for (int w = 0; w < ATTN_WARPS; w++) M = fmaxf(M, m_s[w][g]);
        for (int w = 0; w < ATTN_WARPS; w++)
            if (m_s[w][g] != -INFINITY) L += l_s[w][g] * __expf(m_s[w][g] - M);
        const long at = (long)(kvh * GROUP + g) * ATTN_SPLITS + s;
        part_ml[at * 2] = M;
        part_ml[at * 2 + 1] = L;
    }
}

// Merges the splits of each head and applies the output gate: out = softmax(qK)V * sigmoid(gate).
// grid H, block HD threads; out is the bf16 input of o_proj.
extern "C" __global__ void attn_decode_combine(const float* __restrict__ part_acc, const float* __restrict__ part_ml,
                                               const float* __restrict__ proj, const int* __restrict__ pos_ptr,
                                               bf16* __restrict__ out) {
    pdl_launch_next();
    pdl_wait();
    const int h = blockIdx.x, i = threadIdx.x;
    const int splits = active_splits(*pos_ptr + 1);
    const long base = (long)h * ATTN_SPLITS;
    float M = -INFINITY;
#pragma unroll 8
    for (int s = 0; s < splits; s++) M = fmaxf(M, part_ml[(base + s) * 2]);
    float num = 0.f, den = 0.f;
#pragma unroll 8
    for (int s = 0; s < splits; s++) {
        const float w = __expf(part_ml[(base + s) * 2] - M);
        den += w * part_ml[(base + s) * 2 + 1];
        num += w * part_acc[(base + s) * HD + i];
    }
    const float gate = proj[h * 2 * HD + HD + i];
    out[h * HD + i] = f2bf(num / den * sigmoid(gate));
}
