// Greedy pick on the GPU and the end of a decode step. Needs: nothing but the common header.
//
// The argmax is an atomicMax over 64-bit keys: the float's bits mapped to an unsigned order in
// the high word, the complement of the index in the low word, so the largest logit wins and the
// lowest index wins a tie (the same rule as the engine's CPU argmax).

__device__ __forceinline__ u64 argmax_key(float v, int i) {
    unsigned u = __float_as_uint(v);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ((u64)u << 32) | (u64)(0xffffffffu - (unsigned)i);
}

// best must be 0 before the launch (finish_step resets it). Grid-stride over n logits.
extern "C" __global__ void argmax(const float* __restrict__ logits, int n, u64* best) {
    pdl_launch_next();
    pdl_wait();
    u64 k = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float v = logits[i];
        if (v == v) { const u64 c = argmax_key(v, i); k = c > k ? c : k; }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const u64 other = __shfl_xor_sync(0xffffffffu, k, o);
        k = other > k ? other : k;
    }
    if ((threadIdx.x & 31) == 0 && k) atomicMax(best, k);
}

// Ends a step: the picked token becomes the next input unless the next position already holds
// a prompt token; the position advances; the argmax cell is cleared for the next step.
extern "C" __global__ void finish_step(u64* best, int* ids, int* pos, const int* prompt_end) {
    pdl_launch_next();
    pdl_wait();
    const int p = *pos;
    const int token = (int)(0xffffffffu - (unsigned)(*best & 0xffffffffu));
    if (p + 1 >= *prompt_end) ids[p + 1] = token;
    *pos = p + 1;
    *best = 0;
}
