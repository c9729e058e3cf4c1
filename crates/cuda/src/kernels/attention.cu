// Gated attention with partial RoPE, for decode and for prefill. Needs: ATTN_HEADS,
// ATTN_KV_HEADS, ATTN_HEAD_DIM, ROPE_DIM, ATTN_SPLITS, ATTN_SPLIT_KEYS.
//
// Decode, one token: attn_prepare (q/k norms, RoPE, the new key and value into the cache), then
// the split-KV kernel on the tensor cores (attn_decode_partial: each block one split of the
// context for one KV head's query group) and attn_decode_combine (merges the splits, applies
// the gate). Prefill, a chunk of tokens: attn_prefill_prepare (the same preparation for every
// token of the chunk), then causal flash attention (attn_prefill_flash: on the warpgroup MMA,
// warp-specialised with TMA loads, for the model's head dim of 256; on mma.sync for the other
// head dims, the tiny fixtures'). Both write the same KV cache, so decode continues where a
// prefill ends.
//
// `proj` is the output of the concatenated q|k|v projection (f32):
//   [ per head: query (HD) | gate (HD) ] x H | k (KVH*HD) | v (KVH*HD)
// KV cache: bf16 [KVH][max_seq][HD] for k and for v.

#define HD ATTN_HEAD_DIM
#define GROUP (ATTN_HEADS / ATTN_KV_HEADS)
#define Q_ROWS (ATTN_HEADS * 2 * HD)

// The inverse frequency of RoPE pair j, in f64 as the angles that use it: at position 2^18 an
// f32 angle has lost most of its fraction.
__device__ __forceinline__ double rope_inv_freq(float theta, int j) { return pow((double)theta, -2.0 * j / ROPE_DIM); }

// Zero-centred RMSNorm of one head (thread i holds dim i of x, w its weight), then rotate-half
// RoPE on the first ROPE_DIM dims at position p with thread i's inverse frequency; returns dim
// i. Block of HD threads; xs holds HD floats.
__device__ __forceinline__ float rmsnorm_rope(float x, float w, double inv_freq, int p, float eps, float* xs,
                                           float* scratch) {
    const int i = threadIdx.x;
    const float r = rsqrtf(block_sum(x * x, scratch) / HD + eps);
    x = x * r * (1.f + w);
    xs[i] = x;
    __syncthreads();
    if (i < ROPE_DIM) {
        const int half = ROPE_DIM / 2;
        double s, c;
        sincos((double)p * inv_freq, &s, &c);
        x = i < half ? xs[i] * (float)c - xs[i + half] * (float)s : xs[i] * (float)c + xs[i - half] * (float)s;
    }
    return x;
}

// Zero-centred RMSNorm per head, then rotate-half RoPE on the first ROPE_DIM dims; q goes to a
// f32 buffer, k and v into the cache at the current position. grid H + KVH, block HD threads.
extern "C" __global__ void attn_prepare(const float* __restrict__ proj, const bf16* __restrict__ q_norm,
                                        const bf16* __restrict__ k_norm, const int* __restrict__ pos_ptr,
                                        float* __restrict__ q_out, bf16* __restrict__ k_cache,
                                        bf16* __restrict__ v_cache, int max_seq, float theta, float eps) {
    __shared__ float xs[HD];
    __shared__ float scratch[32];
    pdl_launch_next();
    const int b = blockIdx.x, i = threadIdx.x;
    const bool is_q = b < ATTN_HEADS;
    // What no earlier kernel writes, before the wait: the norm weight and the RoPE frequency.
    const float w = bf2f(ld_early((is_q ? q_norm : k_norm) + i));
    const double inv_freq = i < ROPE_DIM ? rope_inv_freq(theta, i % (ROPE_DIM / 2)) : 0.0;
    pdl_wait();
    const int p = __ldcg(pos_ptr);
    const int kvh = b - ATTN_HEADS;
    const float* src = is_q ? proj + b * 2 * HD : proj + Q_ROWS + kvh * HD;
    // A key block's value asked for with its key, not after the norm's barriers (a round trip
    // on the launch's path: the split-KV decode waits for every block).
    const float v = is_q ? 0.f : __ldcg(proj + Q_ROWS + ATTN_KV_HEADS * HD + kvh * HD + i);
    const float x = rmsnorm_rope(src[i], w, inv_freq, p, eps, xs, scratch);
    if (is_q) {
        q_out[b * HD + i] = x;
    } else {
        const long at = ((long)kvh * max_seq + p) * HD + i;
        k_cache[at] = f2bf(x);
        v_cache[at] = f2bf(v);
    }
}

// How many splits of the context a step uses: at least ATTN_SPLIT_KEYS positions each (a
// launch shape, shapes.rs), at most ATTN_SPLITS. The grid is fixed (it is captured in a graph)
// and the context grows, so blocks past the split count return at once.
__device__ __forceinline__ int active_splits(int len) {
    const int s = (len + ATTN_SPLIT_KEYS - 1) / ATTN_SPLIT_KEYS;
    return s < ATTN_SPLITS ? s : ATTN_SPLITS;
}

// ---------------------------------------------------------------------------------------------
// Prefill: a chunk of `tokens` queries at positions start .. start+tokens-1.

#define ATTN_IN_ROWS (Q_ROWS + 2 * ATTN_KV_HEADS * HD)

// attn_prepare for every token of the chunk: q (bf16, the tensor cores' input) to
// q_out [tokens][H][HD], k and v into the caches at start + t. One block per token: the token's
// RoPE cos/sin (angles in f64) are computed once into shared memory and shared by its H + KVH
// heads, which the block's PP_WARPS warps take in turn; each head's norm is a warp reduction.
// Lane l holds dims 4l .. 4l+3 of each 128-dim slice of a head, so the rotate-half partner of a
// rotated dim (all in the first slice) sits in the same register of the lane ROPE_DIM/8 away.
// The launcher checks that proj is 16-byte and q_out and the caches 8-byte aligned.
#define PP_WARPS ((ATTN_HEADS + ATTN_KV_HEADS + 1) / 2)  // two heads per warp
#define PP_VECS ((HD + 127) / 128)                        // float4s of a head per lane
static_assert(HD % 4 == 0 && ROPE_DIM % 8 == 0 && ROPE_DIM <= 128 && ROPE_DIM <= HD,
              "attn_prefill_prepare's lane layout: float4s of a head, rotated dims in the first 128");

__device__ __forceinline__ uint2 pack4_bf16(const float y[4]) {
    uint2 o;
    o.x = (unsigned)f2bf(y[0]) | ((unsigned)f2bf(y[1]) << 16);
    o.y = (unsigned)f2bf(y[2]) | ((unsigned)f2bf(y[3]) << 16);
    return o;
}

extern "C" __global__ void __launch_bounds__(PP_WARPS * 32)
    attn_prefill_prepare(const float* __restrict__ proj, const bf16* __restrict__ q_norm,
                         const bf16* __restrict__ k_norm, bf16* __restrict__ q_out, bf16* __restrict__ k_cache,
                         bf16* __restrict__ v_cache, int start, int max_seq, float theta, float eps) {
    constexpr int half = ROPE_DIM / 2, shift = half / 4;
    __shared__ float rope_cos[half], rope_sin[half];
    __shared__ float q_scale[HD], k_scale[HD];  // 1 + norm weight
    pdl_launch_next();
    const int t = blockIdx.x, p = start + t, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // Neither the weights nor the angles depend on an earlier kernel.
    for (int i = threadIdx.x; i < HD; i += blockDim.x) {
        q_scale[i] = 1.f + bf2f(ld_early(q_norm + i));
        k_scale[i] = 1.f + bf2f(ld_early(k_norm + i));
    }
    for (int j = threadIdx.x; j < half; j += blockDim.x) {
        const double inv_freq = rope_inv_freq(theta, j);
        double sn, cs;
        sincos((double)p * inv_freq, &sn, &cs);
        rope_cos[j] = (float)cs;
        rope_sin[j] = (float)sn;
    }
    pdl_wait();
    __syncthreads();
    const float* row = proj + (long)t * ATTN_IN_ROWS;
    for (int b = warp; b < ATTN_HEADS + ATTN_KV_HEADS; b += PP_WARPS) {
        const bool is_q = b < ATTN_HEADS;
        const float* src = is_q ? row + b * 2 * HD : row + Q_ROWS + (b - ATTN_HEADS) * HD;
        const float* scale = is_q ? q_scale : k_scale;
        float y[PP_VECS][4];
        float ss = 0.f;
#pragma unroll
        for (int k = 0; k < PP_VECS; k++) {
            const int i = (k * 32 + lane) * 4;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (i < HD) v = *reinterpret_cast<const float4*>(src + i);
            y[k][0] = v.x, y[k][1] = v.y, y[k][2] = v.z, y[k][3] = v.w;
            ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        }
        const float r = rsqrtf(warp_sum(ss) / HD + eps);
#pragma unroll
        for (int k = 0; k < PP_VECS; k++) {
            const int i = (k * 32 + lane) * 4;
#pragma unroll
            for (int e = 0; e < 4; e++) y[k][e] = i < HD ? y[k][e] * r * scale[i + e] : 0.f;
        }
        // Rotate-half RoPE on dims 0 .. ROPE_DIM-1: lanes 0 .. 2 * shift - 1 of the first slice.
        // Every lane takes part in the shuffle; lanes past the rotated dims ignore what they get.
        const int from = lane < shift ? lane + shift : lane - shift;
        float other[4];
#pragma unroll
        for (int e = 0; e < 4; e++) other[e] = __shfl_sync(0xffffffffu, y[0][e], from);
        if (lane < 2 * shift) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int d = lane * 4 + e, j = d % half;
                const float c = rope_cos[j], sn = rope_sin[j];
                y[0][e] = d < half ? y[0][e] * c - other[e] * sn : y[0][e] * c + other[e] * sn;
            }
        }
#pragma unroll
        for (int k = 0; k < PP_VECS; k++) {
            const int i = (k * 32 + lane) * 4;
            if (i >= HD) break;
            if (is_q) {
                *reinterpret_cast<uint2*>(q_out + ((long)t * ATTN_HEADS + b) * HD + i) = pack4_bf16(y[k]);
            } else {
                const int kvh = b - ATTN_HEADS;
                const long at = ((long)kvh * max_seq + p) * HD + i;
                *reinterpret_cast<uint2*>(k_cache + at) = pack4_bf16(y[k]);
                const float4 v = *reinterpret_cast<const float4*>(row + Q_ROWS + (ATTN_KV_HEADS + kvh) * HD + i);
                const float vv[4] = {v.x, v.y, v.z, v.w};
                *reinterpret_cast<uint2*>(v_cache + at) = pack4_bf16(vv);
            }
        }
    }
}

// Causal flash attention on the tensor cores (mma.sync m16n8k16 bf16 -> f32). One block per
// (query head, tile of PF_ROWS queries); each of its PF_WARPS warps owns 16 query rows and keeps
// their whole output row (16 x HD f32) in registers. K/V tiles of PF_KEYS keys stream through
// shared memory, double-buffered with cp.async. Tiles are visited heaviest-first (the last
// queries see the most keys) and the heads of one KV group run side by side, so their K/V
// reads hit L2.
#define PF_WARPS 4
#define PF_ROWS (PF_WARPS * 16)
#define PF_KEYS 32
#define PF_CHUNKS (HD / 8)  // 16-byte chunks in one row of a tile

// Byte offset of chunk c of row r in a [rows][HD] bf16 tile. The XOR swizzle spreads the 8 rows
// one ldmatrix reads over all 32 banks (rows are 512 B apart at HD 256, so unswizzled they would
// all hit the same 4 banks). It permutes chunks within a row, so any choice is correct.
__device__ __forceinline__ unsigned swz(int r, int c) {
    int x = 0;
    if constexpr (PF_CHUNKS % 8 == 0) x = r & 7;
    else if constexpr (PF_CHUNKS == 4) x = (r >> 1) & 3;
    return (unsigned)(r * HD * 2 + ((c ^ x) << 4));
}

__device__ __forceinline__ void ldsm_x4_trans(unsigned addr, unsigned r[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}


// ---------------------------------------------------------------------------------------------
// Decode, split-KV on the tensor cores (flash decoding) with the prefill's helpers above: the
// GROUP query heads of one KV head are the rows of an m16 tile (rows GROUP..15 are zero) and keys
// are the n dimension, so one K/V row read from memory serves every head of its group and the
// per-key work is a few mma.sync.

#define DEC_WARPS 4
#define DEC_KEYS 16    // keys per tile: one mma k-step of P V
// Tiles each warp has in flight or in use: two keep the keys streaming as well as three did
// (three measured slower at long contexts: docs/TRIED.md, "Decode: attention"), and a block
// then takes 128 KB of shared memory, as the streamed row products' do, instead of 192 KB.
#define DEC_STAGES 2
#define DEC_TILE (DEC_KEYS * HD * 2)  // bytes of one K (or V) tile

// c += a * b for an A whose rows 8..15 are zero (a1 = a3 = 0): only the accumulator's rows 0..7
// (c0, c1) are kept; the other half is written to registers that die at once (so NVRTC's
// "set but never used", warning 550, is expected here and silenced).
#pragma nv_diag_suppress 550
__device__ __forceinline__ void mma_bf16_top(float c[2], unsigned a0, unsigned a2, unsigned b0, unsigned b1) {
    float d2, d3;
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%6,%5,%6}, {%7,%8}, "
        "{%0,%1,%9,%9};\n"
        : "+f"(c[0]), "+f"(c[1]), "=f"(d2), "=f"(d3)
        : "r"(a0), "r"(a2), "r"(0u), "r"(b0), "r"(b1), "f"(0.f));
}
#pragma nv_diag_default 550

// One block per (kv head, split) of the context 0..pos. The split's keys are cut into tiles of
// DEC_KEYS; warp w takes tiles w, w + DEC_WARPS, ... and streams them through its own
// DEC_STAGES-deep cp.async ring (no block barrier in the loop), keeping an online softmax per
// head (row). The warps are merged in warp order (deterministic: no atomics) into un-normalised
// partials: acc [H][SPLITS][HD], (max, sum) [H][SPLITS][2] with max in units of the scaled score
// (as attn_decode_combine reads them). Dynamic shared memory: DEC_WARPS * DEC_STAGES * 2 *
// DEC_TILE bytes; the merge reuses it.
extern "C" __global__ void __launch_bounds__(DEC_WARPS * 32, 1)
attn_decode_partial(const float* __restrict__ q, const bf16* __restrict__ k_cache,
                    const bf16* __restrict__ v_cache, const int* __restrict__ pos_ptr,
                    float* __restrict__ part_acc, float* __restrict__ part_ml, int max_seq) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ float m_s[DEC_WARPS][8], l_s[DEC_WARPS][8], wt_s[DEC_WARPS][8];
    pdl_launch_next();
    const int kvh = blockIdx.x, s = blockIdx.y, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, tg = lane & 3;  // the fragment's row (head) and thread in group
    const unsigned s_k = smem_u32(smem) + warp * DEC_STAGES * 2 * DEC_TILE;  // this warp's ring
    const bf16* kbase = k_cache + (long)kvh * max_seq * HD;
    const bf16* vbase = v_cache + (long)kvh * max_seq * HD;
    // The split's keys start .. end - 1 of a context of len, and how many of its tiles are this
    // warp's (none past the split count).
    int len, start, end, my_tiles;
    auto plan = [&](int l) {
        len = l;
        const int splits = active_splits(len);
        start = (int)((long)s * len / splits);
        end = (int)((long)(s + 1) * len / splits);
        const int tiles = s < splits ? (end - start + DEC_KEYS - 1) / DEC_KEYS : 0;
        my_tiles = tiles > warp ? (tiles - warp + DEC_WARPS - 1) / DEC_WARPS : 0;
    };
    // The warp's i-th tile into stage i % DEC_STAGES, without key `skip`. Keys past the split
    // are zero-filled (and their scores masked): they belong to the next split or hold stale
    // cache, NaN included. Every lane commits a group per call, empty or not, so the wait
    // counts below line up.
    auto stage_in = [&](int i, int skip) {
        if (i < my_tiles) {
            const int k0 = start + (warp + i * DEC_WARPS) * DEC_KEYS;
            const unsigned kst = s_k + (i % DEC_STAGES) * 2 * DEC_TILE, vst = kst + DEC_TILE;
            for (int c = lane; c < DEC_KEYS * PF_CHUNKS; c += 32) {
                const int r = c / PF_CHUNKS, ch = c % PF_CHUNKS, key = k0 + r;
                if (key == skip) continue;
                const bool ok = key < end;
                const long at = (long)(ok ? key : start) * HD + ch * 8;
                cp_async16(kst + swz(r, ch), kbase + at, ok);
                cp_async16(vst + swz(r, ch), vbase + at, ok);
            }
        }
        cp_async_commit();
    };
    // The prologue's tiles are asked for before the PDL wait, so that their loads overlap
    // attn_prepare. Every key before this step's was written by an earlier graph launch or the
    // prefill, both complete, and cp.async.cg reads them at L2 (before the wait a line in this
    // SM's L1 may be older). The position read before the wait is a guess, checked after it:
    // read with a plain load it was stale on the H200 (the bench's ids differed between rounds);
    // if it differs, the prologue starts again.
    plan(__ldcg(pos_ptr) + 1);
#pragma unroll
    for (int i = 0; i < DEC_STAGES - 1; i++) stage_in(i, len - 1);
    pdl_wait();
    const int now = __ldcg(pos_ptr) + 1;
    const bool guessed = now == len;
    if (!guessed) {
        cp_async_wait<0>();
        __syncwarp();
        plan(now);
#pragma unroll
        for (int i = 0; i < DEC_STAGES - 1; i++) stage_in(i, -1);
    }
    if (s >= active_splits(len)) return;
    // This step's key and value (attn_prepare's), left out of a prologue tile: plain copies by
    // the warp that owns the tile (its __syncwarp in the loop orders them before the tile is
    // read).
    if (guessed && end == len) {
        const int t = (len - 1 - start) / DEC_KEYS, r = (len - 1 - start) % DEC_KEYS;
        if (t % DEC_WARPS == warp && t / DEC_WARPS < DEC_STAGES - 1) {
            unsigned char* kst = smem + (warp * DEC_STAGES + t / DEC_WARPS) * 2 * DEC_TILE;
            for (int ch = lane; ch < PF_CHUNKS; ch += 32) {
                const long at = (long)(len - 1) * HD + ch * 8;
                *reinterpret_cast<uint4*>(kst + swz(r, ch)) = __ldcg(reinterpret_cast<const uint4*>(kbase + at));
                *reinterpret_cast<uint4*>(kst + DEC_TILE + swz(r, ch)) =
                    __ldcg(reinterpret_cast<const uint4*>(vbase + at));
            }
        }
    }

    // Q as A fragments (row g = head g of the group; rows 8..15 are implicit zeros), bf16 like
    // the prefill's q: kk-th k-step holds dims kk*16 + 2tg, +1 and kk*16 + 8 + 2tg, +1.
    unsigned qa[HD / 16][2];
    {
        const bool ok = g < GROUP;
        const float* qrow = q + (kvh * GROUP + (ok ? g : 0)) * HD + 2 * tg;
#pragma unroll
        for (int kk = 0; kk < HD / 16; kk++) {
            const float2 lo = *reinterpret_cast<const float2*>(qrow + kk * 16);
            const float2 hi = *reinterpret_cast<const float2*>(qrow + kk * 16 + 8);
            qa[kk][0] = ok ? pack_bf16(lo.x, lo.y) : 0u;
            qa[kk][1] = ok ? pack_bf16(hi.x, hi.y) : 0u;
        }
    }

    // Scores are exponentiated in base 2 with the 1/sqrt(HD) scale folded in; m is in raw
    // (unscaled) score units, l is this thread's share of row g's sum (a quad shares a row).
    const float scale_log2 = rsqrtf((float)HD) * 1.4426950408889634f;
    float o[HD / 8][2];  // O[head g][dims d*8 + 2tg, +1]
#pragma unroll
    for (int d = 0; d < HD / 8; d++) o[d][0] = o[d][1] = 0.f;
    float m = -INFINITY, l = 0.f;

    for (int i = 0; i < my_tiles; i++) {
        cp_async_wait<DEC_STAGES - 2>();
        // Tile i is in shared memory for the whole warp, and every lane is past tile i - 1,
        // whose stage the next load overwrites.
        __syncwarp();
        stage_in(i + DEC_STAGES - 1, -1);
        const unsigned kb = s_k + (i % DEC_STAGES) * 2 * DEC_TILE, vb = kb + DEC_TILE;
        const int k0 = start + (warp + i * DEC_WARPS) * DEC_KEYS;

        // S = Q K^T: n-tile n holds keys n*8 + 2tg, +1 of row g. Even and odd k-steps go to
        // separate accumulators, halving the chain of dependent mma.
        float sc[2][2], sc_odd[2][2];
#pragma unroll
        for (int n = 0; n < 2; n++) sc[n][0] = sc[n][1] = sc_odd[n][0] = sc_odd[n][1] = 0.f;
#pragma unroll
        for (int kk = 0; kk < HD / 16; kk++) {
            unsigned b[4];
            ldsm_x4(kb + swz((lane & 7) + (lane >> 4) * 8, kk * 2 + ((lane >> 3) & 1)), b);
            float(*acc)[2] = kk & 1 ? sc_odd : sc;
            mma_bf16_top(acc[0], qa[kk][0], qa[kk][1], b[0], b[1]);
            mma_bf16_top(acc[1], qa[kk][0], qa[kk][1], b[2], b[3]);
        }
#pragma unroll
        for (int n = 0; n < 2; n++) {
            sc[n][0] += sc_odd[n][0];
            sc[n][1] += sc_odd[n][1];
        }
        if (k0 + DEC_KEYS > end) {
#pragma unroll
            for (int n = 0; n < 2; n++)
#pragma unroll
                for (int e = 0; e < 2; e++)
                    if (k0 + n * 8 + 2 * tg + e >= end) sc[n][e] = -INFINITY;
        }
        // Online softmax of row g over its quad. A tile's first key is always in the split, so
        // the new max is finite.
        float mx = fmaxf(m, fmaxf(fmaxf(sc[0][0], sc[0][1]), fmaxf(sc[1][0], sc[1][1])));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float ms = mx * scale_log2;
        const float corr = exp2f(m * scale_log2 - ms);
        m = mx;
#pragma unroll
        for (int n = 0; n < 2; n++)
#pragma unroll
            for (int e = 0; e < 2; e++) sc[n][e] = exp2f(sc[n][e] * scale_log2 - ms);
        l = l * corr + (sc[0][0] + sc[0][1]) + (sc[1][0] + sc[1][1]);
#pragma unroll
        for (int d = 0; d < HD / 8; d++) {
            o[d][0] *= corr;
            o[d][1] *= corr;
        }
        // O += P V: the score accumulators are already P's A fragment (row g; keys 2tg, +1 and
        // 8 + 2tg, +1).
        const unsigned p0 = pack_bf16(sc[0][0], sc[0][1]), p1 = pack_bf16(sc[1][0], sc[1][1]);
#pragma unroll
        for (int dd = 0; dd < HD / 16; dd++) {
            unsigned b[4];
            ldsm_x4_trans(vb + swz((lane & 7) + ((lane >> 3) & 1) * 8, dd * 2 + (lane >> 4)), b);
            mma_bf16_top(o[2 * dd], p0, p1, b[0], b[1]);
            mma_bf16_top(o[2 * dd + 1], p0, p1, b[2], b[3]);
        }
    }

    // Merge the warps through shared memory (the stages, once every warp is done with them).
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    cp_async_wait<0>();
    __syncthreads();
    float* o_s = reinterpret_cast<float*>(smem);  // [DEC_WARPS][8][HD]
    if (tg == 0) {
        m_s[warp][g] = m;
        l_s[warp][g] = l;
    }
#pragma unroll
    for (int d = 0; d < HD / 8; d++)
        *reinterpret_cast<float2*>(o_s + (warp * 8 + g) * HD + d * 8 + 2 * tg) = make_float2(o[d][0], o[d][1]);
    __syncthreads();
    // Each warp's weight in a head's merge, once per (warp, head) instead of once per output
    // element: the loop below is then independent loads and FMAs, not 16 serial rounds of
    // exponentials (that loop held about half of the kernel's stall samples after its wait).
    // A warp without tiles has m = -inf and o = 0; its weight is 0 and it adds nothing.
    if (threadIdx.x < GROUP) {
        const int h = threadIdx.x;
        float M = -INFINITY, L = 0.f;
#pragma unroll
        for (int w = 0; w < DEC_WARPS; w++) M = fmaxf(M, m_s[w][h]);
#pragma unroll
        for (int w = 0; w < DEC_WARPS; w++) {
            const float wt = m_s[w][h] != -INFINITY ? exp2f((m_s[w][h] - M) * scale_log2) : 0.f;
            wt_s[w][h] = wt;
            L += l_s[w][h] * wt;
        }
        const long at = (long)(kvh * GROUP + h) * ATTN_SPLITS + s;
        part_ml[at * 2] = M * rsqrtf((float)HD);  // the combine's exp(max) is of the scaled score
        part_ml[at * 2 + 1] = L;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < (GROUP * HD + DEC_WARPS * 32 - 1) / (DEC_WARPS * 32); k++) {
        const int i = threadIdx.x + k * DEC_WARPS * 32, h = i / HD, d = i % HD;
        if (i < GROUP * HD) {
            float acc = 0.f;
#pragma unroll
            for (int w = 0; w < DEC_WARPS; w++) acc += wt_s[w][h] * o_s[(w * 8 + h) * HD + d];
            part_acc[((long)(kvh * GROUP + h) * ATTN_SPLITS + s) * HD + d] = acc;
        }
    }
}

// Merges the splits of each head and applies the output gate: out = softmax(qK)V * sigmoid(gate).
// grid H, block HD threads; out is the bf16 input of o_proj. The splits' (max, sum) pairs come in
// through shared memory in one parallel load, asked for with the position and the gate (every
// split's: those past the split count are stale and never read), so the only chain of global
// loads left is the accumulators' (independent, 16 in flight).
extern "C" __global__ void attn_decode_combine(const float* __restrict__ part_acc, const float* __restrict__ part_ml,
                                               const float* __restrict__ proj, const int* __restrict__ pos_ptr,
                                               bf16* __restrict__ out) {
    __shared__ float m_s[ATTN_SPLITS], l_s[ATTN_SPLITS];
    pdl_launch_next();
    pdl_wait();
    const int h = blockIdx.x, i = threadIdx.x;
    const float gate = __ldcg(proj + h * 2 * HD + HD + i);  // asked for now, used at the end
    const long base = (long)h * ATTN_SPLITS;
    for (int s = i; s < ATTN_SPLITS; s += HD) {
        const float2 ml = __ldcg(reinterpret_cast<const float2*>(part_ml) + base + s);
        m_s[s] = ml.x;
        l_s[s] = ml.y;
    }
    const int splits = active_splits(__ldcg(pos_ptr) + 1);
    __syncthreads();
    float M = -INFINITY;
    for (int s = 0; s < splits; s++) M = fmaxf(M, m_s[s]);
    float num = 0.f, den = 0.f;
#pragma unroll 16
    for (int s = 0; s < splits; s++) {
        const float w = __expf(m_s[s] - M);
        den += w * l_s[s];
        num += w * part_acc[(base + s) * HD + i];
    }
    out[h * HD + i] = f2bf(num / den * sigmoid(gate));
}

// The flash kernels' per-row work on score fragments in the m16n8 accumulator layout: s[4n + e]
// is row g + 8 (e >> 1) of a warp's 16, key 8n + 2 tg + (e & 1) of the tile (n < KEYS / 8).

// Masks the keys after each row's position (pos: rows g and g + 8) or past kv_len.
template <int KEYS>
__device__ __forceinline__ void flash_mask(float* s, int k0, int tg, const int (&pos)[2], int kv_len) {
#pragma unroll
    for (int n = 0; n < KEYS / 8; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int key = k0 + n * 8 + 2 * tg + (e & 1);
            if (key > pos[e >> 1] || key >= kv_len) s[4 * n + e] = -INFINITY;
        }
}

// Online softmax over one tile; each row's 4 threads (one quad) share the max, and sum at the
// end (flash_store). s becomes the unnormalised probabilities (base 2, the scale folded into
// scale_log2), m and l the rows' running max and this thread's sum; corr is what the output
// so far must be multiplied by.
template <int KEYS>
__device__ __forceinline__ void flash_softmax(float* s, float (&m)[2], float (&l)[2], float scale_log2,
                                              float (&corr)[2]) {
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int n = 0; n < KEYS / 8; n++) {
        mx[0] = fmaxf(mx[0], fmaxf(s[4 * n], s[4 * n + 1]));
        mx[1] = fmaxf(mx[1], fmaxf(s[4 * n + 2], s[4 * n + 3]));
    }
    float ms[2], rs[2] = {0.f, 0.f};
#pragma unroll
    for (int r = 0; r < 2; r++) {
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        // A row with no visible key yet keeps m = -inf; offset 0 keeps its exps 0, not NaN.
        ms[r] = mx[r] == -INFINITY ? 0.f : mx[r] * scale_log2;
        corr[r] = exp2f(m[r] * scale_log2 - ms[r]);
        m[r] = mx[r];
    }
#pragma unroll
    for (int i = 0; i < KEYS / 2; i++) {
        s[i] = exp2f(s[i] * scale_log2 - ms[(i >> 1) & 1]);
        rs[(i >> 1) & 1] += s[i];
    }
#pragma unroll
    for (int r = 0; r < 2; r++) l[r] = l[r] * corr[r] + rs[r];
}

// One warp's 16 output rows, o[4d + e] at row g + 8 (e >> 1), dim 8d + 2 tg + (e & 1); t0 is
// row g's token. Normalised, gated (out = o / l * sigmoid(gate)), stored as bf16 pairs.
__device__ __forceinline__ void flash_store(const float* o, float (&l)[2], int t0, int tokens, int h, int tg,
                                            const float* __restrict__ proj, bf16* __restrict__ out) {
#pragma unroll
    for (int r = 0; r < 2; r++) {
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
        const int t = t0 + 8 * r;
        if (t >= tokens) continue;
        const float inv = 1.f / l[r];
        const float* gate = proj + (long)t * ATTN_IN_ROWS + h * 2 * HD + HD;
        bf16* dst = out + (long)t * ATTN_OUT + h * HD;
#pragma unroll
        for (int d = 0; d < HD / 8; d++) {
            const int col = d * 8 + 2 * tg;
            const float2 gv = *reinterpret_cast<const float2*>(gate + col);
            *reinterpret_cast<unsigned*>(dst + col) =
                pack_bf16(o[4 * d + 2 * r] * inv * sigmoid(gv.x), o[4 * d + 2 * r + 1] * inv * sigmoid(gv.y));
        }
    }
}

#if ATTN_HEAD_DIM == 256
// Causal flash attention on the warpgroup MMA, for the model's head dim (256: a row is four
// 128-byte swizzled lines, and P V's N is one m64n256k16). One block per (query head, tile of
// FW_ROWS queries), warp-specialised: warpgroup 0 loads (thread 0 asks the TMA for the query
// tile once and for each K/V tile of FW_KEYS keys into a 2-stage ring, a `full` mbarrier per
// stage counting the bytes in), warpgroups 1 and 2 take 64 query rows each and free a stage on
// its `empty` mbarrier when done with it. No block barrier in the loop, so the two consumer
// warpgroups drift apart and one's softmax overlaps the other's MMAs.
// S = Q K^T is m64n64k16 with both operands K-major from shared memory; P V is m64nHDk16 with P
// in registers (the score accumulators are already the A fragments) and V MN-major (its rows,
// dims contiguous, read transposed). Every tile is HD / 64 column blocks of [rows][128 bytes]
// in the 128-byte swizzle, one TMA box each. The maps (attention.rs) end the keys at the
// chunk's end, so a K/V row past it reads as zero: masked scores give p = 0, and 0 * (whatever
// the cache holds there, NaN included) must not reach the output; query rows past the chunk
// are zero too (finite scores, never stored).
// Against the mma.sync kernel (other head dims: the tiny fixtures', below): no ldmatrix of Q
// and K per tile, no load instructions in the MMA warps, twice the queries per K/V tile read.
#define FW_WGS 2
#define FW_ROWS (FW_WGS * 64)
#define FW_KEYS 64
#define FW_THREADS ((FW_WGS + 1) * 128)
#define FW_LOADER_REGS 40
#define FW_CONSUMER_REGS 232

// q: tensor map of bf16 [tokens][H][HD] (attn_prefill_prepare's output); k, v: maps of the
// caches' kv head rows 0 .. start + tokens; out: bf16 [tokens][H * HD] = softmax(q K^T /
// sqrt(HD)) V * sigmoid(gate). grid (H, ceil(tokens / FW_ROWS)), block FW_THREADS, dynamic
// shared memory 1024 + (FW_ROWS + 4 * FW_KEYS) * HD * 2 bytes (the 1 KB aligns the atoms).
extern "C" __global__ void __launch_bounds__(FW_THREADS, 1)
attn_prefill_flash(const __grid_constant__ TensorMap q, const __grid_constant__ TensorMap k,
                   const __grid_constant__ TensorMap v, const float* __restrict__ proj, bf16* __restrict__ out,
                   int start, int tokens) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long q_bar, full_bar[2], empty_bar[2];
    pdl_launch_next();
    pdl_wait();
    constexpr unsigned KV_TILE = FW_KEYS * HD * 2;
    const int h = blockIdx.x, kvh = h / GROUP;
    const int q0 = (gridDim.y - 1 - blockIdx.y) * FW_ROWS;
    const int kv_len = start + tokens;
    const int last_key = min(start + q0 + FW_ROWS - 1, kv_len - 1);
    const int kv_tiles = last_key / FW_KEYS + 1;
    const unsigned s_q = (smem_u32(smem) + 1023) & ~1023u;
    const unsigned s_k = s_q + FW_ROWS * HD * 2;
    const unsigned s_v = s_k + 2 * KV_TILE;
    const unsigned qb = smem_u32(&q_bar);
    auto full = [&](int stage) { return smem_u32(&full_bar[stage]); };
    auto empty = [&](int stage) { return smem_u32(&empty_bar[stage]); };
    if (threadIdx.x == 0) {
        mbar_init(qb, 1);
#pragma unroll
        for (int i = 0; i < 2; i++) {
            mbar_init(full(i), 1);
            mbar_init(empty(i), 8);  // one arrival per consumer warp
        }
        // The TMA (the async proxy) must see the barriers initialised.
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        fence_async_shared();
    }
    __syncthreads();

    if (threadIdx.x < 128) {
        setmaxnreg_dec<FW_LOADER_REGS>();
        if (threadIdx.x != 0) return;
        mbar_arrive_expect_tx(qb, FW_ROWS * HD * 2);
#pragma unroll
        for (int b = 0; b < HD / 64; b++) tma_load_5d(s_q + b * FW_ROWS * 128, &q, b * 64, h, q0, 0, 0, qb);
        for (int j = 0; j < kv_tiles; j++) {
            const int stage = j & 1;
            // A fresh barrier counts as having completed the phase before its first.
            mbar_wait(empty(stage), ((j >> 1) & 1) ^ 1);
            mbar_arrive_expect_tx(full(stage), 2 * KV_TILE);
#pragma unroll
            for (int b = 0; b < HD / 64; b++) {
                const unsigned at = stage * KV_TILE + b * FW_KEYS * 128;
                tma_load_5d(s_k + at, &k, b * 64, j * FW_KEYS, kvh, 0, 0, full(stage));
                tma_load_5d(s_v + at, &v, b * 64, j * FW_KEYS, kvh, 0, 0, full(stage));
            }
        }
        return;
    }

    setmaxnreg_inc<FW_CONSUMER_REGS>();
    const int wg = (threadIdx.x >> 7) - 1, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int g = lane >> 2, tg = lane & 3;  // the fragment's row group and thread in group
    // Scores are exponentiated in base 2 with the 1/sqrt(HD) scale folded in.
    const float scale_log2 = rsqrtf((float)HD) * 1.4426950408889634f;
    // o: this warp's 16 rows x HD, chunk i (dims 8i..8i+7) in o[4i..4i+3] (rows g and g + 8).
    float o[HD / 2];
#pragma unroll
    for (int i = 0; i < HD / 2; i++) o[i] = 0.f;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // rows g and g + 8
    const int wg_first = start + q0 + wg * 64;                // this warpgroup's first query position
    const int pos[2] = {wg_first + warp * 16 + g, wg_first + warp * 16 + g + 8};
    mbar_wait(qb, 0);

    for (int j = 0; j < kv_tiles; j++) {
        const int stage = j & 1;
        mbar_wait(full(stage), (j >> 1) & 1);
        const int k0 = j * FW_KEYS;
        // A tile wholly after this warpgroup's last query is wholly masked for it: it only frees
        // the stage (every consumer warp arrives once per phase).
        if (k0 <= wg_first + 63) {
            const unsigned kb = s_k + stage * KV_TILE, vb = s_v + stage * KV_TILE;
            // S = Q K^T: K steps of 16 dims, 4 per 64-dim column block (32 bytes apart).
            float s[FW_KEYS / 2];
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
                const unsigned qa = s_q + (kk >> 2) * FW_ROWS * 128 + wg * 64 * 128 + (kk & 3) * 32;
                const unsigned ka = kb + (kk >> 2) * FW_KEYS * 128 + (kk & 3) * 32;
                wgmma_m64n64k16(s, smem_desc(qa), smem_desc(ka), kk > 0);
            }
            wgmma_commit();
            wgmma_wait<0>();
            if (k0 + FW_KEYS - 1 > pos[0] || k0 + FW_KEYS > kv_len) flash_mask<FW_KEYS>(s, k0, tg, pos, kv_len);
            float corr[2];
            flash_softmax<FW_KEYS>(s, m, l, scale_log2, corr);
#pragma unroll
            for (int i = 0; i < HD / 2; i++) o[i] *= corr[(i >> 1) & 1];
            // O += P V: keys 16kk..16kk+15 of P (the accumulators of key chunks 2kk and 2kk + 1)
            // against V's rows 16kk.. (two 8-row swizzle atoms, 2 KB, into each column block).
            // Every fragment is packed before the first MMA: a register written between two
            // wgmmas makes the compiler fence (and serialise) each one.
            unsigned p[FW_KEYS / 16][4];
#pragma unroll
            for (int kk = 0; kk < FW_KEYS / 16; kk++)
#pragma unroll
                for (int x = 0; x < 4; x++) p[kk][x] = pack_bf16(s[8 * kk + 2 * x], s[8 * kk + 2 * x + 1]);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < FW_KEYS / 16; kk++)
                wgmma_m64n256k16_rt(o, p[kk], smem_desc(vb + kk * 2048, FW_KEYS * 128), 1);
            wgmma_commit();
            wgmma_wait<0>();
        }
        if (lane == 0) mbar_arrive(empty(stage));
    }
    flash_store(o, l, q0 + wg * 64 + warp * 16 + g, tokens, h, tg, proj, out);
}
#else
// q: bf16 [tokens][H][HD] from attn_prefill_prepare; out: bf16 [tokens][H * HD] =
// softmax(q K^T / sqrt(HD)) V * sigmoid(gate). grid (H, ceil(tokens / PF_ROWS)), block
// PF_WARPS * 32, dynamic shared memory (PF_ROWS + 4 * PF_KEYS) * HD * 2 bytes.
extern "C" __global__ void __launch_bounds__(PF_WARPS * 32, 2)
attn_prefill_flash(const bf16* __restrict__ q, const bf16* __restrict__ k_cache, const bf16* __restrict__ v_cache,
                   const float* __restrict__ proj, bf16* __restrict__ out, int start, int tokens, int max_seq) {
    extern __shared__ __align__(128) unsigned char smem[];
    pdl_launch_next();
    pdl_wait();
    constexpr unsigned KV_TILE = PF_KEYS * HD * 2;
    const int h = blockIdx.x, kvh = h / GROUP;
    const int q0 = (gridDim.y - 1 - blockIdx.y) * PF_ROWS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, tg = lane & 3;  // the fragment's row group and thread in group
    const int kv_len = start + tokens;
    const int last_key = min(start + q0 + PF_ROWS - 1, kv_len - 1);
    const int kv_tiles = last_key / PF_KEYS + 1;
    const unsigned s_q = smem_u32(smem);
    const unsigned s_k = s_q + PF_ROWS * HD * 2;
    const unsigned s_v = s_k + 2 * KV_TILE;

    // Query rows past the chunk are zero: finite scores, never stored.
    for (int i = threadIdx.x; i < PF_ROWS * PF_CHUNKS; i += PF_WARPS * 32) {
        const int r = i / PF_CHUNKS, c = i % PF_CHUNKS, t = q0 + r;
        const bool ok = t < tokens;
        cp_async16(s_q + swz(r, c), q + ((long)(ok ? t : 0) * ATTN_HEADS + h) * HD + c * 8, ok);
    }
    // Keys past the chunk are zero-filled: masked scores give p = 0, and 0 * (whatever the cache
    // holds there, NaN included) must not reach the output.
    auto load_kv = [&](int tile, int buf) {
        const int k0 = tile * PF_KEYS;
        for (int i = threadIdx.x; i < PF_KEYS * PF_CHUNKS; i += PF_WARPS * 32) {
            const int r = i / PF_CHUNKS, c = i % PF_CHUNKS, key = k0 + r;
            const bool ok = key < kv_len;
            const long at = ((long)kvh * max_seq + (ok ? key : 0)) * HD + c * 8;
            cp_async16(s_k + buf * KV_TILE + swz(r, c), k_cache + at, ok);
            cp_async16(s_v + buf * KV_TILE + swz(r, c), v_cache + at, ok);
        }
    };
    load_kv(0, 0);
    cp_async_commit();

    // Scores are exponentiated in base 2 with the 1/sqrt(HD) scale folded in.
    const float scale_log2 = rsqrtf((float)HD) * 1.4426950408889634f;
    float o[HD / 8][4];
#pragma unroll
    for (int d = 0; d < HD / 8; d++) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // rows g and g + 8
    const int first_pos = start + q0 + warp * 16;              // this warp's first query position
    const int pos[2] = {first_pos + g, first_pos + g + 8};

    for (int j = 0; j < kv_tiles; j++) {
        if (j + 1 < kv_tiles) {
            load_kv(j + 1, (j + 1) & 1);
            cp_async_commit();
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        const int k0 = j * PF_KEYS;
        // A tile wholly after this warp's last query is wholly masked for it.
        if (k0 <= first_pos + 15) {
            const unsigned kb = s_k + (j & 1) * KV_TILE, vb = s_v + (j & 1) * KV_TILE;
            float s[PF_KEYS / 8][4];
#pragma unroll
            for (int n = 0; n < PF_KEYS / 8; n++) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
                unsigned a[4];
                ldsm_x4(s_q + swz(warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, kk * 2 + (lane >> 4)), a);
#pragma unroll
                for (int nn = 0; nn < PF_KEYS / 16; nn++) {
                    unsigned b[4];
                    ldsm_x4(kb + swz(nn * 16 + (lane & 7) + (lane >> 4) * 8, kk * 2 + ((lane >> 3) & 1)), b);
                    mma_bf16(s[2 * nn], a, b[0], b[1]);
                    mma_bf16(s[2 * nn + 1], a, b[2], b[3]);
                }
            }
            if (k0 + PF_KEYS - 1 > first_pos || k0 + PF_KEYS > kv_len) flash_mask<PF_KEYS>(&s[0][0], k0, tg, pos, kv_len);
            float corr[2];
            flash_softmax<PF_KEYS>(&s[0][0], m, l, scale_log2, corr);
#pragma unroll
            for (int d = 0; d < HD / 8; d++) {
                o[d][0] *= corr[0];
                o[d][1] *= corr[0];
                o[d][2] *= corr[1];
                o[d][3] *= corr[1];
            }
            // O += P V: the score accumulators are already in the A-fragment layout.
#pragma unroll
            for (int kk = 0; kk < PF_KEYS / 16; kk++) {
                const unsigned a[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]), pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                                       pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                       pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
                for (int dd = 0; dd < HD / 16; dd++) {
                    unsigned b[4];
                    ldsm_x4_trans(vb + swz(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, dd * 2 + (lane >> 4)), b);
                    mma_bf16(o[2 * dd], a, b[0], b[1]);
                    mma_bf16(o[2 * dd + 1], a, b[2], b[3]);
                }
            }
        }
        // The next iteration's load overwrites this buffer.
        __syncthreads();
    }

    flash_store(&o[0][0], l, q0 + warp * 16 + g, tokens, h, tg, proj, out);
}
#endif
