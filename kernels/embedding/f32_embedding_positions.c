#include "kernels/embedding/f32_embedding_positions.h"

int ckw_f32_embedding_positions(float* restrict y, const int32_t* restrict tokens, const float* restrict table,
                                const float* restrict positions, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                int64_t n_ctx, int64_t offset) {
  const int rc = ckw_embedding_positions_check(tokens, B, T, D, vocab, n_ctx, offset);
  if (rc) return rc;
  for (int64_t i = 0; i < B * T; ++i) {
    const float* e = table + (int64_t)tokens[i] * D;
    const float* p = positions + (offset + i % T) * D;  // every sequence starts at offset
    float* yi = y + i * D;
    for (int64_t d = 0; d < D; ++d) yi[d] = e[d] + p[d];
  }
  return CKW_EMBEDDING_OK;
}

const char* ckw_f32_embedding_positions_strerror(int code) {
  switch (code) {
    case CKW_EMBEDDING_OK:
      return "ok";
    case CKW_EMBEDDING_ERR_TOKEN:
      return "token id outside [0, vocab): check the tokenizer matches the checkpoint";
    case CKW_EMBEDDING_ERR_POSITION:
      return "positions offset..offset+T exceed the decoder context n_ctx: start a new window";
    case CKW_EMBEDDING_ERR_SHAPE:
      return "negative B, T, D, vocab or n_ctx";
    default:
      return "unknown embedding error code";
  }
}
