// Naive kernels for the toy circuit: just enough arithmetic for the ABI tests.
#ifndef CKW_TOOLS_CODEGEN_TESTDATA_TOY_TOY_KERNELS_H_
#define CKW_TOOLS_CODEGEN_TESTDATA_TOY_TOY_KERNELS_H_

#include <stdint.h>

void ckw_f32_embed_positions(float *y, const int32_t *tokens, const float *table, const float *positions, int64_t T,
                             int64_t D, int64_t offset);
void ckw_f32_layer_norm(float *y, const float *x, const float *g, const float *b, int64_t M, int64_t D, float eps);
void ckw_f32_gemm_nt_bias(float *y, const float *x, const float *w, const float *b, int64_t M, int64_t N, int64_t K);
void ckw_f32_gemm_nt_bias_gelu(float *y, const float *x, const float *w, const float *b, int64_t M, int64_t N,
                               int64_t K);
void ckw_f32_attention(float *y, const float *q, const float *k, const float *v, int64_t T, int64_t H, int64_t Dh,
                       int64_t kv_stride, int64_t S, int64_t q0, int causal, float *scores);
void ckw_f32_token_to_head_major(float *y, const float *x, int64_t T, int64_t H, int64_t Dh, int64_t C, int64_t row0);
void ckw_f32_logits(float *y, const float *x, const float *w, int64_t M, int64_t V, int64_t D);

#endif  // CKW_TOOLS_CODEGEN_TESTDATA_TOY_TOY_KERNELS_H_
