// ckw_f32_mel_filters against a naive construction that follows librosa's steps literally
// (whole arrays of mel points, FFT frequencies and ramps), plus filterbank properties that
// hold regardless of the formula: contiguous triangles in ascending order, unit area in Hz.
#include "kernels/audio/f32_mel_filters.h"
#include "kernels/audio/f32_mel_filters_contract.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/common/test_util.h"
#include "kernels/common/tolerance.h"

#define TOLERANCE_C CKW_F32_MEL_FILTERS_TOLERANCE_C

static double naive_hz_to_mel(double f) {
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, logstep = log(6.4) / 27.0;
  if (f < min_log_hz) return f / f_sp;
  return min_log_hz / f_sp + log(f / min_log_hz) / logstep;
}

static double naive_mel_to_hz(double m) {
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, logstep = log(6.4) / 27.0;
  const double min_log_mel = min_log_hz / f_sp;
  if (m < min_log_mel) return f_sp * m;
  return min_log_hz * exp(logstep * (m - min_log_mel));
}

static void naive_filters(float* out, int n_mels, int n_fft, int sr) {
  const int n_freq = n_fft / 2 + 1;
  double* mel_f = malloc((size_t)(n_mels + 2) * sizeof *mel_f);
  double* fft_f = malloc((size_t)n_freq * sizeof *fft_f);
  const double top = naive_hz_to_mel(sr / 2.0);
  for (int i = 0; i < n_mels + 2; ++i) {
    mel_f[i] = naive_mel_to_hz(i == n_mels + 1 ? top : i * (top / (n_mels + 1)));
  }
  for (int f = 0; f < n_freq; ++f) fft_f[f] = f * (1.0 / (n_fft * (1.0 / sr)));
  for (int m = 0; m < n_mels; ++m) {
    for (int f = 0; f < n_freq; ++f) {
      double lower = -(mel_f[m] - fft_f[f]) / (mel_f[m + 1] - mel_f[m]);
      double upper = (mel_f[m + 2] - fft_f[f]) / (mel_f[m + 2] - mel_f[m + 1]);
      double w = fmax(0.0, fmin(lower, upper));
      out[m * n_freq + f] = (float)((double)(float)w * (2.0 / (mel_f[m + 2] - mel_f[m])));
    }
  }
  free(mel_f), free(fft_f);
}

static void check(int n_mels, int n_fft, int sr) {
  const int n_freq = n_fft / 2 + 1;
  float* got = malloc((size_t)(n_mels * n_freq) * sizeof *got);
  float* ref = malloc((size_t)(n_mels * n_freq) * sizeof *ref);
  ckw_f32_mel_filters(got, n_mels, n_fft, sr);
  naive_filters(ref, n_mels, n_fft, sr);
  char what[64];
  snprintf(what, sizeof what, "mel %d x %d @ %d Hz", n_mels, n_freq, sr);
  EXPECT(ckw_check_close(what, got, ref, (int64_t)n_mels * n_freq, TOLERANCE_C, 1), "%s", what);
  const double bin_hz = (double)sr / n_fft;
  int prev_peak = -1;
  for (int m = 0; m < n_mels; ++m) {
    const float* w = got + m * n_freq;
    int first = -1, last = -1, peak = 0, negative = 0;
    double area = 0.0;
    for (int f = 0; f < n_freq; ++f) {
      negative |= w[f] < 0.0f;
      if (w[f] > 0.0f) {
        if (first < 0) first = f;
        last = f;
      }
      if (w[f] > w[peak]) peak = f;
      area += w[f] * bin_hz;
    }
    EXPECT(!negative, "%s band %d has negative weights", what, m);
    for (int f = first; f >= 0 && f <= last; ++f) {
      EXPECT(w[f] > 0.0f, "%s band %d has a hole at bin %d", what, m, f);
    }
    EXPECT(peak >= prev_peak, "%s band %d peaks below band %d", what, m, m - 1);
    prev_peak = peak;
    // Slaney normalisation: each triangle has unit area in Hz, up to sampling error when
    // the band spans a few bins.
    if (last - first >= 6) EXPECT(fabs(area - 1.0) < 0.05, "%s band %d area %g", what, m, area);
  }
  free(got), free(ref);
}

int main(void) {
  check(80, 400, 16000);
  check(128, 400, 16000);
  check(40, 512, 22050);  // other shapes still follow librosa
  check(1, 16, 8000);
  return test_finish("f32_mel_filters_test");
}
