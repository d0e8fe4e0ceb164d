#pragma once
// Small kernels the synthetic loads need.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace powershape::kernels {

void fill_random_bf16(__nv_bfloat16* p, int64_t n, uint64_t seed, float scale, cudaStream_t s);
// One block on one SM spins for `ns` (a GPU that is otherwise idle).
void spin(int64_t ns, cudaStream_t s);
// Streams `bytes` through memory (reads and writes of `buf`, `buf_bytes` long, over and over).
void stream_bytes(void* buf, int64_t buf_bytes, double bytes, cudaStream_t s);
// Row softmax in place over rows of `cols` bf16 (stride ld).
void softmax_rows(__nv_bfloat16* p, int64_t rows, int64_t cols, int64_t ld, cudaStream_t s);

}  // namespace powershape::kernels
