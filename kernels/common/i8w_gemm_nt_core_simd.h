// The SIMD paths of the int8-weight engine (contract and layouts: i8w_gemm_nt_core.h), written
// once and included (a template: no include guard) by each path's source after simd_avx2.h (8
// lanes) or simd_avx512.h (16 lanes), which define:
//   I8_VNNI      1: vpdpbusd of W + 128 (unsigned) with q, less 128 * sum_k q; 0: vpmaddubsw of |q|
//                with W carrying q's sign (vpsignb);
//   I8_FEATURES  the target of every function here (replaced by the emulation's under
//                CKW_EMULATE_AVX512, where vnni_amx_int8_emulation.h stands in for the instructions);
//   I8_MR, I8_NRV rows and vectors of columns of the packed path's register tile (I8_MR <= 6);
//   I8_ENTRY     (optional) the engine entry defined at the end, I8_EMU_(name) names it.
// Also used by the amxint8 source for its quantizer, W packing and epilogue.
#include <string.h>

#include "kernels/common/i8w_gemm_nt_core.h"

#ifdef CKW_EMULATE_AVX512
#include "kernels/common/vnni_amx_int8_emulation.h"
#undef I8_FEATURES
#define I8_FEATURES "avx2,fma,f16c"
#define I8_EMU_(name) name##emu
#else
#define I8_EMU_(name) name
#endif

#define I8_FN static inline __attribute__((target(I8_FEATURES)))
#define I8_VI static inline __attribute__((always_inline, target(I8_FEATURES)))
#define I8_VB (4 * CKW_VW)                    // bytes per vector
#define I8_DOT_N (CKW_VW == 16 ? 4 : 2)       // W rows per dot-product step
#define I8_OFFSET (I8_VNNI ? 0x80808080 : 0)  // W's bytes as vpdpbusd's unsigned operand: w + 128
// The streaming (dot-product) path prefetches W this many rows ahead, into L2 (T1): hardware
// prefetch alone keeps too few lines in flight for a GEMV over W from memory. One thread, base's
// logits (51865 x 512, cold), Zen 4: none 7.7 GB/s (avx512vnni) / 7.0 (avx2); T0 at 16 rows 10.5 /
// 10.4; T1 at 8 rows 13.7 / 22.0, at 16 rows 20 / 24 (a plain streaming read: 27 GB/s).
#define I8_PF_ROWS 16

#if CKW_VW == 16
typedef __m512i i8_vi;
I8_VI i8_vi i8_zero_(void) { return _mm512_setzero_si512(); }
I8_VI i8_vi i8_load_(const void* p) { return _mm512_loadu_si512(p); }
I8_VI void i8_store_(void* p, i8_vi v) { _mm512_storeu_si512(p, v); }
I8_VI i8_vi i8_set1_(int32_t v) { return _mm512_set1_epi32(v); }
I8_VI i8_vi i8_add_(i8_vi a, i8_vi b) { return _mm512_add_epi32(a, b); }
I8_VI i8_vi i8_xor_(i8_vi a, int32_t b) { return _mm512_xor_si512(a, _mm512_set1_epi32(b)); }
I8_VI ckw_vf i8_tof_(i8_vi a) { return _mm512_cvtepi32_ps(a); }
I8_VI i8_vi i8_cvt_(ckw_vf a) { return _mm512_cvtps_epi32(a); }
#define I8_DPBUSD_INTRIN_ _mm512_dpbusd_epi32
#define I8_DPBUSD_ASM_ "vpdpbusd %2, %1, %0"
// The sums of v[0..3]'s lanes, less off, into out[0..3].
I8_VI void i8_hsums_(const i8_vi* v, int32_t off, int32_t* out) {
  __m256i e[4];
  for (int j = 0; j < 4; ++j) e[j] = _mm256_add_epi32(_mm512_castsi512_si256(v[j]), _mm512_extracti64x4_epi64(v[j], 1));
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(e[0], e[1]), _mm256_hadd_epi32(e[2], e[3]));
  const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  _mm_storeu_si128((__m128i*)out, _mm_sub_epi32(s, _mm_set1_epi32(off)));
}
// Lanes [0, rows) from the dwords base + idx[j]; 0 beyond.
I8_VI i8_vi i8_gather_(const void* base, i8_vi idx, int64_t rows) {
  return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), (__mmask16)((1u << rows) - 1u), idx, base, 1);
}
I8_VI i8_vi i8_iota_times_(int32_t k) {
  return _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                            _mm512_set1_epi32(k));
}
// Lanes clamped to [-127, 127]: their sum added to *sum, their bytes stored at p.
I8_VI void i8_narrow_(int8_t* p, i8_vi v, i8_vi* sum) {
  v = _mm512_min_epi32(_mm512_max_epi32(v, _mm512_set1_epi32(-127)), _mm512_set1_epi32(127));
  *sum = _mm512_add_epi32(*sum, v);
  _mm_storeu_si128((__m128i*)p, _mm512_cvtepi32_epi8(v));
}
#else
typedef __m256i i8_vi;
I8_VI i8_vi i8_zero_(void) { return _mm256_setzero_si256(); }
I8_VI i8_vi i8_load_(const void* p) { return _mm256_loadu_si256((const __m256i*)p); }
I8_VI void i8_store_(void* p, i8_vi v) { _mm256_storeu_si256((__m256i*)p, v); }
I8_VI i8_vi i8_set1_(int32_t v) { return _mm256_set1_epi32(v); }
I8_VI i8_vi i8_add_(i8_vi a, i8_vi b) { return _mm256_add_epi32(a, b); }
I8_VI i8_vi i8_xor_(i8_vi a, int32_t b) { return _mm256_xor_si256(a, _mm256_set1_epi32(b)); }
I8_VI ckw_vf i8_tof_(i8_vi a) { return _mm256_cvtepi32_ps(a); }
I8_VI i8_vi i8_cvt_(ckw_vf a) { return _mm256_cvtps_epi32(a); }
#define I8_DPBUSD_INTRIN_ _mm256_dpbusd_avx_epi32
#define I8_DPBUSD_ASM_ "%{vex%} vpdpbusd %2, %1, %0"
I8_VI void i8_hsums_(const i8_vi* v, int32_t off, int32_t* out) {
  const __m256i h = _mm256_hadd_epi32(v[0], v[1]);
  const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  _mm_storel_epi64((__m128i*)out, _mm_sub_epi32(_mm_hadd_epi32(s, s), _mm_set1_epi32(off)));
}
I8_VI i8_vi i8_gather_(const void* base, i8_vi idx, int64_t rows) {
  const __m256i on = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), (const int*)base, idx, on, 1);
}
I8_VI i8_vi i8_iota_times_(int32_t k) {
  return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(k));
}
I8_VI void i8_narrow_(int8_t* p, i8_vi v, i8_vi* sum) {
  v = _mm256_min_epi32(_mm256_max_epi32(v, _mm256_set1_epi32(-127)), _mm256_set1_epi32(127));
  *sum = _mm256_add_epi32(*sum, v);
  const __m256i h = _mm256_packs_epi32(v, v), b = _mm256_packs_epi16(h, h);  // lane l: its 4 values in bytes 0-3
  _mm_storel_epi64((__m128i*)p, _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1)));
}
#endif

#if I8_VNNI
// acc + u (unsigned bytes) . s (signed bytes) per 4 bytes. GCC 12 copies the accumulator of the
// intrinsic around the instruction and, with a tile's 24 of them, spills every one each step
// (1500 x 384 x 384 on zmm: 300 against 460 GFLOPS): the instruction in place instead (the
// emulated build keeps the intrinsic).
I8_VI i8_vi i8_dpbusd_(i8_vi acc, i8_vi u, i8_vi s) {
#ifdef CKW_EMULATE_AVX512
  return I8_DPBUSD_INTRIN_(acc, u, s);
#else
  __asm__(I8_DPBUSD_ASM_ : "+v"(acc) : "v"(u), "v"(s));
  return acc;
#endif
}
#endif

// acc + the 4-k products of q (xs: a vector of it as stored; xu: |q| for the sign trick) with W
// (w: as i8_pack_w_ or the dot step hands it over: w + 128 for VNNI). VNNI: one vpdpbusd, whose
// unsigned operand is w + 128 (the row sums of q take the 128 out). Otherwise vpmaddubsw of |q|
// with W carrying q's sign (vpsignb; 0 where q is 0): |q| * (+-w) = q * w, and a pair is at most
// 2 * 127 * 127 < 2^15, so nothing saturates; vpmaddwd adds the pairs into int32.
#if I8_VNNI
#define I8_XU(xs) (xs)
I8_VI i8_vi i8_dot_(i8_vi acc, i8_vi xs, i8_vi xu, i8_vi w) { return (void)xu, i8_dpbusd_(acc, w, xs); }
#else
#define I8_XU(xs) _mm256_abs_epi8(xs)
I8_VI i8_vi i8_dot_(i8_vi acc, i8_vi xs, i8_vi xu, i8_vi w) {
  const __m256i pairs = _mm256_maddubs_epi16(xu, _mm256_sign_epi8(w, xs));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}
#endif
// What the offset adds to row m's sums, to take away: 128 * sum_k q[m, k] (wrapping, as the sums).
#define I8_ROW_OFF(a, m) (I8_VNNI ? (int32_t)((uint32_t)(a)->s.rs[m] << 7) : 0)

typedef struct {
  float* y;
  const int8_t* w;
  const float *w_scale, *b, *r;
  ckw_i8w_scratch s;
  int64_t M, N, K, ldy;
  int epi;
} i8_args;

// Row x[0, K) quantized into q[0, kp) (0 from K on), its sum into *rs; returns s = a / 127. The
// steps of ckw_i8w_quantize_row: max |x| is exact in any order, then one division, and per element
// one multiply, vcvtps2dq and the clamp.
I8_FN float i8_quantize_row_(int8_t* q, int32_t* rs, const float* x, int64_t K, int64_t kp) {
  ckw_vf mx[4] = {ckw_v_zero(), ckw_v_zero(), ckw_v_zero(), ckw_v_zero()};  // 4 chains: max's latency
  int64_t k = 0;
  for (; k + 4 * CKW_VW <= K; k += 4 * CKW_VW)
    for (int c = 0; c < 4; ++c) mx[c] = ckw_v_max(mx[c], ckw_v_abs(ckw_v_load(x + k + c * CKW_VW)));
  for (; k + CKW_VW <= K; k += CKW_VW) mx[0] = ckw_v_max(mx[0], ckw_v_abs(ckw_v_load(x + k)));
  if (k < K) mx[1] = ckw_v_max(mx[1], ckw_v_abs(ckw_v_loadn(x + k, K - k)));
  const float a = ckw_v_hmax(ckw_v_max(ckw_v_max(mx[0], mx[1]), ckw_v_max(mx[2], mx[3])));
  *rs = 0;
  if (a == 0.0f) {
    memset(q, 0, (size_t)kp);
    return 0.0f;
  }
  const ckw_vf inv = ckw_v_set1(127.0f / a);
  i8_vi sum = i8_zero_();
  for (k = 0; k < K; k += CKW_VW) {  // past K: 0 (not 0 * inv, NaN where inv is infinite)
    const ckw_vf v = k + CKW_VW <= K ? ckw_v_mul(ckw_v_load(x + k), inv)
                                     : ckw_v_keepn(ckw_v_mul(ckw_v_loadn(x + k, K - k), inv), K - k);
    i8_narrow_(q + k, i8_cvt_(v), &sum);
  }
  memset(q + k, 0, (size_t)(kp - k));
  int32_t lanes[CKW_VW];
  i8_store_(lanes, sum);
  for (int l = 0; l < CKW_VW; ++l) *rs += lanes[l];
  return a / 127.0f;
}

// Every row of x quantized into s.q (rows kp bytes apart), s.sx and s.rs.
I8_FN void i8_quantize_(const i8_args* a, const float* x) {
  for (int64_t m = 0; m < a->M; ++m)
    a->s.sx[m] = i8_quantize_row_(a->s.q + m * a->s.kp, a->s.rs + m, x + m * a->K, a->K, a->s.kp);
}

// The first nv of CKW_VW floats at p (0 beyond, not read).
I8_VI ckw_vf i8_loadf_(const float* p, int64_t nv) { return nv == CKW_VW ? ckw_v_load(p) : ckw_v_loadn(p, nv); }

// y[m, n0 + j], j < nv, from the exact int32 sums in acc's lanes j: (float)acc * (s[m] * w_scale[n])
// (+ b[n]), then GELU or r + (r read before y is written, so y == r is fine).
I8_VI void i8_epilogue_(const i8_args* a, i8_vi acc, int64_t m, int64_t n0, int64_t nv) {
  ckw_vf v = ckw_v_mul(i8_tof_(acc), ckw_v_mul(ckw_v_set1(a->s.sx[m]), i8_loadf_(a->w_scale + n0, nv)));
  if (a->b) v = ckw_v_add(v, i8_loadf_(a->b + n0, nv));
  if (a->epi == CKW_GEMM_EPI_GELU) v = ckw_v_gelu(v);
  const int64_t o = m * a->ldy + n0;
  if (a->epi == CKW_GEMM_EPI_RESIDUAL) v = ckw_v_add(i8_loadf_(a->r + o, nv), v);
  if (nv == CKW_VW)
    ckw_v_store(a->y + o, v);
  else
    ckw_v_storen(a->y + o, v, nv);
}

// W rows [0, nv) (nv <= CKW_I8W_PANEL) packed into wp as CKW_I8W_PANEL / CKW_VW vectors of columns,
// each `groups` vectors (I8_VB bytes apart; vector v's at wp + v * groups * I8_VB) whose lane j holds
// the 4 bytes W[v * CKW_VW + j][4g .. 4g + 3] (0 past nv and past K), each xor-ed with `offset`.
I8_FN void i8_pack_w_(int8_t* wp, const int8_t* w, int64_t nv, int64_t K, int64_t groups, int32_t offset) {
  const int64_t whole = K / 4, tail = K % 4;
  const i8_vi idx = i8_iota_times_((int32_t)K);
  for (int64_t v = 0; v < CKW_I8W_PANEL / CKW_VW; ++v) {
    const int64_t rows = nv - v * CKW_VW < 0 ? 0 : nv - v * CKW_VW > CKW_VW ? CKW_VW : nv - v * CKW_VW;
    const int8_t* wv = w + (rows ? v * CKW_VW * K : 0);
    int8_t* dst = wp + v * groups * I8_VB;
    int64_t g = 0;
    for (; g < whole && rows; ++g) i8_store_(dst + g * I8_VB, i8_xor_(i8_gather_(wv + 4 * g, idx, rows), offset));
    if (tail && rows) {  // the last partial group, zero-padded (nothing past W is read)
      int32_t t[CKW_VW] = {0};
      for (int64_t j = 0; j < rows; ++j) memcpy(&t[j], wv + j * K + 4 * whole, (size_t)tail);
      i8_store_(dst + g++ * I8_VB, i8_xor_(i8_load_(t), offset));
    }
    for (; g < groups; ++g) i8_store_(dst + g * I8_VB, i8_set1_(offset));
  }
}

// Rows [m0, m0 + mr) of y, columns [n0, n0 + I8_NRV * CKW_VW) of the packed block wp, nv of them
// in y: per 4-k group, one broadcast of each row's 4 bytes of q against I8_NRV vectors of W.
static inline __attribute__((always_inline, target(I8_FEATURES))) void i8_tile_(const i8_args* a, const int8_t* wp,
                                                                                int64_t groups, int64_t m0,
                                                                                const int mr, int64_t n0, int64_t nv) {
  i8_vi acc[I8_MR][I8_NRV];
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < I8_NRV; ++j) acc[i][j] = i8_zero_();
  const int8_t* x0 = a->s.q + m0 * a->s.kp;
  for (int64_t g = 0; g < groups; ++g) {
    i8_vi wv[I8_NRV];
    for (int j = 0; j < I8_NRV; ++j) wv[j] = i8_load_(wp + (j * groups + g) * I8_VB);
    for (int i = 0; i < mr; ++i) {
      int32_t d;
      memcpy(&d, x0 + i * a->s.kp + 4 * g, sizeof d);
      const i8_vi xs = i8_set1_(d), xu = I8_XU(xs);
      for (int j = 0; j < I8_NRV; ++j) acc[i][j] = i8_dot_(acc[i][j], xs, xu, wv[j]);
    }
  }
  for (int i = 0; i < mr; ++i) {
    const i8_vi off = i8_set1_(-I8_ROW_OFF(a, m0 + i));
    for (int j = 0; j < I8_NRV; ++j)  // constant bounds, so acc stays in registers
      if (j * CKW_VW < nv)
        i8_epilogue_(a, i8_add_(acc[i][j], off), m0 + i, n0 + j * CKW_VW,
                     nv - j * CKW_VW < CKW_VW ? nv - j * CKW_VW : CKW_VW);
  }
}

// i8_tile_ per row count, each compiled on its own so its accumulators get the registers.
typedef void (*i8_tile_fn)(const i8_args*, const int8_t*, int64_t, int64_t, int64_t, int64_t);
#define I8_TILE_FN_(r)                                                                          \
  static __attribute__((noinline, target(I8_FEATURES))) void i8_tile##r##_(                     \
      const i8_args* a, const int8_t* wp, int64_t groups, int64_t m0, int64_t n0, int64_t nv) { \
    i8_tile_(a, wp, groups, m0, r, n0, nv);                                                     \
  }
// Macro instantiations: clang-format would join and indent them as one statement.
// clang-format off
I8_TILE_FN_(1) I8_TILE_FN_(2) I8_TILE_FN_(3) I8_TILE_FN_(4)
#if I8_MR > 4
I8_TILE_FN_(5) I8_TILE_FN_(6)
#define I8_TILES_ {NULL, i8_tile1_, i8_tile2_, i8_tile3_, i8_tile4_, i8_tile5_, i8_tile6_}
#else
#define I8_TILES_ {NULL, i8_tile1_, i8_tile2_, i8_tile3_, i8_tile4_}
#endif
// clang-format on
#undef I8_TILE_FN_

    // M > CKW_I8W_DOT_ROWS: W packed CKW_I8W_PANEL columns at a time (once per call), then every row
    // against the block in tiles of I8_MR rows.
    I8_FN void i8_packed_(const i8_args* a) {
  static const i8_tile_fn tiles[I8_MR + 1] = I8_TILES_;
  const int64_t groups = (a->K + 3) / 4;
  for (int64_t nb = 0; nb < a->N; nb += CKW_I8W_PANEL) {
    const int64_t nbv = a->N - nb < CKW_I8W_PANEL ? a->N - nb : CKW_I8W_PANEL;
    i8_pack_w_(a->s.wp, a->w + nb * a->K, nbv, a->K, groups, I8_OFFSET);
    for (int64_t m0 = 0; m0 < a->M; m0 += I8_MR) {
      const int64_t mr = a->M - m0 < I8_MR ? a->M - m0 : I8_MR;
      for (int64_t c = 0; c < nbv; c += I8_NRV * CKW_VW)
        tiles[mr](a, a->s.wp + c / CKW_VW * groups * I8_VB, groups, m0, nb + c, nbv - c);
    }
  }
}

// One I8_VB-k step of the dot products: W vectors wv against mr rows of x (kp apart).
static inline __attribute__((always_inline, target(I8_FEATURES))) void i8_dot_step_(i8_vi acc[][I8_DOT_N],
                                                                                    const i8_vi* wv, const int8_t* x,
                                                                                    int64_t kp, const int mr) {
  for (int i = 0; i < mr; ++i) {
    const i8_vi xs = i8_load_(x + i * kp), xu = I8_XU(xs);
    for (int j = 0; j < I8_DOT_N; ++j) acc[i][j] = i8_dot_(acc[i][j], xs, xu, wv[j]);
  }
}

// The dot products of rows [m0, m0 + mr) of q (mr <= 4) with I8_DOT_N rows of W (w: the first;
// tail: their last K % I8_VB bytes zero-padded, I8_VB apart), into c[i][j] (rows CKW_VW apart).
// pf: the rows to prefetch into L2, one cache line each per step (bits unchanged).
static inline __attribute__((always_inline, target(I8_FEATURES))) void i8_dots_(const i8_args* a, int64_t m0,
                                                                                const int8_t* const* w,
                                                                                const int8_t* const* pf,
                                                                                const int8_t* tail, const int mr,
                                                                                int32_t* c) {
  const int64_t whole = a->K / I8_VB * I8_VB, kp = a->s.kp;
  const int8_t* x = a->s.q + m0 * kp;
  i8_vi acc[4][I8_DOT_N], wv[I8_DOT_N];
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < I8_DOT_N; ++j) acc[i][j] = i8_zero_();
  for (int64_t k = 0; k < whole; k += I8_VB) {
    for (int j = 0; j < I8_DOT_N; ++j) _mm_prefetch((const char*)(pf[j] + k), _MM_HINT_T1);
    for (int j = 0; j < I8_DOT_N; ++j) wv[j] = i8_xor_(i8_load_(w[j] + k), I8_OFFSET);
    i8_dot_step_(acc, wv, x + k, kp, mr);
  }
  if (whole < a->K) {
    for (int j = 0; j < I8_DOT_N; ++j) wv[j] = i8_xor_(i8_load_(tail + j * I8_VB), I8_OFFSET);
    i8_dot_step_(acc, wv, x + whole, kp, mr);
  }
  for (int i = 0; i < mr; ++i) i8_hsums_(acc[i], I8_ROW_OFF(a, m0 + i), c + i * CKW_VW);
}

// i8_dots_ per row count, each compiled on its own so its accumulators get the registers.
#define I8_DOTS_FN_(r)                                                                                                 \
  static __attribute__((noinline, target(I8_FEATURES))) void i8_dots##r##_(                                            \
      const i8_args* a, int64_t m0, const int8_t* const* w, const int8_t* const* pf, const int8_t* tail, int32_t* c) { \
    i8_dots_(a, m0, w, pf, tail, r, c);                                                                                \
  }
// Macro instantiations: clang-format would join and indent them as one statement.
// clang-format off
I8_DOTS_FN_(1) I8_DOTS_FN_(2) I8_DOTS_FN_(3) I8_DOTS_FN_(4)
// clang-format on
#undef I8_DOTS_FN_

    // M <= CKW_I8W_DOT_ROWS (decode, beams): W read once, as stored, CKW_VW rows at a time (again from
    // cache for each group of 4 rows of x); each output a dot product along K.
    I8_FN void i8_dot_rows_(const i8_args* a) {
  typedef void (*dots_fn)(const i8_args*, int64_t, const int8_t* const*, const int8_t* const*, const int8_t*, int32_t*);
  static const dots_fn dots[5] = {NULL, i8_dots1_, i8_dots2_, i8_dots3_, i8_dots4_};
  const int64_t whole = a->K / I8_VB * I8_VB;
  for (int64_t n0 = 0; n0 < a->N; n0 += CKW_VW) {
    const int64_t nv = a->N - n0 < CKW_VW ? a->N - n0 : CKW_VW;
    int8_t tail[CKW_VW * I8_VB] __attribute__((aligned(64)));
    int32_t c[CKW_I8W_DOT_ROWS * CKW_VW] __attribute__((aligned(64)));
    if (nv < CKW_VW) memset(c, 0, sizeof c);  // lanes no dot product writes, read by the epilogue
    if (whole < a->K) {
      memset(tail, 0, sizeof tail);
      for (int64_t j = 0; j < nv; ++j) memcpy(tail + j * I8_VB, a->w + (n0 + j) * a->K + whole, (size_t)(a->K - whole));
    }
    for (int64_t j0 = 0; j0 < nv; j0 += I8_DOT_N) {
      const int8_t *w[I8_DOT_N], *pf[I8_DOT_N];
      for (int j = 0; j < I8_DOT_N; ++j) {
        const int64_t row = n0 + (j0 + j < nv ? j0 + j : j0);  // past nv: unused
        w[j] = a->w + row * a->K;
        // Near the end of W, prefetch a row already read rather than point past the array.
        pf[j] = row + I8_PF_ROWS < a->N ? w[j] + I8_PF_ROWS * a->K : w[j];
      }
      for (int64_t m0 = 0; m0 < a->M; m0 += 4)
        dots[a->M - m0 < 4 ? a->M - m0 : 4](a, m0, w, pf, tail + j0 * I8_VB, c + m0 * CKW_VW + j0);
    }
    for (int64_t m = 0; m < a->M; ++m) i8_epilogue_(a, i8_load_(c + m * CKW_VW), m, n0, nv);
  }
}

#ifdef I8_ENTRY
void I8_ENTRY(float* y, const float* x, const int8_t* w, const float* w_scale, const float* b, const float* r,
              void* scratch, int64_t M, int64_t N, int64_t K, int64_t ldy, int epi) {
  if (M <= 0 || N <= 0) return;
  const i8_args a = {y, w, w_scale, b, r, ckw_i8w_scratch_at(scratch, M, K), M, N, K, ldy, epi};
  i8_quantize_(&a, x);
  if (M <= CKW_I8W_DOT_ROWS)
    i8_dot_rows_(&a);
  else
    i8_packed_(&a);
}
#endif
