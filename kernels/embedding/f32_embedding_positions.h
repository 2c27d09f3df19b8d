// ckw_f32_embedding_positions (op kind "embedding_positions"): Whisper's decoder input for B
// sequences of T tokens each, all at the same positions (the beams of a beam search),
//   y[b * T + t] = table[tokens[b, t]] + positions[offset + t],  b < B, t < T,
// table [vocab, D] (token embedding), positions [n_ctx, D] (learned), y [B * T, D] token-major.
// ckw_f32_embedding_positions_rows (op kind "embedding_positions_rows"): the same with each
// sequence at its own position (many independent sequences in one decoder step, docs/multi-stream.md),
//   y[b * T + t] = table[tokens[b, t]] + positions[pos[b] + t],  pos [B].
// Inputs are validated before anything is written: returns 0, or a negative
// CKW_EMBEDDING_ERR_* code (y untouched). One float add per element: exact w.r.t. numpy.
// Memory-bound; the baseline compiler vectorizes it, so there are no ISA variants.
#ifndef CKW_KERNELS_EMBEDDING_F32_EMBEDDING_POSITIONS_H_
#define CKW_KERNELS_EMBEDDING_F32_EMBEDDING_POSITIONS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_EMBEDDING_OK 0
#define CKW_EMBEDDING_ERR_TOKEN (-1)     // a token id is < 0 or >= vocab
#define CKW_EMBEDDING_ERR_POSITION (-2)  // a sequence's start (offset, or pos[b]) < 0, or start + T > n_ctx
#define CKW_EMBEDDING_ERR_SHAPE (-3)     // B, T, D, vocab or n_ctx negative

// The first position of sequence b: pos[b] (the _rows kernels, a position per sequence), or
// offset for every sequence when pos is NULL (the scalar-offset kernels).
static inline int64_t ckw_embedding_start(const int32_t* pos, int64_t offset, int64_t b) {
  return pos ? (int64_t)pos[b] : offset;
}

// The shared validation of the embedding_positions kernels (f32, bf16 and f16 tables; starts as
// in ckw_embedding_start): 0 or the code, shape before positions before tokens.
static inline int ckw_embedding_positions_check(const int32_t* tokens, const int32_t* pos, int64_t B, int64_t T,
                                                int64_t D, int64_t vocab, int64_t n_ctx, int64_t offset) {
  if (B < 0 || T < 0 || D < 0 || vocab < 0 || n_ctx < 0) return CKW_EMBEDDING_ERR_SHAPE;
  for (int64_t b = 0; b < (pos ? B : 1); ++b) {  // the one offset is checked even when B == 0
    const int64_t start = ckw_embedding_start(pos, offset, b);
    if (start < 0 || start > n_ctx - T) return CKW_EMBEDDING_ERR_POSITION;
  }
  for (int64_t i = 0; i < B * T; ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab) return CKW_EMBEDDING_ERR_TOKEN;
  return CKW_EMBEDDING_OK;
}

// The table value of the f32 kernels: the entry itself (the `widen` of CKW_EMBEDDING_POSITIONS_BODY).
static inline float ckw_embedding_f32(float v) { return v; }

// The body of every embedding_positions kernel: validation, then
//   y[b * T + t] = widen(table[tokens[b, t]]) + positions[start(b) + t]
// with start(b) from pos and offset (ckw_embedding_start). `widen` turns a table entry into its
// exact fp32 value (ckw_embedding_f32, ckw_bf16_to_f32, ckw_f16_to_f32), so a 16-bit table gives
// the f32 kernel's bits on the widened table.
#define CKW_EMBEDDING_POSITIONS_BODY(y, tokens, table, positions, pos, B, T, D, vocab, n_ctx, offset, widen) \
  do {                                                                                                       \
    const int rc_ = ckw_embedding_positions_check(tokens, pos, B, T, D, vocab, n_ctx, offset);               \
    if (rc_) return rc_;                                                                                     \
    for (int64_t b_ = 0; b_ < (B); ++b_) {                                                                   \
      const float* p_ = (positions) + ckw_embedding_start(pos, offset, b_) * (D);                            \
      for (int64_t t_ = 0; t_ < (T); ++t_, p_ += (D)) {                                                      \
        const int64_t i_ = b_ * (T) + t_;                                                                    \
        const int64_t e_ = (int64_t)(tokens)[i_] * (D);                                                      \
        float* y_ = (y) + i_ * (D);                                                                          \
        for (int64_t d_ = 0; d_ < (D); ++d_) y_[d_] = widen((table)[e_ + d_]) + p_[d_];                      \
      }                                                                                                      \
    }                                                                                                        \
    return CKW_EMBEDDING_OK;                                                                                 \
  } while (0)

int ckw_f32_embedding_positions(float* restrict y, const int32_t* restrict tokens, const float* restrict table,
                                const float* restrict positions, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                int64_t n_ctx, int64_t offset);
int ckw_f32_embedding_positions_rows(float* restrict y, const int32_t* restrict tokens, const float* restrict table,
                                     const float* restrict positions, const int32_t* restrict pos, int64_t B, int64_t T,
                                     int64_t D, int64_t vocab, int64_t n_ctx);
// The message of a CKW_EMBEDDING_* code (both kernels).
const char* ckw_f32_embedding_positions_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_EMBEDDING_F32_EMBEDDING_POSITIONS_H_
