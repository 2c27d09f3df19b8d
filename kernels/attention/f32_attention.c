#include "kernels/attention/f32_attention.h"

#include <math.h>

#include "kernels/common/cpu.h"
#include "kernels/attention/f32_attention_kv.inc"

int64_t ckw_f32_attention_scratch_bytes(int64_t Tq, int64_t Tk, int64_t H, int64_t Dh) {
  (void)Tq, (void)H;
  // Blocked path: transposed scores [Tk rounded to 16][32 queries] + q^T [Dh][32] + 32 sums
  // (32 = the AVX-512 block; AVX2 uses 16). The row path needs less: up to 8 rows of scores
  // (Tk rounded to 16) and of q (Dh rounded to the vector).
  const int64_t rows = ((Tk > 0 ? Tk : 1) + 15) / 16 * 16;
  return (32 * rows + 32 * (Dh > 0 ? Dh : 1) + 32) * (int64_t)sizeof(float);
}

// Number of keys query i may see.
static int64_t visible_keys(int64_t i, int64_t Tk, int64_t q_pos, int causal) {
  if (!causal) return Tk;
  const int64_t n = q_pos + i + 1;
  return n < Tk ? (n > 0 ? n : 0) : Tk;
}

static const float* kv_row(ckw_kv_view v, int64_t j, int64_t Dh) {
  return ckw_kv_seg(v, j / v.seg, Dh) + j % v.seg * Dh;
}

// One sequence's Tq queries, every head (head h's rows moved by h * hstride floats).
static void attend_scalar(float* o, const float* q, ckw_kv_view kv, ckw_kv_view vv, int64_t hstride, float* s,
                          int64_t Tq, int64_t Tk, int64_t H, int64_t Dh, int64_t ld, int64_t q_pos, int causal,
                          float scale) {
  for (int64_t h = 0; h < H; ++h) {
    ckw_kv_view kh = kv, vh = vv;
    kh.base += h * hstride, vh.base += h * hstride;
    for (int64_t i = 0; i < Tq; ++i) {
      const float* qi = q + i * ld + h * Dh;
      float* oi = o + i * ld + h * Dh;
      const int64_t n = visible_keys(i, Tk, q_pos, causal);
      float mx = -INFINITY, sum = 0.0f;
      for (int64_t j = 0; j < n; ++j) {
        const float* kj = kv_row(kh, j, Dh);
        float acc = 0.0f;
        for (int64_t d = 0; d < Dh; ++d) acc += qi[d] * kj[d];
        s[j] = acc * scale;
        mx = s[j] > mx ? s[j] : mx;
      }
      for (int64_t j = 0; j < n; ++j) {
        s[j] = expf(s[j] - mx);
        sum += s[j];
      }
      const float inv = n > 0 ? 1.0f / sum : 0.0f;
      for (int64_t d = 0; d < Dh; ++d) {
        float acc = 0.0f;
        for (int64_t j = 0; j < n; ++j) acc += s[j] * kv_row(vh, j, Dh)[d];
        oi[d] = acc * inv;
      }
    }
  }
}

static void scores_scalar(float* s, const float* q, ckw_kv_view kv, int64_t hstride, int64_t Tq, int64_t Tk,
                          int64_t H, int64_t Dh, int64_t ldq, int64_t q_pos, int causal, float scale) {
  for (int64_t h = 0; h < H; ++h) {
    ckw_kv_view kh = kv;
    kh.base += h * hstride;
    for (int64_t i = 0; i < Tq; ++i) {
      const float* qi = q + i * ldq + h * Dh;
      const int64_t n = visible_keys(i, Tk, q_pos, causal);
      for (int64_t j = 0; j < Tk; ++j) {
        float acc = 0.0f;
        const float* kj = j < n ? kv_row(kh, j, Dh) : 0;
        for (int64_t d = 0; d < Dh && j < n; ++d) acc += qi[d] * kj[d];
        s[(h * Tq + i) * Tk + j] = j < n ? acc * scale : -INFINITY;
      }
    }
  }
}

void ckw_f32_attention__scalar(CKW_F32_ATTENTION_PARAMS) {
  attend_scalar(o, q, ckw_kv_contiguous(k, cap), ckw_kv_contiguous(v, cap), cap * Dh, scratch, Tq, Tk, H, Dh, ld,
                q_pos, causal, scale);
}

void ckw_f32_attention_scores__scalar(CKW_F32_ATTENTION_SCORES_PARAMS) {
  scores_scalar(s, q, ckw_kv_contiguous(k, cap), cap * Dh, Tq, Tk, H, Dh, ldq, q_pos, causal, scale);
}

int ckw_f32_attention_paged_check(const int32_t* pos, const int32_t* table, int64_t B, int64_t Tq, int64_t Tk,
                                  int64_t NB, int64_t R, int64_t MB, int64_t q0, int causal) {
  if (B < 0 || Tq < 0 || Tk < 0 || NB < 0 || R < 1 || MB < 0 || q0 < 0) return CKW_ATTENTION_ERR_SHAPE;
  for (int64_t b = 0; b < B; ++b) {
    if (pos[b] < 0) return CKW_ATTENTION_ERR_POSITION;
    const int64_t last = pos[b] + q0 + Tq, n = causal && last < Tk ? last : Tk;  // rows the sequence reads
    if (n > MB * R || (causal && last > MB * R)) return CKW_ATTENTION_ERR_POSITION;
    for (int64_t s = 0; s < (n + R - 1) / R; ++s)
      if (table[b * MB + s] < 0 || table[b * MB + s] >= NB) return CKW_ATTENTION_ERR_BLOCK;
  }
  return 0;
}

const char* ckw_f32_attention_paged_strerror(int code) {
  switch (code) {
    case 0: return "ok";
    case CKW_ATTENTION_ERR_BLOCK: return "a block id the call reads is outside [0, NB)";
    case CKW_ATTENTION_ERR_POSITION: return "a position is negative or the rows read pass the table's MB * R rows";
    case CKW_ATTENTION_ERR_SHAPE: return "negative dims or R < 1";
    default: return "unknown paged attention error";
  }
}

void ckw_f32_attention_paged__scalar(CKW_F32_ATTENTION_PAGED_PARAMS) {
  (void)NB;
  for (int64_t b = 0; b < B; ++b)
    attend_scalar(o + b * Tq * ld, q + b * Tq * ld, ckw_kv_paged(k, table + b * MB, R, Hp * R * Dh),
                  ckw_kv_paged(v, table + b * MB, R, Hp * R * Dh), R * Dh, scratch, Tq, Tk, H, Dh, ld, pos[b] + q0,
                  causal, scale);
}

void ckw_f32_attention_scores_paged__scalar(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS) {
  (void)NB;
  for (int64_t b = 0; b < B; ++b)
    scores_scalar(s + b * H * Tq * Tk, q + b * Tq * ldq, ckw_kv_paged(k, table + b * MB, R, Hp * R * Dh), R * Dh, Tq,
                  Tk, H, Dh, ldq, pos[b] + q0, causal, scale);
}

void ckw_f32_attention_paged(CKW_F32_ATTENTION_PAGED_PARAMS) {
  CKW_DISPATCH(ckw_f32_attention_paged, o, q, k, v, pos, table, scratch, B, Tq, Tk, H, Dh, ld, Hp, NB, R, MB, q0,
               causal, scale);
}

void ckw_f32_attention_scores_paged(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS) {
  CKW_DISPATCH(ckw_f32_attention_scores_paged, s, q, k, pos, table, B, Tq, Tk, H, Dh, ldq, Hp, NB, R, MB, q0, causal,
               scale);
}

void ckw_f32_attention_scores(CKW_F32_ATTENTION_SCORES_PARAMS) {
  CKW_DISPATCH(ckw_f32_attention_scores, s, q, k, Tq, Tk, H, Dh, ldq, cap, q_pos, causal, scale);
}

void ckw_f32_attention(CKW_F32_ATTENTION_PARAMS) {
  CKW_DISPATCH(ckw_f32_attention, o, q, k, v, scratch, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
}

#define CKW_ATTENTION_BATCHED(suffix) \
  CKW_ATTENTION_BATCHED_OVER(ckw_f32_attention_batched##suffix, ckw_f32_attention##suffix)
CKW_ATTENTION_BATCHED()
CKW_ATTENTION_BATCHED(__scalar)
CKW_ATTENTION_BATCHED(__avx2)
CKW_ATTENTION_BATCHED(__avx512)
