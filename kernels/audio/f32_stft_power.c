// Run-time dispatch for ckw_f32_stft_power.
#include "kernels/audio/f32_stft_power.h"

#include <string.h>

int ckw_f32_stft_power_isa_supported(const char* isa) {
  if (strcmp(isa, "scalar") == 0) return 1;
#if defined(__x86_64__) || defined(__i386__)
  if (strcmp(isa, "avx2") == 0) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  if (strcmp(isa, "avx512") == 0) {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  }
#endif
  return 0;
}

void ckw_f32_stft_power(float* power, int64_t ld_power, const float* x, int64_t n_samples,
                        int64_t frame_begin, int64_t n_frames, const float* window,
                        const float* twiddles) {
  if (ckw_f32_stft_power_isa_supported("avx512")) {
    ckw_f32_stft_power__avx512(power, ld_power, x, n_samples, frame_begin, n_frames, window,
                               twiddles);
  } else if (ckw_f32_stft_power_isa_supported("avx2")) {
    ckw_f32_stft_power__avx2(power, ld_power, x, n_samples, frame_begin, n_frames, window,
                             twiddles);
  } else {
    ckw_f32_stft_power__scalar(power, ld_power, x, n_samples, frame_begin, n_frames, window,
                               twiddles);
  }
}
