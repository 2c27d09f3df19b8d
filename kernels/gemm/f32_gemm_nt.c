// The entry points of the four f32_gemm_nt* kernels (each ISA path and the dispatching one),
// thin calls into the shared engine kernels/common/f32_gemm_nt_core.h. scratch (the maps'
// scratch: CKW_GEMM_PACK_BYTES) holds W's packed column blocks.
#include <stddef.h>

#include "kernels/common/f32_gemm_nt_core.h"
#include "kernels/gemm/f32_gemm_nt.h"
#include "kernels/gemm/f32_gemm_nt_bias.h"
#include "kernels/gemm/f32_gemm_nt_bias_gelu.h"
#include "kernels/gemm/f32_gemm_nt_bias_residual.h"

#define PACK_FLOATS_ ((int64_t)(CKW_GEMM_PACK_BYTES / sizeof(float)))

// sfx: "" (dispatching) or __<isa>; the kernel name and the core name take the same suffix.
#define ENTRIES_(sfx)                                                                                            \
  void ckw_f32_gemm_nt##sfx(float* restrict y, const float* restrict x, const float* restrict w,                  \
                            float* restrict scratch, int64_t M, int64_t N, int64_t K, int64_t ldy) {              \
    ckw_f32_gemm_nt_core##sfx(y, x, w, NULL, NULL, scratch, PACK_FLOATS_, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);     \
  }                                                                                                              \
  void ckw_f32_gemm_nt_bias##sfx(float* restrict y, const float* restrict x, const float* restrict w,             \
                                 const float* restrict b, float* restrict scratch, int64_t M, int64_t N,          \
                                 int64_t K, int64_t ldy) {                                                        \
    ckw_f32_gemm_nt_core##sfx(y, x, w, b, NULL, scratch, PACK_FLOATS_, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);        \
  }                                                                                                              \
  void ckw_f32_gemm_nt_bias_gelu##sfx(float* restrict y, const float* restrict x, const float* restrict w,        \
                                      const float* restrict b, float* restrict scratch, int64_t M, int64_t N,     \
                                      int64_t K, int64_t ldy) {                                                   \
    ckw_f32_gemm_nt_core##sfx(y, x, w, b, NULL, scratch, PACK_FLOATS_, M, N, K, ldy, CKW_GEMM_EPI_GELU);         \
  }                                                                                                              \
  void ckw_f32_gemm_nt_bias_residual##sfx(float* y, const float* restrict x, const float* restrict w,             \
                                          const float* restrict b, const float* r, float* restrict scratch,       \
                                          int64_t M, int64_t N, int64_t K, int64_t ldy) {                         \
    ckw_f32_gemm_nt_core##sfx(y, x, w, b, r, scratch, PACK_FLOATS_, M, N, K, ldy, CKW_GEMM_EPI_RESIDUAL);        \
  }

ENTRIES_(__scalar)
ENTRIES_(__avx2)
ENTRIES_(__avx512)
ENTRIES_()
