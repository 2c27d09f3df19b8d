// The tiny end-to-end path in C, for valgrind memcheck (.ci/steps/valgrind.sh): the generated
// frontend (whole-file phase, and every streamed phase over the same file, which must give the
// same log-mel bit for bit), the encoder on the first 30 s window, and the decoder: prefill with
// the cross-attention logits on, greedy decoding, then two beams with a reorder. No interpreter
// in the way, so memcheck sees our libraries alone and runs in a minute, not an hour.
//
//   tiny_e2e WEIGHTS.bin FILE.wav
//
// Prints the greedy tokens on one line (the step compares a native run with the memcheck run).
// Exit status 0, or 1 with a one-line reason on stderr.

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/whisper/frontend_c/ckw_whisper_frontend.h"
#include "models/whisper/tiny_decoder_c/ckw_tiny_decoder.h"
#include "models/whisper/tiny_encoder_c/ckw_tiny_encoder.h"

enum { N_MELS = 80, N_FRAMES = 3000, SAMPLE_RATE = 16000, HOP = 160, PAD = 30 * SAMPLE_RATE, MAX_TOKENS = 48 };
// tiny.en: <|startoftranscript|> <|notimestamps|>; <|endoftext|> ends the text.
static const int32_t kPrompt[] = {50257, 50362};
enum { EOT = 50256 };

#define CHECK(call, what)                                                          \
  do {                                                                             \
    int rc_ = (call);                                                              \
    if (rc_ != 0) {                                                                \
      fprintf(stderr, "tiny_e2e: %s failed with status %d\n", (what), rc_);        \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

static void* alloc(size_t bytes) {
  void* p = calloc(1, bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "tiny_e2e: out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

static uint8_t* read_file(const char* path, int64_t* n) {
  FILE* f = fopen(path, "rb");
  if (!f || fseek(f, 0, SEEK_END) != 0) {
    fprintf(stderr, "tiny_e2e: %s: cannot be read\n", path);
    exit(1);
  }
  *n = ftell(f);
  rewind(f);
  uint8_t* data = alloc((size_t)*n);
  if (fread(data, 1, (size_t)*n, f) != (size_t)*n) {
    fprintf(stderr, "tiny_e2e: %s: short read\n", path);
    exit(1);
  }
  fclose(f);
  return data;
}

static int32_t argmax(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) best = row[i] > row[best] ? i : best;
  return (int32_t)best;
}

// The streamed phases over the whole file as one block: WAV samples, 16 kHz, 30 s of zeros,
// peak, frames. Returns the log-mel [80, n_frames].
static float* streamed_mel(ckw_whisper_frontend_handle* fe, const uint8_t* wav, int64_t n_bytes, int64_t n_frames) {
  int64_t info[3];
  CHECK(ckw_whisper_frontend_wav_info(fe, wav, n_bytes, info), "wav_info");
  const int64_t n_in = info[0], rate = info[1];
  float* samples = alloc((size_t)n_in * sizeof(float));
  CHECK(ckw_whisper_frontend_wav_block(fe, wav, 0, n_in, n_bytes, samples), "wav_block");
  int64_t span[2];
  CHECK(ckw_whisper_frontend_resample_span(fe, 1, 0, rate, span), "resample_span");
  const int64_t n_16k = (n_in * SAMPLE_RATE + rate - 1) / rate;
  float* audio = alloc((size_t)(n_16k + PAD) * sizeof(float));  // the zeros are the padding
  CHECK(ckw_whisper_frontend_resample_block(fe, samples, n_16k, n_in, 0, 0, n_in, rate, audio, n_16k),
        "resample_block");
  float peak;
  CHECK(ckw_whisper_frontend_mel_peak(fe, audio, 0, n_16k + PAD, n_frames, &peak), "mel_peak");
  float* mel = alloc((size_t)N_MELS * (size_t)n_frames * sizeof(float));
  CHECK(ckw_whisper_frontend_mel_block(fe, audio, &peak, 0, n_16k + PAD, n_frames, mel), "mel_block");
  free(audio);
  free(samples);
  return mel;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: tiny_e2e WEIGHTS.bin FILE.wav\n");
    return 2;
  }
  int64_t n_bytes;
  uint8_t* wav = read_file(argv[2], &n_bytes);

  ckw_whisper_frontend_handle* fe;
  CHECK(ckw_whisper_frontend_create(NULL, NULL, &fe), "frontend create");
  int64_t shape[2];
  CHECK(ckw_whisper_frontend_run_shape(fe, wav, n_bytes, shape), "frontend run_shape");
  const int64_t n_frames = shape[1];
  float* mel = alloc((size_t)(shape[0] * n_frames) * sizeof(float));
  CHECK(ckw_whisper_frontend_run(fe, wav, n_bytes, mel, shape[0] * n_frames), "frontend run");
  float* streamed = streamed_mel(fe, wav, n_bytes, n_frames);
  if (shape[0] != N_MELS || memcmp(mel, streamed, (size_t)(N_MELS * n_frames) * sizeof(float)) != 0) {
    fprintf(stderr, "tiny_e2e: the streamed phases' log-mel differs from the whole-file phase's\n");
    return 1;
  }
  ckw_whisper_frontend_free(fe);

  // The first 30 s window, [80, 3000], out of [80, n_frames] (n_frames >= 3000: 30 s of padding).
  float* window = alloc((size_t)N_MELS * N_FRAMES * sizeof(float));
  for (int64_t c = 0; c < N_MELS; ++c) memcpy(window + c * N_FRAMES, mel + c * n_frames, N_FRAMES * sizeof(float));
  ckw_tiny_encoder_handle* enc;
  CHECK(ckw_tiny_encoder_create(argv[1], NULL, &enc), "encoder create");
  const int64_t n_ctx = ckw_tiny_encoder_dim("n_ctx"), d_model = ckw_tiny_encoder_dim("d_model");
  float* memory = alloc((size_t)(n_ctx * d_model) * sizeof(float));
  CHECK(ckw_tiny_encoder_run(enc, window, memory), "encoder run");
  ckw_tiny_encoder_free(enc);

  ckw_tiny_decoder_handle* dec;
  CHECK(ckw_tiny_decoder_create(argv[1], NULL, &dec), "decoder create");
  const int64_t n_vocab = ckw_tiny_decoder_dim("n_vocab");
  const int64_t n_layers = ckw_tiny_decoder_dim("n_layers"), n_heads = ckw_tiny_decoder_dim("n_heads");
  const int64_t n_prompt = (int64_t)(sizeof kPrompt / sizeof kPrompt[0]);
  float* logits = alloc((size_t)(n_prompt * n_vocab) * sizeof(float));
  float* qk = alloc((size_t)(n_layers * n_heads * n_prompt * n_ctx) * sizeof(float));
  float* step = alloc((size_t)(2 * n_vocab) * sizeof(float));
  CHECK(ckw_tiny_decoder_set_encoder_memory(dec, memory), "set_encoder_memory");
  int32_t every_row[sizeof kPrompt / sizeof kPrompt[0]];
  for (int64_t i = 0; i < n_prompt; ++i) every_row[i] = (int32_t)i;
  CHECK(ckw_tiny_decoder_prefill(dec, kPrompt, every_row, n_prompt, n_prompt, qk, logits),
        "prefill with cross_qk, the logits of every row");
  int32_t tokens[MAX_TOKENS];
  int n = 0;
  tokens[n++] = argmax(logits + (n_prompt - 1) * n_vocab, n_vocab);
  while (n < MAX_TOKENS && tokens[n - 1] != EOT) {
    CHECK(ckw_tiny_decoder_decode(dec, &tokens[n - 1], 1, step), "decode");
    tokens[n++] = argmax(step, n_vocab);
  }
  for (int i = 0; i < n; ++i) printf(i ? " %d" : "%d", tokens[i]);
  printf("\n");

  // Two beams from the prompt (no cross_qk this time), swapped by a reorder, one more step each.
  CHECK(ckw_tiny_decoder_reset(dec), "reset");
  const int32_t last_row = (int32_t)(n_prompt - 1);
  CHECK(ckw_tiny_decoder_prefill(dec, kPrompt, &last_row, 1, n_prompt, NULL, logits), "prefill, the last row's logits");
  const int32_t two[2] = {tokens[0], tokens[1 < n ? 1 : 0]}, swap[2] = {1, 0};
  CHECK(ckw_tiny_decoder_decode(dec, two, 2, step), "decode with 2 beams");
  CHECK(ckw_tiny_decoder_reorder(dec, swap, 2), "reorder");
  CHECK(ckw_tiny_decoder_decode(dec, two, 2, step), "decode after reorder");
  const int32_t out_of_range[2] = {0, 2};
  if (ckw_tiny_decoder_reorder(dec, out_of_range, 2) == 0) {
    fprintf(stderr, "tiny_e2e: a reorder with index 2 of 2 beams was accepted\n");
    return 1;
  }
  for (int64_t i = 0; i < 2 * n_vocab; ++i) {
    if (!isfinite(step[i])) {
      fprintf(stderr, "tiny_e2e: beam logits are not finite\n");
      return 1;
    }
  }
  ckw_tiny_decoder_free(dec);
  free(step);
  free(qk);
  free(logits);
  free(memory);
  free(window);
  free(streamed);
  free(mel);
  free(wav);
  return 0;
}
