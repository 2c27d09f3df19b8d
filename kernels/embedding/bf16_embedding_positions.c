#include "kernels/embedding/bf16_embedding_positions.h"

#include "kernels/common/bf16.h"

int ckw_bf16_embedding_positions(float* restrict y, const int32_t* restrict tokens, const uint16_t* restrict table,
                                 const float* restrict positions, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                 int64_t n_ctx, int64_t offset) {
  CKW_EMBEDDING_POSITIONS_BODY(y, tokens, table, positions, NULL, B, T, D, vocab, n_ctx, offset, ckw_bf16_to_f32);
}

int ckw_bf16_embedding_positions_rows(float* restrict y, const int32_t* restrict tokens, const uint16_t* restrict table,
                                      const float* restrict positions, const int32_t* restrict pos, int64_t B,
                                      int64_t T, int64_t D, int64_t vocab, int64_t n_ctx) {
  CKW_EMBEDDING_POSITIONS_BODY(y, tokens, table, positions, pos, B, T, D, vocab, n_ctx, 0, ckw_bf16_to_f32);
}

// Same codes as the f32 kernel, so the same messages.
const char* ckw_bf16_embedding_positions_strerror(int code) { return ckw_f32_embedding_positions_strerror(code); }
