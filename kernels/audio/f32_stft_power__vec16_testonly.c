// Test-only instantiation with 16 frames per vector and no target attribute (GCC lowers the
// vectors to SSE2), so the AVX-512 variant's lane logic is exercised on any x86-64 machine.
// Built with -Wno-psabi: its static helpers pass 64-byte vectors, which GCC notes.
#include "kernels/audio/f32_stft_power.h"

void ckw_f32_stft_power__vec16(float* power, int64_t ld_power, const float* x, int64_t n_samples, int64_t frame_begin,
                               int64_t n_frames, const float* window, const float* twiddles);

#define STFT_NAME(x) x##__vec16
#define STFT_LANES 16
#define STFT_VEC float __attribute__((vector_size(64)))
#define STFT_TARGET
#include "kernels/audio/f32_stft_power_impl.inc"
