// The reference path of the int8-weight engine (contract: i8w_gemm_nt_core.h): per output an int32
// sum of products in k order, then the f32 epilogue, GELU on one lane of the SIMD paths' formula.
#include "kernels/common/bf16.h"
#include "kernels/common/cpu.h"
#include "kernels/common/i8w_gemm_nt_core.h"

// simd_math.inc's ckw_v_gelu on one lane: the primitives as their per-lane definitions (maxps,
// blendv on a < compare, roundps to nearest, fused multiply-add), so every path's GELU has these bits.
typedef float ckw_vf;
#define CKW_VI static inline
CKW_VI ckw_vf ckw_v_zero(void) { return 0.0f; }
CKW_VI ckw_vf ckw_v_set1(float f) { return f; }
CKW_VI ckw_vf ckw_v_add(ckw_vf a, ckw_vf b) { return a + b; }
CKW_VI ckw_vf ckw_v_sub(ckw_vf a, ckw_vf b) { return a - b; }
CKW_VI ckw_vf ckw_v_mul(ckw_vf a, ckw_vf b) { return a * b; }
CKW_VI ckw_vf ckw_v_div(ckw_vf a, ckw_vf b) { return a / b; }
CKW_VI ckw_vf ckw_v_max(ckw_vf a, ckw_vf b) { return a > b ? a : b; }
CKW_VI ckw_vf ckw_v_fma(ckw_vf a, ckw_vf b, ckw_vf c) { return fmaf(a, b, c); }
CKW_VI ckw_vf ckw_v_abs(ckw_vf a) { return fabsf(a); }
CKW_VI ckw_vf ckw_v_select_lt(ckw_vf x, ckw_vf lim, ckw_vf a, ckw_vf b) { return x < lim ? a : b; }
CKW_VI ckw_vf ckw_v_round_(ckw_vf a) { return nearbyintf(a); }
CKW_VI ckw_vf ckw_v_pow2i_(ckw_vf n) { return ckw_f32_from_bits((uint32_t)((int32_t)nearbyintf(n) + 127) << 23); }
#include "kernels/common/simd_math.inc"

void ckw_i8w_gemm_nt_core__scalar(float* y, const float* x, const int8_t* w, const float* w_scale, const float* b,
                                  const float* r, void* scratch, int64_t M, int64_t N, int64_t K, int64_t ldy,
                                  int epi) {
  if (M <= 0 || N <= 0) return;
  const ckw_i8w_scratch s = ckw_i8w_scratch_at(scratch, M, K);
  for (int64_t m = 0; m < M; ++m) s.sx[m] = ckw_i8w_quantize_row(s.q + m * s.kp, x + m * K, K, s.kp);
  for (int64_t m = 0; m < M; ++m) {
    const int8_t* qm = s.q + m * s.kp;
    for (int64_t n = 0; n < N; ++n) {
      uint32_t acc = 0;  // exact; wrapping like the SIMD paths' if K were ever too long
      for (int64_t k = 0; k < K; ++k) acc += (uint32_t)((int32_t)qm[k] * w[n * K + k]);
      float v = (float)(int32_t)acc * (s.sx[m] * w_scale[n]);
      if (b) v += b[n];
      if (epi == CKW_GEMM_EPI_GELU) v = ckw_v_gelu(v);
      // r is read before y is written, element by element, so y == r is fine.
      if (epi == CKW_GEMM_EPI_RESIDUAL) v = r[m * ldy + n] + v;
      y[m * ldy + n] = v;
    }
  }
}

void ckw_i8w_gemm_nt_core(float* y, const float* x, const int8_t* w, const float* w_scale, const float* b,
                          const float* r, void* scratch, int64_t M, int64_t N, int64_t K, int64_t ldy, int epi) {
  CKW_DISPATCH_ISAS(CKW_I8W_GEMM_NT_CORE_ISAS, ckw_i8w_gemm_nt_core, y, x, w, w_scale, b, r, scratch, M, N, K, ldy,
                    epi);
}
