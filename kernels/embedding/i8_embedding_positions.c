#include "kernels/embedding/i8_embedding_positions.h"

// Both kernels: pos NULL is every sequence at offset (ckw_embedding_start). The shared body of the
// other tables (CKW_EMBEDDING_POSITIONS_BODY) widens an entry alone; here the entry's row scale
// comes in too.
static int embed_(float* restrict y, const int32_t* restrict tokens, const int8_t* restrict table,
                  const float* restrict table_scale, const float* restrict positions, const int32_t* restrict pos,
                  int64_t B, int64_t T, int64_t D, int64_t vocab, int64_t n_ctx, int64_t offset) {
  const int rc = ckw_embedding_positions_check(tokens, pos, B, T, D, vocab, n_ctx, offset);
  if (rc) return rc;
  for (int64_t i = 0; i < B * T; ++i) {
    const int8_t* e = table + (int64_t)tokens[i] * D;
    const float s = table_scale[tokens[i]];
    const float* p = positions + (ckw_embedding_start(pos, offset, i / T) + i % T) * D;
    for (int64_t d = 0; d < D; ++d) y[i * D + d] = (float)e[d] * s + p[d];
  }
  return CKW_EMBEDDING_OK;
}

int ckw_i8_embedding_positions(float* restrict y, const int32_t* restrict tokens, const int8_t* restrict table,
                               const float* restrict table_scale, const float* restrict positions, int64_t B, int64_t T,
                               int64_t D, int64_t vocab, int64_t n_ctx, int64_t offset) {
  return embed_(y, tokens, table, table_scale, positions, NULL, B, T, D, vocab, n_ctx, offset);
}

int ckw_i8_embedding_positions_rows(float* restrict y, const int32_t* restrict tokens, const int8_t* restrict table,
                                    const float* restrict table_scale, const float* restrict positions,
                                    const int32_t* restrict pos, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                    int64_t n_ctx) {
  return embed_(y, tokens, table, table_scale, positions, pos, B, T, D, vocab, n_ctx, 0);
}

// Same codes as the f32 kernel, so the same messages.
const char* ckw_i8_embedding_positions_strerror(int code) { return ckw_f32_embedding_positions_strerror(code); }
