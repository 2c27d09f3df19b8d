#include "kernels/common/cpu.h"
#include "kernels/common/f32_gemm_nt_core.h"

static inline float widen_(float f) { return f; }
#define CKW_GEMM_SCALAR ckw_f32_gemm_nt_core__scalar
#define CKW_GEMM_SCALAR_W float
#include "kernels/common/gemm_nt_core__scalar.inc"

void ckw_f32_gemm_nt_core(float* y, const float* x, const float* w, const float* b, const float* r, float* pack,
                          int64_t pack_floats, int64_t M, int64_t N, int64_t K, int64_t ldy, int epi) {
  CKW_DISPATCH(ckw_f32_gemm_nt_core, y, x, w, b, r, pack, pack_floats, M, N, K, ldy, epi);
}
