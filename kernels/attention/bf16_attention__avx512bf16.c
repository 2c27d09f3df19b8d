// ckw_bf16_attention's AVX512-BF16 path (contract: bf16_attention.h), a block of 32 queries at a
// time per head, as two GEMMs on vdpbf16ps register tiles of TR queries x 32 columns:
//   scores: queries broadcast as bf16 pairs (d, d + 1) against K^T packed in the same pairs
//     (kt[p][j], 32 keys a panel), one lane chain per score;
//   outputs: the numerators' bf16 pairs (j, j + 1), adjacent in a query's row, broadcast against
//     V packed in key pairs (vp[j / 2][d]), one lane chain per output.
// K and V are packed once per head and call (from a contiguous cache or a paged one's blocks), the
// scores and numerators of a block stay in L2.
// Built again on emulated intrinsics for the tests (kernels/common/simd_avx512bf16.h).
#include <math.h>
#include <string.h>

#include "kernels/attention/bf16_attention.h"
#include "kernels/attention/f32_attention_kv.inc"
#include "kernels/common/simd_avx512bf16.h"

#undef CKW_SIMD_TARGET
#define CKW_SIMD_TARGET __attribute__((target(CKW_BF16_FEATURES)))

enum { NQB = 32, TR = 8, PW = 32 };  // queries per block, query rows per tile, columns per tile

// A row of n floats rounded to bf16 into dst[0 .. w), w a multiple of 32 (0 past n).
CKW_BF16_VI void round_row_(uint16_t* dst, const float* src, int64_t n, int64_t w) {
  for (int64_t d = 0; d < w; d += 32) {
    const __m512bh v = n - d >= 32 ? ckw_bh_round32(src + d) : ckw_bh_round32n(src + d, d < n ? n - d : 0);
    _mm512_storeu_si512(dst + d, CKW_SI512_FROM_BH(v));
  }
}

CKW_BF16_VI __m512bh load_pairs_(const uint32_t* p) { return CKW_BH_FROM_SI512(_mm512_loadu_si512(p)); }

// Keys seen by a query at position end - 1 (all Tk unless causal).
static inline int64_t visible_(int64_t end, int64_t Tk, int causal) {
  return !causal || end >= Tk ? Tk : end > 0 ? end : 0;
}

static inline const float* row_(ckw_kv_view v, int64_t j, int64_t Dh) {
  return ckw_kv_seg(v, j / v.seg, Dh) + j % v.seg * Dh;
}

// One head's K and V (rows of the views, Dh floats each; n rows read) in bf16: kt[p * np + j] = the
// pair (2p, 2p + 1) of key j, vp[(j / 2) * Dv + d] = v[j][d] | v[j + 1][d] << 16; 0 past n and Dh.
// Packed alike wherever the rows are stored, so a paged cache gives a contiguous one's bits.
static CKW_SIMD_TARGET void pack_kv_(uint32_t* restrict kt, uint32_t* restrict vp, uint16_t* restrict row,
                                     ckw_kv_view kv, ckw_kv_view vv, int64_t n, int64_t np, int64_t Dh, int64_t Dv) {
  const int64_t P = (Dh + 1) / 2;
  for (int64_t j = 0; j < np; ++j) {
    if (j < n) round_row_(row, row_(kv, j, Dh), Dh, Dv);
    for (int64_t p = 0; p < P; ++p) {
      uint32_t u = 0;
      if (j < n) memcpy(&u, row + 2 * p, sizeof u);
      kt[p * np + j] = u;
    }
  }
  uint16_t* row1 = row + Dv;
  for (int64_t j = 0; j < np; j += 2) {
    if (j < n) round_row_(row, row_(vv, j, Dh), Dh, Dv);
    if (j + 1 < n) round_row_(row1, row_(vv, j + 1, Dh), Dh, Dv);
    for (int64_t d = 0; d < Dv; ++d)
      vp[j / 2 * Dv + d] = (j < n ? row[d] : 0u) | (j + 1 < n ? (uint32_t)row1[d] << 16 : 0u);
  }
}

// Scores of R queries (bf16 rows a, lda apart) x 32 keys from j0: chains over the P pairs, times
// scale; lanes at or past a query's n[i] visible keys are -inf.
CKW_BF16_VI void score_tile_(const int R, float* restrict s, int64_t lds, const uint16_t* restrict a, int64_t lda,
                             const uint32_t* restrict kt, int64_t np, int64_t P, int64_t j0, const int64_t* n,
                             float scale) {
  __m512 acc[TR][2];
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < P; ++p) {
    const __m512bh w0 = load_pairs_(kt + p * np + j0), w1 = load_pairs_(kt + p * np + j0 + 16);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512bh x = ckw_bh_pair(a + i * lda + 2 * p);
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], x, w0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], x, w1);
    }
  }
  const ckw_vf vs = ckw_v_set1(scale), ninf = ckw_v_set1(-INFINITY);
  const ckw_vf j_lo = ckw_v_add(ckw_v_iota(), ckw_v_set1((float)j0)), j_hi = ckw_v_add(j_lo, ckw_v_set1(16.0f));
  for (int i = 0; i < R; ++i) {
    const ckw_vf lim = ckw_v_set1((float)n[i]);
    ckw_v_store(s + i * lds, ckw_v_select_lt(j_lo, lim, ckw_v_mul(acc[i][0], vs), ninf));
    ckw_v_store(s + i * lds + 16, ckw_v_select_lt(j_hi, lim, ckw_v_mul(acc[i][1], vs), ninf));
  }
}

// Outputs of R queries (numerator rows a, lda apart) x nv <= 32 columns from d0: chains over the
// key pairs [0, npairs), times inv[i].
CKW_BF16_VI void out_tile_(const int R, float* restrict o, int64_t ldo, const uint16_t* restrict a, int64_t lda,
                           const uint32_t* restrict vp, int64_t Dv, int64_t npairs, const float* inv, int64_t nv) {
  __m512 acc[TR][2];
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < npairs; ++p) {
    const __m512bh w0 = load_pairs_(vp + p * Dv), w1 = load_pairs_(vp + p * Dv + 16);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512bh x = ckw_bh_pair(a + i * lda + 2 * p);
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], x, w0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], x, w1);
    }
  }
  const int64_t nv0 = nv < 16 ? nv : 16, nv1 = nv - nv0;
  for (int i = 0; i < R; ++i) {
    const ckw_vf vi = ckw_v_set1(inv[i]);
    ckw_v_storen(o + i * ldo, ckw_v_mul(acc[i][0], vi), nv0);
    ckw_v_storen(o + i * ldo + 16, ckw_v_mul(acc[i][1], vi), nv1);
  }
}

#define TILE_ROWS_(R, call) \
  switch (R) {              \
    case 1:                 \
      call(1);              \
      break;                \
    case 2:                 \
      call(2);              \
      break;                \
    case 3:                 \
      call(3);              \
      break;                \
    case 4:                 \
      call(4);              \
      break;                \
    case 5:                 \
      call(5);              \
      break;                \
    case 6:                 \
      call(6);              \
      break;                \
    case 7:                 \
      call(7);              \
      break;                \
    default:                \
      call(TR);             \
      break;                \
  }

// Stable softmax numerators of s[0 .. w) (w a multiple of 32; -inf where hidden) rounded to bf16
// into p; returns 1 / (their fp32 sum), 0 for a row that sees no key (p then all 0).
CKW_BF16_VI float numerators_(uint16_t* restrict p, const float* restrict s, int64_t w, int64_t n) {
  if (n <= 0) {
    memset(p, 0, sizeof(uint16_t) * w);
    return 0.0f;
  }
  ckw_vf m = ckw_v_load(s);
  for (int64_t j = 16; j < w; j += 16) m = ckw_v_max(m, ckw_v_load(s + j));
  const ckw_vf vm = ckw_v_set1(ckw_v_hmax(m));
  ckw_vf sum = ckw_v_zero();
  for (int64_t j = 0; j < w; j += 32) {
    const ckw_vf e0 = ckw_v_exp(ckw_v_sub(ckw_v_load(s + j), vm));
    const ckw_vf e1 = ckw_v_exp(ckw_v_sub(ckw_v_load(s + j + 16), vm));
    sum = ckw_v_add(ckw_v_add(sum, e0), e1);
    _mm512_storeu_si512(p + j, CKW_SI512_FROM_BH(_mm512_cvtne2ps_pbh(e1, e0)));
  }
  return 1.0f / ckw_v_hsum(sum);
}

// Queries i0 .. i0 + nq - 1 of head h against its packed K and V (np keys, rounded up to 32).
static CKW_SIMD_TARGET void block_(float* restrict o, const float* restrict q, const uint32_t* kt, const uint32_t* vp,
                                   uint16_t* restrict qb, float* restrict s, uint16_t* restrict pb, float* restrict inv,
                                   int64_t i0, int64_t nq, int64_t h, int64_t Tk, int64_t Dh, int64_t ld, int64_t np,
                                   int64_t Dv, int64_t q_pos, int causal, float scale) {
  const int64_t P = (Dh + 1) / 2;
  int64_t n[NQB], nb = 0;  // keys each query sees; the most any sees, rounded up to 32
  for (int64_t c = 0; c < nq; ++c) {
    n[c] = visible_(q_pos + i0 + c + 1, Tk, causal);
    round_row_(qb + c * Dv, q + (i0 + c) * ld + h * Dh, Dh, Dv);
    nb = n[c] > nb ? n[c] : nb;
  }
  nb = (nb + PW - 1) / PW * PW;
  for (int64_t j0 = 0; j0 < nb; j0 += PW)
    for (int64_t c0 = 0; c0 < nq; c0 += TR) {
#define SCORE_(R_) score_tile_(R_, s + c0 * np + j0, np, qb + c0 * Dv, Dv, kt, np, P, j0, n + c0, scale)
      TILE_ROWS_(nq - c0, SCORE_)
#undef SCORE_
    }
  for (int64_t c = 0; c < nq; ++c) inv[c] = numerators_(pb + c * np, s + c * np, nb, n[c]);
  for (int64_t d0 = 0; d0 < Dh; d0 += PW)
    for (int64_t c0 = 0; c0 < nq; c0 += TR) {
#define OUT_(R_)                                                                                       \
  out_tile_(R_, o + (i0 + c0) * ld + h * Dh + d0, ld, pb + c0 * np, np, vp + d0, Dv, nb / 2, inv + c0, \
            Dh - d0 < PW ? Dh - d0 : PW)
      TILE_ROWS_(nq - c0, OUT_)
#undef OUT_
    }
}

// One sequence's Tq >= CKW_F32_ATTENTION_BLOCK_MIN_TQ queries, every head (head h's rows of the
// views moved by h * hstride floats).
static CKW_SIMD_TARGET void attend_(float* restrict o, const float* restrict q, ckw_kv_view kv, ckw_kv_view vv,
                                    int64_t hstride, float* restrict scratch, int64_t Tq, int64_t Tk, int64_t H,
                                    int64_t Dh, int64_t ld, int64_t q_pos, int causal, float scale) {
  const int64_t np = (Tk + 31) / 32 * 32, Dv = (Dh + 31) / 32 * 32, P = (Dh + 1) / 2;
  // Rows any query of the call reads; the rest of the cache is never touched.
  const int64_t n_all = visible_(q_pos + Tq, Tk, causal);
  uint32_t* kt = (uint32_t*)(void*)scratch;
  uint32_t* vp = kt + P * np;
  float* s = (float*)(void*)(vp + np / 2 * Dv);
  uint16_t* pb = (uint16_t*)(void*)(s + NQB * np);
  uint16_t* qb = pb + NQB * np;
  float* inv = (float*)(void*)(qb + NQB * Dv);
  for (int64_t h = 0; h < H; ++h) {
    ckw_kv_view kh = kv, vh = vv;
    kh.base += h * hstride, vh.base += h * hstride;
    // qb's rows serve as the packing's row buffers (2 * Dv <= NQB * Dv).
    pack_kv_(kt, vp, qb, kh, vh, n_all, np, Dh, Dv);
    for (int64_t i0 = 0; i0 < Tq; i0 += NQB)
      block_(o, q, kt, vp, qb, s, pb, inv, i0, Tq - i0 < NQB ? Tq - i0 : NQB, h, Tk, Dh, ld, np, Dv, q_pos, causal,
             scale);
  }
}

CKW_SIMD_TARGET void CKW_ISA_BF16(ckw_bf16_attention)(CKW_F32_ATTENTION_PARAMS) {
  if (Tq < CKW_F32_ATTENTION_BLOCK_MIN_TQ || Tk <= 0) {
    CKW_ISA(ckw_f32_attention)(o, q, k, v, scratch, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
    return;
  }
  attend_(o, q, ckw_kv_contiguous(k, cap), ckw_kv_contiguous(v, cap), cap * Dh, scratch, Tq, Tk, H, Dh, ld, q_pos,
          causal, scale);
}

// Each sequence as ckw_bf16_attention over its rows gathered through its table (the path depends
// on Tq, which every sequence of the call shares).
CKW_SIMD_TARGET void CKW_ISA_BF16(ckw_bf16_attention_paged)(CKW_F32_ATTENTION_PAGED_PARAMS) {
  if (Tq < CKW_F32_ATTENTION_BLOCK_MIN_TQ || Tk <= 0) {
    // clang-format would take the ISA-named function for a statement of its own.
    // clang-format off
    CKW_ISA(ckw_f32_attention_paged)(o, q, k, v, pos, table, scratch, B, Tq, Tk, H, Dh, ld, Hp, NB, R, MB, q0,
                                     causal, scale);
    // clang-format on
    return;
  }
  const int64_t bs = Hp * R * Dh;  // floats per block
  for (int64_t b = 0; b < B; ++b)
    attend_(o + b * Tq * ld, q + b * Tq * ld, ckw_kv_paged(k, table + b * MB, R, bs),
            ckw_kv_paged(v, table + b * MB, R, bs), R * Dh, scratch, Tq, Tk, H, Dh, ld, pos[b] + q0, causal, scale);
}
