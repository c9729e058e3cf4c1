// Embedding lookup and the zero-centred RMSNorm: x * rsqrt(mean(x^2) + eps) * (1 + w), in f32.
// The residual stream `x` stays f32 for the whole step; the residual add itself is fused into
// the epilogue of the output projections (gemv with accumulate), so norms only read it.
// Needs: HIDDEN.

// x = embed[ids[*pos]]; one block. The token is read on the GPU so the step needs no host input.
extern "C" __global__ void embed_token(const bf16* __restrict__ table, const int* __restrict__ ids,
                                       const int* __restrict__ pos, float* __restrict__ x) {
    pdl_launch_next();
    pdl_wait();
    const long token = ids[*pos];
    for (int i = threadIdx.x; i < HIDDEN; i += blockDim.x) x[i] = bf2f(table[token * HIDDEN + i]);
}

// out = bf16(rmsnorm(x) * (1 + w)); one block per row of `rows` rows of HIDDEN.
extern "C" __global__ void rmsnorm(const float* __restrict__ x, const bf16* __restrict__ w,
                                   bf16* __restrict__ out, float eps) {
    __shared__ float scratch[32];
    pdl_launch_next();
    pdl_wait();
    const float* row = x + (long)blockIdx.x * HIDDEN;
    float ss = 0.f;
    for (int i = threadIdx.x; i < HIDDEN; i += blockDim.x) ss += row[i] * row[i];
    const float r = rsqrtf(block_sum(ss, scratch) / HIDDEN + eps);
    for (int i = threadIdx.x; i < HIDDEN; i += blockDim.x)
        out[(long)blockIdx.x * HIDDEN + i] = f2bf(row[i] * r * (1.f + bf2f(w[i])));
}

// x[t] = embed[ids[t]] for a prefill chunk; one block per token.
extern "C" __global__ void embed_rows(const bf16* __restrict__ table, const int* __restrict__ ids,
                                      float* __restrict__ x) {
    pdl_launch_next();
    pdl_wait();
    const long token = ids[blockIdx.x];
    for (int i = threadIdx.x; i < HIDDEN; i += blockDim.x) x[(long)blockIdx.x * HIDDEN + i] = bf2f(table[token * HIDDEN + i]);
}
