// ckw_f32_attention (op kind "attention"): per head h and query row i,
//   o[i, h] = softmax_j(scale * q[i, h] . k[h, j]) v[h, j]
// q, o token-major [Tq, H*Dh], rows ld floats apart (H * Dh, or more when H is a chunk of the
// heads); k, v head-major [H, cap, Dh] (cap = row capacity, so KV caches are read in place).
// Keys j = 0..Tk-1; with causal != 0 query i (absolute position q_pos + i) sees only
// j <= q_pos + i. Cases:
//   encoder self-attention   Tq = Tk = 1500, causal = 0
//   decoder prefill          Tq = T, q_pos = rows already cached (0), causal = 1, Tk >= q_pos + T
//   decoder decode step      Tq = 1, q_pos = pos, causal = 1 (attends pos + 1 rows), Tk > pos
//   cross-attention          Tq = T, Tk = encoder rows (1500), causal = 0
// A query that sees no key gets o = 0. scale is applied once to q.k (Whisper scales q and k
// by Dh^-0.25 each; one 1/sqrt(Dh) is exact for Dh = 64, a power of 4, and rounds once
// otherwise). The softmax subtracts the row max. scratch: ckw_f32_attention_scratch_bytes
// bytes, 64-byte alignment recommended; o must not overlap the inputs.
#ifndef CKW_KERNELS_ATTENTION_F32_ATTENTION_H_
#define CKW_KERNELS_ATTENTION_F32_ATTENTION_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int64_t ckw_f32_attention_scratch_bytes(int64_t Tq, int64_t Tk, int64_t H, int64_t Dh);

// SIMD paths: Tq >= this many query rows run a blocked multi-query path, fewer run one row at
// a time. A query's result does not depend on which other queries share its block, so
// splitting the work over heads, or over query chunks that all stay >= this size, gives the
// same bits for any thread count.
#define CKW_F32_ATTENTION_BLOCK_MIN_TQ 8

// The parameter lists are written over the K/V rows' element type kv_t: float here, uint16_t (f16
// bits) for the f16kv kernels (f16kv_attention.h), which share these kernels' code.
#define CKW_ATTENTION_PARAMS_KV(kv_t)                                                                                  \
  float *restrict o, const float *restrict q, const kv_t *restrict k, const kv_t *restrict v, float *restrict scratch, \
      int64_t Tq, int64_t Tk, int64_t H, int64_t Dh, int64_t ld, int64_t cap, int64_t q_pos, int causal, float scale
#define CKW_F32_ATTENTION_PARAMS CKW_ATTENTION_PARAMS_KV(float)

void ckw_f32_attention(CKW_F32_ATTENTION_PARAMS);
void ckw_f32_attention__scalar(CKW_F32_ATTENTION_PARAMS);
void ckw_f32_attention__avx2(CKW_F32_ATTENTION_PARAMS);
void ckw_f32_attention__avx512(CKW_F32_ATTENTION_PARAMS);

// ckw_f32_attention_batched (op kind "attention_batched"): B independent sequences (the beams
// of a beam search), each with its own K/V: sequence b's Tq query rows q[b * Tq ..] attend
// k[b], v[b] of a batch of head-major caches [Bk, H, cap, Dh] (B <= Bk) exactly as
// ckw_f32_attention would, bit for bit; o [B * Tq, H * Dh]. Same scratch as one sequence.
#define CKW_F32_ATTENTION_BATCHED_PARAMS                                                                             \
  float *restrict o, const float *restrict q, const float *restrict k, const float *restrict v,                      \
      float *restrict scratch, int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Dh, int64_t cap, int64_t q_pos, \
      int causal, float scale

// ckw_f32_attention_scores (op kind "attention_scores"): the attention logits alone,
//   s[h, i, j] = scale * q[i, h] . k[h, j]   (j < Tk; -inf where causal hides key j),
// s [H, Tq, Tk], q and k as ckw_f32_attention's, q's rows ldq floats apart (H * Dh, or more when
// H is a chunk of the heads); the same rounding as its one-row path. For
// inspection (Whisper's word timestamps read the alignment heads' cross-attention).
#define CKW_ATTENTION_SCORES_PARAMS_KV(kv_t)                                                                         \
  float *restrict s, const float *restrict q, const kv_t *restrict k, int64_t Tq, int64_t Tk, int64_t H, int64_t Dh, \
      int64_t ldq, int64_t cap, int64_t q_pos, int causal, float scale
#define CKW_F32_ATTENTION_SCORES_PARAMS CKW_ATTENTION_SCORES_PARAMS_KV(float)

void ckw_f32_attention_scores(CKW_F32_ATTENTION_SCORES_PARAMS);
void ckw_f32_attention_scores__scalar(CKW_F32_ATTENTION_SCORES_PARAMS);
void ckw_f32_attention_scores__avx2(CKW_F32_ATTENTION_SCORES_PARAMS);
void ckw_f32_attention_scores__avx512(CKW_F32_ATTENTION_SCORES_PARAMS);

// ckw_f32_attention_paged (op kind "attention_paged"): B independent sequences whose K/V rows
// live in a block pool k, v [NB, Hp, R, Dh] (R rows of every head per block): sequence b's
// logical row j is row j % R of block table[b * MB + j / R], head h of the call at head h of
// the block (k, v already moved to the call's first head; Hp heads per block). Its Tq query
// rows q[b * Tq ..] (rows ld floats apart) sit at positions pos[b] + q0 + i and attend as
// ckw_f32_attention would with q_pos = pos[b] + q0 over the rows gathered into one cache, bit
// for bit, whatever the block ids and whatever else is in the batch. Decode: B rows of one
// token; cross-attention: a one-block table per row (R = the encoder rows, the memory's entry).
// Scratch as ckw_f32_attention's. The ids and positions must pass
// ckw_f32_attention_paged_check: a split call cannot return a status, so the caller validates
// first (a generated entry point checks its block tables and positions before any kernel runs).
#define CKW_ATTENTION_ERR_BLOCK (-1)
#define CKW_ATTENTION_ERR_POSITION (-2)
#define CKW_ATTENTION_ERR_SHAPE (-3)

#define CKW_ATTENTION_PAGED_PARAMS_KV(kv_t)                                                                       \
  float *restrict o, const float *restrict q, const kv_t *restrict k, const kv_t *restrict v,                     \
      const int32_t *restrict pos, const int32_t *restrict table, float *restrict scratch, int64_t B, int64_t Tq, \
      int64_t Tk, int64_t H, int64_t Dh, int64_t ld, int64_t Hp, int64_t NB, int64_t R, int64_t MB, int64_t q0,   \
      int causal, float scale
#define CKW_F32_ATTENTION_PAGED_PARAMS CKW_ATTENTION_PAGED_PARAMS_KV(float)

void ckw_f32_attention_paged(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_f32_attention_paged__scalar(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_f32_attention_paged__avx2(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_f32_attention_paged__avx512(CKW_F32_ATTENTION_PAGED_PARAMS);

// ckw_f32_attention_scores_paged (op kind "attention_scores_paged"): ckw_f32_attention_scores
// for each sequence of a paged call, s [B, H, Tq, Tk]; same arguments and preconditions as
// ckw_f32_attention_paged.
#define CKW_ATTENTION_SCORES_PAGED_PARAMS_KV(kv_t)                                                          \
  float *restrict s, const float *restrict q, const kv_t *restrict k, const int32_t *restrict pos,          \
      const int32_t *restrict table, int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Dh, int64_t ldq, \
      int64_t Hp, int64_t NB, int64_t R, int64_t MB, int64_t q0, int causal, float scale
#define CKW_F32_ATTENTION_SCORES_PAGED_PARAMS CKW_ATTENTION_SCORES_PAGED_PARAMS_KV(float)

void ckw_f32_attention_scores_paged(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS);
void ckw_f32_attention_scores_paged__scalar(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS);
void ckw_f32_attention_scores_paged__avx2(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS);
void ckw_f32_attention_scores_paged__avx512(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS);

// What a paged call needs of its arguments: 0, or CKW_ATTENTION_ERR_BLOCK when a block id the
// call reads is outside [0, NB), CKW_ATTENTION_ERR_POSITION when some pos[b] < 0 or the rows
// read pass MB * R, CKW_ATTENTION_ERR_SHAPE on negative dims or R < 1; and its one-line message.
int ckw_f32_attention_paged_check(const int32_t *pos, const int32_t *table, int64_t B, int64_t Tq, int64_t Tk,
                                  int64_t NB, int64_t R, int64_t MB, int64_t q0, int causal);
const char *ckw_f32_attention_paged_strerror(int code);

// Defines `batched` (CKW_F32_ATTENTION_BATCHED_PARAMS) as one call of `single` per sequence of the
// batch, each on its own cache: it runs the path it would run alone.
#define CKW_ATTENTION_BATCHED_OVER(batched, single)                                                                    \
  void batched(CKW_F32_ATTENTION_BATCHED_PARAMS) {                                                                     \
    const int64_t q_stride = Tq * H * Dh, kv_stride = H * cap * Dh;                                                    \
    for (int64_t b = 0; b < B; ++b)                                                                                    \
      single(o + b * q_stride, q + b * q_stride, k + b * kv_stride, v + b * kv_stride, scratch, Tq, Tk, H, Dh, H * Dh, \
             cap, q_pos, causal, scale);                                                                               \
  }

void ckw_f32_attention_batched(CKW_F32_ATTENTION_BATCHED_PARAMS);
void ckw_f32_attention_batched__scalar(CKW_F32_ATTENTION_BATCHED_PARAMS);
void ckw_f32_attention_batched__avx2(CKW_F32_ATTENTION_BATCHED_PARAMS);
void ckw_f32_attention_batched__avx512(CKW_F32_ATTENTION_BATCHED_PARAMS);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_ATTENTION_F32_ATTENTION_H_
