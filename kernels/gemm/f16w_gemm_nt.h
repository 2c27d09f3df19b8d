// ckw_f16w_gemm_nt (op kind "logits"): y = x W^T without bias; with W = the bf16 token-embedding table [vocab, d] this
// is Whisper's tied-embedding logits. x [M, K] and y [M, N] (rows ldy >= N floats apart) fp32; w [N, K] IEEE f16
// (uint16_t bit patterns, widened exactly; row-major as in the checkpoint); any M, N, K >= 0. Numerics per ISA path:
// kernels/common/f16w_gemm_nt_core.h. The un-suffixed entry picks the best ISA at run time; the suffixed ones are
// for tests.
// rows_alone: 0, or nonzero for each row's bits as a call with that row alone, any M (the map's attr).
#ifndef CKW_KERNELS_GEMM_F16W_GEMM_NT_H_
#define CKW_KERNELS_GEMM_F16W_GEMM_NT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f16w_gemm_nt(float* restrict y, const float* restrict x, const uint16_t* restrict w, float* restrict scratch,
                      int64_t M, int64_t N, int64_t K, int64_t ldy, int rows_alone);
void ckw_f16w_gemm_nt__scalar(float* restrict y, const float* restrict x, const uint16_t* restrict w,
                              float* restrict scratch, int64_t M, int64_t N, int64_t K, int64_t ldy, int rows_alone);
void ckw_f16w_gemm_nt__avx2(float* restrict y, const float* restrict x, const uint16_t* restrict w,
                            float* restrict scratch, int64_t M, int64_t N, int64_t K, int64_t ldy, int rows_alone);
void ckw_f16w_gemm_nt__avx512(float* restrict y, const float* restrict x, const uint16_t* restrict w,
                              float* restrict scratch, int64_t M, int64_t N, int64_t K, int64_t ldy, int rows_alone);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_GEMM_F16W_GEMM_NT_H_
