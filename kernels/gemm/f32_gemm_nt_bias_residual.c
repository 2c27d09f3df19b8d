#include "kernels/gemm/f32_gemm_nt_bias_residual.h"

#include <stddef.h>

#include "kernels/common/f32_gemm_nt_core.h"

void ckw_f32_gemm_nt_bias_residual(float* y, const float* restrict x, const float* restrict w, const float* restrict b, const float* r, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core(y, x, w, b, r, M, N, K, ldy, CKW_GEMM_EPI_RESIDUAL);
}

void ckw_f32_gemm_nt_bias_residual__scalar(float* y, const float* restrict x, const float* restrict w, const float* restrict b, const float* r, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core__scalar(y, x, w, b, r, M, N, K, ldy, CKW_GEMM_EPI_RESIDUAL);
}

void ckw_f32_gemm_nt_bias_residual__avx2(float* y, const float* restrict x, const float* restrict w, const float* restrict b, const float* r, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core__avx2(y, x, w, b, r, M, N, K, ldy, CKW_GEMM_EPI_RESIDUAL);
}

void ckw_f32_gemm_nt_bias_residual__avx512(float* y, const float* restrict x, const float* restrict w, const float* restrict b, const float* r, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core__avx512(y, x, w, b, r, M, N, K, ldy, CKW_GEMM_EPI_RESIDUAL);
}
