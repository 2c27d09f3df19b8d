// The bf16-weight engine on AMX-BF16 for M > CKW_GEMM_ROWS_MAX (M <= CKW_GEMM_ROWS_MAX: the
// avx512bf16 streaming path, same bits). Contract: bf16w_gemm_nt_core.h.
//
// The tiles compute y^T: TDPBF16PS's first operand is 16 rows of 32 consecutive bf16, which is W
// exactly as stored (row n, k .. k + 31), so W is read in place with no packing and no scratch
// beyond the stack (kernels/README.md: no malloc). The second operand wants (k, k + 1) pairs
// per column: x is rounded to bf16 (nearest even, vcvtne2ps2bf16 as on the avx512bf16 path) and
// scattered into that pair layout once per block of 32 rows. W's last partial 32-k step and a
// last panel of fewer than 32 rows are copied zero-padded (so nothing past W is read).
// Each output tile starts at 0 and takes every 32-k step of K in order; an element depends only
// on its row of W and its row of x (zero padding adds exact zeros), so the bits do not depend on
// M, N or which rows and columns share a call. The epilogue (+ b, GELU, r +) runs in fp32
// AVX-512 on the stored tiles.
#include <string.h>

#include "kernels/common/bf16w_gemm_nt_core.h"
#include "kernels/common/simd_avx512bf16.h"  // also: built again on emulated tiles for the tests

#define AMX_FN __attribute__((target(CKW_AMX_FEATURES)))

// 2 x 2 tiles per step, 32 columns of y (W rows) x 32 rows of y (x rows): tmm0-3 accumulate,
// tmm4-5 hold W, tmm6-7 x; each operand tile feeds two TDPBF16PS.
#define BM 32
#define BN 32
#define KB 32               // k per step: a 64-byte tile row of bf16
#define TILE_U16 (16 * KB)  // one 16 x 64-byte operand tile, in uint16_t
// The stack holds x's block and the padded last panel of W, 2 * BM * K bf16; larger K takes the
// widening path (Whisper's largest K is 5120).
#define K_MAX 8192

typedef struct {  // LDTILECFG's 64-byte operand, palette 1
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} amx_cfg_t;

// x rows [m0, m0 + mv) as the second operand: per 32-k step s and 16-row half h, a tile whose
// row p holds, for each of its 16 rows i, the pair (x[i][32 s + 2p], x[i][32 s + 2p + 1]) in
// bf16. Rows past mv and k past K are 0.
static AMX_FN void pack_x_(uint16_t* restrict xp, const float* restrict x, int64_t m0, int64_t mv, int64_t K,
                           int64_t steps) {
  const __m512i col =
      _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32(16));
  for (int64_t i = 0; i < BM; ++i) {
    uint16_t* d = xp + (i / 16) * TILE_U16 + (i % 16) * 2;
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t k = s * KB, n = i >= mv ? 0 : K - k < KB ? K - k : KB;
      const __mmask16 lo = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
      const __mmask16 hi = (__mmask16)(n >= 32 ? 0xffffu : n > 16 ? (1u << (n - 16)) - 1u : 0u);
      const float* p = x + (m0 + (i < mv ? i : 0)) * K + k;
      const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, p + 16), _mm512_maskz_loadu_ps(lo, p));
      _mm512_i32scatter_epi32(d + s * 2 * TILE_U16, col, CKW_SI512_FROM_BH(v), 4);  // pair p -> tile row p
    }
  }
}

// dst[j * ld + k] = w[j * K + k0 + k] for j < nv, k < kv; 0 elsewhere in BN x ld.
static void copy_w_(uint16_t* restrict dst, int64_t ld, const uint16_t* restrict w, int64_t K, int64_t nv, int64_t k0,
                    int64_t kv) {
  memset(dst, 0, sizeof(uint16_t) * BN * ld);
  for (int64_t j = 0; j < nv; ++j) memcpy(dst + j * ld, w + j * K + k0, sizeof(uint16_t) * kv);
}

// y rows [m0, m0 + mv), columns [n0, n0 + nv) from c (c[n * BM + m] = y^T block): + b, GELU, r +.
static AMX_FN void epilogue_(float* y, const float* c, const float* b, const float* r, int64_t m0, int64_t mv,
                             int64_t n0, int64_t nv, int64_t ldy, int epi) {
  const __m512i row =
      _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32(BM));
  for (int64_t h = 0; h < nv; h += 16) {
    const int64_t n = nv - h < 16 ? nv - h : 16;
    const __m512 bv = b ? ckw_v_loadn(b + n0 + h, n) : _mm512_setzero_ps();
    for (int64_t i = 0; i < mv; ++i) {
      __m512 v = _mm512_i32gather_ps(row, c + h * BM + i, 4);
      if (b) v = ckw_v_add(v, bv);
      if (epi == CKW_GEMM_EPI_GELU) v = ckw_v_gelu(v);
      const int64_t o = (m0 + i) * ldy + n0 + h;
      if (epi == CKW_GEMM_EPI_RESIDUAL) v = ckw_v_add(ckw_v_loadn(r + o, n), v);  // r read before y written
      ckw_v_storen(y + o, v, n);
    }
  }
}

static AMX_FN void amx_gemm_(float* y, const float* x, const uint16_t* w, const float* b, const float* r, int64_t M,
                             int64_t N, int64_t K, int64_t ldy, int epi) {
  const int64_t full = K / KB, steps = (K + KB - 1) / KB, kt = K - full * KB;
  const int64_t Kp = steps ? steps * KB : KB;
  uint16_t xp[BM * Kp] __attribute__((aligned(64)));
  uint16_t wlast[BN * Kp] __attribute__((aligned(64)));  // the last panel when it has < BN rows
  uint16_t wtail[BN * KB] __attribute__((aligned(64)));  // a full panel's last partial step
  float c[BN * BM] __attribute__((aligned(64)));
  const int64_t n_full = N / BN * BN;
  if (n_full < N) copy_w_(wlast, Kp, w + n_full * K, K, N - n_full, 0, K);
  amx_cfg_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);  // per call: each pool thread runs the kernel and tile state is per thread
  for (int64_t m0 = 0; m0 < M; m0 += BM) {
    const int64_t mv = M - m0 < BM ? M - m0 : BM;
    pack_x_(xp, x, m0, mv, K, steps);
    for (int64_t n0 = 0; n0 < N; n0 += BN) {
      const int last = n0 == n_full;
      const uint16_t* a = last ? wlast : w + n0 * K;
      const int64_t lda = (last ? Kp : K) * (int64_t)sizeof(uint16_t), direct = last ? steps : full;
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int64_t s = 0; s < steps; ++s) {
        const uint16_t* as = a + s * KB;
        int64_t ld = lda;
        if (s >= direct) {  // the partial last step of a full panel
          copy_w_(wtail, KB, w + n0 * K, K, BN, s * KB, kt);
          as = wtail, ld = KB * (int64_t)sizeof(uint16_t);
        }
        _tile_loadd(4, as, ld);
        _tile_loadd(5, as + 16 * (ld / (int64_t)sizeof(uint16_t)), ld);
        _tile_loadd(6, xp + s * 2 * TILE_U16, 64);
        _tile_loadd(7, xp + s * 2 * TILE_U16 + TILE_U16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      _tile_stored(0, c, BM * sizeof(float));
      _tile_stored(1, c + 16, BM * sizeof(float));
      _tile_stored(2, c + 16 * BM, BM * sizeof(float));
      _tile_stored(3, c + 16 * BM + 16, BM * sizeof(float));
      epilogue_(y, c, b, r, m0, mv, n0, N - n0 < BN ? N - n0 : BN, ldy, epi);
    }
  }
  _tile_release();
}

void CKW_ISA_AMX(ckw_bf16w_gemm_nt_core)(float* y, const float* x, const uint16_t* w, const float* b, const float* r,
                                         float* pack, int64_t pack_floats, int64_t M, int64_t N, int64_t K, int64_t ldy,
                                         int epi) {
  const int64_t rows_max = CKW_GEMM_DOT_ROWS(epi);
  if (M <= rows_max || N <= 0 || K > K_MAX) {  // K > K_MAX: depends on K alone, so every split agrees
    (M <= rows_max ? CKW_ISA_BF16(ckw_bf16w_gemm_nt_core) : CKW_ISA(ckw_bf16w_gemm_nt_core))(
        y, x, w, b, r, pack, pack_floats, M, N, K, ldy, epi);
    return;
  }
  amx_gemm_(y, x, w, b, r, M, N, K < 0 ? 0 : K, ldy, epi & ~CKW_GEMM_PATH_FLAGS);
}
