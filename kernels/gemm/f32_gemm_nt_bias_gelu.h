// ckw_f32_gemm_nt_bias_gelu (op kind "linear_gelu"): y = gelu(x W^T + b), exact-erf GELU. b may be NULL.
// x [M, K], w [N, K] (row-major, as stored in the checkpoint), y [M, N]; any M, N, K >= 0.
// scratch: CKW_GEMM_PACK_BYTES (f32_gemm_nt_core.h; the map's scratch:) for packing W once per call, or NULL.
// rows_alone: 0, or nonzero for each row's bits as a call with that row alone, any M (the map's attr).
// The un-suffixed entry picks the best ISA at run time; the suffixed ones are for tests.
#ifndef CKW_KERNELS_GEMM_F32_GEMM_NT_BIAS_GELU_H_
#define CKW_KERNELS_GEMM_F32_GEMM_NT_BIAS_GELU_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f32_gemm_nt_bias_gelu(float* restrict y, const float* restrict x, const float* restrict w,
                               const float* restrict b, float* restrict scratch, int64_t M, int64_t N, int64_t K,
                               int64_t ldy, int rows_alone);
void ckw_f32_gemm_nt_bias_gelu__scalar(float* restrict y, const float* restrict x, const float* restrict w,
                                       const float* restrict b, float* restrict scratch, int64_t M, int64_t N,
                                       int64_t K, int64_t ldy, int rows_alone);
void ckw_f32_gemm_nt_bias_gelu__avx2(float* restrict y, const float* restrict x, const float* restrict w,
                                     const float* restrict b, float* restrict scratch, int64_t M, int64_t N, int64_t K,
                                     int64_t ldy, int rows_alone);
void ckw_f32_gemm_nt_bias_gelu__avx512(float* restrict y, const float* restrict x, const float* restrict w,
                                       const float* restrict b, float* restrict scratch, int64_t M, int64_t N,
                                       int64_t K, int64_t ldy, int rows_alone);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_GEMM_F32_GEMM_NT_BIAS_GELU_H_
