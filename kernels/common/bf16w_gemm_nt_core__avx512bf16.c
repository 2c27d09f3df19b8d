// The bf16-weight engine on vdpbf16ps. Contract: bf16w_gemm_nt_core.h. Built again on emulated
// intrinsics for the tests (kernels/common/simd_avx512bf16.h).
// M <= CKW_GEMM_ROWS_MAX: the template's streaming dot products, 32 k per instruction on bf16 rows
// read as they are stored, x rounded to bf16 on the fly (one conversion per 32 k, shared by 4 rows
// of W).
// M > CKW_GEMM_ROWS_MAX (blocked_ below): register tiles of BMR rows x 32 columns, one fp32 lane
// chain per output over the k pairs in order. A bf16 pair (k, k + 1) of a row of W is one dword as
// stored, so packing W's panel is a 32-bit transpose (k pairs major, 32 columns contiguous); x's
// rows are rounded to bf16 once per block and K slice, and a row's pair is a dword broadcast.
// Twice the fp32 FMA tile's rate on Zen 4 (kernels/gemm:bf16w_gemm_nt_bench).
#include "kernels/common/bf16w_gemm_nt_core.h"
#include "kernels/common/simd_avx512bf16.h"

// The whole file may use AVX512-BF16, so the dot products below inline into gemv_.
#undef CKW_SIMD_TARGET
#define CKW_SIMD_TARGET __attribute__((target(CKW_BF16_FEATURES)))
#define CKW_GEMM_W_BF16
#define CKW_GEMM_HAVE_DOT
#define CKW_GEMM_ENTRY CKW_ISA_BF16(ckw_bf16w_gemm_nt_core)

CKW_BF16_VI __m512bh w32_(const uint16_t* p) { return CKW_BH_FROM_SI512(_mm512_loadu_si512(p)); }
CKW_BF16_VI __m512bh w32n_(const uint16_t* p, int64_t n) {
  return CKW_BH_FROM_SI512(_mm512_maskz_loadu_epi16((__mmask32)((1u << n) - 1u), p));
}

CKW_BF16_VI void dot4_(const float* restrict xm, const uint16_t* restrict w0, const uint16_t* pf, int64_t K, float* o) {
  const int64_t Kv = K - K % 32, kt = K - Kv;
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  for (int64_t k = 0; k < Kv; k += 32) {
    // one line per row, into L2 (gemm_nt_core__simd.inc's PF_ROWS says why)
    for (int j = 0; j < 4; ++j) _mm_prefetch((const char*)(pf + j * K + k), _MM_HINT_T1);
    const __m512bh xv = ckw_bh_round32(xm + k);
    a0 = _mm512_dpbf16_ps(a0, xv, w32_(w0 + k));
    a1 = _mm512_dpbf16_ps(a1, xv, w32_(w0 + K + k));
    a2 = _mm512_dpbf16_ps(a2, xv, w32_(w0 + 2 * K + k));
    a3 = _mm512_dpbf16_ps(a3, xv, w32_(w0 + 3 * K + k));
  }
  if (kt) {
    const __m512bh xv = ckw_bh_round32n(xm + Kv, kt);
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
  for (int64_t k = 0; k < Kv; k += 32) a = _mm512_dpbf16_ps(a, ckw_bh_round32(xm + k), w32_(wi + k));
  if (kt) a = _mm512_dpbf16_ps(a, ckw_bh_round32n(xm + Kv, kt), w32n_(wi + Kv, kt));
  return ckw_v_hsum(a);
}

#define CKW_GEMM_HAVE_BLOCKED
static CKW_SIMD_TARGET void blocked_(float* y, const float* x, const uint16_t* w, const float* b, const float* r,
                                     float* pack, int64_t pack_floats, int64_t M, int64_t N, int64_t K, int64_t ldy,
                                     int epi);

#include "kernels/common/gemm_nt_core__simd.inc"

#define BNR 32   // columns per panel and tile: two vectors of outputs
#define BMR 6    // rows per tile: 12 accumulators + 2 panel vectors + the broadcast pair
#define BKC 256  // k per slice (even): a 128-pair panel, 16 KiB, L1-resident
#define BMC 144  // rows per block: x's slice in bf16, 72 KiB, L2-resident

// panel[p * BNR + j] = the pair (k0 + 2p, k0 + 2p + 1) of W's row n0 + j as a dword, for j < nv
// and 2p < kc; 0 for nv <= j < BNR and for k >= K (an odd K's last pair).
static CKW_SIMD_TARGET void pack_pairs_(uint32_t* restrict panel, const uint16_t* restrict w, int64_t K, int64_t n0,
                                        int64_t nv, int64_t k0, int64_t kc) {
  const int64_t np = (kc + 1) / 2, whole = kc / 2;  // pairs; pairs with both k inside the row
  int64_t j = 0;
  for (; j + 8 <= nv; j += 8) {
    const uint16_t* src = w + (n0 + j) * K + k0;
    int64_t p = 0;
    for (; p + 8 <= whole; p += 8) {
      __m256 v[8];
      for (int i = 0; i < 8; ++i) v[i] = _mm256_loadu_ps((const float*)(const void*)(src + i * K + 2 * p));
      transpose8_(v);
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps((float*)(void*)(panel + (p + i) * BNR + j), v[i]);
    }
    for (; p < np; ++p)
      for (int i = 0; i < 8; ++i) {
        const uint16_t* e = src + i * K + 2 * p;
        panel[p * BNR + j + i] = e[0] | (p < whole ? (uint32_t)e[1] << 16 : 0u);
      }
  }
  for (; j < nv; ++j)
    for (int64_t p = 0; p < np; ++p) {
      const uint16_t* e = w + (n0 + j) * K + k0 + 2 * p;
      panel[p * BNR + j] = e[0] | (p < whole ? (uint32_t)e[1] << 16 : 0u);
    }
  for (; j < BNR; ++j)
    for (int64_t p = 0; p < np; ++p) panel[p * BNR + j] = 0;
}

// xs[i * BKC + k] = x[(m0 + i) * K + k0 + k] rounded to bf16 for i < mc, k < kc; 0 for kc <= k up
// to the next multiple of 32.
static CKW_SIMD_TARGET void round_x_(uint16_t* restrict xs, const float* restrict x, int64_t K, int64_t m0, int64_t mc,
                                     int64_t k0, int64_t kc) {
  for (int64_t i = 0; i < mc; ++i) {
    const float* xi = x + (m0 + i) * K + k0;
    for (int64_t k = 0; k < kc; k += 32) {
      const __m512bh v = kc - k >= 32 ? ckw_bh_round32(xi + k) : ckw_bh_round32n(xi + k, kc - k);
      _mm512_storeu_si512(xs + i * BKC + k, CKW_SI512_FROM_BH(v));
    }
  }
}

// One R x BNR tile over np pairs (R <= BMR, a constant after inlining): c (+)= a panel, as tile_
// in the template (first: seed with 0 or r; last: + b, GELU; nv < BNR masks the columns past N).
CKW_BF16_VI void ptile_(const int R, int64_t np, const uint16_t* restrict a, const uint32_t* restrict panel, float* c,
                        int64_t ldc, int64_t nv, int first, int last, const float* b, const float* r, int epi) {
  __m512 acc[BMR][2];
  const int64_t nv0 = nv < 16 ? nv : 16, nv1 = nv - nv0;
  for (int i = 0; i < R; ++i) {
    const float* src = first ? (epi == CKW_GEMM_EPI_RESIDUAL ? r + i * ldc : NULL) : c + i * ldc;
    acc[i][0] = src ? ckw_v_loadn(src, nv0) : _mm512_setzero_ps();
    acc[i][1] = src ? ckw_v_loadn(src + 16, nv1) : _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < np; ++p) {
    const __m512bh w0 = CKW_BH_FROM_SI512(_mm512_loadu_si512(panel + p * BNR));
    const __m512bh w1 = CKW_BH_FROM_SI512(_mm512_loadu_si512(panel + p * BNR + 16));
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512bh xv = ckw_bh_pair(a + i * BKC + 2 * p);
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], xv, w0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], xv, w1);
    }
  }
  if (last) {
    const __m512 b0 = b ? ckw_v_loadn(b, nv0) : _mm512_setzero_ps(), b1 = b ? ckw_v_loadn(b + 16, nv1) : b0;
    for (int i = 0; i < R; ++i)
      for (int h = 0; h < 2; ++h) {
        if (b) acc[i][h] = ckw_v_add(acc[i][h], h ? b1 : b0);
        if (epi == CKW_GEMM_EPI_GELU) acc[i][h] = ckw_v_gelu(acc[i][h]);
      }
  }
  for (int i = 0; i < R; ++i) {
    ckw_v_storen(c + i * ldc, acc[i][0], nv0);
    ckw_v_storen(c + i * ldc + 16, acc[i][1], nv1);
  }
}

static CKW_SIMD_TARGET void ptile_rows_(int R, int64_t np, const uint16_t* a, const uint32_t* panel, float* c,
                                        int64_t ldc, int64_t nv, int first, int last, const float* b, const float* r,
                                        int epi) {
#define PTILE_(R_) ptile_(R_, np, a, panel, c, ldc, nv, first, last, b, r, epi)
  switch (R) {
    case 1:
      PTILE_(1);
      break;
    case 2:
      PTILE_(2);
      break;
    case 3:
      PTILE_(3);
      break;
    case 4:
      PTILE_(4);
      break;
    case 5:
      PTILE_(5);
      break;
#if BMR > 6
    case 6:
      PTILE_(6);
      break;
    case 7:
      PTILE_(7);
      break;
#endif
    default:
      PTILE_(BMR);
      break;
  }
#undef PTILE_
}

// Rows [m0, m0 + mc) x columns [n_lo, n_hi) of y over all of K, as block_ in the template: per K
// slice, x's rows rounded into xs, then per panel (packed here, or found in packed: the column
// block from n_lo) the tiles down the rows. Partial sums between slices live in y (exact floats:
// the same chains as one loop).
static CKW_SIMD_TARGET void pblock_(float* y, const float* x, const uint16_t* w, const float* b, const float* r,
                                    int64_t m0, int64_t mc, int64_t n_lo, int64_t n_hi, int64_t N, int64_t K,
                                    int64_t ldy, int epi, uint16_t* xs, uint32_t* panel, const uint32_t* packed) {
  const int64_t P = (K + 1) / 2;
  for (int64_t k0 = 0; k0 == 0 || k0 < K; k0 += BKC) {  // K == 0: one empty slice writes y
    const int64_t kc = K - k0 < BKC ? K - k0 : BKC, np = (kc + 1) / 2;
    const int first = k0 == 0, last = k0 + kc >= K;
    round_x_(xs, x, K, m0, mc, k0, kc);
    for (int64_t n0 = n_lo; n0 < n_hi; n0 += BNR) {
      const int64_t nv = N - n0 < BNR ? N - n0 : BNR;
      const uint32_t* pp = packed ? packed + (n0 - n_lo) * P + k0 / 2 * BNR : panel;
      if (!packed) pack_pairs_(panel, w, K, n0, nv, k0, kc);
      for (int64_t i0 = 0; i0 < mc; i0 += BMR) {
        const int64_t m = m0 + i0;
        ptile_rows_((int)(mc - i0 < BMR ? mc - i0 : BMR), np, xs + i0 * BKC, pp, y + m * ldy + n0, ldy, nv, first, last,
                    b ? b + n0 : NULL, epi == CKW_GEMM_EPI_RESIDUAL ? r + m * ldy + n0 : NULL, epi);
      }
    }
  }
}

// As the template's blocked_: W packed once per column block into the scratch when more than one
// row block reuses it (a pair is a dword: a panel of all of K takes BNR * ceil(K / 2) of them).
// Always the swept order (every panel per K slice): the template's panel-outer order for wide y
// would round x again per panel, and measured slower here (encoder fc1, tiny: 163 against 193
// GFLOPS on one Zen 4 core).
static CKW_SIMD_TARGET void blocked_(float* y, const float* x, const uint16_t* w, const float* b, const float* r,
                                     float* pack, int64_t pack_floats, int64_t M, int64_t N, int64_t K, int64_t ldy,
                                     int epi) {
  uint32_t panel[BKC / 2 * BNR] __attribute__((aligned(64)));
  uint16_t xs[BMC * BKC] __attribute__((aligned(64)));
  const int64_t P = (K + 1) / 2;
  const int64_t nc = pack && M > BMC && K > 0 ? pack_floats / (P * BNR) * BNR : 0;
  const int64_t nstep = nc > 0 ? nc : N;
  uint32_t* packed = nc > 0 ? (uint32_t*)(void*)pack : NULL;
  for (int64_t nb = 0; nb < N; nb += nstep) {
    const int64_t nb_hi = N - nb < nstep ? N : nb + nstep;
    for (int64_t n0 = nb; packed && n0 < nb_hi; n0 += BNR)
      pack_pairs_(packed + (n0 - nb) * P, w, K, n0, N - n0 < BNR ? N - n0 : BNR, 0, K);
    for (int64_t m0 = 0; m0 < M; m0 += BMC) {
      const int64_t mc = M - m0 < BMC ? M - m0 : BMC;
      pblock_(y, x, w, b, r, m0, mc, nb, nb_hi, N, K, ldy, epi, xs, panel, packed);
    }
  }
}
