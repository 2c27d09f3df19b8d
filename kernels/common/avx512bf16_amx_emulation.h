// Test-only: portable stand-ins for the AVX512-BF16 and AMX-BF16 intrinsics of the bf16w GEMM's
// avx512bf16 and amx paths (bf16w_gemm_nt_core__{avx512bf16,amx}.c), on top of
// avx512_emulation.h, so those paths run on any x86-64 with AVX2 (the *_avx512emu tests).
// Included by simd_avx512bf16.h under -DCKW_EMULATE_AVX512, which also names the entries
// __avx512bf16emu and __amxemu.
//
// Numerics follow the pseudo-code of the Intel SDM (avx512bf16_amx_emulation_test checks the
// cases below, and every bit against the instructions on a CPU that has them):
// - make_fp32: a bf16 is the top half of an fp32 (exact, ckw_bf16_to_f32).
// - DAZ, FTZ: every floating-point input of an FMA or add below reads a denormal as a zero of its
//   sign; a result tiny after rounding (below 2^-126 when rounded to 24 bits with an unbounded
//   exponent: x86 detects tininess after rounding) is a zero of its sign. Rounding is to nearest
//   even; MXCSR is neither read nor written (the C code runs in the default mode, which is
//   round to nearest without DAZ/FTZ, and flushes by hand).
// - VCVTNE2PS2BF16 (_mm512_cvtne2ps_pbh(a, b)): bf16 lanes 0-15 from b, 16-31 from a; zero and
//   denormal to a zero of its sign, infinity truncated, NaN truncated with bit 6 set (quiet),
//   else round to nearest even (the SDM's integer add of 0x7fff + the kept lsb).
// - VDPBF16PS (_mm512_dpbf16_ps(acc, a, b)): per fp32 lane i, two FP32 FMAs in the SDM's order,
//   acc += a[2i+1] * b[2i+1], then acc += a[2i] * b[2i] (a bf16 product is exact in fp32, so each
//   step rounds acc + a*b once).
// - TDPBF16PS: per row m and column n of the destination, two fp32 chains from 0 over the k
//   pairs in order (FMAs: the even elements into one, the odd into the other), then
//   dst[m][n] + (even + odd), two adds.
// - Tiles: _tile_loadconfig takes palette 1's rows and bytes per row per tile; a load fills the
//   configured rows and zeroes the rest of the tile, a store writes the configured rows,
//   TDPBF16PS takes its shapes from the configuration (rows of dst and src1; src1's bytes per row
//   / 4 pairs of k; dst's bytes per row / 4 columns). The tile state is a local variable that
//   the _tile_loadconfig macro declares (so the other tile macros must be in its scope); the
//   hardware's is per thread, this one per call.
// Not emulated: the NaN priorities of the SDM's Table 5-1 (a NaN result here is some quiet NaN),
// masked or broadcast forms, exceptions, and the #GP of an invalid tile configuration.
#ifndef CKW_KERNELS_COMMON_AVX512BF16_AMX_EMULATION_H_
#define CKW_KERNELS_COMMON_AVX512BF16_AMX_EMULATION_H_

#include <stdint.h>
#include <string.h>

#include "kernels/common/avx512_emulation.h"
#include "kernels/common/bf16.h"

typedef struct {
  uint16_t h[32];
} ckw_emu_pbh;

// A denormal as a zero of its sign: DAZ on an input, FTZ on a result that is exact or was
// rounded in range (0 < |r| < 2^-126 is then tiny after rounding too).
CKW_EMU float ckw_emu_flush_(float f) {
  const uint32_t u = ckw_f32_bits(f);
  return (u & 0x7f800000u) ? f : ckw_f32_from_bits(u & 0x80000000u);
}
// c + a * b, one FP32 FMA with DAZ in, RNE, FTZ out. A result of magnitude 2^-126 may come from a
// value below 2^-126 that rounds up only on the denormal grid; it is tiny after rounding when the
// same sum 2^24 times larger rounds below 2^-102 (the scaling is exact and in range: a sum this
// small needs |a * b| and |c| below 2^-100, so |a| < 2^26).
CKW_EMU float ckw_emu_fma_dazftz_(float a, float b, float c) {
  a = ckw_emu_flush_(a), b = ckw_emu_flush_(b), c = ckw_emu_flush_(c);
  const float r = fmaf(a, b, c);
  if (fabsf(r) == 0x1p-126f && fabsf(fmaf(a * 0x1p24f, b, c * 0x1p24f)) < 0x1p-102f) return r < 0 ? -0.0f : 0.0f;
  return ckw_emu_flush_(r);
}
// a + b with DAZ in, RNE, FTZ out. A sum below 2^-125 is exact (both are multiples of 2^-149), so
// the rounded result tells tininess.
CKW_EMU float ckw_emu_add_dazftz_(float a, float b) { return ckw_emu_flush_(ckw_emu_flush_(a) + ckw_emu_flush_(b)); }

CKW_EMU ckw_emu_pbh ckw_emu_cvtne2ps_pbh(ckw_emu_ps a, ckw_emu_ps b) {
  ckw_emu_pbh r;
  for (int l = 0; l < 16; ++l) r.h[l] = ckw_f32_to_bf16_cvtne(b.f[l]), r.h[16 + l] = ckw_f32_to_bf16_cvtne(a.f[l]);
  return r;
}
CKW_EMU ckw_emu_ps ckw_emu_dpbf16_ps(ckw_emu_ps acc, ckw_emu_pbh a, ckw_emu_pbh b) {
  for (int l = 0; l < 16; ++l) {
    float s = acc.f[l];
    s = ckw_emu_fma_dazftz_(ckw_bf16_to_f32(a.h[2 * l + 1]), ckw_bf16_to_f32(b.h[2 * l + 1]), s);
    acc.f[l] = ckw_emu_fma_dazftz_(ckw_bf16_to_f32(a.h[2 * l]), ckw_bf16_to_f32(b.h[2 * l]), s);
  }
  return acc;
}

// Bit casts between 32 bf16 and 16 dwords (on the hardware types, C casts).
CKW_EMU ckw_emu_pbh ckw_emu_pbh_from_epi32(ckw_emu_epi32 v) {
  ckw_emu_pbh r;
  memcpy(r.h, v.i, sizeof r.h);
  return r;
}
CKW_EMU ckw_emu_epi32 ckw_emu_epi32_from_pbh(ckw_emu_pbh v) {
  ckw_emu_epi32 r;
  memcpy(r.i, v.h, sizeof r.i);
  return r;
}

// The 512-bit integer loads, stores, gathers and scatters; masked lanes are not accessed.
CKW_EMU ckw_emu_epi32 ckw_emu_loadu_si512(const void* p) {
  ckw_emu_epi32 r;
  memcpy(r.i, p, sizeof r.i);
  return r;
}
CKW_EMU void ckw_emu_storeu_si512(void* p, ckw_emu_epi32 v) { memcpy(p, v.i, sizeof v.i); }
CKW_EMU ckw_emu_epi32 ckw_emu_maskz_loadu_epi16(__mmask32 k, const void* p) {
  uint16_t h[32];
  for (int l = 0; l < 32; ++l) h[l] = (k >> l) & 1 ? ((const uint16_t*)p)[l] : 0;
  ckw_emu_epi32 r;
  memcpy(r.i, h, sizeof r.i);
  return r;
}
CKW_EMU ckw_emu_epi32 ckw_emu_set_epi32(int e15, int e14, int e13, int e12, int e11, int e10, int e9, int e8, int e7,
                                        int e6, int e5, int e4, int e3, int e2, int e1, int e0) {
  const ckw_emu_epi32 r = {{e0, e1, e2, e3, e4, e5, e6, e7, e8, e9, e10, e11, e12, e13, e14, e15}};
  return r;
}
CKW_EMU ckw_emu_epi32 ckw_emu_mullo_epi32(ckw_emu_epi32 a, ckw_emu_epi32 b) {
  ckw_emu_epi32 r;
  for (int l = 0; l < 16; ++l) r.i[l] = (int32_t)((uint32_t)a.i[l] * (uint32_t)b.i[l]);
  return r;
}
CKW_EMU ckw_emu_ps ckw_emu_i32gather_ps(ckw_emu_epi32 idx, const void* base, int scale) {
  CKW_EMU_MAP(*(const float*)((const char*)base + (int64_t)idx.i[l] * scale));
}
CKW_EMU void ckw_emu_i32scatter_epi32(void* base, ckw_emu_epi32 idx, ckw_emu_epi32 v, int scale) {
  for (int l = 0; l < 16; ++l) memcpy((char*)base + (int64_t)idx.i[l] * scale, &v.i[l], sizeof v.i[l]);
}

// The tile registers and their palette-1 configuration.
typedef struct {
  uint8_t rows[8];
  uint16_t colsb[8];
  uint8_t data[8][16][64];
} ckw_emu_amx;

// LDTILECFG's 64-byte operand: byte 0 the palette, bytes 16 + 2t the bytes per row of tile t,
// byte 48 + t its rows. Anything but palette 1 leaves the tiles unconfigured (rows 0).
CKW_EMU ckw_emu_amx ckw_emu_tile_config_(const void* cfg) {
  const uint8_t* c = (const uint8_t*)cfg;
  ckw_emu_amx s;
  memset(&s, 0, sizeof s);
  for (int t = 0; t < 8 && c[0] == 1; ++t) {
    s.colsb[t] = (uint16_t)(c[16 + 2 * t] | c[17 + 2 * t] << 8);
    s.rows[t] = c[48 + t];
  }
  return s;
}
CKW_EMU void ckw_emu_tile_zero_(ckw_emu_amx* s, int t) { memset(s->data[t], 0, sizeof s->data[t]); }
CKW_EMU void ckw_emu_tile_loadd_(ckw_emu_amx* s, int t, const void* base, int64_t stride) {
  ckw_emu_tile_zero_(s, t);
  for (int r = 0; r < s->rows[t]; ++r) memcpy(s->data[t][r], (const char*)base + r * stride, s->colsb[t]);
}
CKW_EMU void ckw_emu_tile_stored_(const ckw_emu_amx* s, int t, void* base, int64_t stride) {
  for (int r = 0; r < s->rows[t]; ++r) memcpy((char*)base + r * stride, s->data[t][r], s->colsb[t]);
}
CKW_EMU float ckw_emu_tile_bf16_(const ckw_emu_amx* s, int t, int r, int i) {
  uint16_t h;
  memcpy(&h, &s->data[t][r][2 * i], sizeof h);
  return ckw_bf16_to_f32(h);
}
CKW_EMU void ckw_emu_tile_dpbf16ps_(ckw_emu_amx* s, int dst, int a, int b) {
  const int rows = s->rows[dst], pairs = s->colsb[a] / 4, cols = s->colsb[dst] / 4;
  for (int m = 0; m < rows; ++m) {
    float even[16] = {0}, odd[16] = {0}, out[16];
    for (int k = 0; k < pairs; ++k)
      for (int n = 0; n < cols; ++n) {
        even[n] = ckw_emu_fma_dazftz_(ckw_emu_tile_bf16_(s, a, m, 2 * k), ckw_emu_tile_bf16_(s, b, k, 2 * n), even[n]);
        odd[n] =
            ckw_emu_fma_dazftz_(ckw_emu_tile_bf16_(s, a, m, 2 * k + 1), ckw_emu_tile_bf16_(s, b, k, 2 * n + 1), odd[n]);
      }
    memcpy(out, s->data[dst][m], sizeof(float) * cols);
    for (int n = 0; n < cols; ++n) out[n] = ckw_emu_add_dazftz_(out[n], ckw_emu_add_dazftz_(even[n], odd[n]));
    memset(s->data[dst][m], 0, sizeof s->data[dst][m]);
    memcpy(s->data[dst][m], out, sizeof(float) * cols);
  }
  for (int m = rows; m < 16; ++m) memset(s->data[dst][m], 0, sizeof s->data[dst][m]);
}

// Some intrinsics are macros in GCC's headers: drop those first.
#undef __m512bh
#define __m512bh ckw_emu_pbh
#undef _mm512_cvtne2ps_pbh
#define _mm512_cvtne2ps_pbh ckw_emu_cvtne2ps_pbh
#undef _mm512_dpbf16_ps
#define _mm512_dpbf16_ps ckw_emu_dpbf16_ps
#undef _mm512_loadu_si512
#define _mm512_loadu_si512 ckw_emu_loadu_si512
#undef _mm512_storeu_si512
#define _mm512_storeu_si512 ckw_emu_storeu_si512
#undef _mm512_maskz_loadu_epi16
#define _mm512_maskz_loadu_epi16 ckw_emu_maskz_loadu_epi16
#undef _mm512_set_epi32
#define _mm512_set_epi32 ckw_emu_set_epi32
#undef _mm512_mullo_epi32
#define _mm512_mullo_epi32 ckw_emu_mullo_epi32
#undef _mm512_i32gather_ps
#define _mm512_i32gather_ps ckw_emu_i32gather_ps
#undef _mm512_i32scatter_epi32
#define _mm512_i32scatter_epi32 ckw_emu_i32scatter_epi32
#undef _tile_loadconfig
#define _tile_loadconfig(cfg) ckw_emu_amx ckw_emu_amx_ = ckw_emu_tile_config_(cfg)
#undef _tile_zero
#define _tile_zero(t) ckw_emu_tile_zero_(&ckw_emu_amx_, (t))
#undef _tile_loadd
#define _tile_loadd(t, base, stride) ckw_emu_tile_loadd_(&ckw_emu_amx_, (t), (base), (stride))
#undef _tile_stored
#define _tile_stored(t, base, stride) ckw_emu_tile_stored_(&ckw_emu_amx_, (t), (base), (stride))
#undef _tile_dpbf16ps
#define _tile_dpbf16ps(dst, a, b) ckw_emu_tile_dpbf16ps_(&ckw_emu_amx_, (dst), (a), (b))
#undef _tile_release
#define _tile_release() ((void)ckw_emu_amx_)

#endif  // CKW_KERNELS_COMMON_AVX512BF16_AMX_EMULATION_H_
