// Constant tables for ckw_f32_stft_power (Whisper's STFT: n_fft 400, hop 160), computed in
// double and rounded once, so no kernel holds global state.
#ifndef CKW_KERNELS_AUDIO_F32_STFT_TABLES_H_
#define CKW_KERNELS_AUDIO_F32_STFT_TABLES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_STFT_N_FFT 400
#define CKW_STFT_HOP 160
#define CKW_STFT_N_FREQ 201                     // n_fft / 2 + 1 one-sided bins
#define CKW_STFT_TWIDDLES (2 * CKW_STFT_N_FFT)  // floats in the twiddle table

// window[i] = 0.5 - 0.5 cos(2 pi i / 400), i < 400 (periodic Hann, torch.hann_window(400));
// twiddles[2j], twiddles[2j + 1] = cos(2 pi j / 400), -sin(2 pi j / 400), j < 400.
void ckw_f32_stft_tables(float* window, float* twiddles);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_AUDIO_F32_STFT_TABLES_H_
