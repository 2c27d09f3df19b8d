// 8 frames per AVX2 vector.
#include "kernels/audio/f32_stft_power.h"

#if defined(__x86_64__) || defined(__i386__)
#define STFT_NAME(x) x##__avx2
#define STFT_LANES 8
#define STFT_VEC float __attribute__((vector_size(32)))
#define STFT_TARGET __attribute__((target("avx2,fma")))
#include "kernels/audio/f32_stft_power_impl.inc"
#else
void ckw_f32_stft_power__avx2(float* power, int64_t ld_power, const float* x, int64_t n_samples, int64_t frame_begin,
                              int64_t n_frames, const float* window, const float* twiddles) {
  ckw_f32_stft_power__scalar(power, ld_power, x, n_samples, frame_begin, n_frames, window, twiddles);
}
#endif
