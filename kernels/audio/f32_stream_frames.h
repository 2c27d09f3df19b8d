// A stream's STFT frames as Silero VAD cuts them (faster-whisper's SileroVADModel): the samples
// go in windows of W, each preceded by the C samples before it (the first window of a call by
// the carried context `ctx`), right reflect-padded by P (numpy.pad mode='reflect') and cut into
// NF frames of FL samples at hop H. The context after the call comes back in ctx_out, so
// consecutive calls frame a stream exactly as one call over all of it does.
#ifndef CKW_KERNELS_AUDIO_F32_STREAM_FRAMES_H_
#define CKW_KERNELS_AUDIO_F32_STREAM_FRAMES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Silero VAD at 16 kHz: 512-sample windows after 64 samples of context, 256-sample frames at
// hop 128 with 64 samples of right reflect padding: 4 frames a window.
#define CKW_STREAM_FRAMES_SILERO_W 512
#define CKW_STREAM_FRAMES_SILERO_C 64
#define CKW_STREAM_FRAMES_SILERO_FL 256
#define CKW_STREAM_FRAMES_SILERO_H 128
#define CKW_STREAM_FRAMES_SILERO_P 64
#define CKW_STREAM_FRAMES_SILERO_NF 4

// With s = ctx ++ x (C + N * W samples) and L = C + W, window n (0 <= n < N) is
//   row = s[n * W .. n * W + L)   (for n >= 1 and C <= W: x[n * W - C .. (n + 1) * W))
//   ext[i] = row[i] for i < L, ext[L + j] = row[L - 2 - j] for 0 <= j < P
//   y[n * NF + f, 0 .. FL) = ext[f * H .. f * H + FL)          for 0 <= f < NF
// and afterwards ctx_out = s[N * W .. N * W + C), the last C samples of s (x[N * W - C .. N * W)
// when N * W >= C; ctx as it was when N == 0). x [N * W], ctx and ctx_out [C], y [N * NF, FL].
// ctx_out may be ctx (in place: every read of ctx comes first); y and x overlap nothing else.
// Dims: N >= 0, W >= 1, C >= 0, FL >= 1, H >= 1, 0 <= P <= C + W - 1 (one reflection), NF >= 1
// and (NF - 1) * H + FL == C + W + P (the frames tile the padded window). Other dims write
// nothing.
void ckw_f32_stream_frames(float* y, float* ctx_out, const float* x, const float* ctx, int64_t N, int64_t W, int64_t C,
                           int64_t FL, int64_t H, int64_t P, int64_t NF);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_AUDIO_F32_STREAM_FRAMES_H_
