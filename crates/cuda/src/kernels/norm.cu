// The prefill's embedding lookup and the zero-centred RMSNorm: x * rsqrt(mean(x^2) + eps) *
// (1 + w), in f32 (a decode step's lookup rides in its first product, gemv.cu: gemv_embed_normed).
// The residual stream `x` stays f32 for the whole step; the residual add itself is fused into
// the epilogue of the output projections (gemv with accumulate), so norms only read it.
// Needs: HIDDEN.

// out = bf16(rmsnorm(x) * (1 + w)) for each of `rows` rows of HIDDEN. One warp per row
// (NORM_WARPS rows per block): each lane keeps its float4s of the row in registers, so the row
// is read once and the sum of squares needs only warp shuffles, no block barrier.
// The launcher checks that x is 16-byte and w, out 8-byte aligned.
#define NORM_WARPS 8
#define NORM_VECS ((HIDDEN + 127) / 128)  // float4s per lane
static_assert(HIDDEN % 4 == 0, "rmsnorm reads rows as float4");
extern "C" __global__ void __launch_bounds__(NORM_WARPS * 32) rmsnorm(const float* __restrict__ x, const bf16* __restrict__ w,
                                                                      bf16* __restrict__ out, int rows, float eps) {
    pdl_launch_next();
    pdl_wait();
    const int lane = threadIdx.x & 31;
    const long r = (long)blockIdx.x * NORM_WARPS + (threadIdx.x >> 5);
    if (r >= rows) return;
    const float4* row = reinterpret_cast<const float4*>(x + r * HIDDEN);
    float4 v[NORM_VECS];
    float ss = 0.f;
#pragma unroll
    for (int k = 0; k < NORM_VECS; k++) {
        const int i = k * 32 + lane;  // float4 index within the row
        v[k] = i * 4 < HIDDEN ? row[i] : make_float4(0.f, 0.f, 0.f, 0.f);
        ss += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
    }
    const float rs = rsqrtf(warp_sum(ss) / HIDDEN + eps);
    uint2* dst = reinterpret_cast<uint2*>(out + r * HIDDEN);
    const uint2* wv = reinterpret_cast<const uint2*>(w);
#pragma unroll
    for (int k = 0; k < NORM_VECS; k++) {
        const int i = k * 32 + lane;
        if (i * 4 >= HIDDEN) break;
        const uint2 g = wv[i];
        const float w0 = __uint_as_float(g.x << 16), w1 = __uint_as_float(g.x & 0xffff0000u);
        const float w2 = __uint_as_float(g.y << 16), w3 = __uint_as_float(g.y & 0xffff0000u);
        uint2 o;
        o.x = (unsigned)f2bf(v[k].x * rs * (1.f + w0)) | ((unsigned)f2bf(v[k].y * rs * (1.f + w1)) << 16);
        o.y = (unsigned)f2bf(v[k].z * rs * (1.f + w2)) | ((unsigned)f2bf(v[k].w * rs * (1.f + w3)) << 16);
        dst[i] = o;
    }
}

// x[t] = embed[ids[t]] for a prefill chunk; one block per token.
extern "C" __global__ void embed_rows(const bf16* __restrict__ table, const int* __restrict__ ids,
                                      float* __restrict__ x) {
    pdl_launch_next();
    pdl_wait();
    const long token = ids[blockIdx.x];
    for (int i = threadIdx.x; i < HIDDEN; i += blockDim.x) x[(long)blockIdx.x * HIDDEN + i] = bf2f(table[token * HIDDEN + i]);
}
