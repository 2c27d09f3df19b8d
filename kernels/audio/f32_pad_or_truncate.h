// Whisper's pad_or_trim on one channel: y = x[0 .. n_out) with zeros past n_in.
#ifndef CKW_KERNELS_AUDIO_F32_PAD_OR_TRUNCATE_H_
#define CKW_KERNELS_AUDIO_F32_PAD_OR_TRUNCATE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Whisper's 30 s window at 16 kHz; the circuit passes it (or n_in + it, for long-form) as
// the output dim.
#define CKW_AUDIO_N_SAMPLES 480000

// y[i] = i < n_in ? x[i] : 0 for i < n_out. y and x must not overlap. Negative lengths act
// as 0.
void ckw_f32_pad_or_truncate(float* y, int64_t n_out, const float* x, int64_t n_in);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_AUDIO_F32_PAD_OR_TRUNCATE_H_
