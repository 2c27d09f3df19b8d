// Attention, every ISA path, against a float64 reference under the tolerance policy (K taken
// as Dh + Tk, the two reductions): encoder, causal prefill with cached rows, decode reading
// pos + 1 rows of a larger cache, cross-attention, odd head sizes, large logits (stability).
// Cache rows a query must not read hold NaN, so any stray read fails the check.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKW_TEST_SEED 0xD1B54A32D192ED03ull  // frand()
#include "kernels/common/cpu.h"
#include "kernels/attention/f32_attention.h"
#include "kernels/attention/f32_attention_contract.h"
#include "kernels/common/tolerance.h"
#include "kernels/common/test_util.h"

// Built a second time with CKW_TEST_AVX512_EMULATION (the *_avx512emu_test target) to run the
// AVX-512 template through kernels/common/avx512_emulation.h on CPUs without AVX-512.
#ifdef CKW_TEST_AVX512_EMULATION
void ckw_f32_attention__avx512emu(CKW_F32_ATTENTION_PARAMS);
void ckw_f32_attention_paged__avx512emu(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_f32_attention_scores_paged__avx512emu(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS);
void ckw_f32_attention_scores__avx512emu(CKW_F32_ATTENTION_SCORES_PARAMS);
#endif

#define TOL_C CKW_F32_ATTENTION_TOLERANCE_C

typedef void (*attn_fn)(CKW_F32_ATTENTION_PARAMS);
typedef void (*paged_fn)(CKW_F32_ATTENTION_PAGED_PARAMS);
typedef void (*scores_fn)(CKW_F32_ATTENTION_SCORES_PARAMS);
typedef void (*scores_paged_fn)(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS);

static int check(const char* isa, attn_fn f, int64_t Tq, int64_t Tk, int64_t H, int64_t Dh, int64_t cap, int64_t q_pos,
                 int causal, int shifted) {
  const int64_t ld = H * Dh;
  const float scale = 1.0f / sqrtf((float)Dh);
  float* q = malloc(sizeof(float) * (Tq * ld + 1));
  float* k = malloc(sizeof(float) * (H * cap * Dh + 1));
  float* v = malloc(sizeof(float) * (H * cap * Dh + 1));
  float* o = malloc(sizeof(float) * (Tq * ld + 1));
  float* ref = malloc(sizeof(float) * (Tq * ld + 1));
  float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(Tq, Tk, H, Dh));
  double* s = malloc(sizeof(double) * (Tk + 1));
  // shifted: every score gets a common +96 (q[., 0] = 32, k[., 0] = 24, scale 1/8), past
  // ln(FLT_MAX) = 88.7, so exp overflows unless the row max is subtracted first.
  for (int64_t i = 0; i < Tq * ld; ++i) q[i] = (shifted && i % Dh == 0) ? 32.0f : frand();
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t j = 0; j < cap; ++j) {
      // Rows no query may read: causal rows past the last query's position, rows >= Tk.
      const int unread = j >= Tk || (causal && j > q_pos + Tq - 1);
      for (int64_t d = 0; d < Dh; ++d) {
        k[(h * cap + j) * Dh + d] = unread ? NAN : (shifted && d == 0) ? 24.0f : frand();
        v[(h * cap + j) * Dh + d] = unread ? NAN : frand();
      }
    }
  }
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t i = 0; i < Tq; ++i) {
      int64_t n = causal ? q_pos + i + 1 : Tk;
      if (n > Tk) n = Tk;
      double mx = -INFINITY, sum = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t d = 0; d < Dh; ++d) acc += (double)q[i * ld + h * Dh + d] * k[(h * cap + j) * Dh + d];
        s[j] = acc * scale;
        mx = fmax(mx, s[j]);
      }
      for (int64_t j = 0; j < n; ++j) sum += (s[j] = exp(s[j] - mx));
      for (int64_t d = 0; d < Dh; ++d) {
        double acc = 0.0;
        for (int64_t j = 0; j < n; ++j) acc += s[j] * v[(h * cap + j) * Dh + d];
        ref[i * ld + h * Dh + d] = n > 0 ? (float)(acc / sum) : 0.0f;
      }
    }
  }
  for (int64_t i = 0; i < Tq * ld; ++i) o[i] = -1234.0f;
  f(o, q, k, v, scratch, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
  char what[160];
  snprintf(what, sizeof what, "%s attention Tq=%lld Tk=%lld H=%lld Dh=%lld cap=%lld q_pos=%lld causal=%d shifted=%d",
           isa, (long long)Tq, (long long)Tk, (long long)H, (long long)Dh, (long long)cap, (long long)q_pos, causal,
           shifted);
  int ok = ckw_check_close(what, o, ref, Tq * ld, TOL_C, Dh + Tk);
  // The map's head split: one call per head, rows still ld apart, gives the whole call's bits.
  for (int64_t i = 0; i < Tq * ld; ++i) ref[i] = -1234.0f;
  for (int64_t h = 0; h < H; ++h)
    f(ref + h * Dh, q + h * Dh, k + h * cap * Dh, v + h * cap * Dh, scratch, Tq, Tk, 1, Dh, ld, cap, q_pos, causal,
      scale);
  if (ok && memcmp(o, ref, sizeof(float) * Tq * ld) != 0) {
    fprintf(stderr, "%s: one call per head differs from the whole call\n", what);
    ok = 0;
  }
  free(q), free(k), free(v), free(o), free(ref), free(scratch), free(s);
  return ok;
}

// The batched entry point gives each sequence the bits of a single-sequence call on its own
// cache (decode: B beams of one query each; a B = 2 prefill of 3 rows after 4 cached rows).
static int check_batched(void) {
  enum { BK = 6, H = 2, DH = 64, CAP = 32 };
  const int64_t cases[][4] = {{5, 1, 9, 1}, {2, 3, 7, 1}, {3, 2, 20, 0}};  // B, Tq, Tk, causal
  float* k = malloc(sizeof(float) * BK * H * CAP * DH);
  float* v = malloc(sizeof(float) * BK * H * CAP * DH);
  float* q = malloc(sizeof(float) * BK * 3 * H * DH);
  float* o = malloc(sizeof(float) * BK * 3 * H * DH);
  float* one = malloc(sizeof(float) * 3 * H * DH);
  float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(3, CAP, H, DH));
  for (int64_t i = 0; i < BK * H * CAP * DH; ++i) k[i] = frand(), v[i] = frand();
  for (int64_t i = 0; i < BK * 3 * H * DH; ++i) q[i] = frand();
  int fails = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const int64_t B = cases[c][0], Tq = cases[c][1], Tk = cases[c][2], q_pos = Tk - Tq;
    const int causal = (int)cases[c][3];
    ckw_f32_attention_batched(o, q, k, v, scratch, B, Tq, Tk, H, DH, CAP, q_pos, causal, 0.125f);
    for (int64_t b = 0; b < B; ++b) {
      ckw_f32_attention(one, q + b * Tq * H * DH, k + b * H * CAP * DH, v + b * H * CAP * DH, scratch, Tq, Tk, H, DH,
                        H * DH, CAP, q_pos, causal, 0.125f);
      if (memcmp(one, o + b * Tq * H * DH, sizeof(float) * Tq * H * DH) != 0) {
        fprintf(stderr, "attention_batched case %zu: sequence %lld differs from its own call\n", c, (long long)b);
        ++fails;
      }
    }
  }
  free(k), free(v), free(q), free(o), free(one), free(scratch);
  return fails;
}

// Scores: every ISA against a float64 reference under the tolerance, -inf exactly where a
// causal query may not look (q_pos = 3: query i sees keys 0..3 + i).
static int check_scores(void) {
  enum { TQ = 4, TK = 9, H = 2, DH = 20, CAP = 11 };
  float q[TQ * H * DH], k[H * CAP * DH], s[H * TQ * TK], ref[H * TQ * TK];
  for (int i = 0; i < TQ * H * DH; ++i) q[i] = frand();
  for (int i = 0; i < H * CAP * DH; ++i) k[i] = frand();
  int fails = 0;
  for (int causal = 0; causal < 2; ++causal) {
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < TQ; ++i)
        for (int j = 0; j < TK; ++j) {
          double acc = 0.0;
          for (int d = 0; d < DH; ++d) acc += (double)q[i * H * DH + h * DH + d] * k[(h * CAP + j) * DH + d];
          ref[(h * TQ + i) * TK + j] = (float)(acc * 0.25);
        }
    void (*fns[])(CKW_F32_ATTENTION_SCORES_PARAMS) = {ckw_f32_attention_scores__scalar, ckw_f32_attention_scores};
    for (int f = 0; f < 2; ++f) {
      fns[f](s, q, k, TQ, TK, H, DH, H * DH, CAP, 3, causal, 0.25f);
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < TQ; ++i)
          for (int j = 0; j < TK; ++j) {
            const int at = (h * TQ + i) * TK + j;
            const int hidden = causal && j > 3 + i;
            if (hidden ? s[at] != -INFINITY : fabsf(s[at] - ref[at]) > 1e-5f) {
              fprintf(stderr, "attention_scores fn %d causal %d [%d,%d,%d] = %g want %g\n", f, causal, h, i, j, s[at],
                      hidden ? -INFINITY : ref[at]);
              ++fails;
            }
          }
    }
  }
  return fails;
}

// Paged attention: B sequences whose rows live in shuffled blocks of a pool (sequences 0 and 1
// share their first block, as beams share a prefix; spare blocks and rows past what a
// sequence reads hold NaN). Each sequence must get, bit for bit, what the same ISA's
// contiguous call gives on its own cache gathered back (so neither the block ids nor the
// other sequences matter); so must one call per head and one call per sequence; the scores
// likewise. The check refuses bad block ids and positions.
static int check_paged(const char* isa, attn_fn contiguous, paged_fn paged, scores_fn scores,
                       scores_paged_fn scores_paged, const int64_t* c) {
  const int64_t B = c[0], Tq = c[1], Tk = c[2], H = c[3], Dh = c[4], R = c[5], MB = c[6], q0 = c[7];
  const int causal = (int)c[8];
  const int64_t cap = MB * R, NB = B * MB + 3, ld = H * Dh, blk = H * R * Dh;
  const float scale = 1.0f / sqrtf((float)Dh);
  float* kp = malloc(sizeof(float) * NB * blk);
  float* vp = malloc(sizeof(float) * NB * blk);
  float* kc = malloc(sizeof(float) * B * H * cap * Dh);  // each sequence's cache, contiguous
  float* vc = malloc(sizeof(float) * B * H * cap * Dh);
  float* q = malloc(sizeof(float) * B * Tq * ld);
  float* o = malloc(sizeof(float) * B * Tq * ld);
  float* ref = malloc(sizeof(float) * B * Tq * ld);
  float* sp = malloc(sizeof(float) * B * H * Tq * Tk);
  float* sref = malloc(sizeof(float) * H * Tq * Tk);
  float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(Tq, Tk, H, Dh));
  int32_t* table = malloc(sizeof(int32_t) * B * MB);
  int32_t* ids = malloc(sizeof(int32_t) * NB);
  int32_t pos[64];
  for (int64_t i = 0; i < NB * blk; ++i) kp[i] = vp[i] = NAN;
  for (int64_t i = 0; i < B * Tq * ld; ++i) q[i] = frand();
  shuffled_ids(ids, NB);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t top = Tk - Tq - q0;  // the furthest a causal sequence may start
    pos[b] = causal ? (int32_t)rand_below(top + 1) : 0;
    for (int64_t m = 0; m < MB; ++m) table[b * MB + m] = ids[b * MB + m];
  }
  if (B > 1) table[MB] = table[0];  // sequence 1 shares sequence 0's first block
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = causal && pos[b] + q0 + Tq < Tk ? pos[b] + q0 + Tq : Tk;  // rows it reads
    for (int64_t h = 0; h < H; ++h)
      for (int64_t j = 0; j < cap; ++j)
        for (int64_t d = 0; d < Dh; ++d) {
          float* kcj = kc + ((b * H + h) * cap + j) * Dh + d;
          float* vcj = vc + ((b * H + h) * cap + j) * Dh + d;
          float* kpj = kp + (int64_t)table[b * MB + j / R] * blk + (h * R + j % R) * Dh + d;
          float* vpj = vp + (int64_t)table[b * MB + j / R] * blk + (h * R + j % R) * Dh + d;
          if (B > 1 && b == 1 && j < R) {  // the shared block: sequence 0's rows
            *kcj = kc[(h * cap + j) * Dh + d], *vcj = vc[(h * cap + j) * Dh + d];
          } else if (j < n || (B > 1 && b == 0 && j < R)) {
            *kpj = *kcj = frand(), *vpj = *vcj = frand();
          } else {  // a row the sequence never reads (NaN in the pool already)
            *kcj = *vcj = NAN;
          }
        }
  }
  char what[200];
  snprintf(what, sizeof what, "%s paged B=%lld Tq=%lld Tk=%lld H=%lld Dh=%lld R=%lld MB=%lld q0=%lld causal=%d", isa,
           (long long)B, (long long)Tq, (long long)Tk, (long long)H, (long long)Dh, (long long)R, (long long)MB,
           (long long)q0, causal);
  int ok = 1;
  for (int64_t b = 0; b < B; ++b)
    contiguous(ref + b * Tq * ld, q + b * Tq * ld, kc + b * H * cap * Dh, vc + b * H * cap * Dh, scratch, Tq, Tk, H, Dh,
               ld, cap, pos[b] + q0, causal, scale);
  for (int pass = 0; pass < 3 && ok; ++pass) {  // whole call; one call per head; one per sequence
    for (int64_t i = 0; i < B * Tq * ld; ++i) o[i] = -1234.0f;
    const int rc = ckw_f32_attention_paged_check(pos, table, B, Tq, Tk, NB, R, MB, q0, causal);
    if (pass == 0) paged(o, q, kp, vp, pos, table, scratch, B, Tq, Tk, H, Dh, ld, H, NB, R, MB, q0, causal, scale);
    for (int64_t h = 0; pass == 1 && h < H; ++h)
      paged(o + h * Dh, q + h * Dh, kp + h * R * Dh, vp + h * R * Dh, pos, table, scratch, B, Tq, Tk, 1, Dh, ld, H, NB,
            R, MB, q0, causal, scale);
    for (int64_t b = 0; pass == 2 && b < B; ++b)
      paged(o + b * Tq * ld, q + b * Tq * ld, kp, vp, pos + b, table + b * MB, scratch, 1, Tq, Tk, H, Dh, ld, H, NB, R,
            MB, q0, causal, scale);
    if (rc != 0 || memcmp(o, ref, sizeof(float) * B * Tq * ld) != 0) {
      fprintf(stderr, "%s: pass %d (0 whole, 1 per head, 2 per sequence) rc %d differs from the contiguous calls\n",
              what, pass, rc);
      ok = 0;
    }
  }
  if (ok && scores) {
    scores_paged(sp, q, kp, pos, table, B, Tq, Tk, H, Dh, ld, H, NB, R, MB, q0, causal, scale);
    for (int64_t b = 0; b < B && ok; ++b) {
      scores(sref, q + b * Tq * ld, kc + b * H * cap * Dh, Tq, Tk, H, Dh, ld, cap, pos[b] + q0, causal, scale);
      if (memcmp(sp + b * H * Tq * Tk, sref, sizeof(float) * H * Tq * Tk) != 0) {
        fprintf(stderr, "%s: scores of sequence %lld differ from the contiguous call\n", what, (long long)b);
        ok = 0;
      }
    }
  }
  // Refusals: a block id the call reads out of range, a negative position, rows past the table.
  const int32_t keep = table[0], keep_pos = pos[0];
  for (int bad = 0; bad < 3 && ok; ++bad) {
    if (bad == 2 && !causal) continue;
    if (bad == 0) table[0] = (int32_t)NB;
    if (bad == 1) pos[0] = -1;
    if (bad == 2) pos[0] = (int32_t)(cap - q0 - Tq + 1);
    const int want = bad == 0 ? CKW_ATTENTION_ERR_BLOCK : CKW_ATTENTION_ERR_POSITION;
    const int rc = ckw_f32_attention_paged_check(pos, table, B, Tq, Tk, NB, R, MB, q0, causal);
    if (rc != want) {
      fprintf(stderr, "%s: check %d returned %d (want %d: %s)\n", what, bad, rc, want,
              ckw_f32_attention_paged_strerror(want));
      ok = 0;
    }
    table[0] = keep, pos[0] = keep_pos;
  }
  free(kp), free(vp), free(kc), free(vc), free(q), free(o), free(ref), free(sp), free(sref), free(scratch);
  free(table), free(ids);
  return ok;
}

// Row groups: the row path attends up to 8 rows that see the same keys together (each K and V
// vector loaded once for them); every row must keep, bit for bit, what it gets alone (Tq = 1 at
// its position; for paged calls B = 1 and Tq = 1). Contiguous calls: Tq 1..7 rows (causal rows
// from q_pos = Tk - 1 - Tq / 2, so the later ones all see Tk keys), every Tk and Dh below
// (Dh 65..136: several MAXV passes and masked tails), H taking turns. Paged calls: up to 11 sequences in runs
// that share a table row (beams), some runs differing only in their last block, equal or
// different positions, R in {1, 16, 1500}. Rows no query may read hold NaN.
static int check_rows(const char* isa, attn_fn f, paged_fn paged) {
  static const int64_t tks[] = {1, 3, 15, 16, 17, 100, 1500}, dhs[] = {1, 7, 8, 16, 64, 65, 100, 136};
  static const int64_t hs[] = {1, 2, 6}, rs[] = {1, 16, 1500};
  enum { NT = sizeof tks / sizeof tks[0], ND = sizeof dhs / sizeof dhs[0] };
  int fails = 0, c = 0;
  for (int t = 0; t < NT; ++t)
    for (int d = 0; d < ND; ++d)
      for (int64_t Tq = 1; Tq < 8; ++Tq)
        for (int causal = 0; causal < 2; ++causal, ++c) {
          const int64_t Tk = tks[t], Dh = dhs[d], H = hs[c % 3], cap = Tk + 2, ld = H * Dh + c % 2;
          const int64_t q_pos = causal && Tk - 1 - Tq / 2 > 0 ? Tk - 1 - Tq / 2 : 0;
          const float scale = 1.0f / sqrtf((float)Dh);
          float* q = malloc(sizeof(float) * Tq * ld);
          float* k = malloc(sizeof(float) * H * cap * Dh);
          float* v = malloc(sizeof(float) * H * cap * Dh);
          float* o = malloc(sizeof(float) * Tq * ld);
          float* one = malloc(sizeof(float) * Tq * ld);
          float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(Tq, Tk, H, Dh));
          for (int64_t i = 0; i < Tq * ld; ++i) q[i] = 4.0f * frand(), o[i] = one[i] = 0.0f;
          for (int64_t i = 0; i < H * cap * Dh; ++i) {
            const int64_t j = i / Dh % cap;
            const int unread = j >= Tk || (causal && j > q_pos + Tq - 1);
            k[i] = unread ? NAN : frand(), v[i] = unread ? NAN : frand();
          }
          f(o, q, k, v, scratch, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
          for (int64_t i = 0; i < Tq; ++i)
            f(one + i * ld, q + i * ld, k, v, scratch, 1, Tk, H, Dh, ld, cap, q_pos + i, causal, scale);
          if (memcmp(o, one, sizeof(float) * Tq * ld) != 0) {
            fprintf(stderr, "%s rows: Tq=%lld Tk=%lld H=%lld Dh=%lld q_pos=%lld causal=%d differs from rows alone\n",
                    isa, (long long)Tq, (long long)Tk, (long long)H, (long long)Dh, (long long)q_pos, causal);
            ++fails;
          }
          free(q), free(k), free(v), free(o), free(one), free(scratch);
        }
  c = 0;
  for (int t = 0; t < NT; ++t)
    for (int d = 0; d < ND; ++d)
      for (int r = 0; r < 3; ++r, ++c) {
        const int64_t Tk = tks[t], Dh = dhs[d], R = rs[r], H = hs[c % 3], Hp = H + c % 2, Tq = 1 + c % 7;
        const int64_t B = 1 + c % 11, q0 = c % 2, MB = (Tk + 8 + R - 1) / R, ld = H * Dh, blk = Hp * R * Dh;
        const int causal = c % 4 < 2;
        const float scale = 1.0f / sqrtf((float)Dh);
        int32_t pos[11], *table = malloc(sizeof(int32_t) * B * MB);
        int64_t NB = 0;
        for (int64_t b = 0; b < B; ++b) {
          const int64_t same = b > 0 ? rand_below(4) : 0;  // 1, 2: the previous row; 3: all but its last block
          for (int64_t m = 0; m < MB; ++m)
            table[b * MB + m] = same && (same < 3 || m < MB - 1) ? table[(b - 1) * MB + m] : (int32_t)NB++;
          pos[b] = !causal ? 0 : same == 1 ? pos[b - 1] : (int32_t)rand_below(Tk);
        }
        NB += 2;  // spare blocks, never read
        float* kp = malloc(sizeof(float) * NB * blk);
        float* vp = malloc(sizeof(float) * NB * blk);
        float* q = malloc(sizeof(float) * B * Tq * ld);
        float* o = malloc(sizeof(float) * B * Tq * ld);
        float* one = malloc(sizeof(float) * B * Tq * ld);
        float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(Tq, Tk, H, Dh));
        for (int64_t i = 0; i < NB * blk; ++i) kp[i] = vp[i] = NAN;
        for (int64_t b = 0; b < B; ++b)  // a block sits at the same table index in every row that holds it
          for (int64_t j = 0; j < Tk; ++j)
            for (int64_t i = 0; i < H * Dh; ++i) {
              const int64_t at = table[b * MB + j / R] * blk + (i / Dh * R + j % R) * Dh + i % Dh;
              if (isnan(kp[at])) kp[at] = frand(), vp[at] = frand();
            }
        for (int64_t i = 0; i < B * Tq * ld; ++i) q[i] = 4.0f * frand();
        paged(o, q, kp, vp, pos, table, scratch, B, Tq, Tk, H, Dh, ld, Hp, NB, R, MB, q0, causal, scale);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t i = 0; i < Tq; ++i)
            paged(one + (b * Tq + i) * ld, q + (b * Tq + i) * ld, kp, vp, pos + b, table + b * MB, scratch, 1, 1, Tk, H,
                  Dh, ld, Hp, NB, R, MB, q0 + i, causal, scale);
        const int rc = ckw_f32_attention_paged_check(pos, table, B, Tq, Tk, NB, R, MB, q0, causal);
        if (rc != 0 || memcmp(o, one, sizeof(float) * B * Tq * ld) != 0) {
          fprintf(stderr,
                  "%s paged rows: B=%lld Tq=%lld Tk=%lld H=%lld Dh=%lld R=%lld causal=%d rc %d differs from "
                  "one row at a time\n",
                  isa, (long long)B, (long long)Tq, (long long)Tk, (long long)H, (long long)Dh, (long long)R, causal,
                  rc);
          ++fails;
        }
        free(table), free(kp), free(vp), free(q), free(o), free(one), free(scratch);
      }
  return fails;
}

int main(void) {
  struct {
    const char* isa;
    int ok;
    attn_fn f;
    paged_fn paged;
    scores_fn scores;
    scores_paged_fn scores_paged;
  } isas[] = {
#define ISA(isa)                    \
  {#isa,                            \
   ckw_cpu_has_##isa(),             \
   ckw_f32_attention__##isa,        \
   ckw_f32_attention_paged__##isa,  \
   ckw_f32_attention_scores__##isa, \
   ckw_f32_attention_scores_paged__##isa},
      CKW_F32_ATTENTION_ISAS(ISA)
#undef ISA
          {"dispatch", 1, ckw_f32_attention, ckw_f32_attention_paged, ckw_f32_attention_scores,
           ckw_f32_attention_scores_paged},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, ckw_f32_attention__avx512emu, ckw_f32_attention_paged__avx512emu,
       ckw_f32_attention_scores__avx512emu, ckw_f32_attention_scores_paged__avx512emu},
#endif
  };
  // B, Tq, Tk, H, Dh, R, MB, q0, causal
  const int64_t paged_cases[][9] = {
      {6, 1, 448, 2, 64, 16, 28, 0, 1},    // decode step: six sequences at their own positions
      {4, 5, 64, 2, 64, 16, 4, 0, 1},      // the row path with a few tokens per sequence
      {1, 40, 96, 2, 64, 16, 6, 3, 1},     // a prefill on the blocked path (tiles split at blocks)
      {2, 40, 96, 2, 64, 32, 3, 0, 1},     // R = 32
      {3, 1, 1500, 1, 64, 1500, 1, 0, 0},  // cross-attention: each row's entry, one block
      {2, 9, 300, 2, 64, 300, 1, 0, 0},    // cross-attention of a blocked prompt
      {3, 2, 37, 2, 20, 16, 3, 0, 1},     {2, 9, 50, 1, 72, 16, 4, 0, 0},
      {2, 3, 40, 1, 136, 8, 5, 1, 1},     {2, 1, 5, 1, 1, 1, 5, 0, 1},
  };
  // Tq, Tk, H, Dh, cap, q_pos, causal
  const int64_t cases[][7] = {
      {37, 37, 2, 64, 40, 0, 0},     // encoder self-attention (bidirectional)
      {5, 5, 3, 64, 16, 0, 1},       // decoder prefill from an empty cache
      {3, 11, 2, 64, 16, 8, 1},      // prefill after 8 cached rows
      {1, 448, 2, 64, 448, 9, 1},    // decode step at pos 9: reads 10 of 448 rows
      {1, 448, 1, 64, 448, 0, 1},    // decode step at pos 0: one row
      {4, 1500, 1, 64, 1500, 0, 0},  // cross-attention over encoder memory
      {3, 19, 2, 20, 21, 0, 0},
      {2, 9, 3, 1, 9, 0, 0},
      {6, 13, 1, 7, 13, 2, 1},
      {2, 23, 2, 72, 30, 0, 0},
      {3, 17, 1, 136, 17, 0, 0},
      {2, 5, 1, 8, 5, 0, 0},
      // Tq >= CKW_F32_ATTENTION_BLOCK_MIN_TQ: the blocked path, partial blocks and tiles.
      {40, 29, 2, 64, 33, 0, 0},
      {8, 8, 1, 64, 8, 0, 1},
      {45, 50, 2, 64, 64, 5, 1},
      {20, 1500, 1, 64, 1500, 0, 0},
      {35, 35, 2, 20, 35, 0, 1},
      {9, 3, 3, 72, 4, 0, 0},
      {17, 7, 1, 1, 7, 0, 0},
      {33, 40, 1, 40, 40, 7, 1},
  };
  int fails = 0, n = 0;
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
    if (!test_isa_runs(isas[i].isa, isas[i].ok)) continue;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
      const int64_t* a = cases[c];
      fails += !check(isas[i].isa, isas[i].f, a[0], a[1], a[2], a[3], a[4], a[5], (int)a[6], 0);
      ++n;
      // The shift needs Dh = 64 (scale 1/8); its rounding (~eps * 96 per score) is only
      // inside the bound for long rows, whose sqrt(K) is large.
      if (a[3] == 64 && a[1] >= 400) {
        fails += !check(isas[i].isa, isas[i].f, a[0], a[1], a[2], a[3], a[4], a[5], (int)a[6], 1);
        ++n;
      }
    }
  }
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
    if (!test_isa_runs(isas[i].isa, isas[i].ok)) continue;
    for (size_t c = 0; c < sizeof paged_cases / sizeof paged_cases[0]; ++c, ++n)
      fails +=
          !check_paged(isas[i].isa, isas[i].f, isas[i].paged, isas[i].scores, isas[i].scores_paged, paged_cases[c]);
    fails += check_rows(isas[i].isa, isas[i].f, isas[i].paged) != 0;
    ++n;
  }
  fails += check_batched();
  fails += check_scores();
  printf("%d/%d attention cases passed\n", n - fails, n);
  return fails != 0;
}
