#include "kernels/gemm/f32_gemm_nt_bias_gelu.h"

#include <stddef.h>

#include "kernels/common/f32_gemm_nt_core.h"

void ckw_f32_gemm_nt_bias_gelu(float* restrict y, const float* restrict x, const float* restrict w, const float* restrict b, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core(y, x, w, b, NULL, M, N, K, ldy, CKW_GEMM_EPI_GELU);
}

void ckw_f32_gemm_nt_bias_gelu__scalar(float* restrict y, const float* restrict x, const float* restrict w, const float* restrict b, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core__scalar(y, x, w, b, NULL, M, N, K, ldy, CKW_GEMM_EPI_GELU);
}

void ckw_f32_gemm_nt_bias_gelu__avx2(float* restrict y, const float* restrict x, const float* restrict w, const float* restrict b, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core__avx2(y, x, w, b, NULL, M, N, K, ldy, CKW_GEMM_EPI_GELU);
}

void ckw_f32_gemm_nt_bias_gelu__avx512(float* restrict y, const float* restrict x, const float* restrict w, const float* restrict b, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core__avx512(y, x, w, b, NULL, M, N, K, ldy, CKW_GEMM_EPI_GELU);
}
