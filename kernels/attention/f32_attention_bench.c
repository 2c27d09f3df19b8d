// Attention GFLOPS (4 * Tq * Tk * H * Dh per call) per ISA path: encoder self-attention,
// cross-attention for one decode token and for the 5 beams of one, self-attention decode at
// pos 200, and a paged 40-row decode step's cross-attention (8 requests of 5 beams, each
// request's beams reading one encoder entry: one block of Tk rows).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/common/cpu.h"
#include "kernels/attention/f32_attention.h"
#include "kernels/attention/f32_attention_contract.h"

typedef void (*attn_fn)(CKW_F32_ATTENTION_PARAMS);
typedef void (*paged_fn)(CKW_F32_ATTENTION_PAGED_PARAMS);

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  enum { BEAMS = 5, ENTRIES = 8, ROWS = BEAMS * ENTRIES };
  const int64_t H = 6, Dh = 64, cap = bench ? 1500 : 40, nq = cap > ROWS ? cap : ROWS;
  float* q = malloc(sizeof(float) * nq * H * Dh);
  float* k = malloc(sizeof(float) * ENTRIES * cap * H * Dh);  // entry e: [H, cap, Dh], a block
  float* v = malloc(sizeof(float) * ENTRIES * cap * H * Dh);
  float* o = malloc(sizeof(float) * nq * H * Dh);
  float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(cap, cap, H, Dh));
  int32_t pos[ROWS] = {0}, table[ROWS];
  for (int64_t i = 0; i < nq * H * Dh; ++i) q[i] = (float)(i % 13) * 0.05f - 0.3f;
  for (int64_t i = 0; i < ENTRIES * cap * H * Dh; ++i) {
    k[i] = (float)(i % 7) * 0.07f - 0.2f;
    v[i] = (float)(i % 5) * 0.1f;
  }
  for (int b = 0; b < ROWS; ++b) table[b] = b / BEAMS;
  struct {
    const char* name;
    int ok;
    attn_fn f;
    paged_fn paged;
  } isas[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f32_attention__##isa, ckw_f32_attention_paged__##isa},
      CKW_F32_ATTENTION_ISAS(ISA)
#undef ISA
  };
  struct {
    const char* label;
    int64_t Tq, Tk, q_pos;
    int causal;
    int64_t B;  // 0: one contiguous call; else a paged call of B sequences
  } cases[] = {{"encoder self 1500x1500", cap, cap, 0, 0, 0},
               {"cross, 1 token", 1, cap, 0, 0, 0},
               {"cross, 5 beams", BEAMS, cap, 0, 0, 0},
               {"decode self pos 200", 1, cap, bench ? 200 : 20, 1, 0},
               {"paged cross, 8x5 beams", 1, cap, 0, 0, ROWS}};
  int bad = 0;
  if (bench) printf("%-24s %10s %10s %10s   (GFLOPS, H=6 Dh=64, best of N)\n", "case", "scalar", "avx2", "avx512");
  for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); ++c) {
    if (bench) printf("%-24s", cases[c].label);
    const int64_t keys = cases[c].causal ? cases[c].q_pos + 1 : cases[c].Tk, B = cases[c].B ? cases[c].B : 1;
    const double flop = 4.0 * B * cases[c].Tq * keys * H * Dh;
    for (int i = 0; i < 3; ++i) {
      if (!isas[i].ok || (bench && i == 0 && flop > 1e9)) {
        if (bench) printf(" %10s", "-");
        continue;
      }
      double t;
      CKW_BENCH_BEST(t, bench ? (flop > 1e9 ? 2 : 200) : 1,
                     cases[c].B ? isas[i].paged(o, q, k, v, pos, table, scratch, B, cases[c].Tq, cases[c].Tk, H, Dh,
                                                H * Dh, H, ENTRIES, cap, 1, 0, cases[c].causal, 0.125f)
                                : isas[i].f(o, q, k, v, scratch, cases[c].Tq, cases[c].Tk, H, Dh, H * Dh, cap,
                                            cases[c].q_pos, cases[c].causal, 0.125f));
      for (int64_t j = 0; j < B * cases[c].Tq * H * Dh; ++j) bad |= !isfinite(o[j]);
      if (bench) printf(" %10.1f", flop / t * 1e-9);
    }
    if (bench) printf("\n");
  }
  free(q), free(k), free(v), free(o), free(scratch);
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return bad;
}
