#include "kernels/audio/f32_mel_filters.h"

#include <math.h>

// Slaney's scale: linear (200/3 Hz per mel) below 1 kHz, logarithmic above.
#define F_SP (200.0 / 3.0)
#define MIN_LOG_HZ 1000.0
#define MIN_LOG_MEL (MIN_LOG_HZ / F_SP)

static double log_step(void) { return log(6.4) / 27.0; }

static double hz_to_mel(double hz) {
  return hz >= MIN_LOG_HZ ? MIN_LOG_MEL + log(hz / MIN_LOG_HZ) / log_step() : hz / F_SP;
}

static double mel_to_hz(double mel) {
  return mel >= MIN_LOG_MEL ? MIN_LOG_HZ * exp(log_step() * (mel - MIN_LOG_MEL)) : F_SP * mel;
}

// Mel point i of n + 2 from 0 to max_mel, spaced as numpy.linspace spaces them (i * step,
// last point exact), so the result can match librosa's bit for bit.
static double mel_point(int64_t i, int64_t n_points, double max_mel) {
  if (i == n_points - 1) return mel_to_hz(max_mel);
  return mel_to_hz((double)i * (max_mel / (double)(n_points - 1)));
}

void ckw_f32_mel_filters(float* restrict filters, int64_t n_mels, int64_t n_fft, int64_t sample_rate) {
  if (n_mels <= 0 || n_fft <= 0 || sample_rate <= 0) return;
  const int64_t n_freq = n_fft / 2 + 1;
  const double max_mel = hz_to_mel((double)sample_rate / 2.0);
  // numpy.fft.rfftfreq's bin spacing, rounded the same way.
  const double bin_hz = 1.0 / ((double)n_fft * (1.0 / (double)sample_rate));
  for (int64_t m = 0; m < n_mels; ++m) {
    const double lo = mel_point(m, n_mels + 2, max_mel);
    const double mid = mel_point(m + 1, n_mels + 2, max_mel);
    const double hi = mel_point(m + 2, n_mels + 2, max_mel);
    const double enorm = 2.0 / (hi - lo);
    for (int64_t f = 0; f < n_freq; ++f) {
      const double hz = (double)f * bin_hz;
      const double rising = -(lo - hz) / (mid - lo);
      const double falling = (hi - hz) / (hi - mid);
      double tri = rising < falling ? rising : falling;
      if (!(tri > 0.0)) tri = 0.0;
      // librosa stores the triangle as float32 before scaling it in double; so do we.
      filters[m * n_freq + f] = (float)((double)(float)tri * enorm);
    }
  }
}
