#include "kernels/common/bf16.h"
#include "kernels/common/bf16w_gemm_nt_core.h"
#include "kernels/common/cpu.h"

static inline float widen_(uint16_t h) { return ckw_bf16_to_f32(h); }
#define CKW_GEMM_SCALAR ckw_bf16w_gemm_nt_core__scalar
#define CKW_GEMM_SCALAR_W uint16_t
#include "kernels/common/gemm_nt_core__scalar.inc"

void ckw_bf16w_gemm_nt_core(float* y, const float* x, const uint16_t* w, const float* b, const float* r, float* pack,
                            int64_t pack_floats, int64_t M, int64_t N, int64_t K, int64_t ldy, int epi) {
  CKW_DISPATCH_ISAS(CKW_BF16W_GEMM_NT_CORE_ISAS, ckw_bf16w_gemm_nt_core, y, x, w, b, r, pack, pack_floats, M, N, K, ldy,
                    epi);
}
