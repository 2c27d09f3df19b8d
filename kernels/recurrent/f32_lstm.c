#include "kernels/recurrent/f32_lstm.h"

#include <math.h>
#include <string.h>

#include "kernels/common/cpu.h"

int64_t ckw_f32_lstm_scratch_bytes(int64_t H) { return H > 0 ? 4 * H * (int64_t)sizeof(float) : 0; }

// e = exp(-|x|) <= 1 never overflows: 1 / (1 + e) for x >= 0, e / (1 + e) below.
static inline float ckw_lstm_sigmoid_(float x) {
  const float e = expf(-fabsf(x));
  return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}

void ckw_f32_lstm__scalar(float* y, float* h_out, float* c_out, const float* gx, const float* w, const float* h,
                          const float* c, void* scratch, int64_t N, int64_t H) {
  if (H <= 0) return;
  if (c_out != c) memmove(c_out, c, sizeof(float) * (size_t)H);
  float* g = (float*)scratch;
  const float* hp = h;  // the state before step n: h, then y's previous row
  for (int64_t n = 0; n < N; ++n) {
    const float* gxn = gx + n * 4 * H;
    // Four rows at a time (4H is a multiple of 4), each row one sequential sum over k.
    for (int64_t r = 0; r < 4 * H; r += 4) {
      const float *w0 = w + r * H, *w1 = w0 + H, *w2 = w1 + H, *w3 = w2 + H;
      float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
      for (int64_t k = 0; k < H; ++k) {
        const float hk = hp[k];
        s0 += w0[k] * hk;
        s1 += w1[k] * hk;
        s2 += w2[k] * hk;
        s3 += w3[k] * hk;
      }
      g[r] = gxn[r] + s0;
      g[r + 1] = gxn[r + 1] + s1;
      g[r + 2] = gxn[r + 2] + s2;
      g[r + 3] = gxn[r + 3] + s3;
    }
    float* yn = y + n * H;
    for (int64_t j = 0; j < H; ++j) {
      const float i = ckw_lstm_sigmoid_(g[j]), f = ckw_lstm_sigmoid_(g[H + j]);
      const float u = tanhf(g[2 * H + j]), o = ckw_lstm_sigmoid_(g[3 * H + j]);
      const float cj = f * c_out[j] + i * u;
      c_out[j] = cj;
      yn[j] = o * tanhf(cj);
    }
    hp = yn;
  }
  if (h_out != hp) memmove(h_out, hp, sizeof(float) * (size_t)H);
}

void ckw_f32_lstm(float* y, float* h_out, float* c_out, const float* gx, const float* w, const float* h, const float* c,
                  void* scratch, int64_t N, int64_t H) {
  CKW_DISPATCH(ckw_f32_lstm, y, h_out, c_out, gx, w, h, c, scratch, N, H);
}
