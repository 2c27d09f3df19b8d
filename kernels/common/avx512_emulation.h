// Test-only: portable stand-ins for the _mm512_* intrinsics that simd_avx512.h uses, so the
// AVX-512 kernel templates (16 lanes, mask registers, 8-row tiles, 32-wide panels) are
// exercised on machines without AVX-512. Enabled by -DCKW_EMULATE_AVX512, which also renames
// the ISA suffix to __avx512emu so emulated and real symbols never collide. Semantics follow
// the Intel SDM per lane (fmadd fused, max returns the second operand on NaN, round to
// nearest even); instruction-level behaviour is of course only proven on real hardware.
#ifndef CKW_KERNELS_COMMON_AVX512_EMULATION_H_
#define CKW_KERNELS_COMMON_AVX512_EMULATION_H_

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "kernels/common/f16.h"

typedef struct {
  float f[16];
} ckw_emu_ps;
typedef struct {
  int32_t i[16];
} ckw_emu_epi32;

#define CKW_EMU static inline __attribute__((always_inline, target("avx2,fma")))
#define CKW_EMU_MAP(expr)                        \
  ckw_emu_ps r_;                                 \
  for (int l = 0; l < 16; ++l) r_.f[l] = (expr); \
  return r_

CKW_EMU ckw_emu_ps ckw_emu_setzero_ps(void) { CKW_EMU_MAP(0.0f); }
CKW_EMU ckw_emu_ps ckw_emu_set1_ps(float v) { CKW_EMU_MAP(v); }
CKW_EMU ckw_emu_ps ckw_emu_loadu_ps(const void* p) { CKW_EMU_MAP(((const float*)p)[l]); }
CKW_EMU void ckw_emu_storeu_ps(void* p, ckw_emu_ps a) {
  for (int l = 0; l < 16; ++l) ((float*)p)[l] = a.f[l];
}
// Masked lanes are not accessed at all (like the hardware: no fault past the end).
CKW_EMU ckw_emu_ps ckw_emu_maskz_loadu_ps(__mmask16 k, const void* p) {
  CKW_EMU_MAP((k >> l) & 1 ? ((const float*)p)[l] : 0.0f);
}
CKW_EMU void ckw_emu_mask_storeu_ps(void* p, __mmask16 k, ckw_emu_ps a) {
  for (int l = 0; l < 16; ++l)
    if ((k >> l) & 1) ((float*)p)[l] = a.f[l];
}
CKW_EMU ckw_emu_ps ckw_emu_maskz_mov_ps(__mmask16 k, ckw_emu_ps a) { CKW_EMU_MAP((k >> l) & 1 ? a.f[l] : 0.0f); }
CKW_EMU ckw_emu_ps ckw_emu_add_ps(ckw_emu_ps a, ckw_emu_ps b) { CKW_EMU_MAP(a.f[l] + b.f[l]); }
CKW_EMU ckw_emu_ps ckw_emu_sub_ps(ckw_emu_ps a, ckw_emu_ps b) { CKW_EMU_MAP(a.f[l] - b.f[l]); }
CKW_EMU ckw_emu_ps ckw_emu_mul_ps(ckw_emu_ps a, ckw_emu_ps b) { CKW_EMU_MAP(a.f[l] * b.f[l]); }
CKW_EMU ckw_emu_ps ckw_emu_div_ps(ckw_emu_ps a, ckw_emu_ps b) { CKW_EMU_MAP(a.f[l] / b.f[l]); }
CKW_EMU ckw_emu_ps ckw_emu_max_ps(ckw_emu_ps a, ckw_emu_ps b) { CKW_EMU_MAP(a.f[l] > b.f[l] ? a.f[l] : b.f[l]); }
CKW_EMU ckw_emu_ps ckw_emu_fmadd_ps(ckw_emu_ps a, ckw_emu_ps b, ckw_emu_ps c) {
  CKW_EMU_MAP(fmaf(a.f[l], b.f[l], c.f[l]));
}
CKW_EMU ckw_emu_ps ckw_emu_abs_ps(ckw_emu_ps a) { CKW_EMU_MAP(fabsf(a.f[l])); }
CKW_EMU ckw_emu_ps ckw_emu_mask_blend_ps(__mmask16 k, ckw_emu_ps a, ckw_emu_ps b) {
  CKW_EMU_MAP((k >> l) & 1 ? b.f[l] : a.f[l]);
}
CKW_EMU __mmask16 ckw_emu_cmp_ps_mask(ckw_emu_ps a, ckw_emu_ps b, int pred) {
  (void)pred;  // only _CMP_LT_OQ is used
  unsigned m = 0;
  for (int l = 0; l < 16; ++l) m |= (unsigned)(a.f[l] < b.f[l]) << l;
  return (__mmask16)m;
}
CKW_EMU __m256 ckw_emu_castps512_ps256(ckw_emu_ps a) { return _mm256_loadu_ps(a.f); }
CKW_EMU __m256 ckw_emu_extractf32x8_ps(ckw_emu_ps a, int hi) { return _mm256_loadu_ps(a.f + 8 * hi); }
CKW_EMU ckw_emu_ps ckw_emu_roundscale_ps(ckw_emu_ps a, int imm) {
  (void)imm;  // only round-to-nearest-even with scale 0 is used
  CKW_EMU_MAP(nearbyintf(a.f[l]));
}
CKW_EMU ckw_emu_epi32 ckw_emu_cvtps_epi32(ckw_emu_ps a) {
  ckw_emu_epi32 r;
  for (int l = 0; l < 16; ++l) r.i[l] = (int32_t)lrintf(a.f[l]);
  return r;
}
CKW_EMU ckw_emu_epi32 ckw_emu_set1_epi32(int v) {
  ckw_emu_epi32 r;
  for (int l = 0; l < 16; ++l) r.i[l] = v;
  return r;
}
CKW_EMU ckw_emu_epi32 ckw_emu_add_epi32(ckw_emu_epi32 a, ckw_emu_epi32 b) {
  ckw_emu_epi32 r;
  for (int l = 0; l < 16; ++l) r.i[l] = (int32_t)((uint32_t)a.i[l] + (uint32_t)b.i[l]);
  return r;
}
CKW_EMU ckw_emu_epi32 ckw_emu_slli_epi32(ckw_emu_epi32 a, int n) {
  ckw_emu_epi32 r;
  for (int l = 0; l < 16; ++l) r.i[l] = (int32_t)((uint32_t)a.i[l] << n);
  return r;
}
CKW_EMU ckw_emu_ps ckw_emu_cvtph_ps(__m256i a) {
  uint16_t h[16];
  _mm256_storeu_si256((__m256i*)h, a);
  CKW_EMU_MAP(ckw_f16_to_f32(h[l]));
}
CKW_EMU ckw_emu_epi32 ckw_emu_cvtepu16_epi32(__m256i a) {
  uint16_t h[16];
  ckw_emu_epi32 r;
  _mm256_storeu_si256((__m256i*)h, a);
  for (int l = 0; l < 16; ++l) r.i[l] = h[l];
  return r;
}
CKW_EMU ckw_emu_ps ckw_emu_castsi512_ps(ckw_emu_epi32 a) {
  ckw_emu_ps r;
  __builtin_memcpy(r.f, a.i, sizeof r.f);
  return r;
}
CKW_EMU ckw_emu_ps ckw_emu_setr_ps(float a0, float a1, float a2, float a3, float a4, float a5, float a6, float a7,
                                   float a8, float a9, float a10, float a11, float a12, float a13, float a14,
                                   float a15) {
  const float v[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
  CKW_EMU_MAP(v[l]);
}

// Some intrinsics are macros in GCC's headers (e.g. at -O0): drop those first.
#undef __m512
#define __m512 ckw_emu_ps
#undef __m512i
#define __m512i ckw_emu_epi32
#undef _mm512_setzero_ps
#define _mm512_setzero_ps ckw_emu_setzero_ps
#undef _mm512_set1_ps
#define _mm512_set1_ps ckw_emu_set1_ps
#undef _mm512_loadu_ps
#define _mm512_loadu_ps ckw_emu_loadu_ps
#undef _mm512_storeu_ps
#define _mm512_storeu_ps ckw_emu_storeu_ps
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps ckw_emu_maskz_loadu_ps
#undef _mm512_mask_storeu_ps
#define _mm512_mask_storeu_ps ckw_emu_mask_storeu_ps
#undef _mm512_maskz_mov_ps
#define _mm512_maskz_mov_ps ckw_emu_maskz_mov_ps
#undef _mm512_add_ps
#define _mm512_add_ps ckw_emu_add_ps
#undef _mm512_sub_ps
#define _mm512_sub_ps ckw_emu_sub_ps
#undef _mm512_mul_ps
#define _mm512_mul_ps ckw_emu_mul_ps
#undef _mm512_div_ps
#define _mm512_div_ps ckw_emu_div_ps
#undef _mm512_max_ps
#define _mm512_max_ps ckw_emu_max_ps
#undef _mm512_fmadd_ps
#define _mm512_fmadd_ps ckw_emu_fmadd_ps
#undef _mm512_abs_ps
#define _mm512_abs_ps ckw_emu_abs_ps
#undef _mm512_mask_blend_ps
#define _mm512_mask_blend_ps ckw_emu_mask_blend_ps
#undef _mm512_cmp_ps_mask
#define _mm512_cmp_ps_mask ckw_emu_cmp_ps_mask
#undef _mm512_castps512_ps256
#define _mm512_castps512_ps256 ckw_emu_castps512_ps256
#undef _mm512_extractf32x8_ps
#define _mm512_extractf32x8_ps ckw_emu_extractf32x8_ps
#undef _mm512_roundscale_ps
#define _mm512_roundscale_ps ckw_emu_roundscale_ps
#undef _mm512_cvtps_epi32
#define _mm512_cvtps_epi32 ckw_emu_cvtps_epi32
#undef _mm512_set1_epi32
#define _mm512_set1_epi32 ckw_emu_set1_epi32
#undef _mm512_add_epi32
#define _mm512_add_epi32 ckw_emu_add_epi32
#undef _mm512_slli_epi32
#define _mm512_slli_epi32 ckw_emu_slli_epi32
#undef _mm512_cvtph_ps
#define _mm512_cvtph_ps ckw_emu_cvtph_ps
#undef _mm512_cvtepu16_epi32
#define _mm512_cvtepu16_epi32 ckw_emu_cvtepu16_epi32
#undef _mm512_castsi512_ps
#define _mm512_castsi512_ps ckw_emu_castsi512_ps
#undef _mm512_setr_ps
#define _mm512_setr_ps ckw_emu_setr_ps

#endif  // CKW_KERNELS_COMMON_AVX512_EMULATION_H_
