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

// How many splits of the context a step uses: at least 16 positions each, at most ATTN_SPLITS.
// The grid is fixed (it is captured in a graph) and the context grows, so blocks past the
// split count return at once.
__device__ __forceinline__ int active_splits(int len) {
    const int s = (len + 15) / 16;
    return s < ATTN_SPLITS ? s : ATTN_SPLITS;
}

// One block per (kv head, split); warp g handles query head kvh*GROUP + g, so the block reads
// each K/V row from memory once and its warps share it through L1.
// Writes un-normalised partials: acc [H][SPLITS][HD], (max, sum) [H][SPLITS][2].
extern "C" __global__ void __launch_bounds__(GROUP * 32)
attn_decode_partial(const float* __restrict__ q, const bf16* __restrict__ k_cache,
                    const bf16* __restrict__ v_cache, const int* __restrict__ pos_ptr,
                    float* __restrict__ part_acc, float* __restrict__ part_ml, int max_seq) {
    pdl_launch_next();
    pdl_wait();
    const int len = *pos_ptr + 1;
    const int splits = active_splits(len), s = blockIdx.y;
    if (s >= splits) return;
    const int kvh = blockIdx.x, lane = threadIdx.x & 31, head = kvh * GROUP + (threadIdx.x >> 5);
    const int start = (int)((long)s * len / splits), end = (int)((long)(s + 1) * len / splits);
    const float scale = rsqrtf((float)HD);
    float qv[LANE_DIMS], acc[LANE_DIMS];
#pragma unroll
    for (int k = 0; k < LANE_DIMS; k++) {
        qv[k] = q[head * HD + lane * LANE_DIMS + k] * scale;
        acc[k] = 0.f;
    }
    float m = -INFINITY, l = 0.f;
    const bf16* kb = k_cache + (long)kvh * max_seq * HD + lane * LANE_DIMS;
    const bf16* vb = v_cache + (long)kvh * max_seq * HD + lane * LANE_DIMS;
    constexpr int U = 4;  // positions whose loads are issued together
    for (int t0 = start; t0 < end; t0 += U) {
        float kr[U][LANE_DIMS], vr[U][LANE_DIMS];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int t = t0 + u < end ? t0 + u : end - 1;
            load_dims<LANE_DIMS>(kb + (long)t * HD, kr[u]);
            load_dims<LANE_DIMS>(vb + (long)t * HD, vr[u]);
        }
        // U independent dot products (their shuffles interleave), then one online-softmax
        // update for all U positions.
        float dots[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            dots[u] = 0.f;
#pragma unroll
            for (int k = 0; k < LANE_DIMS; k++) dots[u] = fmaf(qv[k], kr[u][k], dots[u]);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
#pragma unroll
            for (int u = 0; u < U; u++) dots[u] += __shfl_xor_sync(0xffffffffu, dots[u], o);
        }
        float m_new = m;
#pragma unroll
        for (int u = 0; u < U; u++)
            if (t0 + u < end) m_new = fmaxf(m_new, dots[u]);
        const float corr = __expf(m - m_new);
        float pe[U], psum = 0.f;
#pragma unroll
        for (int u = 0; u < U; u++) {
            pe[u] = t0 + u < end ? __expf(dots[u] - m_new) : 0.f;
            psum += pe[u];
        }
        l = l * corr + psum;
#pragma unroll
        for (int k = 0; k < LANE_DIMS; k++) {
            float a = acc[k] * corr;
#pragma unroll
            for (int u = 0; u < U; u++) a = fmaf(pe[u], vr[u][k], a);
            acc[k] = a;
        }
        m = m_new;
    }
    const long at = (long)head * ATTN_SPLITS + s;
#pragma unroll
    for (int k = 0; k < LANE_DIMS; k++) part_acc[at * HD + lane * LANE_DIMS + k] = acc[k];
    if (lane == 0) {
        part_ml[at * 2] = m;
        part_ml[at * 2 + 1] = l;
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
    for (int s = 0; s < splits; s++) M = fmaxf(M, part_ml[(base + s) * 2]);
    float num = 0.f, den = 0.f;
    for (int s = 0; s < splits; s++) {
        const float w = __expf(part_ml[(base + s) * 2] - M);
        den += w * part_ml[(base + s) * 2 + 1];
        num += w * part_acc[(base + s) * HD + i];
    }
    const float gate = proj[h * 2 * HD + HD + i];
    out[h * HD + i] = f2bf(num / den * sigmoid(gate));
}
