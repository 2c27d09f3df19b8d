// Framing throughput at Silero VAD's 16 kHz geometry: 30 s of audio (937 windows of 512) in one
// call, the context carried in place; GB/s of frames written.
#include <stdio.h>
#include <stdlib.h>

#include "kernels/audio/f32_stream_frames.h"
#include "kernels/common/bench_util.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t W = CKW_STREAM_FRAMES_SILERO_W, C = CKW_STREAM_FRAMES_SILERO_C, FL = CKW_STREAM_FRAMES_SILERO_FL;
  const int64_t H = CKW_STREAM_FRAMES_SILERO_H, P = CKW_STREAM_FRAMES_SILERO_P, NF = CKW_STREAM_FRAMES_SILERO_NF;
  const int64_t N = bench ? 480000 / W : 2;
  float* x = malloc(sizeof(float) * (size_t)(N * W));
  float* y = malloc(sizeof(float) * (size_t)(N * NF * FL));
  float ctx[CKW_STREAM_FRAMES_SILERO_C] = {0};
  for (int64_t i = 0; i < N * W; ++i) x[i] = (float)(i % 1000) * 1e-3f;
  double t;
  CKW_BENCH_BEST(t, bench ? 20 : 1, ckw_f32_stream_frames(y, ctx, x, ctx, N, W, C, FL, H, P, NF));
  const int ok = ctx[C - 1] == x[N * W - 1] && y[FL - 1] == x[FL - 1 - C];
  if (bench) {
    printf("stream_frames %lld windows of %lld -> %lld frames of %lld: %8.1f us %6.1f GB/s written\n", (long long)N,
           (long long)W, (long long)(N * NF), (long long)FL, t * 1e6, 4.0 * (double)(N * NF * FL) / t * 1e-9);
  } else {
    printf("smoke run ok (pass --benchmark for the table)\n");
  }
  free(x), free(y);
  return !ok;
}
