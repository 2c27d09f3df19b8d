// The amxint8 path of the int8-weight engine: M > CKW_I8W_AMX_ROWS on AMX-INT8 tiles, fewer rows
// on the avx512vnni path (contract: i8w_gemm_nt_core.h). Built again on emulated tiles for the
// tests (__amxint8emu, vnni_amx_int8_emulation.h).
//
// TDPBSSD multiplies signed by signed bytes, so x is quantized as q itself (no offset). Its rows,
// kp bytes apart and zero from K to kp and from M to the next 32, are the A tiles as stored (16 rows
// of 64 k). W is packed per call, CKW_I8W_PANEL columns at a time, by the SIMD paths' packer: per 16
// columns, rows of 64 bytes holding each column's 4 k of one group, which is B's layout for 16 k
// groups, zero past K and N. Each 32 x 32 block of y is 2 x 2 tiles over every 64-k step; the int32
// sums are exact, then the SIMD paths' epilogue.
#include "kernels/common/simd_avx512.h"

#define I8_VNNI 1
#define I8_FEATURES "avx512f,avx512bw,avx512dq,avx512vl,fma,f16c,avx512vnni,amx-tile,amx-int8"
#define I8_MR 6
#define I8_NRV 4
#include "kernels/common/i8w_gemm_nt_core_simd.h"

// tmm0-3 accumulate a 32 x 32 block, tmm4-5 hold 32 rows of q, tmm6-7 32 columns of packed W.
static __attribute__((target(I8_FEATURES))) void amx_gemm_(const i8_args* a) {
  const int64_t kp = a->s.kp, groups = kp / 4;
  memset(a->s.q + a->M * kp, 0, (size_t)((ckw_i8w_rows_(a->M) - a->M) * kp));
  int32_t c[32 * 32] __attribute__((aligned(64)));
  // LDTILECFG's operand: palette 1 (byte 0); tiles 0-7 of 16 rows (byte 48 + t) of 64 bytes (16 + 2t).
  uint8_t cfg[64] __attribute__((aligned(64))) = {1};
  for (int t = 0; t < 8; ++t) cfg[16 + 2 * t] = 64, cfg[48 + t] = 16;
  _tile_loadconfig(cfg);  // per call: each pool thread runs the kernel and tile state is per thread
  for (int64_t nb = 0; nb < a->N; nb += CKW_I8W_PANEL) {
    const int64_t nbv = a->N - nb < CKW_I8W_PANEL ? a->N - nb : CKW_I8W_PANEL;
    i8_pack_w_(a->s.wp, a->w + nb * a->K, nbv, a->K, groups, 0);
    for (int64_t m0 = 0; m0 < a->M; m0 += 32) {
      const int8_t* x0 = a->s.q + m0 * kp;
      for (int64_t p = 0; p < nbv; p += 32) {
        const int8_t* w0 = a->s.wp + p / 16 * groups * 64;
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (int64_t k = 0; k < kp; k += 64) {
          _tile_loadd(4, x0 + k, kp);
          _tile_loadd(5, x0 + 16 * kp + k, kp);
          _tile_loadd(6, w0 + k * 16, 64);
          _tile_loadd(7, w0 + groups * 64 + k * 16, 64);
          _tile_dpbssd(0, 4, 6);
          _tile_dpbssd(1, 4, 7);
          _tile_dpbssd(2, 5, 6);
          _tile_dpbssd(3, 5, 7);
        }
        _tile_stored(0, c, 32 * sizeof(int32_t));
        _tile_stored(1, c + 16, 32 * sizeof(int32_t));
        _tile_stored(2, c + 16 * 32, 32 * sizeof(int32_t));
        _tile_stored(3, c + 16 * 32 + 16, 32 * sizeof(int32_t));
        const int64_t mv = a->M - m0 < 32 ? a->M - m0 : 32, nv = nbv - p < 32 ? nbv - p : 32;
        for (int64_t i = 0; i < mv; ++i)
          for (int64_t h = 0; h < nv; h += 16)
            i8_epilogue_(a, i8_load_(c + i * 32 + h), m0 + i, nb + p + h, nv - h < 16 ? nv - h : 16);
      }
    }
  }
  _tile_release();
}

void I8_EMU_(ckw_i8w_gemm_nt_core__amxint8)(float* y, const float* x, const int8_t* w, const float* w_scale,
                                            const float* b, const float* r, void* scratch, int64_t M, int64_t N,
                                            int64_t K, int64_t ldy, int epi) {
  if (M <= CKW_I8W_AMX_ROWS || N <= 0) {
    I8_EMU_(ckw_i8w_gemm_nt_core__avx512vnni)(y, x, w, w_scale, b, r, scratch, M, N, K, ldy, epi);
    return;
  }
  const i8_args a = {y, w, w_scale, b, r, ckw_i8w_scratch_at(scratch, M, K), M, N, K, ldy, epi};
  i8_quantize_(&a, x);
  amx_gemm_(&a);
}
