#include "kernels/attention/f32_attention.h"

#include <math.h>

#include "kernels/common/cpu.h"

int64_t ckw_f32_attention_scratch_bytes(int64_t Tq, int64_t Tk, int64_t H, int64_t Dh) {
  (void)Tq, (void)H;
  // Blocked path: transposed scores [Tk rounded to 16][32 queries] + q^T [Dh][32] + 32 sums
  // (32 = the AVX-512 block; AVX2 uses 16). The row path needs only Tk floats.
  const int64_t rows = ((Tk > 0 ? Tk : 1) + 15) / 16 * 16;
  return (32 * rows + 32 * (Dh > 0 ? Dh : 1) + 32) * (int64_t)sizeof(float);
}

// Number of keys query i may see.
static int64_t visible_keys(int64_t i, int64_t Tk, int64_t q_pos, int causal) {
  if (!causal) return Tk;
  const int64_t n = q_pos + i + 1;
  return n < Tk ? (n > 0 ? n : 0) : Tk;
}

void ckw_f32_attention__scalar(CKW_F32_ATTENTION_PARAMS) {
  float* s = scratch;
  for (int64_t h = 0; h < H; ++h) {
    const float* kh = k + h * cap * Dh;
    const float* vh = v + h * cap * Dh;
    for (int64_t i = 0; i < Tq; ++i) {
      const float* qi = q + i * ld + h * Dh;
      float* oi = o + i * ld + h * Dh;
      const int64_t n = visible_keys(i, Tk, q_pos, causal);
      float mx = -INFINITY, sum = 0.0f;
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (int64_t d = 0; d < Dh; ++d) acc += qi[d] * kh[j * Dh + d];
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
        for (int64_t j = 0; j < n; ++j) acc += s[j] * vh[j * Dh + d];
        oi[d] = acc * inv;
      }
    }
  }
}

void ckw_f32_attention_scores__scalar(CKW_F32_ATTENTION_SCORES_PARAMS) {
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < Tq; ++i) {
      const float* qi = q + i * ldq + h * Dh;
      const int64_t n = visible_keys(i, Tk, q_pos, causal);
      for (int64_t j = 0; j < Tk; ++j) {
        float acc = 0.0f;
        for (int64_t d = 0; d < Dh && j < n; ++d) acc += qi[d] * k[(h * cap + j) * Dh + d];
        s[(h * Tq + i) * Tk + j] = j < n ? acc * scale : -INFINITY;
      }
    }
}

void ckw_f32_attention_scores(CKW_F32_ATTENTION_SCORES_PARAMS) {
  CKW_DISPATCH(ckw_f32_attention_scores, s, q, k, Tq, Tk, H, Dh, ldq, cap, q_pos, causal, scale);
}

void ckw_f32_attention(CKW_F32_ATTENTION_PARAMS) {
  CKW_DISPATCH(ckw_f32_attention, o, q, k, v, scratch, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
}

// One call per sequence of the batch; each runs the single-sequence path it would run alone.
#define CKW_ATTENTION_BATCHED(suffix)                                                              \
  void ckw_f32_attention_batched##suffix(CKW_F32_ATTENTION_BATCHED_PARAMS) {                      \
    const int64_t q_stride = Tq * H * Dh, kv_stride = H * cap * Dh;                                \
    for (int64_t b = 0; b < B; ++b)                                                                \
      ckw_f32_attention##suffix(o + b * q_stride, q + b * q_stride, k + b * kv_stride, v + b * kv_stride, \
                                scratch, Tq, Tk, H, Dh, H * Dh, cap, q_pos, causal, scale);         \
  }
CKW_ATTENTION_BATCHED()
CKW_ATTENTION_BATCHED(__scalar)
CKW_ATTENTION_BATCHED(__avx2)
CKW_ATTENTION_BATCHED(__avx512)
