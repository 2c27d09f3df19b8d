// f16kv attention against the f32 kernel, per ISA path, microseconds per call: the decoder's
// cross-attention (Tq 1..5 query rows over Tk = 1500 encoder rows, H 8, Dh 64), a blocked
// 33-token prompt over the same rows, and a paged decode step (8 requests of 5 beams, each
// request's beams reading one encoder entry: one block of Tk rows). Each call reads other K/V
// than the call before (the next of LAYERS x ENTRIES caches, or the next layer's pool), as in a
// decode step, where they come from memory rather than from a cache level that one cache of
// 3 MiB (f16) or 6 MiB (f32) would fit in.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/attention/f16kv_attention.h"
#include "kernels/attention/f16kv_attention_contract.h"
#include "kernels/common/bench_util.h"
#include "kernels/common/cpu.h"
#include "kernels/common/f16.h"

enum { LAYERS = 4, BEAMS = 5, ENTRIES = 8, ROWS = BEAMS * ENTRIES };

typedef struct {
  const char* name;
  int ok;
  void (*attn)(CKW_F16KV_ATTENTION_PARAMS);
  void (*attn32)(CKW_F32_ATTENTION_PARAMS);
  void (*paged)(CKW_F16KV_ATTENTION_PAGED_PARAMS);
  void (*paged32)(CKW_F32_ATTENTION_PAGED_PARAMS);
} path_;

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t H = 8, Dh = 64, Tk = bench ? 1500 : 40, layers = bench ? LAYERS : 2;
  const int64_t entry = H * Tk * Dh, per_layer = ENTRIES * entry;  // a layer: ENTRIES blocks [H, Tk, Dh]
  float* q = malloc(sizeof(float) * ROWS * H * Dh);
  float* o = malloc(sizeof(float) * ROWS * H * Dh);
  uint16_t* k = malloc(sizeof(uint16_t) * layers * per_layer);
  uint16_t* v = malloc(sizeof(uint16_t) * layers * per_layer);
  float* k32 = malloc(sizeof(float) * layers * per_layer);
  float* v32 = malloc(sizeof(float) * layers * per_layer);
  float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(ROWS, Tk, H, Dh));
  int32_t pos[ROWS] = {0}, table[ROWS];
  for (int64_t i = 0; i < ROWS * H * Dh; ++i) q[i] = (float)(i % 13) * 0.05f - 0.3f;
  for (int64_t i = 0; i < layers * per_layer; ++i) {
    k[i] = ckw_f32_to_f16((float)(i % 7) * 0.07f - 0.2f), v[i] = ckw_f32_to_f16((float)(i % 5) * 0.1f);
    k32[i] = ckw_f16_to_f32(k[i]), v32[i] = ckw_f16_to_f32(v[i]);
  }
  for (int b = 0; b < ROWS; ++b) table[b] = b / BEAMS;
#define PATH(isa)                    \
  {#isa,                             \
   ckw_cpu_has_##isa(),              \
   ckw_f16kv_attention__##isa,       \
   ckw_f32_attention__##isa,         \
   ckw_f16kv_attention_paged__##isa, \
   ckw_f32_attention_paged__##isa},
  const path_ paths[] = {CKW_F16KV_ATTENTION_ISAS(PATH)};
#undef PATH
  enum { NP = sizeof paths / sizeof paths[0] };
  const struct {
    const char* label;
    int64_t Tq, B;  // B = 0: one contiguous call, else a paged call of B sequences
  } cases[] = {{"cross, Tq 1", 1, 0},
               {"cross, Tq 2", 2, 0},
               {"cross, Tq 3", 3, 0},
               {"cross, Tq 4", 4, 0},
               {"cross, Tq 5", 5, 0},
               {"cross, prompt Tq 33", 33, 0},
               {"paged cross, 8x5 beams", 1, ROWS}};
  int bad = 0;
  if (bench) {
    printf("%-24s", "us per call");
    for (int i = 0; i < NP; ++i) printf(" %9s %9s", paths[i].name, "f16kv");
    printf("   (f32, then f16kv; Tk=%lld H=%lld Dh=%lld, best of N)\n", (long long)Tk, (long long)H, (long long)Dh);
  }
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const int64_t Tq = cases[c].Tq, B = cases[c].B, nq = cases[c].B ? B * Tq : Tq;
    if (bench) printf("%-24s", cases[c].label);
    for (int i = 0; i < NP; ++i)
      for (int f16 = 0; f16 < 2; ++f16) {
        if (!paths[i].ok || (bench && i == 0 && Tq > 5)) {  // the scalar prompt: minutes, not news
          if (bench) printf(" %9s", "-");
          continue;
        }
        const path_* p = &paths[i];
        double t;
        const int64_t calls = B ? layers : layers * ENTRIES;
        CKW_BENCH_BEST(
            t, bench ? (i == 0 ? 2 : 20) : 1, for (int64_t l = 0; l < calls; ++l) {
              const int64_t at = l * (B ? per_layer : entry);
              if (B && f16)
                p->paged(o, q, k + at, v + at, pos, table, scratch, B, Tq, Tk, H, Dh, H * Dh, H, ENTRIES, Tk, 1, 0, 0,
                         0.125f);
              else if (B)
                p->paged32(o, q, k32 + at, v32 + at, pos, table, scratch, B, Tq, Tk, H, Dh, H * Dh, H, ENTRIES, Tk, 1,
                           0, 0, 0.125f);
              else if (f16)
                p->attn(o, q, k + at, v + at, scratch, Tq, Tk, H, Dh, H * Dh, Tk, 0, 0, 0.125f);
              else
                p->attn32(o, q, k32 + at, v32 + at, scratch, Tq, Tk, H, Dh, H * Dh, Tk, 0, 0, 0.125f);
            });
        for (int64_t j = 0; j < nq * H * Dh; ++j) bad |= !isfinite(o[j]);
        if (bench) printf(" %9.1f", t / (double)calls * 1e6);
      }
    if (bench) printf("\n");
  }
  free(q), free(o), free(k), free(v), free(k32), free(v32), free(scratch);
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return bad;
}
