// Naive reference arithmetic for the toy circuit (test only; the real kernels live in kernels/).
#include "tools/codegen/testdata/toy/toy_kernels.h"

#include <math.h>

void ckw_f32_embed_positions(float *y, const int32_t *tokens, const float *table, const float *positions, int64_t T,
                             int64_t D, int64_t offset) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t d = 0; d < D; ++d) y[t * D + d] = table[tokens[t] * D + d] + positions[(offset + t) * D + d];
}

void ckw_f32_layer_norm(float *y, const float *x, const float *g, const float *b, int64_t M, int64_t D, float eps) {
  for (int64_t m = 0; m < M; ++m) {
    double mean = 0, var = 0;
    for (int64_t d = 0; d < D; ++d) mean += x[m * D + d];
    mean /= (double)D;
    for (int64_t d = 0; d < D; ++d) var += (x[m * D + d] - mean) * (x[m * D + d] - mean);
    double inv = 1.0 / sqrt(var / (double)D + eps);
    for (int64_t d = 0; d < D; ++d) y[m * D + d] = (float)((x[m * D + d] - mean) * inv) * g[d] + b[d];
  }
}

void ckw_f32_gemm_nt_bias(float *y, const float *x, const float *w, const float *b, int64_t M, int64_t N, int64_t K) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = b[n];
      for (int64_t k = 0; k < K; ++k) acc += x[m * K + k] * w[n * K + k];
      y[m * N + n] = acc;
    }
}

void ckw_f32_gemm_nt_bias_gelu(float *y, const float *x, const float *w, const float *b, int64_t M, int64_t N,
                               int64_t K) {
  ckw_f32_gemm_nt_bias(y, x, w, b, M, N, K);
  for (int64_t i = 0; i < M * N; ++i) y[i] = 0.5f * y[i] * (1.0f + erff(y[i] / sqrtf(2.0f)));
}

void ckw_f32_attention(float *y, const float *q, const float *k, const float *v, int64_t T, int64_t H, int64_t Dh,
                       int64_t kv_stride, int64_t S, int64_t q0, int causal, float *scores) {
  const float scale = 1.0f / sqrtf((float)Dh);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t n = causal ? q0 + t + 1 : S;
      float max = -INFINITY, sum = 0;
      for (int64_t s = 0; s < n; ++s) {
        float acc = 0;
        for (int64_t d = 0; d < Dh; ++d) acc += q[t * H * Dh + h * Dh + d] * k[(h * kv_stride + s) * Dh + d];
        scores[t * S + s] = acc * scale;
        if (scores[t * S + s] > max) max = scores[t * S + s];
      }
      for (int64_t s = 0; s < n; ++s) sum += scores[t * S + s] = expf(scores[t * S + s] - max);
      for (int64_t d = 0; d < Dh; ++d) {
        float acc = 0;
        for (int64_t s = 0; s < n; ++s) acc += scores[t * S + s] * v[(h * kv_stride + s) * Dh + d];
        y[t * H * Dh + h * Dh + d] = acc / sum;
      }
    }
}

void ckw_f32_token_to_head_major(float *y, const float *x, int64_t T, int64_t H, int64_t Dh, int64_t C, int64_t row0) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < Dh; ++d) y[(h * C + row0 + t) * Dh + d] = x[t * H * Dh + h * Dh + d];
}

void ckw_f32_logits(float *y, const float *x, const float *w, int64_t M, int64_t V, int64_t D) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < V; ++n) {
      float acc = 0;
      for (int64_t d = 0; d < D; ++d) acc += x[m * D + d] * w[n * D + d];
      y[m * V + n] = acc;
    }
}
