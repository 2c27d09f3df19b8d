// ckw_f32_embedding_positions (op kind "embedding_positions"): Whisper's decoder input for B
// sequences of T tokens each, all at the same positions (the beams of a beam search),
//   y[b * T + t] = table[tokens[b, t]] + positions[offset + t],  b < B, t < T,
// table [vocab, D] (token embedding), positions [n_ctx, D] (learned), y [B * T, D] token-major.
// Inputs are validated before anything is written: returns 0, or a negative
// CKW_EMBEDDING_ERR_* code (y untouched). One float add per element: exact w.r.t. numpy.
// Memory-bound; the baseline compiler vectorizes it, so there are no ISA variants.
#ifndef CKW_KERNELS_EMBEDDING_F32_EMBEDDING_POSITIONS_H_
#define CKW_KERNELS_EMBEDDING_F32_EMBEDDING_POSITIONS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_EMBEDDING_OK 0
#define CKW_EMBEDDING_ERR_TOKEN (-1)     // a token id is < 0 or >= vocab
#define CKW_EMBEDDING_ERR_POSITION (-2)  // offset < 0 or offset + T > n_ctx
#define CKW_EMBEDDING_ERR_SHAPE (-3)     // B, T, D, vocab or n_ctx negative

// The shared validation of the embedding_positions kernels (f32, bf16 and f16 tables): 0 or the code.
static inline int ckw_embedding_positions_check(const int32_t* tokens, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                                int64_t n_ctx, int64_t offset) {
  if (B < 0 || T < 0 || D < 0 || vocab < 0 || n_ctx < 0) return CKW_EMBEDDING_ERR_SHAPE;
  if (offset < 0 || offset > n_ctx - T) return CKW_EMBEDDING_ERR_POSITION;
  for (int64_t i = 0; i < B * T; ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab) return CKW_EMBEDDING_ERR_TOKEN;
  return CKW_EMBEDDING_OK;
}

// The body of an embedding_positions kernel whose table holds 16-bit values (bf16, f16): `widen`
// turns one into its exact fp32 value, so the result is the f32 kernel's on the widened table.
#define CKW_EMBEDDING_POSITIONS_WIDENED(y, tokens, table, positions, B, T, D, vocab, n_ctx, offset, widen) \
  do {                                                                                                     \
    const int rc_ = ckw_embedding_positions_check(tokens, B, T, D, vocab, n_ctx, offset);                  \
    if (rc_) return rc_;                                                                                   \
    for (int64_t i_ = 0; i_ < (B) * (T); ++i_) {                                                           \
      const uint16_t* e_ = (table) + (int64_t)(tokens)[i_] * (D);                                          \
      const float* p_ = (positions) + ((offset) + i_ % (T)) * (D); /* every sequence starts at offset */   \
      float* y_ = (y) + i_ * (D);                                                                          \
      for (int64_t d_ = 0; d_ < (D); ++d_) y_[d_] = widen(e_[d_]) + p_[d_];                                \
    }                                                                                                      \
    return CKW_EMBEDDING_OK;                                                                               \
  } while (0)

int ckw_f32_embedding_positions(float* restrict y, const int32_t* restrict tokens, const float* restrict table,
                                const float* restrict positions, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                int64_t n_ctx, int64_t offset);
const char* ckw_f32_embedding_positions_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_EMBEDDING_F32_EMBEDDING_POSITIONS_H_
