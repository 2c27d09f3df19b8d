// LSTM steps per second per ISA path at Silero VAD's H = 128: one step per call (streaming, a
// 32 ms window at a time: W_hh is read from cache every step) and 300 steps per call. Smoke run
// under `bazel test`; `--benchmark` for the table.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/common/cpu.h"
#include "kernels/recurrent/f32_lstm.h"
#include "kernels/recurrent/f32_lstm_contract.h"

typedef void (*lstm_fn)(float*, float*, float*, const float*, const float*, const float*, const float*, void*, int64_t,
                        int64_t);

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t H = bench ? 128 : 17, N = bench ? 300 : 5;
  float* gx = malloc(sizeof(float) * N * 4 * H);
  float* w = malloc(sizeof(float) * 4 * H * H);
  float* y = malloc(sizeof(float) * N * H);
  float* h = calloc(H, sizeof(float));
  float* c = calloc(H, sizeof(float));
  void* scratch = malloc(ckw_f32_lstm_scratch_bytes(H));
  for (int64_t i = 0; i < 4 * H * H; ++i) w[i] = (float)((i * 7919) % 2001 - 1000) * (0.001f / sqrtf((float)H));
  for (int64_t i = 0; i < N * 4 * H; ++i) gx[i] = (float)((i * 104729) % 2001 - 1000) * 0.002f;
  struct {
    const char* name;
    int ok;
    lstm_fn f;
  } isas[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f32_lstm__##isa},
      CKW_F32_LSTM_ISAS(ISA)
#undef ISA
  };
  const int reps = bench ? 20 : 1;
  int bad = 0;
  if (bench)
    printf("%-8s %16s %16s   (H = %lld, steps/s, best of %d)\n", "isa", "1 step a call", "300 a call", (long long)H,
           reps);
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
    if (!isas[i].ok) {
      if (bench) printf("%-8s %16s\n", isas[i].name, "(not on this CPU)");
      continue;
    }
    double t1, tn;
    // N calls of one step each, the state carried in place.
    CKW_BENCH_BEST(t1, reps,
                   for (int64_t n = 0; n < N; ++n) isas[i].f(y + n * H, h, c, gx + n * 4 * H, w, h, c, scratch, 1, H));
    CKW_BENCH_BEST(tn, reps, isas[i].f(y, h, c, gx, w, h, c, scratch, N, H));
    for (int64_t j = 0; j < N * H; ++j) bad |= !isfinite(y[j]);
    if (bench) printf("%-8s %16.0f %16.0f\n", isas[i].name, N / t1, N / tn);
  }
  free(gx), free(w), free(y), free(h), free(c), free(scratch);
  if (bad) fprintf(stderr, "non-finite output\n");
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return bad;
}
