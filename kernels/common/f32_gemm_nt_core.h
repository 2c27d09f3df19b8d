// Shared engine behind the f32_gemm_nt* kernels: y = epilogue(x W^T), x [M, K] row-major,
// W [N, K] row-major (the checkpoint's nn.Linear layout), y [M, N] row-major.
//
// Numerics of the SIMD paths for M >= 2: each output is one fused multiply-add chain over
// k = 0..K-1 in order (seeded with 0, or with r for the residual epilogue), then + b, then
// GELU. The result is independent of tiling, of M (>= 2) and of how a caller splits the
// outputs, and bit-identical between the AVX2 and AVX-512 paths. M == 1 (decode) takes a
// streaming dot-product path instead (lanes along K, then r + (dot + b)): same contract,
// different rounding, so a thread split must be over N (never M down to 1 row) to keep the
// bits. The scalar path uses separate multiply and add.
#ifndef CKW_KERNELS_COMMON_F32_GEMM_NT_CORE_H_
#define CKW_KERNELS_COMMON_F32_GEMM_NT_CORE_H_

#include <stdint.h>

enum {
  CKW_GEMM_EPI_PLAIN = 0,     // y = x W^T (+ b)
  CKW_GEMM_EPI_GELU = 1,      // y = gelu(x W^T (+ b))
  CKW_GEMM_EPI_RESIDUAL = 2,  // y = r + x W^T (+ b); y may be the same buffer as r
};

// b may be NULL (no bias); r is read only by CKW_GEMM_EPI_RESIDUAL and may equal y.
void ckw_f32_gemm_nt_core__scalar(float* y, const float* x, const float* w, const float* b,
                                  const float* r, int64_t M, int64_t N, int64_t K, int epi);
void ckw_f32_gemm_nt_core__avx2(float* y, const float* x, const float* w, const float* b,
                                const float* r, int64_t M, int64_t N, int64_t K, int epi);
void ckw_f32_gemm_nt_core__avx512(float* y, const float* x, const float* w, const float* b,
                                  const float* r, int64_t M, int64_t N, int64_t K, int epi);
// Best available path for this CPU.
void ckw_f32_gemm_nt_core(float* y, const float* x, const float* w, const float* b, const float* r,
                          int64_t M, int64_t N, int64_t K, int epi);

#endif  // CKW_KERNELS_COMMON_F32_GEMM_NT_CORE_H_
