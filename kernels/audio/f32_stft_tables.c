#include "kernels/audio/f32_stft_tables.h"

#include <math.h>

#define PI 3.14159265358979323846

// cos and sin of 2 pi j / 400, from an angle reduced to [0, pi/4] so the table keeps its
// symmetries exactly (twiddle 100 is exactly (0, -1), window[j] == window[400 - j]).
static void cos_sin(int j, double* c, double* s) {
  int quarter = j / 100, r = j % 100;  // angle = quarter * pi/2 + r * pi/200
  double cr, sr;
  if (r <= 50) {
    cr = cos(PI * r / 200.0);
    sr = sin(PI * r / 200.0);
  } else {
    cr = sin(PI * (100 - r) / 200.0);
    sr = cos(PI * (100 - r) / 200.0);
  }
  switch (quarter) {
    case 0:
      *c = cr, *s = sr;
      break;
    case 1:
      *c = -sr, *s = cr;
      break;
    case 2:
      *c = -cr, *s = -sr;
      break;
    default:
      *c = sr, *s = -cr;
      break;
  }
}

void ckw_f32_stft_tables(float* restrict window, float* restrict twiddles) {
  for (int j = 0; j < CKW_STFT_N_FFT; ++j) {
    double c, s;
    cos_sin(j, &c, &s);
    window[j] = (float)(0.5 - 0.5 * c);
    twiddles[2 * j] = (float)c;
    twiddles[2 * j + 1] = (float)-s;
  }
}
