// Whisper's log-mel normalisation (openai-whisper audio.log_mel_spectrogram):
//   mel = filters @ power;  s = log10(max(mel, 1e-10));
//   s = max(s, max(s) - 8);  y = (s + 4) / 4
// with power [n_freq, T] from ckw_f32_stft_power and filters [n_mels, n_freq] from
// ckw_f32_mel_filters; y is [n_mels, T] (channel_major).
//
// max(s) runs over the whole spectrogram, so a long recording takes two passes:
// ckw_f32_log_mel_project() per chunk of frames (keeps a running max), then
// ckw_f32_log_mel_normalize() once. ckw_f32_log_mel() does both for one buffer; chunked and
// one-shot results are identical.
#ifndef CKW_KERNELS_AUDIO_F32_LOG_MEL_H_
#define CKW_KERNELS_AUDIO_F32_LOG_MEL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// One shot: y[m * n_frames + t].
void ckw_f32_log_mel(float* y, const float* power, const float* filters, int64_t n_mels, int64_t n_freq,
                     int64_t n_frames);

// Pass 1 on a chunk: y[m * ld_y + t] = log10(max(sum_f filters[m][f] power[f * ld_power + t],
// 1e-10)) for t < n_frames, and *running_max = max(*running_max, all of them). Start
// *running_max at -INFINITY. Only nonzero filter weights are visited (same sum as the dense
// product: the skipped terms are exact zeros).
void ckw_f32_log_mel_project(float* y, int64_t ld_y, const float* power, int64_t ld_power, const float* filters,
                             int64_t n_mels, int64_t n_freq, int64_t n_frames, float* running_max);

// Pass 2, in place: y = (max(y, running_max - 8) + 4) / 4 for y[m * ld_y + t], t < n_frames.
void ckw_f32_log_mel_normalize(float* y, int64_t ld_y, int64_t n_mels, int64_t n_frames, float running_max);

// A stream's blocks (the frontend's mel_peak and mel_block phases): pass 1 on one block of
// frames, y[m * n_frames + t] as ckw_f32_log_mel_project, *peak = their max (-INFINITY when
// n_frames is 0); the recording's peak is the max over its blocks.
void ckw_f32_log_mel_block(float* y, float* peak, const float* power, const float* filters, int64_t n_mels,
                           int64_t n_freq, int64_t n_frames);

// Pass 2 with the recording's peak: y = (max(x, peak[0] - 8) + 4) / 4 over [n_mels, n_frames],
// the bits of ckw_f32_log_mel_normalize. y may be x.
void ckw_f32_log_mel_clamp(float* y, const float* x, const float* peak, int64_t n_mels, int64_t n_frames);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_AUDIO_F32_LOG_MEL_H_
