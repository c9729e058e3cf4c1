// Seeded synthetic values, generated on the GPU so that the full-size model needs no file:
// uniform in [offset - scale, offset + scale] from a per-element hash (same seed, same values).

__device__ __forceinline__ float hash_uniform(unsigned long long i, unsigned seed) {
    unsigned long long z = i * 0x9E3779B97F4A7C15ull + ((unsigned long long)seed << 32 | seed);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.f / 16777216.f) * 2.f - 1.f;
}

extern "C" __global__ void fill_bf16(bf16* p, unsigned long long n, unsigned seed, float offset, float scale) {
    pdl_launch_next();
    pdl_wait();
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = f2bf(offset + scale * hash_uniform(i, seed));
}

extern "C" __global__ void fill_f32(float* p, unsigned long long n, unsigned seed, float offset, float scale) {
    pdl_launch_next();
    pdl_wait();
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = offset + scale * hash_uniform(i, seed);
}

// FP8 weights (a model with WEIGHT_FP8): e4m3 bytes of values uniform over the format's whole
// range [-448, 448] (round to nearest even, as a quantiser writes them), so that with block
// scales of amplitude / 448 a matrix holds what fill_bf16 would, at e4m3's precision. n even.
extern "C" __global__ void fill_e4m3(unsigned short* p, unsigned long long pairs, unsigned seed) {
    pdl_launch_next();
    pdl_wait();
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < pairs;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const float lo = 448.f * hash_uniform(2 * i, seed), hi = 448.f * hash_uniform(2 * i + 1, seed);
        unsigned short d;
        asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
        p[i] = d;
    }
}
