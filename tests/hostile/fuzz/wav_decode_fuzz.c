// libFuzzer harness: any bytes through the WAV parser (kernels/audio/f32_wav_decode.c).
//
// Properties checked beyond "no crash, no out-of-bounds access, no leak" (the sanitizers'
// job): the query and the decode agree; an error is a known code with its own message; a
// decoded file yields exactly the queried sample count, each sample finite and within
// CKW_WAV_MAX_FLOAT; the decoder never writes past the capacity it was given.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/audio/f32_wav_decode.h"

// Samples decoded per input at most (a 4 KiB input holds at most ~4096 u8 frames; the bound
// only guards larger inputs given by hand).
enum { kMaxSamples = 1 << 24 };

static void fail(const char* what, int rc) {
  fprintf(stderr, "wav_decode_fuzz: %s (status %d: %s)\n", what, rc, ckw_f32_wav_decode_strerror(rc));
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int64_t n = -1, rate = -1;
  int rc = ckw_f32_wav_decode_query(data, (int64_t)size, &n, &rate);
  if (rc != CKW_WAV_OK) {
    if (rc > 0 || rc < CKW_WAV_ERR_MIN) fail("query returned an unknown code", rc);
    if (strcmp(ckw_f32_wav_decode_strerror(rc), "unknown error code") == 0) fail("no message", rc);
    return 0;
  }
  if (n < 0 || rate < 1) fail("query succeeded with a negative count or a rate below 1 Hz", rc);
  if (n > kMaxSamples) return 0;
  // One guard sample past the capacity: it must survive the decode.
  float* y = malloc(((size_t)n + 1) * sizeof(float));
  if (!y) return 0;
  y[n] = 12345.0f;
  rc = ckw_f32_wav_decode(y, n, data, (int64_t)size);
  if (rc == CKW_WAV_OK) {
    for (int64_t i = 0; i < n; ++i) {
      if (!(fabsf(y[i]) <= (float)CKW_WAV_MAX_FLOAT)) fail("a decoded sample is out of range", rc);
    }
  } else if (rc != CKW_WAV_ERR_SAMPLE_RANGE) {
    fail("decode refused a file its query accepted", rc);  // only sample values can differ
  }
  if (y[n] != 12345.0f) fail("decode wrote past its capacity", rc);
  if (n > 0 && ckw_f32_wav_decode(y, n - 1, data, (int64_t)size) != CKW_WAV_ERR_OUTPUT_TOO_SMALL) {
    fail("a capacity one short was not refused", rc);
  }
  free(y);
  return 0;
}
