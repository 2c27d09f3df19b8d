// Portable path: one frame at a time.
#include "kernels/audio/f32_stft_power.h"

#define STFT_NAME(x) x##__scalar
#define STFT_LANES 1
#define STFT_VEC float
#define STFT_TARGET
#include "kernels/audio/f32_stft_power_impl.inc"
