#include "kernels/audio/f32_log_mel.h"

#include <math.h>

#define BLOCK 256  // frames accumulated at once; the inner loop runs over contiguous frames

void ckw_f32_log_mel_project(float* restrict y, int64_t ld_y, const float* restrict power, int64_t ld_power,
                             const float* restrict filters, int64_t n_mels, int64_t n_freq, int64_t n_frames,
                             float* restrict running_max) {
  float best = *running_max;
  float acc[BLOCK];
  for (int64_t m = 0; m < n_mels; ++m) {
    const float* w = filters + m * n_freq;
    int64_t lo = 0, hi = n_freq;  // the band's nonzero span
    while (lo < hi && w[lo] == 0.0f) ++lo;
    while (hi > lo && w[hi - 1] == 0.0f) --hi;
    for (int64_t t0 = 0; t0 < n_frames; t0 += BLOCK) {
      const int64_t nt = n_frames - t0 < BLOCK ? n_frames - t0 : BLOCK;
      for (int64_t t = 0; t < nt; ++t) acc[t] = 0.0f;
      for (int64_t f = lo; f < hi; ++f) {
        const float wf = w[f];
        const float* p = power + f * ld_power + t0;
        for (int64_t t = 0; t < nt; ++t) acc[t] += wf * p[t];
      }
      float* out = y + m * ld_y + t0;
      for (int64_t t = 0; t < nt; ++t) {
        const float v = log10f(acc[t] > 1e-10f ? acc[t] : 1e-10f);
        out[t] = v;
        if (v > best) best = v;
      }
    }
  }
  *running_max = best;
}

void ckw_f32_log_mel_normalize(float* restrict y, int64_t ld_y, int64_t n_mels, int64_t n_frames, float running_max) {
  const float floor_value = running_max - 8.0f;
  for (int64_t m = 0; m < n_mels; ++m) {
    float* row = y + m * ld_y;
    for (int64_t t = 0; t < n_frames; ++t) {
      const float v = row[t] > floor_value ? row[t] : floor_value;
      row[t] = (v + 4.0f) / 4.0f;
    }
  }
}

void ckw_f32_log_mel_block(float* restrict y, float* restrict peak, const float* restrict power,
                           const float* restrict filters, int64_t n_mels, int64_t n_freq, int64_t n_frames) {
  *peak = -INFINITY;
  ckw_f32_log_mel_project(y, n_frames, power, n_frames, filters, n_mels, n_freq, n_frames, peak);
}

void ckw_f32_log_mel_clamp(float* y, const float* x, const float* peak, int64_t n_mels, int64_t n_frames) {
  const float floor_value = peak[0] - 8.0f;
  for (int64_t i = 0; i < n_mels * n_frames; ++i) {
    const float v = x[i] > floor_value ? x[i] : floor_value;
    y[i] = (v + 4.0f) / 4.0f;
  }
}

void ckw_f32_log_mel(float* restrict y, const float* restrict power, const float* restrict filters, int64_t n_mels,
                     int64_t n_freq, int64_t n_frames) {
  float running_max = -INFINITY;
  ckw_f32_log_mel_project(y, n_frames, power, n_frames, filters, n_mels, n_freq, n_frames, &running_max);
  ckw_f32_log_mel_normalize(y, n_frames, n_mels, n_frames, running_max);
}
