// The avx512 bf16-weight engine with the streaming (M <= CKW_GEMM_ROWS_MAX) dot products on
// vdpbf16ps: 32 k per instruction on bf16 rows read as they are stored, x rounded to bf16 on
// the fly (one conversion per 32 k, shared by 4 rows of W). Contract: bf16w_gemm_nt_core.h.
// Built again on emulated intrinsics for the tests (kernels/common/simd_avx512bf16.h).
#include "kernels/common/bf16w_gemm_nt_core.h"
#include "kernels/common/simd_avx512bf16.h"

// The whole file may use AVX512-BF16, so the dot products below inline into gemv_.
#undef CKW_SIMD_TARGET
#define CKW_SIMD_TARGET __attribute__((target(CKW_BF16_FEATURES)))
#define CKW_BF16_VI static inline __attribute__((always_inline, target(CKW_BF16_FEATURES)))
#define CKW_GEMM_W_BF16
#define CKW_GEMM_HAVE_DOT
#define CKW_GEMM_ENTRY CKW_ISA_BF16(ckw_bf16w_gemm_nt_core)

// 32 x values (k, k + 1 paired per lane) rounded to bf16, in memory order.
CKW_BF16_VI __m512bh x32_(const float* p) {
  return _mm512_cvtne2ps_pbh(_mm512_loadu_ps(p + 16), _mm512_loadu_ps(p));
}
// The first n < 32 of them, 0 beyond (not read).
CKW_BF16_VI __m512bh x32n_(const float* p, int64_t n) {
  const __mmask16 lo = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
  const __mmask16 hi = (__mmask16)(n > 16 ? (1u << (n - 16)) - 1u : 0u);
  return _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, p + 16), _mm512_maskz_loadu_ps(lo, p));
}
CKW_BF16_VI __m512bh w32_(const uint16_t* p) { return CKW_BH_FROM_SI512(_mm512_loadu_si512(p)); }
CKW_BF16_VI __m512bh w32n_(const uint16_t* p, int64_t n) {
  return CKW_BH_FROM_SI512(_mm512_maskz_loadu_epi16((__mmask32)((1u << n) - 1u), p));
}

CKW_BF16_VI void dot4_(const float* restrict xm, const uint16_t* restrict w0, const uint16_t* pf, int64_t K,
                       float* o) {
  const int64_t Kv = K - K % 32, kt = K - Kv;
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  for (int64_t k = 0; k < Kv; k += 32) {
    // one line per row, into L2 (gemm_nt_core__simd.inc's PF_ROWS says why)
    for (int j = 0; j < 4; ++j) _mm_prefetch((const char*)(pf + j * K + k), _MM_HINT_T1);
    const __m512bh xv = x32_(xm + k);
    a0 = _mm512_dpbf16_ps(a0, xv, w32_(w0 + k));
    a1 = _mm512_dpbf16_ps(a1, xv, w32_(w0 + K + k));
    a2 = _mm512_dpbf16_ps(a2, xv, w32_(w0 + 2 * K + k));
    a3 = _mm512_dpbf16_ps(a3, xv, w32_(w0 + 3 * K + k));
  }
  if (kt) {
    const __m512bh xv = x32n_(xm + Kv, kt);
    a0 = _mm512_dpbf16_ps(a0, xv, w32n_(w0 + Kv, kt));
    a1 = _mm512_dpbf16_ps(a1, xv, w32n_(w0 + K + Kv, kt));
    a2 = _mm512_dpbf16_ps(a2, xv, w32n_(w0 + 2 * K + Kv, kt));
    a3 = _mm512_dpbf16_ps(a3, xv, w32n_(w0 + 3 * K + Kv, kt));
  }
  o[0] = ckw_v_hsum(a0), o[1] = ckw_v_hsum(a1), o[2] = ckw_v_hsum(a2), o[3] = ckw_v_hsum(a3);
}

CKW_BF16_VI float dot1_(const float* restrict xm, const uint16_t* restrict wi, int64_t K) {
  const int64_t Kv = K - K % 32, kt = K - Kv;
  __m512 a = _mm512_setzero_ps();
  for (int64_t k = 0; k < Kv; k += 32) a = _mm512_dpbf16_ps(a, x32_(xm + k), w32_(wi + k));
  if (kt) a = _mm512_dpbf16_ps(a, x32n_(xm + Kv, kt), w32n_(wi + Kv, kt));
  return ckw_v_hsum(a);
}

#include "kernels/common/gemm_nt_core__simd.inc"
