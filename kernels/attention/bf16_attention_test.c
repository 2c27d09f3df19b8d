// ckw_bf16_attention, every ISA path: without AVX512-BF16 the f32 kernel's bits; the avx512bf16
// path (the real one where the CPU has it, the emulated one in the *_avx512emu test) within a
// bound derived from its rounding against a float64 reference on the same bf16-rounded q, k, v,
// the f32 kernel's bits below the blocked path's row count, and the same bits for any split of the
// rows or the heads; the real and emulated paths bit for bit where both run; the paged and batched
// entries each sequence's bits of the single entry. Cache rows no query
// may read hold NaN, so a stray read fails.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKW_TEST_SEED 0x9E3779B97F4A7C15ull  // frand()
#include "kernels/attention/bf16_attention.h"
#include "kernels/attention/bf16_attention_contract.h"
#include "kernels/common/bf16.h"
#include "kernels/common/cpu.h"
#include "kernels/common/test_util.h"

typedef void (*attn_fn)(CKW_F32_ATTENTION_PARAMS);

typedef struct {
  int64_t Tq, Tk, H, Dh, cap, q_pos;
  int causal, shifted;
} case_;

typedef struct {
  float *q, *k, *v, *o, *scratch;
  int64_t ld;
  float scale;
} bufs_;

static float bf16_(float x) { return ckw_bf16_to_f32(ckw_f32_to_bf16_cvtne(x)); }

static int64_t visible_(const case_* c, int64_t i) {
  const int64_t n = c->causal ? c->q_pos + i + 1 : c->Tk;
  return n < c->Tk ? (n > 0 ? n : 0) : c->Tk;
}

static bufs_ make_(const case_* c) {
  bufs_ b = {0};
  b.ld = c->H * c->Dh;
  b.scale = 1.0f / sqrtf((float)c->Dh);
  b.q = malloc(sizeof(float) * c->Tq * b.ld);
  b.k = malloc(sizeof(float) * c->H * c->cap * c->Dh);
  b.v = malloc(sizeof(float) * c->H * c->cap * c->Dh);
  b.o = malloc(sizeof(float) * c->Tq * b.ld);
  b.scratch = malloc((size_t)ckw_bf16_attention_scratch_bytes(c->Tq, c->Tk, c->H, c->Dh));
  // shifted: every score gets a common +96 (q[., 0] = 32, k[., 0] = 24, scale 1/8), past
  // ln(FLT_MAX), so exp overflows unless the row max is subtracted first.
  for (int64_t i = 0; i < c->Tq * b.ld; ++i) b.q[i] = (c->shifted && i % c->Dh == 0) ? 32.0f : 2.0f * frand();
  for (int64_t h = 0; h < c->H; ++h)
    for (int64_t j = 0; j < c->cap; ++j) {
      const int unread = j >= c->Tk || (c->causal && j > c->q_pos + c->Tq - 1);
      for (int64_t d = 0; d < c->Dh; ++d) {
        const int64_t x = (h * c->cap + j) * c->Dh + d;
        b.k[x] = unread ? NAN : (c->shifted && d == 0) ? 24.0f : 2.0f * frand();
        b.v[x] = unread ? NAN : frand();
      }
    }
  return b;
}

static void free_(bufs_* b) { free(b->q), free(b->k), free(b->v), free(b->o), free(b->scratch); }

static void run_(attn_fn f, const case_* c, bufs_* b, float* o) {
  for (int64_t i = 0; i < c->Tq * b->ld; ++i) o[i] = -1234.0f;
  f(o, b->q, b->k, b->v, b->scratch, c->Tq, c->Tk, c->H, c->Dh, b->ld, c->cap, c->q_pos, c->causal, b->scale);
}

// The blocked bf16 path against float64 on the rounded q, k, v. What remains: each numerator's
// rounding (relative 2^-8) moves o by at most 2^-8 sum_j w_j |v_j|, w the softmax weights; the fp32
// score chains' rounding (at most Dh eps32 sum_d |q_d k_d| scale per score, twice in a difference
// of two) scales every weight by exp of it; the exp's few ulps.
static int check_blocked_(const char* isa, const case_* c, const bufs_* b) {
  int ok = 1;
  double* s = malloc(sizeof(double) * (c->Tk + 1));
  for (int64_t h = 0; h < c->H && ok; ++h)
    for (int64_t i = 0; i < c->Tq && ok; ++i) {
      const int64_t n = visible_(c, i);
      const float* qi = b->q + i * b->ld + h * c->Dh;
      double mx = -INFINITY, sum = 0.0, ds = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        const float* kj = b->k + (h * c->cap + j) * c->Dh;
        double acc = 0.0, mag = 0.0;
        for (int64_t d = 0; d < c->Dh; ++d) {
          acc += (double)bf16_(qi[d]) * bf16_(kj[d]);
          mag += fabs((double)bf16_(qi[d]) * bf16_(kj[d]));
        }
        s[j] = acc * b->scale;
        mx = fmax(mx, s[j]);
        ds = fmax(ds, (double)c->Dh * 0x1p-23 * mag * b->scale);
      }
      for (int64_t j = 0; j < n; ++j) sum += (s[j] = exp(s[j] - mx));
      const double rel = 0x1p-8 + expm1(2.0 * ds) + 0x1p-20;
      for (int64_t d = 0; d < c->Dh && ok; ++d) {
        double acc = 0.0, mag = 0.0;
        for (int64_t j = 0; j < n; ++j) {
          const double vj = bf16_(b->v[(h * c->cap + j) * c->Dh + d]);
          acc += s[j] * vj, mag += s[j] * fabs(vj);
        }
        const double want = n > 0 ? acc / sum : 0.0, bound = n > 0 ? rel * (mag / sum + fabs(want)) + 1e-30 : 0.0;
        const float got = b->o[i * b->ld + h * c->Dh + d];
        if (!(fabs(got - want) <= bound)) {
          fprintf(stderr,
                  "%s Tq=%lld Tk=%lld H=%lld Dh=%lld q_pos=%lld causal=%d shifted=%d: o[%lld, %lld, %lld] = %.9g, "
                  "want %.9g within %.3g\n",
                  isa, (long long)c->Tq, (long long)c->Tk, (long long)c->H, (long long)c->Dh, (long long)c->q_pos,
                  c->causal, c->shifted, (long long)i, (long long)h, (long long)d, got, want, bound);
          ok = 0;
        }
      }
    }
  free(s);
  return ok;
}

// Row splits (chunks of at least CKW_F32_ATTENTION_BLOCK_MIN_TQ rows: the map's Tq split) and head
// splits give the whole call's bits.
static int check_splits_(const char* isa, attn_fn f, const case_* c, bufs_* b) {
  float* part = malloc(sizeof(float) * c->Tq * b->ld);
  for (int64_t i = 0; i < c->Tq * b->ld; ++i) part[i] = -1234.0f;
  const int64_t min = CKW_F32_ATTENTION_BLOCK_MIN_TQ, half = c->Tq / 2;
  const int64_t cut = half - 3 >= min ? half - 3 : half >= min ? half : c->Tq;  // off the block boundary if it can
  f(part, b->q, b->k, b->v, b->scratch, cut, c->Tk, c->H, c->Dh, b->ld, c->cap, c->q_pos, c->causal, b->scale);
  if (cut < c->Tq)
    f(part + cut * b->ld, b->q + cut * b->ld, b->k, b->v, b->scratch, c->Tq - cut, c->Tk, c->H, c->Dh, b->ld, c->cap,
      c->q_pos + cut, c->causal, b->scale);
  int ok = memcmp(part, b->o, sizeof(float) * c->Tq * b->ld) == 0;
  EXPECT(ok, "%s Tq=%lld Tk=%lld: rows split at %lld differ from the whole call", isa, (long long)c->Tq,
         (long long)c->Tk, (long long)cut);
  for (int64_t h = 0; h < c->H; ++h)
    f(part + h * c->Dh, b->q + h * c->Dh, b->k + h * c->cap * c->Dh, b->v + h * c->cap * c->Dh, b->scratch, c->Tq,
      c->Tk, 1, c->Dh, b->ld, c->cap, c->q_pos, c->causal, b->scale);
  const int heads = memcmp(part, b->o, sizeof(float) * c->Tq * b->ld) == 0;
  EXPECT(heads, "%s Tq=%lld Tk=%lld: one call per head differs from the whole call", isa, (long long)c->Tq,
         (long long)c->Tk);
  free(part);
  return ok && heads;
}

typedef void (*paged_fn)(CKW_F32_ATTENTION_PAGED_PARAMS);

// The paged entry gives each sequence the bits of the single entry on its rows gathered into one
// cache, and the batched entry each sequence those of its own call: a prefill on the blocked path
// (Tq = 20, causal after cached rows; cross-attention of 9 rows) and decode rows (Tq = 1).
static void check_paged_and_batched_(const char* isa, attn_fn single, paged_fn paged) {
  enum { B = 2, H = 2, DH = 64, R = 16, MB = 6, NB = 14, CAP = MB * R };
  const int64_t cases[][4] = {{20, 70, 3, 1}, {9, 90, 0, 0}, {1, 60, 0, 1}};  // Tq, Tk, q0, causal
  float* k = malloc(sizeof(float) * NB * H * R * DH);
  float* v = malloc(sizeof(float) * NB * H * R * DH);
  float* kc = malloc(sizeof(float) * B * H * CAP * DH);  // each sequence's rows gathered
  float* vc = malloc(sizeof(float) * B * H * CAP * DH);
  float* q = malloc(sizeof(float) * B * 20 * H * DH);
  float* o = malloc(sizeof(float) * B * 20 * H * DH);
  float* one = malloc(sizeof(float) * 20 * H * DH);
  float* scratch = malloc((size_t)ckw_bf16_attention_scratch_bytes(20, CAP, H, DH));
  int32_t table[B * MB], pos[B] = {40, 7};
  for (int64_t i = 0; i < NB * H * R * DH; ++i) k[i] = 2.0f * frand(), v[i] = frand();
  for (int64_t i = 0; i < B * 20 * H * DH; ++i) q[i] = 2.0f * frand();
  for (int b = 0; b < B; ++b)
    for (int s = 0; s < MB; ++s) table[b * MB + s] = (int32_t)((5 * (b * MB + s) + 3) % NB);
  for (int b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t j = 0; j < CAP; ++j)
        for (int64_t d = 0; d < DH; ++d) {
          const int64_t src = (((int64_t)table[b * MB + j / R] * H + h) * R + j % R) * DH + d;
          kc[((b * H + h) * CAP + j) * DH + d] = k[src], vc[((b * H + h) * CAP + j) * DH + d] = v[src];
        }
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const int64_t Tq = cases[c][0], Tk = cases[c][1], q0 = cases[c][2];
    const int causal = (int)cases[c][3];
    int32_t p[B] = {causal ? pos[0] : 0, causal ? pos[1] : 0};
    if (causal)
      for (int b = 0; b < B; ++b) p[b] = (int32_t)(Tk - Tq - q0 - 5 * b);
    EXPECT(ckw_f32_attention_paged_check(p, table, B, Tq, Tk, NB, R, MB, q0, causal) == 0, "case %zu", c);
    paged(o, q, k, v, p, table, scratch, B, Tq, Tk, H, DH, H * DH, H, NB, R, MB, q0, causal, 0.125f);
    for (int b = 0; b < B; ++b) {
      single(one, q + b * Tq * H * DH, kc + b * H * CAP * DH, vc + b * H * CAP * DH, scratch, Tq, Tk, H, DH, H * DH,
             CAP, p[b] + q0, causal, 0.125f);
      EXPECT(memcmp(one, o + b * Tq * H * DH, sizeof(float) * Tq * H * DH) == 0,
             "%s paged Tq=%lld Tk=%lld: sequence %d differs from the single entry on its gathered rows", isa,
             (long long)Tq, (long long)Tk, b);
    }
    if (!causal) {  // the batched entry: every sequence at q_pos 0 on its own cache
      ckw_bf16_attention_batched(o, q, kc, vc, scratch, B, Tq, Tk, H, DH, CAP, 0, 0, 0.125f);
      for (int b = 0; b < B; ++b) {
        ckw_bf16_attention(one, q + b * Tq * H * DH, kc + b * H * CAP * DH, vc + b * H * CAP * DH, scratch, Tq, Tk, H,
                           DH, H * DH, CAP, 0, 0, 0.125f);
        EXPECT(memcmp(one, o + b * Tq * H * DH, sizeof(float) * Tq * H * DH) == 0,
               "batched Tq=%lld: sequence %d differs from its own call", (long long)Tq, b);
      }
    }
  }
  free(k), free(v), free(kc), free(vc), free(q), free(o), free(one), free(scratch);
}

int main(void) {
  struct {
    const char* isa;
    int ok, bf16;
    attn_fn f, f32;
    paged_fn paged;
  } isas[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), 0, ckw_bf16_attention__##isa, NULL, ckw_bf16_attention_paged__##isa},
      CKW_BF16_ATTENTION_ISAS(ISA)
#undef ISA
#ifdef CKW_TEST_AVX512_EMULATION
          {"avx512bf16-emulated", ckw_cpu_has_avx2(), 1, ckw_bf16_attention__avx512bf16emu,
           ckw_f32_attention__avx512emu, ckw_bf16_attention_paged__avx512bf16emu},
#endif
  };
  for (size_t i = 0; i < 3; ++i)
    isas[i].f32 = i == 0 ? ckw_f32_attention__scalar : i == 1 ? ckw_f32_attention__avx2 : ckw_f32_attention__avx512;
  isas[3].bf16 = 1, isas[3].f32 = ckw_f32_attention__avx512;
  // Tq, Tk, H, Dh, cap, q_pos, causal, shifted
  const case_ cases[] = {
      {64, 64, 2, 64, 70, 0, 0, 0},      // encoder self-attention, two blocks
      {70, 1500, 1, 64, 1500, 0, 0, 0},  // 1500 keys, a partial block
      {40, 1500, 1, 64, 1500, 0, 0, 1},  // the +96 shift
      {37, 87, 3, 64, 120, 50, 1, 0},    // causal prefill after 50 cached rows
      {9, 9, 2, 7, 9, 0, 1, 0},          // odd head size, causal from an empty cache
      {33, 70, 2, 65, 80, 0, 0, 0},      // a head past a multiple of 32
      {8, 3, 1, 40, 5, 0, 0, 0},         // fewer keys than a panel
      {20, 17, 1, 1, 17, 0, 0, 0},       // Dh = 1
      {5, 40, 2, 64, 40, 0, 0, 0},       // the row path: the f32 kernel's
      {1, 448, 2, 64, 448, 9, 1, 0},     // a decode step: the f32 kernel's
  };
  const size_t n_cases = sizeof cases / sizeof cases[0];
  float* hw[sizeof cases / sizeof cases[0]] = {0};  // the real avx512bf16 path's outputs
  int n = 0;
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
    if (!test_isa_runs(isas[i].isa, isas[i].ok)) continue;
    g_rng = CKW_TEST_SEED;
    for (size_t ci = 0; ci < n_cases; ++ci, ++n) {
      const case_* c = &cases[ci];
      bufs_ b = make_(c);
      run_(isas[i].f, c, &b, b.o);
      float* f32 = malloc(sizeof(float) * c->Tq * b.ld);
      run_(isas[i].f32, c, &b, f32);
      const int same_as_f32 = memcmp(f32, b.o, sizeof(float) * c->Tq * b.ld) == 0;
      if (!isas[i].bf16 || c->Tq < CKW_F32_ATTENTION_BLOCK_MIN_TQ) {
        EXPECT(same_as_f32, "%s Tq=%lld Tk=%lld: not the f32 kernel's bits", isas[i].isa, (long long)c->Tq,
               (long long)c->Tk);
      } else {
        g_failures += !check_blocked_(isas[i].isa, c, &b);
        EXPECT(!same_as_f32, "%s Tq=%lld Tk=%lld: the f32 kernel's bits, not the bf16 products", isas[i].isa,
               (long long)c->Tq, (long long)c->Tk);
        check_splits_(isas[i].isa, isas[i].f, c, &b);
        if (i == 3) {
          hw[ci] = malloc(sizeof(float) * c->Tq * b.ld);
          memcpy(hw[ci], b.o, sizeof(float) * c->Tq * b.ld);
        } else if (hw[ci]) {
          EXPECT(memcmp(hw[ci], b.o, sizeof(float) * c->Tq * b.ld) == 0,
                 "%s Tq=%lld Tk=%lld: not the real avx512bf16 path's bits", isas[i].isa, (long long)c->Tq,
                 (long long)c->Tk);
        }
      }
      free(f32);
      free_(&b);
    }
    check_paged_and_batched_(isas[i].isa, isas[i].f, isas[i].paged);
  }
  for (size_t ci = 0; ci < n_cases; ++ci) free(hw[ci]);
  printf("%d cases\n", n);
  return test_finish("bf16_attention_test");
}
