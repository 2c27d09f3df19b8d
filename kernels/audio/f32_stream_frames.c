#include "kernels/audio/f32_stream_frames.h"

#include <string.h>

// Samples [begin, begin + n) of the stream ctx ++ x (ctx holds its first C samples) into dst.
static void copy_stream(float* restrict dst, const float* ctx, const float* restrict x, int64_t C, int64_t begin,
                        int64_t n) {
  if (n > 0 && begin < C) {
    const int64_t k = C - begin < n ? C - begin : n;
    memcpy(dst, ctx + begin, sizeof(float) * (size_t)k);
    dst += k, begin += k, n -= k;
  }
  if (n > 0) memcpy(dst, x + (begin - C), sizeof(float) * (size_t)n);
}

void ckw_f32_stream_frames(float* restrict y, float* ctx_out, const float* restrict x, const float* ctx, int64_t N,
                           int64_t W, int64_t C, int64_t FL, int64_t H, int64_t P, int64_t NF) {
  if (N < 0 || W < 1 || C < 0 || FL < 1 || H < 1 || P < 0 || NF < 1) return;
  const int64_t L = C + W;
  if (P > L - 1 || (NF - 1) * H + FL != L + P) return;
  // Every frame, reading ctx and x; y overlaps neither.
  for (int64_t n = 0; n < N; ++n) {
    const int64_t base = n * W;  // the window's row is stream samples [base, base + L)
    for (int64_t f = 0; f < NF; ++f) {
      float* restrict out = y + (n * NF + f) * FL;
      const int64_t start = f * H, end = start + FL;
      const int64_t inside = (end < L ? end : L) - start;  // samples of the row itself
      if (inside > 0) copy_stream(out, ctx, x, C, base + start, inside);
      // The reflected tail: ext[i] = row[2 L - 2 - i] for L <= i < L + P.
      for (int64_t i = start > L ? start : L; i < end; ++i) {
        const int64_t at = base + 2 * L - 2 - i;
        out[i - start] = at < C ? ctx[at] : x[at - C];
      }
    }
  }
  // The context after the call: the last C samples of ctx ++ x (ctx itself when N == 0),
  // written only now (ctx_out may be ctx). memmove: in place, the kept part of ctx moves down
  // within the same buffer.
  const int64_t total = N * W;
  if (total >= C) {
    if (C > 0) memcpy(ctx_out, x + (total - C), sizeof(float) * (size_t)C);
  } else {
    memmove(ctx_out, ctx + total, sizeof(float) * (size_t)(C - total));
    memcpy(ctx_out + (C - total), x, sizeof(float) * (size_t)total);
  }
}
