// ckw_f32_stft_tables against cos/sin evaluated directly in double: each entry within half
// an ulp-ish of the exact value, plus the exact symmetries the FFT relies on.
#include "kernels/audio/f32_stft_tables.h"
#include "kernels/audio/f32_stft_tables_contract.h"

#include <math.h>

#include "kernels/common/test_util.h"
#include "kernels/common/tolerance.h"

#define TOLERANCE_C CKW_F32_STFT_TABLES_TOLERANCE_C

int main(void) {
  static float window[CKW_STFT_N_FFT], twiddles[CKW_STFT_TWIDDLES];
  static float ref_w[CKW_STFT_N_FFT], ref_t[CKW_STFT_TWIDDLES];
  ckw_f32_stft_tables(window, twiddles);
  for (int j = 0; j < CKW_STFT_N_FFT; ++j) {
    double a = 2.0 * 3.14159265358979323846 * j / CKW_STFT_N_FFT;
    ref_w[j] = (float)(0.5 - 0.5 * cos(a));
    ref_t[2 * j] = (float)cos(a);
    ref_t[2 * j + 1] = (float)-sin(a);
  }
  EXPECT(ckw_check_close("window", window, ref_w, CKW_STFT_N_FFT, TOLERANCE_C, 1), "window");
  EXPECT(ckw_check_close("twiddles", twiddles, ref_t, CKW_STFT_TWIDDLES, TOLERANCE_C, 1), "twiddles");
  EXPECT(window[0] == 0.0f && window[200] == 1.0f, "window ends %g %g", window[0], window[200]);
  for (int j = 1; j < CKW_STFT_N_FFT; ++j) {
    EXPECT(window[j] == window[CKW_STFT_N_FFT - j], "window not symmetric at %d", j);
    // W^(400 - j) = conj(W^j), W^(j + 100) = -i W^j.
    EXPECT(twiddles[2 * j] == twiddles[2 * (400 - j)] && twiddles[2 * j + 1] == -twiddles[2 * (400 - j) + 1],
           "conjugate symmetry at %d", j);
    int k = (j + 100) % 400;
    EXPECT(twiddles[2 * k] == twiddles[2 * j + 1] && twiddles[2 * k + 1] == -twiddles[2 * j],
           "quarter-turn symmetry at %d", j);
  }
  EXPECT(twiddles[200] == 0.0f && twiddles[201] == -1.0f, "W^100 must be exactly -i");
  return test_finish("f32_stft_tables_test");
}
