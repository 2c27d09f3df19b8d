// ckw_bf16_embedding_positions (op kind "embedding_positions"): ckw_f32_embedding_positions with
// the token table in bf16 (uint16_t bit patterns; the table the bf16w logits GEMM shares), widened
// exactly; positions stay fp32:
//   y[b * T + t] = widen(table[tokens[b, t]]) + positions[offset + t],  b < B, t < T.
// ckw_bf16_embedding_positions_rows (op kind "embedding_positions_rows"): the same with each
// sequence at its own position, positions[pos[b] + t] (ckw_f32_embedding_positions_rows).
// Same validation and CKW_EMBEDDING_* codes (y untouched on error); one float add per element:
// exact w.r.t. numpy on the widened table.
#ifndef CKW_KERNELS_EMBEDDING_BF16_EMBEDDING_POSITIONS_H_
#define CKW_KERNELS_EMBEDDING_BF16_EMBEDDING_POSITIONS_H_

#include <stdint.h>

#include "kernels/embedding/f32_embedding_positions.h"

#ifdef __cplusplus
extern "C" {
#endif

int ckw_bf16_embedding_positions(float* restrict y, const int32_t* restrict tokens, const uint16_t* restrict table,
                                 const float* restrict positions, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                 int64_t n_ctx, int64_t offset);
int ckw_bf16_embedding_positions_rows(float* restrict y, const int32_t* restrict tokens, const uint16_t* restrict table,
                                      const float* restrict positions, const int32_t* restrict pos, int64_t B,
                                      int64_t T, int64_t D, int64_t vocab, int64_t n_ctx);
// The message of a CKW_EMBEDDING_* code (both kernels).
const char* ckw_bf16_embedding_positions_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_EMBEDDING_BF16_EMBEDDING_POSITIONS_H_
