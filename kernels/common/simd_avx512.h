// 16-lane AVX-512 helpers: the same ckw_v_* names as simd_avx2.h (see there), so kernel
// templates compile unchanged for either ISA.
#ifndef CKW_KERNELS_COMMON_SIMD_AVX512_H_
#define CKW_KERNELS_COMMON_SIMD_AVX512_H_

#include <immintrin.h>
#include <stdint.h>

#ifdef CKW_EMULATE_AVX512
// Test builds only (see avx512_emulation.h): same templates, portable lanes, other symbols.
#include "kernels/common/avx512_emulation.h"
#define CKW_SIMD_TARGET __attribute__((target("avx2,fma,f16c")))
#define CKW_VI static inline __attribute__((always_inline, target("avx2,fma,f16c")))
#define CKW_ISA(name) name##__avx512emu
#else
#define CKW_SIMD_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma,f16c")))
#define CKW_VI static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512dq,avx512vl,fma,f16c")))
#define CKW_ISA(name) name##__avx512
#endif
#define CKW_VW 16

typedef __m512 ckw_vf;

CKW_VI ckw_vf ckw_v_zero(void) { return _mm512_setzero_ps(); }
CKW_VI ckw_vf ckw_v_set1(float f) { return _mm512_set1_ps(f); }
CKW_VI ckw_vf ckw_v_load(const float* p) { return _mm512_loadu_ps(p); }
CKW_VI void ckw_v_store(float* p, ckw_vf v) { _mm512_storeu_ps(p, v); }
CKW_VI __mmask16 ckw_v_mask_(int64_t n) { return (__mmask16)((1u << n) - 1u); }
CKW_VI ckw_vf ckw_v_loadn(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(ckw_v_mask_(n), p); }
CKW_VI void ckw_v_storen(float* p, ckw_vf v, int64_t n) { _mm512_mask_storeu_ps(p, ckw_v_mask_(n), v); }
CKW_VI ckw_vf ckw_v_load_bf16(const uint16_t* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16));
}
CKW_VI ckw_vf ckw_v_load_f16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p)); }
CKW_VI ckw_vf ckw_v_iota(void) { return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
CKW_VI ckw_vf ckw_v_keepn(ckw_vf v, int64_t n) { return _mm512_maskz_mov_ps(ckw_v_mask_(n), v); }
CKW_VI ckw_vf ckw_v_add(ckw_vf a, ckw_vf b) { return _mm512_add_ps(a, b); }
CKW_VI ckw_vf ckw_v_sub(ckw_vf a, ckw_vf b) { return _mm512_sub_ps(a, b); }
CKW_VI ckw_vf ckw_v_mul(ckw_vf a, ckw_vf b) { return _mm512_mul_ps(a, b); }
CKW_VI ckw_vf ckw_v_div(ckw_vf a, ckw_vf b) { return _mm512_div_ps(a, b); }
CKW_VI ckw_vf ckw_v_max(ckw_vf a, ckw_vf b) { return _mm512_max_ps(a, b); }
CKW_VI ckw_vf ckw_v_fma(ckw_vf a, ckw_vf b, ckw_vf c) { return _mm512_fmadd_ps(a, b, c); }
CKW_VI ckw_vf ckw_v_abs(ckw_vf a) { return _mm512_abs_ps(a); }
CKW_VI ckw_vf ckw_v_select_lt(ckw_vf x, ckw_vf lim, ckw_vf a, ckw_vf b) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, lim, _CMP_LT_OQ), b, a);
}
CKW_VI float ckw_v_hsum(ckw_vf v) {
  __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
CKW_VI float ckw_v_hmax(ckw_vf v) {
  __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
CKW_VI ckw_vf ckw_v_round_(ckw_vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
CKW_VI ckw_vf ckw_v_pow2i_(ckw_vf n) {
  __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
  return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}

#include "kernels/common/simd_math.inc"

#endif  // CKW_KERNELS_COMMON_SIMD_AVX512_H_
