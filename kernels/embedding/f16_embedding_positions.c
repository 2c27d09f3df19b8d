#include "kernels/embedding/f16_embedding_positions.h"

#include "kernels/common/f16.h"

int ckw_f16_embedding_positions(float* restrict y, const int32_t* restrict tokens, const uint16_t* restrict table,
                                 const float* restrict positions, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                 int64_t n_ctx, int64_t offset) {
  const int rc = ckw_embedding_positions_check(tokens, B, T, D, vocab, n_ctx, offset);
  if (rc) return rc;
  for (int64_t i = 0; i < B * T; ++i) {
    const uint16_t* e = table + (int64_t)tokens[i] * D;
    const float* p = positions + (offset + i % T) * D;  // every sequence starts at offset
    float* yi = y + i * D;
    for (int64_t d = 0; d < D; ++d) yi[d] = ckw_f16_to_f32(e[d]) + p[d];
  }
  return CKW_EMBEDDING_OK;
}

// Same codes as the f32 kernel, so the same messages.
const char* ckw_f16_embedding_positions_strerror(int code) { return ckw_f32_embedding_positions_strerror(code); }
