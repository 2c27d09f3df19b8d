// ckw_f32_gemm_nt_bias_residual (op kind "linear_residual"): y = r + x W^T + b. b may be NULL. y may be the very same
// buffer as r (in-place residual stream update); no other overlap is allowed. x [M, K], w [N, K] (row-major, as stored
// in the checkpoint), y [M, N]; any M, N, K >= 0. scratch: CKW_GEMM_PACK_BYTES (f32_gemm_nt_core.h; the map's scratch:)
// for packing W once per call, or NULL. rows_alone: 0, or nonzero for each row's bits as a call with that row alone,
// any M (the map's attr). The un-suffixed entry picks the best ISA at run time; the suffixed ones are for tests.
#ifndef CKW_KERNELS_GEMM_F32_GEMM_NT_BIAS_RESIDUAL_H_
#define CKW_KERNELS_GEMM_F32_GEMM_NT_BIAS_RESIDUAL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f32_gemm_nt_bias_residual(float* y, const float* restrict x, const float* restrict w, const float* restrict b,
                                   const float* r, float* restrict scratch, int64_t M, int64_t N, int64_t K,
                                   int64_t ldy, int rows_alone);
void ckw_f32_gemm_nt_bias_residual__scalar(float* y, const float* restrict x, const float* restrict w,
                                           const float* restrict b, const float* r, float* restrict scratch, int64_t M,
                                           int64_t N, int64_t K, int64_t ldy, int rows_alone);
void ckw_f32_gemm_nt_bias_residual__avx2(float* y, const float* restrict x, const float* restrict w,
                                         const float* restrict b, const float* r, float* restrict scratch, int64_t M,
                                         int64_t N, int64_t K, int64_t ldy, int rows_alone);
void ckw_f32_gemm_nt_bias_residual__avx512(float* y, const float* restrict x, const float* restrict w,
                                           const float* restrict b, const float* r, float* restrict scratch, int64_t M,
                                           int64_t N, int64_t K, int64_t ldy, int rows_alone);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_GEMM_F32_GEMM_NT_BIAS_RESIDUAL_H_
