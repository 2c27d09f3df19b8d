// ckw_f32_stream_frames against a naive reference that builds each window's row, pads it by
// reflection element by element and cuts the frames: Silero's geometries (16 and 8 kHz) and
// edge ones (C > W, C == 0, P == 0, P == C + W - 1, hop > frame, one frame), N == 0, in place
// (ctx_out == ctx), a stream fed in pieces equal to one call, bad dims writing nothing, nothing
// written past y.
#include <stdlib.h>
#include <string.h>

#include "kernels/audio/f32_stream_frames.h"
#include "kernels/audio/f32_stream_frames_contract.h"
#include "kernels/common/test_util.h"

_Static_assert(CKW_F32_STREAM_FRAMES_EXACT, "f32_stream_frames.json states an exact contract");

typedef struct {
  int64_t W, C, FL, H, P, NF;
} Geometry;

enum { MAXN = 7, GUARD = 5 };

// Frames of windows [0, N) of x after context ctx, and the context after them.
static void reference(float* y, float* ctx_out, const float* x, const float* ctx, int64_t N, Geometry g) {
  const int64_t L = g.C + g.W, S = g.C + N * g.W;
  float* s = malloc(sizeof(float) * (size_t)(S > 0 ? S : 1));
  float* ext = malloc(sizeof(float) * (size_t)(L + g.P));
  for (int64_t i = 0; i < g.C; ++i) s[i] = ctx[i];
  for (int64_t i = 0; i < N * g.W; ++i) s[g.C + i] = x[i];
  for (int64_t n = 0; n < N; ++n) {
    const float* row = s + n * g.W;
    for (int64_t i = 0; i < L; ++i) ext[i] = row[i];
    for (int64_t j = 0; j < g.P; ++j) ext[L + j] = row[L - 2 - j];  // numpy.pad mode='reflect'
    for (int64_t f = 0; f < g.NF; ++f)
      for (int64_t k = 0; k < g.FL; ++k) y[(n * g.NF + f) * g.FL + k] = ext[f * g.H + k];
  }
  for (int64_t i = 0; i < g.C; ++i) ctx_out[i] = s[N * g.W + i];
  free(s), free(ext);
}

static int same(const float* a, const float* b, int64_t n) {
  return n == 0 || memcmp(a, b, sizeof(float) * (size_t)n) == 0;
}

static void check_geometry(Geometry g) {
  const int64_t rows = MAXN * g.NF * g.FL;
  float* x = malloc(sizeof(float) * (size_t)(MAXN * g.W));
  float* ctx0 = malloc(sizeof(float) * (size_t)(g.C + 1));
  float* ctx = malloc(sizeof(float) * (size_t)(g.C + 1));
  float* ctx_out = malloc(sizeof(float) * (size_t)(g.C + 1));
  float* want_ctx = malloc(sizeof(float) * (size_t)(g.C + 1));
  float* y = malloc(sizeof(float) * (size_t)(rows + GUARD));
  float* want = malloc(sizeof(float) * (size_t)(rows + 1));
  for (int64_t i = 0; i < MAXN * g.W; ++i) x[i] = frand();
  for (int64_t i = 0; i < g.C; ++i) ctx0[i] = frand();
  const char* fmt = "W %lld C %lld FL %lld H %lld P %lld NF %lld N %lld: %s";
#define ARGS(n, what) \
  (long long)g.W, (long long)g.C, (long long)g.FL, (long long)g.H, (long long)g.P, (long long)g.NF, (long long)(n), what

  for (int64_t N = 0; N <= MAXN; ++N) {
    const int64_t n_y = N * g.NF * g.FL;
    reference(want, want_ctx, x, ctx0, N, g);
    // Out of place: ctx_out a buffer of its own, ctx untouched.
    for (int64_t i = 0; i < rows + GUARD; ++i) y[i] = -7.0f;
    for (int64_t i = 0; i < g.C; ++i) ctx_out[i] = -9.0f;
    memcpy(ctx, ctx0, sizeof(float) * (size_t)g.C);
    ckw_f32_stream_frames(y, ctx_out, x, ctx, N, g.W, g.C, g.FL, g.H, g.P, g.NF);
    EXPECT(same(y, want, n_y), fmt, ARGS(N, "frames"));
    EXPECT(same(ctx_out, want_ctx, g.C), fmt, ARGS(N, "ctx_out"));
    EXPECT(same(ctx, ctx0, g.C), fmt, ARGS(N, "ctx changed"));
    int past = 0;
    for (int64_t i = n_y; i < rows + GUARD; ++i) past |= y[i] != -7.0f;
    EXPECT(!past, fmt, ARGS(N, "wrote past y"));
    // In place: the circuit binds ctx and ctx_out to one persistent state.
    for (int64_t i = 0; i < n_y; ++i) y[i] = -7.0f;
    ckw_f32_stream_frames(y, ctx, x, ctx, N, g.W, g.C, g.FL, g.H, g.P, g.NF);
    EXPECT(same(y, want, n_y), fmt, ARGS(N, "frames in place"));
    EXPECT(same(ctx, want_ctx, g.C), fmt, ARGS(N, "ctx in place"));
  }

  // A stream in pieces (window counts 2, 0, 1, 3, 0, 1), the context carried in place, equals one
  // call over all MAXN windows.
  reference(want, want_ctx, x, ctx0, MAXN, g);
  memcpy(ctx, ctx0, sizeof(float) * (size_t)g.C);
  const int64_t pieces[] = {2, 0, 1, 3, 0, 1};
  int64_t done = 0;
  for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; ++p) {
    ckw_f32_stream_frames(y + done * g.NF * g.FL, ctx, x + done * g.W, ctx, pieces[p], g.W, g.C, g.FL, g.H, g.P, g.NF);
    done += pieces[p];
  }
  EXPECT(done == MAXN, "pieces");
  EXPECT(same(y, want, rows), fmt, ARGS(MAXN, "frames streamed in pieces"));
  EXPECT(same(ctx, want_ctx, g.C), fmt, ARGS(MAXN, "context streamed in pieces"));
#undef ARGS
  free(x), free(ctx0), free(ctx), free(ctx_out), free(want_ctx), free(y), free(want);
}

int main(void) {
  const Geometry geometries[] = {
      {CKW_STREAM_FRAMES_SILERO_W, CKW_STREAM_FRAMES_SILERO_C, CKW_STREAM_FRAMES_SILERO_FL, CKW_STREAM_FRAMES_SILERO_H,
       CKW_STREAM_FRAMES_SILERO_P, CKW_STREAM_FRAMES_SILERO_NF},
      {256, 32, 128, 64, 32, 4},  // Silero at 8 kHz
      {4, 10, 5, 2, 3, 7},        // C > W: the context spans windows
      {6, 0, 4, 2, 2, 3},         // no context
      {8, 4, 4, 4, 0, 3},         // no padding
      {3, 2, 9, 1, 4, 1},         // P == C + W - 1: the padding reflects all the way to row[0]
      {5, 3, 2, 3, 3, 4},         // hop > frame: samples between frames skipped
      {1, 1, 1, 1, 1, 3},         // the smallest window
  };
  for (size_t k = 0; k < sizeof geometries / sizeof geometries[0]; ++k) {
    const Geometry g = geometries[k];
    EXPECT((g.NF - 1) * g.H + g.FL == g.C + g.W + g.P && g.P <= g.C + g.W - 1, "geometry %zu is invalid", k);
    check_geometry(g);
  }
  EXPECT(CKW_STREAM_FRAMES_SILERO_NF == (CKW_STREAM_FRAMES_SILERO_C + CKW_STREAM_FRAMES_SILERO_W +
                                         CKW_STREAM_FRAMES_SILERO_P - CKW_STREAM_FRAMES_SILERO_FL) /
                                                CKW_STREAM_FRAMES_SILERO_H +
                                            1,
         "Silero's frame count");

  // Dims the map's constraints exclude write nothing.
  float x[16], ctx[4] = {1, 2, 3, 4}, y[64];
  for (int i = 0; i < 16; ++i) x[i] = (float)i;
  for (int i = 0; i < 64; ++i) y[i] = -1.0f;
  const int64_t bad[][7] = {
      {-1, 4, 4, 4, 2, 0, 3},  // N < 0
      {2, 4, 4, 3, 2, 0, 3},   // frames do not tile: (NF - 1) * H + FL != C + W + P
      {2, 4, 4, 4, 2, 8, 7},   // P > C + W - 1
      {2, 4, 4, 4, 0, 0, 3},   // H == 0
      {2, 0, 4, 4, 2, 0, 1},   // W == 0
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    const int64_t* d = bad[k];
    ckw_f32_stream_frames(y, ctx, x, ctx, d[0], d[1], d[2], d[3], d[4], d[5], d[6]);
    int wrote = ctx[0] != 1 || ctx[1] != 2 || ctx[2] != 3 || ctx[3] != 4;
    for (int i = 0; i < 64; ++i) wrote |= y[i] != -1.0f;
    EXPECT(!wrote, "bad dims %zu wrote", k);
  }
  return test_finish("f32_stream_frames_test");
}
