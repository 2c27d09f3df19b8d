// 8-lane AVX2+FMA(+F16C) helpers shared by the kernel families. A kernel template (*__simd.inc)
// is written once against the ckw_v_* names and instantiated per ISA by including either
// this header or simd_avx512.h first; every helper carries the ISA's target attribute so
// translation units stay compiled at the x86-64 baseline.
#ifndef CKW_KERNELS_COMMON_SIMD_AVX2_H_
#define CKW_KERNELS_COMMON_SIMD_AVX2_H_

#include <immintrin.h>
#include <stdint.h>

#define CKW_SIMD_TARGET __attribute__((target("avx2,fma,f16c")))
#define CKW_VI static inline __attribute__((always_inline, target("avx2,fma,f16c")))
#define CKW_VW 8
#define CKW_ISA(name) name##__avx2

typedef __m256 ckw_vf;

CKW_VI ckw_vf ckw_v_zero(void) { return _mm256_setzero_ps(); }
CKW_VI ckw_vf ckw_v_set1(float f) { return _mm256_set1_ps(f); }
CKW_VI ckw_vf ckw_v_load(const float* p) { return _mm256_loadu_ps(p); }
CKW_VI void ckw_v_store(float* p, ckw_vf v) { _mm256_storeu_ps(p, v); }
CKW_VI __m256i ckw_v_mask_(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
// Partial vectors: lanes >= n are neither read (they load as 0) nor written; 0 <= n <= CKW_VW.
CKW_VI ckw_vf ckw_v_loadn(const float* p, int64_t n) { return _mm256_maskload_ps(p, ckw_v_mask_(n)); }
CKW_VI void ckw_v_storen(float* p, ckw_vf v, int64_t n) { _mm256_maskstore_ps(p, ckw_v_mask_(n), v); }
// CKW_VW bf16 values widened exactly to fp32 (bf16 is the top half of an fp32).
CKW_VI ckw_vf ckw_v_load_bf16(const uint16_t* p) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16));
}
// CKW_VW f16 values widened exactly to fp32 (F16C's vcvtph2ps).
CKW_VI ckw_vf ckw_v_load_f16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p)); }
// 0, 1, ..., CKW_VW - 1 as floats.
CKW_VI ckw_vf ckw_v_iota(void) { return _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7); }
// Lanes >= n set to 0.
CKW_VI ckw_vf ckw_v_keepn(ckw_vf v, int64_t n) { return _mm256_and_ps(v, _mm256_castsi256_ps(ckw_v_mask_(n))); }
CKW_VI ckw_vf ckw_v_add(ckw_vf a, ckw_vf b) { return _mm256_add_ps(a, b); }
CKW_VI ckw_vf ckw_v_sub(ckw_vf a, ckw_vf b) { return _mm256_sub_ps(a, b); }
CKW_VI ckw_vf ckw_v_mul(ckw_vf a, ckw_vf b) { return _mm256_mul_ps(a, b); }
CKW_VI ckw_vf ckw_v_div(ckw_vf a, ckw_vf b) { return _mm256_div_ps(a, b); }
CKW_VI ckw_vf ckw_v_max(ckw_vf a, ckw_vf b) { return _mm256_max_ps(a, b); }
// a * b + c with a single rounding.
CKW_VI ckw_vf ckw_v_fma(ckw_vf a, ckw_vf b, ckw_vf c) { return _mm256_fmadd_ps(a, b, c); }
CKW_VI ckw_vf ckw_v_abs(ckw_vf a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
// mask ? a : b, with the mask given as a comparison result of a < b style helpers below.
CKW_VI ckw_vf ckw_v_select_lt(ckw_vf x, ckw_vf lim, ckw_vf a, ckw_vf b) {
  return _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, lim, _CMP_LT_OQ));
}
CKW_VI float ckw_v_hsum(ckw_vf v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
CKW_VI float ckw_v_hmax(ckw_vf v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
CKW_VI ckw_vf ckw_v_round_(ckw_vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// 2^n for integral n in [-126, 127], built in the exponent field.
CKW_VI ckw_vf ckw_v_pow2i_(ckw_vf n) {
  __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

#include "kernels/common/simd_math.inc"

#endif  // CKW_KERNELS_COMMON_SIMD_AVX2_H_
