// Attention GFLOPS (4 * Tq * Tk * H * Dh per call) per ISA path: encoder self-attention,
// cross-attention for one decode token, and self-attention decode at pos 200.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/common/cpu.h"
#include "kernels/attention/f32_attention.h"
#include "kernels/attention/f32_attention_contract.h"

typedef void (*attn_fn)(CKW_F32_ATTENTION_PARAMS);

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t H = 6, Dh = 64, cap = bench ? 1500 : 40;
  float* q = malloc(sizeof(float) * cap * H * Dh);
  float* k = malloc(sizeof(float) * cap * H * Dh);
  float* v = malloc(sizeof(float) * cap * H * Dh);
  float* o = malloc(sizeof(float) * cap * H * Dh);
  float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(cap, cap, H, Dh));
  for (int64_t i = 0; i < cap * H * Dh; ++i) {
    q[i] = (float)(i % 13) * 0.05f - 0.3f;
    k[i] = (float)(i % 7) * 0.07f - 0.2f;
    v[i] = (float)(i % 5) * 0.1f;
  }
  struct {
    const char* name;
    int ok;
    attn_fn f;
  } isas[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f32_attention__##isa},
      CKW_F32_ATTENTION_ISAS(ISA)
#undef ISA
  };
  struct {
    const char* label;
    int64_t Tq, Tk, q_pos;
    int causal;
  } cases[] = {{"encoder self 1500x1500", cap, cap, 0, 0},
               {"cross, 1 token", 1, cap, 0, 0},
               {"decode self pos 200", 1, cap, bench ? 200 : 20, 1}};
  int bad = 0;
  if (bench) printf("%-24s %10s %10s %10s   (GFLOPS, H=6 Dh=64, best of N)\n", "case", "scalar", "avx2", "avx512");
  for (int c = 0; c < 3; ++c) {
    if (bench) printf("%-24s", cases[c].label);
    const int64_t keys = cases[c].causal ? cases[c].q_pos + 1 : cases[c].Tk;
    const double flop = 4.0 * cases[c].Tq * keys * H * Dh;
    for (int i = 0; i < 3; ++i) {
      if (!isas[i].ok || (bench && i == 0 && flop > 1e9)) {
        if (bench) printf(" %10s", "-");
        continue;
      }
      double t;
      CKW_BENCH_BEST(t, bench ? (flop > 1e9 ? 2 : 200) : 1,
                     isas[i].f(o, q, k, v, scratch, cases[c].Tq, cases[c].Tk, H, Dh, H * Dh, cap, cases[c].q_pos,
                               cases[c].causal, 0.125f));
      for (int64_t j = 0; j < cases[c].Tq * H * Dh; ++j) bad |= !isfinite(o[j]);
      if (bench) printf(" %10.1f", flop / t * 1e-9);
    }
    if (bench) printf("\n");
  }
  free(q), free(k), free(v), free(o), free(scratch);
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return bad;
}
