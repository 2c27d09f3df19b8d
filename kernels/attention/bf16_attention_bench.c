// Encoder self-attention GFLOPS (4 * Tq * Tk * H * Dh per call, one core) of every ckw_bf16_attention
// path against its peer, the f32 kernel's AVX-512 path (what the fp32 build runs), at the encoder's
// shapes: tiny (6 heads) and base (8), 1500 rows, Dh = 64.
#include <stdio.h>
#include <stdlib.h>

#include "kernels/attention/bf16_attention.h"
#include "kernels/attention/bf16_attention_contract.h"
#include "kernels/common/bench_util.h"
#include "kernels/common/cpu.h"

typedef void (*attn_fn)(CKW_F32_ATTENTION_PARAMS);

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t T = bench ? 1500 : 48, Dh = 64, Hmax = 8;
  float* q = malloc(sizeof(float) * T * Hmax * Dh);
  float* k = malloc(sizeof(float) * T * Hmax * Dh);
  float* v = malloc(sizeof(float) * T * Hmax * Dh);
  float* o = malloc(sizeof(float) * T * Hmax * Dh);
  float* scratch = malloc((size_t)ckw_bf16_attention_scratch_bytes(T, T, Hmax, Dh));
  for (int64_t i = 0; i < T * Hmax * Dh; ++i) {
    q[i] = (float)(i % 13) * 0.05f - 0.3f;
    k[i] = (float)(i % 7) * 0.07f - 0.2f;
    v[i] = (float)(i % 5) * 0.1f;
  }
  struct {
    const char* name;
    int ok;
    attn_fn f;
  } paths[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_bf16_attention__##isa},
      CKW_BF16_ATTENTION_ISAS(ISA)
#undef ISA
          {"f32 avx512 (peer)", ckw_cpu_has_avx512(), ckw_f32_attention__avx512},
  };
  const int n_paths = (int)(sizeof paths / sizeof paths[0]);
  int bad = 0;
  if (bench)
    printf("%-22s %14s %14s   (GFLOPS, one core, Tq = Tk = 1500, Dh = 64, best of 3)\n", "path", "tiny H=6",
           "base H=8");
  for (int p = 1; p < n_paths; ++p) {  // the scalar path is the f32 scalar kernel's: hours at this size
    if (bench) printf("%-22s", paths[p].name);
    for (int64_t H = 6; H <= 8; H += 2) {
      if (!paths[p].ok) {
        if (bench) printf(" %14s", "-");
        continue;
      }
      double t;
      CKW_BENCH_BEST(t, bench ? 3 : 1, paths[p].f(o, q, k, v, scratch, T, T, H, Dh, H * Dh, T, 0, 0, 0.125f));
      for (int64_t j = 0; j < T * H * Dh; ++j) bad |= o[j] != o[j];
      if (bench) printf(" %14.1f", 4.0 * T * T * H * Dh / t * 1e-9);
    }
    if (bench) printf("\n");
  }
  free(q), free(k), free(v), free(o), free(scratch);
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return bad;
}
