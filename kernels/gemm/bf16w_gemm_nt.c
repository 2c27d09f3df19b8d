// The entry points of the four bf16w_gemm_nt* kernels (each ISA path and the dispatching one),
// thin calls into the shared engine kernels/common/bf16w_gemm_nt_core.h.
#include <stddef.h>

#include "kernels/common/bf16w_gemm_nt_core.h"
#include "kernels/gemm/bf16w_gemm_nt.h"
#include "kernels/gemm/bf16w_gemm_nt_bias.h"
#include "kernels/gemm/bf16w_gemm_nt_bias_gelu.h"
#include "kernels/gemm/bf16w_gemm_nt_bias_residual.h"

// sfx: "" (dispatching) or __<isa>; the kernel name and the core name take the same suffix.
#define ENTRIES_(sfx)                                                                                          \
  void ckw_bf16w_gemm_nt##sfx(float* restrict y, const float* restrict x, const uint16_t* restrict w, int64_t M, \
                              int64_t N, int64_t K, int64_t ldy) {                                             \
    ckw_bf16w_gemm_nt_core##sfx(y, x, w, NULL, NULL, NULL, 0, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);                        \
  }                                                                                                            \
  void ckw_bf16w_gemm_nt_bias##sfx(float* restrict y, const float* restrict x, const uint16_t* restrict w,      \
                                   const float* restrict b, int64_t M, int64_t N, int64_t K, int64_t ldy) {    \
    ckw_bf16w_gemm_nt_core##sfx(y, x, w, b, NULL, NULL, 0, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);                           \
  }                                                                                                            \
  void ckw_bf16w_gemm_nt_bias_gelu##sfx(float* restrict y, const float* restrict x, const uint16_t* restrict w, \
                                        const float* restrict b, int64_t M, int64_t N, int64_t K, int64_t ldy) { \
    ckw_bf16w_gemm_nt_core##sfx(y, x, w, b, NULL, NULL, 0, M, N, K, ldy, CKW_GEMM_EPI_GELU);                            \
  }                                                                                                            \
  void ckw_bf16w_gemm_nt_bias_residual##sfx(float* y, const float* restrict x, const uint16_t* restrict w,     \
                                            const float* restrict b, const float* r, int64_t M, int64_t N,     \
                                            int64_t K, int64_t ldy) {                                          \
    ckw_bf16w_gemm_nt_core##sfx(y, x, w, b, r, NULL, 0, M, N, K, ldy, CKW_GEMM_EPI_RESIDUAL);                           \
  }
#define ISA_ENTRIES_(isa, unused) ENTRIES_(__##isa)

CKW_BF16W_GEMM_NT_CORE_ISAS(ISA_ENTRIES_, _)
ENTRIES_()
