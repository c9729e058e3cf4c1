// BF16 matrix-vector product for decode: y[r] (+)= W[r,:] . x, W row-major bf16, x bf16, y f32.
// One warp per row; every lane issues all of its 16-byte loads of W before the first use, so a
// 4096-column row keeps 16 loads per lane in flight. x is staged once per block in shared memory.
// `accumulate` adds into y: that is how the residual add rides on the output projections.
// Needs: HIDDEN, GDN_OUT (value heads * value dim), ATTN_OUT (heads * head dim).

#define GEMV_WARPS 4

template <int COLS>
__device__ __forceinline__ void gemv_rows(const bf16* __restrict__ W, const bf16* __restrict__ x,
                                          float* __restrict__ y, int rows, int accumulate) {
    constexpr int CHUNKS = COLS / 8;                 // 16-byte chunks per row
    constexpr int PER_LANE = (CHUNKS + 31) / 32;
    __shared__ uint4 xs[CHUNKS];
    for (int c = threadIdx.x; c < CHUNKS; c += blockDim.x) xs[c] = reinterpret_cast<const uint4*>(x)[c];
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const long row = (long)blockIdx.x * GEMV_WARPS + (threadIdx.x >> 5);
    if (row >= rows) return;
    const uint4* wr = reinterpret_cast<const uint4*>(W + row * COLS);
    uint4 w[PER_LANE];
#pragma unroll
    for (int i = 0; i < PER_LANE; i++) {
        const int c = lane + 32 * i;
        if (c < CHUNKS) w[i] = __ldg(wr + c);
    }
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
    gemv_rows<HIDDEN>(W, x, y, rows, accumulate);
}
extern "C" __global__ void __launch_bounds__(GEMV_WARPS * 32)
gemv_gdn_out(const bf16* W, const bf16* x, float* y, int rows, int accumulate) {
    gemv_rows<GDN_OUT>(W, x, y, rows, accumulate);
}
extern "C" __global__ void __launch_bounds__(GEMV_WARPS * 32)
gemv_attn_out(const bf16* W, const bf16* x, float* y, int rows, int accumulate) {
    gemv_rows<ATTN_OUT>(W, x, y, rows, accumulate);
}
