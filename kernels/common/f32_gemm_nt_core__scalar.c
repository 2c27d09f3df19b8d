#include "kernels/common/cpu.h"
#include "kernels/common/gelu_scalar.h"
#include "kernels/common/f32_gemm_nt_core.h"

void ckw_f32_gemm_nt_core__scalar(float* y, const float* x, const float* w, const float* b,
                                  const float* r, int64_t M, int64_t N, int64_t K, int64_t ldy, int epi) {
  epi &= ~CKW_GEMM_ONE_ROW_DOT;  // one path for every M here
  for (int64_t m = 0; m < M; ++m) {
    const float* xm = x + m * K;
    for (int64_t n = 0; n < N; ++n) {
      const float* wn = w + n * K;
      // r is read before y is written, element by element, so y == r is fine.
      float acc = epi == CKW_GEMM_EPI_RESIDUAL ? r[m * ldy + n] : 0.0f;
      for (int64_t k = 0; k < K; ++k) acc += xm[k] * wn[k];
      if (b) acc += b[n];
      if (epi == CKW_GEMM_EPI_GELU) acc = ckw_gelu_scalar(acc);
      y[m * ldy + n] = acc;
    }
  }
}

void ckw_f32_gemm_nt_core(float* y, const float* x, const float* w, const float* b, const float* r,
                          int64_t M, int64_t N, int64_t K, int64_t ldy, int epi) {
  if (ckw_cpu_has_avx512()) {
    ckw_f32_gemm_nt_core__avx512(y, x, w, b, r, M, N, K, ldy, epi);
  } else if (ckw_cpu_has_avx2()) {
    ckw_f32_gemm_nt_core__avx2(y, x, w, b, r, M, N, K, ldy, epi);
  } else {
    ckw_f32_gemm_nt_core__scalar(y, x, w, b, r, M, N, K, ldy, epi);
  }
}
