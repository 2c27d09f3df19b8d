// Slaney-style mel filterbank, as librosa.filters.mel(sr, n_fft, n_mels) builds it (fmin 0,
// fmax sr / 2, htk=False, norm="slaney") and openai-whisper ships in mel_filters.npz
// (80 and 128 bands at sr 16000, n_fft 400).
#ifndef CKW_KERNELS_AUDIO_F32_MEL_FILTERS_H_
#define CKW_KERNELS_AUDIO_F32_MEL_FILTERS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// filters[m * (n_fft / 2 + 1) + f]: weight of FFT bin f (frequency f * sr / n_fft) in band
// m: a triangle from mel point m to m + 2 of n_mels + 2 points evenly spaced on the Slaney
// mel scale over [0, sr / 2], scaled by 2 / (its width in Hz). Non-positive sizes write
// nothing.
void ckw_f32_mel_filters(float* filters, int64_t n_mels, int64_t n_fft, int64_t sample_rate);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_AUDIO_F32_MEL_FILTERS_H_
