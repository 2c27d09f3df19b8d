// ckw_f32_log_mel against the dense double-precision formula (filters @ power, log10, global
// max floor, scaling), with odd frame counts around the internal block size; chunked
// project + normalize must reproduce the one-shot bits; silence must land on the floor.
#include "kernels/audio/f32_log_mel.h"
#include "kernels/audio/f32_log_mel_contract.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/test_util.h"
#include "kernels/audio/f32_mel_filters.h"
#include "kernels/common/tolerance.h"

// Half of contract.tolerance_c in f32_log_mel.json (the torch reference there adds its own
// rounding), K = 201 (the filter dot product). The output is
// a log, so errors are relative to the mel values; the bound on max|ref| ~ 1 is loose only
// where the product is tiny, and the floor clips those.
#define TOLERANCE_C CKW_F32_LOG_MEL_TOLERANCE_C

static void naive_log_mel(float* y, const float* power, const float* filters, int n_mels, int n_freq, int64_t frames) {
  double* s = malloc((size_t)(n_mels * frames) * sizeof *s);
  double top = -INFINITY;
  for (int m = 0; m < n_mels; ++m) {
    for (int64_t t = 0; t < frames; ++t) {
      double mel = 0.0;
      for (int f = 0; f < n_freq; ++f) mel += (double)filters[m * n_freq + f] * power[f * frames + t];
      s[m * frames + t] = log10(fmax(mel, 1e-10));
      top = fmax(top, s[m * frames + t]);
    }
  }
  for (int64_t i = 0; i < n_mels * frames; ++i) y[i] = (float)((fmax(s[i], top - 8.0) + 4.0) / 4.0);
  free(s);
}

int main(void) {
  const int n_freq = 201;
  const int mel_counts[] = {80, 128};
  const int64_t frame_counts[] = {1, 7, 255, 256, 257, 3000};
  uint64_t rng = 17;
  for (int mi = 0; mi < 2; ++mi) {
    const int n_mels = mel_counts[mi];
    float* filters = malloc((size_t)(n_mels * n_freq) * sizeof *filters);
    ckw_f32_mel_filters(filters, n_mels, 400, 16000);
    for (size_t fi = 0; fi < sizeof frame_counts / sizeof frame_counts[0]; ++fi) {
      const int64_t frames = frame_counts[fi];
      float* power = malloc((size_t)(n_freq * frames) * sizeof *power);
      float* y = malloc((size_t)(n_mels * frames + 1) * sizeof *y);
      float* chunked = malloc((size_t)(n_mels * frames) * sizeof *chunked);
      float* ref = malloc((size_t)(n_mels * frames) * sizeof *ref);
      // Spectra spanning ~14 decades, so part of the output sits on the max - 8 floor.
      for (int64_t i = 0; i < n_freq * frames; ++i) {
        float u = test_rng_float(&rng);
        power[i] = powf(10.0f, 7.0f * u) * (u > 0.9f ? 100.0f : 1.0f);
      }
      y[n_mels * frames] = 9.0f;
      ckw_f32_log_mel(y, power, filters, n_mels, n_freq, frames);
      naive_log_mel(ref, power, filters, n_mels, n_freq, frames);
      char what[64];
      snprintf(what, sizeof what, "log_mel %d x %lld", n_mels, (long long)frames);
      EXPECT(ckw_check_close(what, y, ref, n_mels * frames, TOLERANCE_C, n_freq), "%s", what);
      EXPECT(y[n_mels * frames] == 9.0f, "%s wrote past the end", what);
      // Two passes over chunks of 5 frames, written into the full-width output.
      float top = -INFINITY;
      for (int64_t t0 = 0; t0 < frames; t0 += 5) {
        int64_t nt = frames - t0 < 5 ? frames - t0 : 5;
        ckw_f32_log_mel_project(chunked + t0, frames, power + t0, frames, filters, n_mels, n_freq, nt, &top);
      }
      ckw_f32_log_mel_normalize(chunked, frames, n_mels, frames, top);
      EXPECT(memcmp(chunked, y, (size_t)(n_mels * frames) * sizeof *y) == 0, "%s: chunked differs from one-shot", what);
      // A stream's blocks of 7 frames (each block its own [n_mels, nt] array): block peaks,
      // then each block clamped with their max, in place, give the one-shot bits.
      float peak = -INFINITY;
      float* block = malloc((size_t)(n_mels * 7) * sizeof *block);
      float* block_power = malloc((size_t)(n_freq * 7) * sizeof *block_power);
      for (int pass = 0; pass < 2; ++pass) {
        for (int64_t t0 = 0; t0 < frames; t0 += 7) {
          const int64_t nt = frames - t0 < 7 ? frames - t0 : 7;
          for (int f = 0; f < n_freq; ++f) {
            memcpy(block_power + f * nt, power + f * frames + t0, (size_t)nt * sizeof *power);
          }
          float block_peak = 0.0f;
          ckw_f32_log_mel_block(block, &block_peak, block_power, filters, n_mels, n_freq, nt);
          if (pass == 0) {
            peak = block_peak > peak ? block_peak : peak;
            continue;
          }
          ckw_f32_log_mel_clamp(block, block, &peak, n_mels, nt);
          int same = 1;
          for (int m = 0; m < n_mels; ++m) {
            same &= memcmp(block + m * nt, y + m * frames + t0, (size_t)nt * sizeof *y) == 0;
          }
          EXPECT(same, "%s: block at frame %lld differs from one-shot", what, (long long)t0);
        }
      }
      EXPECT(peak == top, "%s: block peaks %g, running max %g", what, peak, top);
      free(block), free(block_power);
      free(power), free(y), free(chunked), free(ref);
    }
    // Silence: every mel clamps to 1e-10, log -10, normalised (-10 + 4) / 4.
    float power0[201 * 3] = {0}, y0[128 * 3];
    ckw_f32_log_mel(y0, power0, filters, n_mels, n_freq, 3);
    int all = 1;
    for (int i = 0; i < n_mels * 3; ++i) all &= y0[i] == -1.5f;
    EXPECT(all, "silence must map to -1.5 everywhere, got %g", y0[0]);
    float peak0 = 0.0f;
    ckw_f32_log_mel_block(y0, &peak0, power0, filters, n_mels, n_freq, 0);
    EXPECT(isinf(peak0) && peak0 < 0, "no frames: peak -inf, got %g", peak0);
    free(filters);
  }
  return test_finish("f32_log_mel_test");
}
