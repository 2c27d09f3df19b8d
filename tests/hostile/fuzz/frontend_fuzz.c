// libFuzzer harness: any bytes through the whole generated frontend entry point
// (ckw_whisper_frontend_run_shape, then _run: WAV decode, resample, pad, STFT, log-mel), as the
// engine calls it with the bytes of a user's file.
//
// Properties checked beyond "no crash, no out-of-bounds access, no leak": a refusal is
// E_KERNEL with the kernel's own message (or E_NO_MEMORY); an accepted file has n_mels rows and
// at least the 30 s of padding's frames; run agrees with run_shape, and every log-mel value is
// finite; run never writes past the capacity it was given. One handle serves every input, as in
// the engine, so state carried between calls is exercised too.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/whisper/frontend_c/ckw_whisper_frontend.h"

// Frames per input at most (10 minutes): a 1 Hz file of 4 KiB is 68 minutes at 16 kHz; such
// inputs are valid but would make every execution slow, so only their shape is checked.
enum { kMaxFrames = 60000, kPadFrames = 3000 };

static ckw_whisper_frontend_handle* g_handle;  // kept until exit (reachable: not a leak)

static void fail(const char* what, int rc) {
  fprintf(stderr, "frontend_fuzz: %s (status %d: %s: %s)\n", what, rc, ckw_whisper_frontend_strerror(rc),
          ckw_whisper_frontend_last_error(g_handle));
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!g_handle && ckw_whisper_frontend_create(NULL, NULL, &g_handle) != CKW_WHISPER_FRONTEND_OK) {
    fail("create failed", 0);
  }
  // The frontend takes a non-NULL buffer; libFuzzer passes NULL for the empty input.
  static const uint8_t kEmpty[1];
  const uint8_t* bytes = size ? data : kEmpty;
  int64_t shape[2] = {-1, -1};
  int rc = ckw_whisper_frontend_run_shape(g_handle, bytes, (int64_t)size, shape);
  if (rc != CKW_WHISPER_FRONTEND_OK) {
    if (rc == CKW_WHISPER_FRONTEND_E_KERNEL && ckw_whisper_frontend_last_error(g_handle)[0] != '\0') return 0;
    if (rc == CKW_WHISPER_FRONTEND_E_NO_MEMORY) return 0;
    fail("run_shape refused without a kernel's message", rc);
  }
  const int64_t n_mels = ckw_whisper_frontend_dim("n_mels");
  if (shape[0] != n_mels || shape[1] < kPadFrames) fail("run_shape gave an impossible shape", rc);
  if (shape[1] > kMaxFrames) return 0;
  const int64_t count = shape[0] * shape[1];
  float* mel = malloc(((size_t)count + 1) * sizeof(float));
  if (!mel) return 0;
  mel[count] = 12345.0f;  // guard: must survive
  rc = ckw_whisper_frontend_run(g_handle, bytes, (int64_t)size, mel, count);
  if (rc == CKW_WHISPER_FRONTEND_OK) {
    for (int64_t i = 0; i < count; ++i) {
      if (!isfinite(mel[i])) fail("a log-mel value is not finite", rc);
    }
  } else if (!(rc == CKW_WHISPER_FRONTEND_E_KERNEL && ckw_whisper_frontend_last_error(g_handle)[0] != '\0') &&
             rc != CKW_WHISPER_FRONTEND_E_NO_MEMORY) {
    fail("run refused without a kernel's message", rc);
  }
  if (mel[count] != 12345.0f) fail("run wrote past its capacity", rc);
  if (ckw_whisper_frontend_run(g_handle, bytes, (int64_t)size, mel, count - 1) != CKW_WHISPER_FRONTEND_E_ARGUMENT) {
    fail("a capacity one short was not refused", rc);
  }
  free(mel);
  return 0;
}
