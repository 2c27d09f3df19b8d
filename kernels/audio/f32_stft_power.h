// Power spectrogram matching openai-whisper's
//   torch.stft(x, 400, 160, window=hann_window(400), center=True, pad_mode="reflect")
//   .abs() ** 2, last frame dropped:
// frame t covers x[t*160 - 200 .. t*160 + 200) (reflected at both ends, no edge repeat) times
// the periodic Hann window; power[f][t] = |sum_i frame[i] e^{-2 pi i f i / 400}|^2, f < 201.
// Whisper keeps n_frames = n_samples / 160 frames.
//
// Layout channel_major: power[f * ld_power + t]. A call computes frames
// frame_begin .. frame_begin + n_frames - 1 of the whole signal x[0 .. n_samples), so a long
// recording can be processed in chunks of frames with identical results.
//
// FFT-400 = a complex FFT-200 (radices 4, 2, 5, 5; Stockham, autosorting) on the even/odd
// samples plus a real-split pass, in float32, vectorized across frames: every ISA variant
// runs the same operations in the same order and gives the same bits.
#ifndef CKW_KERNELS_AUDIO_F32_STFT_POWER_H_
#define CKW_KERNELS_AUDIO_F32_STFT_POWER_H_

#include <stdint.h>

#include "kernels/audio/f32_stft_tables.h"

#ifdef __cplusplus
extern "C" {
#endif

// Whisper's frame count for n_samples (stft frames minus the dropped last one).
static inline int64_t ckw_f32_stft_power_frames(int64_t n_samples) {
  return n_samples > 0 ? n_samples / CKW_STFT_HOP : 0;
}

// Dispatches to the widest variant the CPU supports. window and twiddles come from
// ckw_f32_stft_tables(). ld_power >= n_frames. An empty signal gives zero power.
void ckw_f32_stft_power(float* power, int64_t ld_power, const float* x, int64_t n_samples, int64_t frame_begin,
                        int64_t n_frames, const float* window, const float* twiddles);

// The variants, for tests and benchmarks. Call __avx2 / __avx512 only when
// ckw_f32_stft_power_isa_supported() says so.
void ckw_f32_stft_power__scalar(float* power, int64_t ld_power, const float* x, int64_t n_samples, int64_t frame_begin,
                                int64_t n_frames, const float* window, const float* twiddles);
void ckw_f32_stft_power__avx2(float* power, int64_t ld_power, const float* x, int64_t n_samples, int64_t frame_begin,
                              int64_t n_frames, const float* window, const float* twiddles);
void ckw_f32_stft_power__avx512(float* power, int64_t ld_power, const float* x, int64_t n_samples, int64_t frame_begin,
                                int64_t n_frames, const float* window, const float* twiddles);

// 1 if the named variant ("scalar", "avx2", "avx512") can run on this CPU.
int ckw_f32_stft_power_isa_supported(const char* isa);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_AUDIO_F32_STFT_POWER_H_
