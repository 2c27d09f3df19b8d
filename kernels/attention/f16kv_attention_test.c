// ckw_f16kv_attention and its scores and paged forms, every ISA path (the emulated AVX-512 one in
// the *_avx512emu test): each gives, bit for bit, what the f32 kernel's same path gives on the K/V
// rows widened to f32 (the contract: kernels/attention/f16kv_attention.h). Row and blocked paths
// (Tq 1, 3, 8, 33), Dh 64, tails (40, 7) and 136 (several passes, several widened slices of a
// blocked path's key tile), causal or not, rows cached before the queries, several
// heads with rows ld > H * Dh apart; paged calls against the contiguous call on each sequence's
// gathered f16 cache (shuffled blocks, beams sharing a table row, cross-attention's one block of
// R = Tk rows, a chunk of the blocks' heads). The f16 values include the range's edges (65504,
// the smallest normal, subnormals) and negative zeros; every cache row no query may read holds
// NaN, and every output must be finite, so a stray read fails even where both kernels made it.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKW_TEST_SEED 0x6A09E667F3BCC909ull  // frand()
#include "kernels/attention/f16kv_attention.h"
#include "kernels/attention/f16kv_attention_contract.h"
#include "kernels/common/cpu.h"
#include "kernels/common/f16.h"
#include "kernels/common/test_util.h"

#ifdef CKW_TEST_AVX512_EMULATION
void ckw_f16kv_attention__avx512emu(CKW_F16KV_ATTENTION_PARAMS);
void ckw_f16kv_attention_scores__avx512emu(CKW_F16KV_ATTENTION_SCORES_PARAMS);
void ckw_f16kv_attention_paged__avx512emu(CKW_F16KV_ATTENTION_PAGED_PARAMS);
void ckw_f16kv_attention_scores_paged__avx512emu(CKW_F16KV_ATTENTION_SCORES_PAGED_PARAMS);
void ckw_f32_attention__avx512emu(CKW_F32_ATTENTION_PARAMS);
void ckw_f32_attention_scores__avx512emu(CKW_F32_ATTENTION_SCORES_PARAMS);
void ckw_f32_attention_paged__avx512emu(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_f32_attention_scores_paged__avx512emu(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS);
#endif

enum { F16_NAN = 0x7e00 };

// One ISA path of both kernels.
typedef struct {
  const char* isa;
  int ok;
  void (*attn)(CKW_F16KV_ATTENTION_PARAMS);
  void (*attn32)(CKW_F32_ATTENTION_PARAMS);
  void (*scores)(CKW_F16KV_ATTENTION_SCORES_PARAMS);
  void (*scores32)(CKW_F32_ATTENTION_SCORES_PARAMS);
  void (*paged)(CKW_F16KV_ATTENTION_PAGED_PARAMS);
  void (*paged32)(CKW_F32_ATTENTION_PAGED_PARAMS);
  void (*scores_paged)(CKW_F16KV_ATTENTION_SCORES_PAGED_PARAMS);
  void (*scores_paged32)(CKW_F32_ATTENTION_SCORES_PAGED_PARAMS);
} path_;

// Mostly N(0, ~1)-like values rounded to f16; 3% the range's edges: +-65504, +-2^-14 (smallest
// normal), subnormals (2^-24, 1023 * 2^-24), +-0, +-1.
static uint16_t f16_rand(void) {
  static const uint16_t edges[] = {0x7bff, 0xfbff, 0x0400, 0x8400, 0x0001, 0x83ff, 0x8000, 0x0000, 0x3c00, 0xbc00};
  const float u = frand();
  if (u > 0.94f) return edges[(int)((u - 0.94f) * 1000.0f) % 10];
  return ckw_f32_to_f16(2.0f * frand());
}

static float* widen(const uint16_t* h, int64_t n) {
  float* f = malloc(sizeof(float) * (n > 0 ? n : 1));
  for (int64_t i = 0; i < n; ++i) f[i] = ckw_f16_to_f32(h[i]);
  return f;
}

// Finite outputs in the heads' columns of Tq rows (ld apart); the rest kept at the fill.
static int outputs_ok(const float* o, int64_t rows, int64_t H, int64_t Dh, int64_t ld, int64_t h0) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < ld; ++c) {
      const int ours = c >= h0 * Dh && c < (h0 + H) * Dh;
      if (ours ? !isfinite(o[i * ld + c]) : o[i * ld + c] != -1234.0f) return 0;
    }
  return 1;
}

// Scores [.., Tq, Tk] of one sequence: finite where query i sees key j, -inf elsewhere.
static int scores_ok(const float* s, int64_t H, int64_t Tq, int64_t Tk, int64_t q_pos, int causal) {
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < Tq; ++i)
      for (int64_t j = 0; j < Tk; ++j) {
        const float x = s[(h * Tq + i) * Tk + j];
        if (causal && j > q_pos + i ? x != -INFINITY : !isfinite(x)) return 0;
      }
  return 1;
}

// The single and scores entries on one cache [H, cap, Dh] against the f32 path on it widened.
static int check(const path_* p, int64_t Tq, int64_t Tk, int64_t H, int64_t Dh, int64_t q_pos, int causal,
                 int64_t pad) {
  const int64_t cap = (Tk > q_pos + Tq ? Tk : q_pos + Tq) + 2, ld = H * Dh + pad, nkv = H * cap * Dh;
  const float scale = 1.0f / sqrtf((float)Dh);
  float* q = malloc(sizeof(float) * Tq * ld);
  uint16_t* k = malloc(sizeof(uint16_t) * nkv);
  uint16_t* v = malloc(sizeof(uint16_t) * nkv);
  float* o = malloc(sizeof(float) * Tq * ld);
  float* o32 = malloc(sizeof(float) * Tq * ld);
  float* s = malloc(sizeof(float) * (H * Tq * Tk + 1));
  float* s32 = malloc(sizeof(float) * (H * Tq * Tk + 1));
  float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(Tq, Tk, H, Dh));
  for (int64_t i = 0; i < Tq * ld; ++i) q[i] = 2.0f * frand(), o[i] = o32[i] = -1234.0f;
  for (int64_t i = 0; i < nkv; ++i) {
    const int64_t j = i / Dh % cap;
    const int unread = j >= Tk || (causal && j > q_pos + Tq - 1);
    k[i] = unread ? F16_NAN : f16_rand(), v[i] = unread ? F16_NAN : f16_rand();
  }
  float *k32 = widen(k, nkv), *v32 = widen(v, nkv);
  p->attn(o, q, k, v, scratch, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
  p->attn32(o32, q, k32, v32, scratch, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
  p->scores(s, q, k, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
  p->scores32(s32, q, k32, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
  const int ok = memcmp(o, o32, sizeof(float) * Tq * ld) == 0 && outputs_ok(o, Tq, H, Dh, ld, 0) &&
                 memcmp(s, s32, sizeof(float) * H * Tq * Tk) == 0 && scores_ok(s, H, Tq, Tk, q_pos, causal);
  if (!ok)
    fprintf(stderr,
            "%s Tq=%lld Tk=%lld H=%lld Dh=%lld ld=%lld q_pos=%lld causal=%d: not the f32 path's bits on the "
            "widened rows, or not finite\n",
            p->isa, (long long)Tq, (long long)Tk, (long long)H, (long long)Dh, (long long)ld, (long long)q_pos, causal);
  free(q), free(k), free(v), free(k32), free(v32), free(o), free(o32), free(s), free(s32), free(scratch);
  return ok;
}

// A paged call over heads h0 .. h0 + H - 1 of a pool [NB, Hp, R, Dh] against (a) the contiguous
// f16kv call on each sequence's gathered rows, (b) the f32 paged call on the widened pool; the
// scores likewise. beams: odd sequences share the table row before them (at their own position).
static int check_paged(const path_* p, const int64_t* c) {
  const int64_t B = c[0], Tq = c[1], Tk = c[2], H = c[3], Hp = c[4], Dh = c[5], R = c[6], MB = c[7], q0 = c[8];
  const int causal = (int)c[9], beams = (int)c[10];
  const int64_t h0 = Hp - H, NB = B * MB + 3, blk = Hp * R * Dh, cap = MB * R, ld = Hp * Dh + 1;
  const float scale = 1.0f / sqrtf((float)Dh);
  uint16_t* kp = malloc(sizeof(uint16_t) * NB * blk);
  uint16_t* vp = malloc(sizeof(uint16_t) * NB * blk);
  uint16_t* kc = malloc(sizeof(uint16_t) * H * cap * Dh);  // one sequence's rows, gathered
  uint16_t* vc = malloc(sizeof(uint16_t) * H * cap * Dh);
  float* q = malloc(sizeof(float) * B * Tq * ld);
  float* o = malloc(sizeof(float) * B * Tq * ld);
  float* o32 = malloc(sizeof(float) * B * Tq * ld);
  float* ref = malloc(sizeof(float) * B * Tq * ld);
  float* s = malloc(sizeof(float) * B * H * Tq * Tk);
  float* s32 = malloc(sizeof(float) * B * H * Tq * Tk);
  float* sref = malloc(sizeof(float) * B * H * Tq * Tk);
  float* scratch = malloc((size_t)ckw_f32_attention_scratch_bytes(Tq, Tk, H, Dh));
  int32_t* table = malloc(sizeof(int32_t) * B * MB);
  int32_t* ids = malloc(sizeof(int32_t) * NB);
  int32_t pos[16];
  for (int64_t i = 0; i < NB * blk; ++i) kp[i] = vp[i] = F16_NAN;
  for (int64_t i = 0; i < B * Tq * ld; ++i) q[i] = 2.0f * frand(), o[i] = o32[i] = ref[i] = -1234.0f;
  shuffled_ids(ids, NB);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t m = 0; m < MB; ++m) table[b * MB + m] = beams && b % 2 ? table[(b - 1) * MB + m] : ids[b * MB + m];
    pos[b] = causal ? (int32_t)rand_below(Tk - Tq - q0 + 1) : 0;
    const int64_t n = causal && pos[b] + q0 + Tq < Tk ? pos[b] + q0 + Tq : Tk;  // rows it reads
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < Hp * Dh; ++i) {
        const int64_t at = table[b * MB + j / R] * blk + (i / Dh * R + j % R) * Dh + i % Dh;
        if (kp[at] == F16_NAN) kp[at] = f16_rand(), vp[at] = f16_rand();
      }
  }
  float *kp32 = widen(kp, NB * blk), *vp32 = widen(vp, NB * blk);
  const int rc = ckw_f32_attention_paged_check(pos, table, B, Tq, Tk, NB, R, MB, q0, causal);
  const uint16_t *kh = kp + h0 * R * Dh, *vh = vp + h0 * R * Dh;
  p->paged(o + h0 * Dh, q + h0 * Dh, kh, vh, pos, table, scratch, B, Tq, Tk, H, Dh, ld, Hp, NB, R, MB, q0, causal,
           scale);
  p->paged32(o32 + h0 * Dh, q + h0 * Dh, kp32 + h0 * R * Dh, vp32 + h0 * R * Dh, pos, table, scratch, B, Tq, Tk, H, Dh,
             ld, Hp, NB, R, MB, q0, causal, scale);
  p->scores_paged(s, q + h0 * Dh, kh, pos, table, B, Tq, Tk, H, Dh, ld, Hp, NB, R, MB, q0, causal, scale);
  p->scores_paged32(s32, q + h0 * Dh, kp32 + h0 * R * Dh, pos, table, B, Tq, Tk, H, Dh, ld, Hp, NB, R, MB, q0, causal,
                    scale);
  int ok = rc == 0;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h)
      for (int64_t j = 0; j < cap; ++j)
        for (int64_t d = 0; d < Dh; ++d) {
          const int64_t at = table[b * MB + j / R] * blk + ((h0 + h) * R + j % R) * Dh + d;
          kc[(h * cap + j) * Dh + d] = kp[at], vc[(h * cap + j) * Dh + d] = vp[at];
        }
    const int64_t q_pos = pos[b] + q0;
    p->attn(ref + b * Tq * ld + h0 * Dh, q + b * Tq * ld + h0 * Dh, kc, vc, scratch, Tq, Tk, H, Dh, ld, cap, q_pos,
            causal, scale);
    p->scores(sref + b * H * Tq * Tk, q + b * Tq * ld + h0 * Dh, kc, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);
    ok = ok && scores_ok(s + b * H * Tq * Tk, H, Tq, Tk, q_pos, causal);
  }
  const size_t no = sizeof(float) * B * Tq * ld, ns = sizeof(float) * B * H * Tq * Tk;
  ok = ok && memcmp(o, ref, no) == 0 && memcmp(o, o32, no) == 0 && outputs_ok(o, B * Tq, H, Dh, ld, h0) &&
       memcmp(s, sref, ns) == 0 && memcmp(s, s32, ns) == 0;
  if (!ok)
    fprintf(stderr,
            "%s paged B=%lld Tq=%lld Tk=%lld H=%lld Hp=%lld Dh=%lld R=%lld MB=%lld q0=%lld causal=%d beams=%d "
            "(check %d): not the contiguous call's or the f32 paged call's bits, or not finite\n",
            p->isa, (long long)B, (long long)Tq, (long long)Tk, (long long)H, (long long)Hp, (long long)Dh,
            (long long)R, (long long)MB, (long long)q0, causal, beams, rc);
  free(kp), free(vp), free(kp32), free(vp32), free(kc), free(vc), free(q), free(o), free(o32), free(ref), free(s);
  free(s32), free(sref), free(scratch), free(table), free(ids);
  return ok;
}

int main(void) {
#define PATH(isa)                           \
  {#isa,                                    \
   ckw_cpu_has_##isa(),                     \
   ckw_f16kv_attention__##isa,              \
   ckw_f32_attention__##isa,                \
   ckw_f16kv_attention_scores__##isa,       \
   ckw_f32_attention_scores__##isa,         \
   ckw_f16kv_attention_paged__##isa,        \
   ckw_f32_attention_paged__##isa,          \
   ckw_f16kv_attention_scores_paged__##isa, \
   ckw_f32_attention_scores_paged__##isa},
  const path_ paths[] = {
      CKW_F16KV_ATTENTION_ISAS(PATH){"dispatch", 1, ckw_f16kv_attention, ckw_f32_attention, ckw_f16kv_attention_scores,
                                     ckw_f32_attention_scores, ckw_f16kv_attention_paged, ckw_f32_attention_paged,
                                     ckw_f16kv_attention_scores_paged, ckw_f32_attention_scores_paged},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, ckw_f16kv_attention__avx512emu, ckw_f32_attention__avx512emu,
       ckw_f16kv_attention_scores__avx512emu, ckw_f32_attention_scores__avx512emu, ckw_f16kv_attention_paged__avx512emu,
       ckw_f32_attention_paged__avx512emu, ckw_f16kv_attention_scores_paged__avx512emu,
       ckw_f32_attention_scores_paged__avx512emu},
#endif
  };
#undef PATH
  // Tq: the row path (1, 3) and the blocked one (>= CKW_F32_ATTENTION_BLOCK_MIN_TQ, partial blocks).
  static const int64_t tqs[] = {1, 3, 8, 33}, tks[] = {1, 5, 17, 100, 1500}, dhs[] = {64, 40, 7, 136};
  // B, Tq, Tk, H, Hp, Dh, R, MB, q0, causal, beams
  static const int64_t paged_cases[][11] = {
      {6, 1, 448, 2, 2, 64, 16, 28, 0, 1, 1},    // decode step, beams at their own positions
      {4, 3, 64, 2, 3, 64, 16, 4, 1, 1, 1},      // a few tokens each (row path), 2 of 3 heads
      {1, 33, 96, 2, 2, 64, 16, 6, 3, 1, 0},     // a prefill on the blocked path, tiles split at blocks
      {2, 33, 100, 1, 2, 40, 32, 4, 0, 1, 0},    // blocked, Dh 40
      {5, 1, 1500, 2, 2, 64, 1500, 1, 0, 0, 1},  // cross-attention: one block of R = Tk rows per entry
      {3, 8, 1500, 1, 1, 64, 1500, 1, 0, 0, 1},  // cross-attention of a blocked prompt
      {3, 3, 37, 2, 2, 7, 8, 5, 0, 1, 1},        // Dh 7
      {2, 1, 5, 1, 1, 64, 1, 5, 0, 1, 0},        // R = 1
  };
  int fails = 0, n = 0;
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; ++i) {
    if (!test_isa_runs(paths[i].isa, paths[i].ok)) continue;
    int c = 0;
    for (size_t a = 0; a < sizeof tqs / sizeof tqs[0]; ++a)
      for (size_t t = 0; t < sizeof tks / sizeof tks[0]; ++t)
        for (size_t d = 0; d < sizeof dhs / sizeof dhs[0]; ++d)
          for (int causal = 0; causal < 2; ++causal, ++c, ++n) {
            const int64_t Tq = tqs[a], Tk = tks[t];
            // causal: from an empty cache, or the queries last (decode: q_pos = Tk - 1)
            const int64_t q_pos = !causal ? c % 5 : c % 3 == 0 || Tk < Tq ? 0 : Tk - Tq;
            fails += !check(&paths[i], Tq, Tk, 1 + c % 3, dhs[d], q_pos, causal, c / 2 % 2 ? 3 : 0);
          }
    for (size_t c = 0; c < sizeof paged_cases / sizeof paged_cases[0]; ++c, ++n)
      fails += !check_paged(&paths[i], paged_cases[c]);
  }
  printf("%d/%d f16kv attention cases passed\n", n - fails, n);
  return fails != 0;
}
