// ckw_i8_embedding_positions (op kind "embedding_positions"): ckw_f32_embedding_positions with the
// token table in int8 ([vocab, D], symmetric in [-127, 127]) and a scale per row (table_scale
// [vocab], f32): the int8 build's table, which the i8w logits GEMM shares (w = table, w_scale =
// table_scale); positions stay fp32:
//   y[b * T + t] = (float)table[tok] * table_scale[tok] + positions[offset + t],  tok = tokens[b, t],
// one f32 multiply and one f32 add (no FMA). ckw_i8_embedding_positions_rows (op kind
// "embedding_positions_rows"): the same with each sequence at its own position, positions[pos[b] + t]
// (ckw_f32_embedding_positions_rows). Same validation and CKW_EMBEDDING_* codes (y untouched on error).
#ifndef CKW_KERNELS_EMBEDDING_I8_EMBEDDING_POSITIONS_H_
#define CKW_KERNELS_EMBEDDING_I8_EMBEDDING_POSITIONS_H_

#include <stdint.h>

#include "kernels/embedding/f32_embedding_positions.h"

#ifdef __cplusplus
extern "C" {
#endif

int ckw_i8_embedding_positions(float* restrict y, const int32_t* restrict tokens, const int8_t* restrict table,
                               const float* restrict table_scale, const float* restrict positions, int64_t B, int64_t T,
                               int64_t D, int64_t vocab, int64_t n_ctx, int64_t offset);
int ckw_i8_embedding_positions_rows(float* restrict y, const int32_t* restrict tokens, const int8_t* restrict table,
                                    const float* restrict table_scale, const float* restrict positions,
                                    const int32_t* restrict pos, int64_t B, int64_t T, int64_t D, int64_t vocab,
                                    int64_t n_ctx);
// The message of a CKW_EMBEDDING_* code (both kernels).
const char* ckw_i8_embedding_positions_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_EMBEDDING_I8_EMBEDDING_POSITIONS_H_
