#include "kernels/embedding/f32_embedding_positions.h"

int ckw_f32_embedding_positions(float* restrict y, const int32_t* restrict tokens, const float* restrict table,
                                const float* restrict positions, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                int64_t n_ctx, int64_t offset) {
  CKW_EMBEDDING_POSITIONS_BODY(y, tokens, table, positions, NULL, B, T, D, vocab, n_ctx, offset, ckw_embedding_f32);
}

int ckw_f32_embedding_positions_rows(float* restrict y, const int32_t* restrict tokens, const float* restrict table,
                                     const float* restrict positions, const int32_t* restrict pos, int64_t B, int64_t T,
                                     int64_t D, int64_t vocab, int64_t n_ctx) {
  CKW_EMBEDDING_POSITIONS_BODY(y, tokens, table, positions, pos, B, T, D, vocab, n_ctx, 0, ckw_embedding_f32);
}

const char* ckw_f32_embedding_positions_strerror(int code) {
  switch (code) {
    case CKW_EMBEDDING_OK:
      return "ok";
    case CKW_EMBEDDING_ERR_TOKEN:
      return "token id outside [0, vocab): check the tokenizer matches the checkpoint";
    case CKW_EMBEDDING_ERR_POSITION:
      return "positions start..start+T of a sequence (offset, or pos[b]) exceed the decoder context n_ctx: start a "
             "new window";
    case CKW_EMBEDDING_ERR_SHAPE:
      return "negative B, T, D, vocab or n_ctx";
    default:
      return "unknown embedding error code";
  }
}
