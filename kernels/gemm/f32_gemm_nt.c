#include "kernels/gemm/f32_gemm_nt.h"

#include <stddef.h>

#include "kernels/common/f32_gemm_nt_core.h"

void ckw_f32_gemm_nt(float* restrict y, const float* restrict x, const float* restrict w, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core(y, x, w, NULL, NULL, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);
}

void ckw_f32_gemm_nt__scalar(float* restrict y, const float* restrict x, const float* restrict w, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core__scalar(y, x, w, NULL, NULL, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);
}

void ckw_f32_gemm_nt__avx2(float* restrict y, const float* restrict x, const float* restrict w, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core__avx2(y, x, w, NULL, NULL, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);
}

void ckw_f32_gemm_nt__avx512(float* restrict y, const float* restrict x, const float* restrict w, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  ckw_f32_gemm_nt_core__avx512(y, x, w, NULL, NULL, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);
}
