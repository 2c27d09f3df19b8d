// Test-only: portable stand-ins for the VNNI and AMX-INT8 intrinsics of the int8 GEMM's avxvnni,
// avx512vnni and amxint8 paths (i8w_gemm_nt_core__{avxvnni,avx512vnni,amxint8}.c) and for the
// 512-bit integer intrinsics they use beyond avx512_emulation.h, on top of
// avx512bf16_amx_emulation.h (its tile state, configuration, loads and stores), so those paths run
// on any x86-64 with AVX2 (the *_avx512emu tests). Included by i8w_gemm_nt_core_simd.h under
// -DCKW_EMULATE_AVX512, which also names the entries __avxvnniemu, __avx512vnniemu and __amxint8emu.
//
// Numerics follow the pseudo-code of the Intel SDM; every operation is on integers, so exact
// (vnni_amx_int8_emulation_test checks hand-computed cases, and every bit against the
// instructions on a CPU that has them):
// - VPDPBUSD (_mm512_dpbusd_epi32; the VEX form _mm256_dpbusd_avx_epi32): per dword lane i,
//   src[i] + the four products of a's unsigned bytes 4i..4i+3 with b's signed bytes 4i..4i+3, in
//   32-bit wrapping arithmetic (not the saturating VPDPBUSDS).
// - TDPBSSD: per row m < dst's rows and dword column n < dst's bytes per row / 4, dst[m][n] + the
//   sum over k < a's bytes per row / 4 of the four signed x signed byte products of a.row[m].dword[k]
//   and b.row[k].dword[n], wrapping; the rest of dst zeroed (the SDM's write_row_and_zero).
// - VPMOVDB (_mm512_cvtepi32_epi8): each dword's low byte.
// - VPGATHERDD with a mask: lanes off in the mask keep src and read nothing.
// - VCVTPS2DQ (_mm512_cvtps_epi32, replacing avx512_emulation.h's, which is exact only within
//   int32): nearest even, and a value beyond int32 or NaN gives INT32_MIN (the integer indefinite).
// Not emulated: masked forms other than the gather's, exceptions, the #GP of a bad tile config.
#ifndef CKW_KERNELS_COMMON_VNNI_AMX_INT8_EMULATION_H_
#define CKW_KERNELS_COMMON_VNNI_AMX_INT8_EMULATION_H_

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/common/avx512bf16_amx_emulation.h"

// The four byte products of one dword pair, summed: a's bytes unsigned or signed, b's signed.
CKW_EMU uint32_t ckw_emu_dp4_(uint32_t a, uint32_t b, int a_signed) {
  uint32_t s = 0;
  for (int j = 0; j < 4; ++j) {
    const int32_t av = a_signed ? (int32_t)(int8_t)(a >> 8 * j) : (int32_t)(uint8_t)(a >> 8 * j);
    s += (uint32_t)(av * (int32_t)(int8_t)(b >> 8 * j));
  }
  return s;
}
CKW_EMU ckw_emu_epi32 ckw_emu_dpbusd_epi32(ckw_emu_epi32 src, ckw_emu_epi32 a, ckw_emu_epi32 b) {
  for (int l = 0; l < 16; ++l)
    src.i[l] = (int32_t)((uint32_t)src.i[l] + ckw_emu_dp4_((uint32_t)a.i[l], (uint32_t)b.i[l], 0));
  return src;
}
CKW_EMU __m256i ckw_emu_dpbusd_avx_epi32(__m256i src, __m256i a, __m256i b) {
  uint32_t s[8], av[8], bv[8];
  _mm256_storeu_si256((__m256i*)s, src), _mm256_storeu_si256((__m256i*)av, a), _mm256_storeu_si256((__m256i*)bv, b);
  for (int l = 0; l < 8; ++l) s[l] += ckw_emu_dp4_(av[l], bv[l], 0);
  return _mm256_loadu_si256((const __m256i*)s);
}

CKW_EMU ckw_emu_epi32 ckw_emu_setzero_si512(void) {
  const ckw_emu_epi32 r = {{0}};
  return r;
}
CKW_EMU ckw_emu_epi32 ckw_emu_max_epi32(ckw_emu_epi32 a, ckw_emu_epi32 b) {
  for (int l = 0; l < 16; ++l) a.i[l] = a.i[l] > b.i[l] ? a.i[l] : b.i[l];
  return a;
}
CKW_EMU ckw_emu_epi32 ckw_emu_min_epi32(ckw_emu_epi32 a, ckw_emu_epi32 b) {
  for (int l = 0; l < 16; ++l) a.i[l] = a.i[l] < b.i[l] ? a.i[l] : b.i[l];
  return a;
}
CKW_EMU ckw_emu_epi32 ckw_emu_xor_si512(ckw_emu_epi32 a, ckw_emu_epi32 b) {
  for (int l = 0; l < 16; ++l) a.i[l] ^= b.i[l];
  return a;
}
// The low and high 256 bits (as the hardware's type: the rest of the code is AVX2).
CKW_EMU __m256i ckw_emu_castsi512_si256(ckw_emu_epi32 a) { return _mm256_loadu_si256((const __m256i*)a.i); }
CKW_EMU __m256i ckw_emu_extracti64x4_epi64(ckw_emu_epi32 a, int hi) {
  return _mm256_loadu_si256((const __m256i*)(a.i + 8 * (hi & 1)));
}
// Round to nearest even (the int32 -> float conversion of the C code, under the default MXCSR).
CKW_EMU ckw_emu_ps ckw_emu_cvtepi32_ps(ckw_emu_epi32 a) { CKW_EMU_MAP((float)a.i[l]); }
CKW_EMU __m128i ckw_emu_cvtepi32_epi8(ckw_emu_epi32 a) {
  int8_t r[16];
  for (int l = 0; l < 16; ++l) r[l] = (int8_t)(uint8_t)(uint32_t)a.i[l];
  return _mm_loadu_si128((const __m128i*)r);
}
CKW_EMU ckw_emu_epi32 ckw_emu_mask_i32gather_epi32(ckw_emu_epi32 src, __mmask16 k, ckw_emu_epi32 idx, const void* base,
                                                   int scale) {
  for (int l = 0; l < 16; ++l)
    if ((k >> l) & 1) memcpy(&src.i[l], (const char*)base + (int64_t)idx.i[l] * scale, sizeof src.i[l]);
  return src;
}
CKW_EMU ckw_emu_epi32 ckw_emu_cvtps_epi32_sdm_(ckw_emu_ps a) {
  ckw_emu_epi32 r;
  for (int l = 0; l < 16; ++l) r.i[l] = fabsf(a.f[l]) < 2147483648.0f ? (int32_t)nearbyintf(a.f[l]) : INT32_MIN;
  return r;
}

CKW_EMU void ckw_emu_tile_dpbssd_(ckw_emu_amx* s, int dst, int a, int b) {
  const int rows = s->rows[dst], groups = s->colsb[a] / 4, cols = s->colsb[dst] / 4;
  for (int m = 0; m < rows; ++m) {
    uint32_t out[16] = {0}, av, bv;
    memcpy(out, s->data[dst][m], sizeof(uint32_t) * cols);
    for (int k = 0; k < groups; ++k)
      for (int n = 0; n < cols; ++n) {
        memcpy(&av, &s->data[a][m][4 * k], sizeof av);
        memcpy(&bv, &s->data[b][k][4 * n], sizeof bv);
        out[n] += ckw_emu_dp4_(av, bv, 1);
      }
    memset(s->data[dst][m], 0, sizeof s->data[dst][m]);
    memcpy(s->data[dst][m], out, sizeof(uint32_t) * cols);
  }
  for (int m = rows; m < 16; ++m) memset(s->data[dst][m], 0, sizeof s->data[dst][m]);
}

// Some intrinsics are macros in GCC's headers: drop those first.
#undef _mm512_dpbusd_epi32
#define _mm512_dpbusd_epi32 ckw_emu_dpbusd_epi32
#undef _mm256_dpbusd_avx_epi32
#define _mm256_dpbusd_avx_epi32 ckw_emu_dpbusd_avx_epi32
#undef _mm512_setzero_si512
#define _mm512_setzero_si512 ckw_emu_setzero_si512
#undef _mm512_max_epi32
#define _mm512_max_epi32 ckw_emu_max_epi32
#undef _mm512_cvtepi32_ps
#define _mm512_cvtepi32_ps ckw_emu_cvtepi32_ps
#undef _mm512_min_epi32
#define _mm512_min_epi32 ckw_emu_min_epi32
#undef _mm512_xor_si512
#define _mm512_xor_si512 ckw_emu_xor_si512
#undef _mm512_castsi512_si256
#define _mm512_castsi512_si256 ckw_emu_castsi512_si256
#undef _mm512_extracti64x4_epi64
#define _mm512_extracti64x4_epi64 ckw_emu_extracti64x4_epi64
#undef _mm512_cvtepi32_epi8
#define _mm512_cvtepi32_epi8 ckw_emu_cvtepi32_epi8
#undef _mm512_mask_i32gather_epi32
#define _mm512_mask_i32gather_epi32 ckw_emu_mask_i32gather_epi32
#undef _mm512_cvtps_epi32
#define _mm512_cvtps_epi32 ckw_emu_cvtps_epi32_sdm_
#undef _tile_dpbssd
#define _tile_dpbssd(dst, a, b) ckw_emu_tile_dpbssd_(&ckw_emu_amx_, (dst), (a), (b))

#endif  // CKW_KERNELS_COMMON_VNNI_AMX_INT8_EMULATION_H_
