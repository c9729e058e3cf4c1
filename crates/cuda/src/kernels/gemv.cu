// BF16 matrix-vector product for decode: y[r] (+)= W[r,:] . x, W row-major bf16, x bf16, y f32.
// One warp per row; every lane issues all of its 16-byte loads of W before the first use, so a
// 4096-column row keeps 16 loads per lane in flight. x is staged once per block in shared memory.
// `accumulate` adds into y: that is how the residual add rides on the output projections.
// The `_normed` variant takes the f32 residual stream instead of x and applies the zero-centred
// RMSNorm in its prologue (each block recomputes it: 8 KB from L2), which removes a launch per
// norm; block 0 also writes the normed vector out when another kernel needs it (the experts).
// Needs: HIDDEN, GDN_OUT (value heads * value dim), ATTN_OUT (heads * head dim).

#define GEMV_WARPS 4

// x = bf16(resid * rsqrt(mean(resid^2) + eps) * (1 + w)) into shared memory (and xn_out).
template <int COLS>
__device__ __forceinline__ void stage_normed(uint4* xs, const float* __restrict__ resid, const bf16* __restrict__ w,
                                             bf16* __restrict__ xn_out, float eps) {
    constexpr int CHUNKS = COLS / 8;
    __shared__ float scratch[32];
    const float4* r4 = reinterpret_cast<const float4*>(resid);
    float ss = 0.f;
    for (int c = threadIdx.x; c < CHUNKS; c += blockDim.x) {
        const float4 a = r4[2 * c], b = r4[2 * c + 1];
        ss += a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w + b.x * b.x + b.y * b.y + b.z * b.z + b.w * b.w;
    }
    const float r = rsqrtf(block_sum(ss, scratch) / COLS + eps);
    for (int c = threadIdx.x; c < CHUNKS; c += blockDim.x) {
        const float4 a = r4[2 * c], b = r4[2 * c + 1];
        const float v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
        float wf[8];
        unpack8(reinterpret_cast<const uint4*>(w)[c], wf);
        unsigned packed[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            packed[i] = (unsigned)f2bf(v[2 * i] * r * (1.f + wf[2 * i])) |
                        ((unsigned)f2bf(v[2 * i + 1] * r * (1.f + wf[2 * i + 1])) << 16);
        const uint4 q = make_uint4(packed[0], packed[1], packed[2], packed[3]);
        xs[c] = q;
        if (xn_out != nullptr && blockIdx.x == 0) reinterpret_cast<uint4*>(xn_out)[c] = q;
    }
}

template <int COLS, bool NORMED>
__device__ __forceinline__ void gemv_rows(const bf16* __restrict__ W, const bf16* __restrict__ x,
                                          const float* __restrict__ resid, const bf16* __restrict__ norm_w,
                                          bf16* __restrict__ xn_out, float eps,
                                          float* __restrict__ y, int rows, int accumulate) {
    constexpr int CHUNKS = COLS / 8;                 // 16-byte chunks per row
    constexpr int PER_LANE = (CHUNKS + 31) / 32;
    __shared__ uint4 xs[CHUNKS];
    pdl_launch_next();
    const int lane = threadIdx.x & 31;
    const long row = (long)blockIdx.x * GEMV_WARPS + (threadIdx.x >> 5);
    const bool valid = row < rows;
    // The weights are issued before waiting for the previous kernel: they overlap its tail.
    const uint4* wr = reinterpret_cast<const uint4*>(W + (valid ? row : 0) * COLS);
    uint4 w[PER_LANE];
#pragma unroll
    for (int i = 0; i < PER_LANE; i++) {
        const int c = lane + 32 * i;
        if (c < CHUNKS) w[i] = __ldg(wr + c);
    }
    pdl_wait();
    if constexpr (NORMED) {
        stage_normed<COLS>(xs, resid, norm_w, xn_out, eps);
    } else {
        for (int c = threadIdx.x; c < CHUNKS; c += blockDim.x) xs[c] = reinterpret_cast<const uint4*>(x)[c];
    }
    __syncthreads();
    if (!valid) return;
    float acc = 0.f;
#pragma unroll
    for (int i = 0; i < PER_LANE; i++) {
        const int c = lane + 32 * i;
        if (c < CHUNKS) acc += dot8(w[i], xs[c]);
    }
    acc = warp_sum(acc);
    if (lane == 0) y[row] = accumulate ? y[row] + acc : acc;
}

extern "C" __global__ void __launch_bounds__(GEMV_WARPS * 32)
gemv_hidden(const bf16* W, const bf16* x, float* y, int rows, int accumulate) {
    gemv_rows<HIDDEN, false>(W, x, nullptr, nullptr, nullptr, 0.f, y, rows, accumulate);
}
extern "C" __global__ void __launch_bounds__(GEMV_WARPS * 32)
gemv_hidden_normed(const bf16* W, const float* resid, const bf16* norm_w, bf16* xn_out, float eps,
                   float* y, int rows, int accumulate) {
    gemv_rows<HIDDEN, true>(W, nullptr, resid, norm_w, xn_out, eps, y, rows, accumulate);
}
extern "C" __global__ void __launch_bounds__(GEMV_WARPS * 32)
gemv_gdn_out(const bf16* W, const bf16* x, float* y, int rows, int accumulate) {
    gemv_rows<GDN_OUT, false>(W, x, nullptr, nullptr, nullptr, 0.f, y, rows, accumulate);
}
extern "C" __global__ void __launch_bounds__(GEMV_WARPS * 32)
gemv_attn_out(const bf16* W, const bf16* x, float* y, int rows, int accumulate) {
    gemv_rows<ATTN_OUT, false>(W, x, nullptr, nullptr, nullptr, 0.f, y, rows, accumulate);
}
