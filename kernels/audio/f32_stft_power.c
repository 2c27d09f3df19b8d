// Run-time dispatch for ckw_f32_stft_power.
#include "kernels/audio/f32_stft_power.h"

#include <string.h>

#include "kernels/common/cpu.h"

int ckw_f32_stft_power_isa_supported(const char* isa) {
  if (strcmp(isa, "scalar") == 0) return ckw_cpu_has_scalar();
  if (strcmp(isa, "avx2") == 0) return ckw_cpu_has_avx2();
  if (strcmp(isa, "avx512") == 0) return ckw_cpu_has_avx512();
  return 0;
}

void ckw_f32_stft_power(float* power, int64_t ld_power, const float* x, int64_t n_samples, int64_t frame_begin,
                        int64_t n_frames, const float* window, const float* twiddles) {
  CKW_DISPATCH(ckw_f32_stft_power, power, ld_power, x, n_samples, frame_begin, n_frames, window, twiddles);
}
