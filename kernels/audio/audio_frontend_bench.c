// Benchmark of the audio frontend kernels on 30 s of synthetic audio. Without arguments it
// is a smoke test (one small call of everything, outputs checked); with --benchmark it
// prints a timing table: best of 5 batches (each >= 50 ms) of thread CPU time, which stays
// meaningful on a machine shared with other builds (the kernels are single-threaded).
#define _POSIX_C_SOURCE 199309L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/audio/f32_log_mel.h"
#include "kernels/audio/f32_mel_filters.h"
#include "kernels/audio/f32_pad_or_truncate.h"
#include "kernels/audio/f32_resample.h"
#include "kernels/audio/f32_stft_power.h"
#include "kernels/audio/f32_stft_tables.h"
#include "kernels/audio/f32_wav_decode.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
  int full;
  int failures;
} bench;

typedef void (*body_fn)(void* ctx);

// Seconds per call: best of 5 batches (1 call in smoke mode).
static double time_it(const bench* b, body_fn fn, void* ctx) {
  if (!b->full) {
    double t = now();
    fn(ctx);
    return now() - t;
  }
  int reps = 1;
  for (double t = now(); now() - t < 0.05; reps *= 2) {
    for (int i = 0; i < reps; ++i) fn(ctx);
  }
  double best = INFINITY;
  for (int batch = 0; batch < 5; ++batch) {
    double t = now();
    for (int i = 0; i < reps; ++i) fn(ctx);
    double per = (now() - t) / reps;
    if (per < best) best = per;
  }
  return best;
}

static void row(const bench* b, const char* kernel, const char* what, double seconds, double audio_seconds) {
  if (!b->full) return;
  printf("%-26s %-34s %10.3f %12.0fx\n", kernel, what, 1e3 * seconds,
         audio_seconds > 0 ? audio_seconds / seconds : 0.0);
}

static void check(bench* b, int ok, const char* what) {
  if (!ok) {
    fflush(stdout);
    fprintf(stderr, "FAILED: %s\n", what);
    ++b->failures;
  }
}

static int all_finite(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!isfinite(x[i])) return 0;
  }
  return 1;
}

// 16-bit PCM WAV of `frames` frames of speech-like noise and tones.
static int64_t make_wav(uint8_t* out, int64_t frames, int channels, uint32_t rate) {
  const uint32_t data = (uint32_t)(frames * channels * 2);
  uint8_t h[44] = "RIFF....WAVEfmt ....\1\0..........\4\0\20\0data....";
  const uint32_t fields[][2] = {{4, 36 + data}, {16, 16}, {24, rate}, {28, rate * channels * 2}, {40, data}};
  for (int f = 0; f < 5; ++f) {
    for (int i = 0; i < 4; ++i) h[fields[f][0] + i] = (uint8_t)(fields[f][1] >> (8 * i));
  }
  h[22] = (uint8_t)channels, h[23] = 0, h[32] = (uint8_t)(2 * channels), h[33] = 0;
  memcpy(out, h, 44);
  uint64_t s = 88172645463325252ull;
  for (int64_t i = 0; i < frames * channels; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    double t = (double)(i / channels) / rate;
    double v =
        0.3 * sin(2 * 3.14159265 * 220 * t) * sin(2 * 3.14159265 * 3 * t) + 0.05 * ((double)(s % 2001) / 1000.0 - 1.0);
    int16_t q = (int16_t)lrint(v * 32767.0);
    out[44 + 2 * i] = (uint8_t)(q & 255), out[45 + 2 * i] = (uint8_t)((uint16_t)q >> 8);
  }
  return 44 + data;
}

typedef struct {
  const uint8_t* wav;
  int64_t wav_bytes, n;
  float *audio, *resampled, *padded, *power, *filters, *mel, *window, *twiddles;
  void* scratch;
  int64_t sr_in, n_in, n_out, scratch_bytes, n_samples, n_frames;
  void (*stft)(float*, int64_t, const float*, int64_t, int64_t, int64_t, const float*, const float*);
  int rc;
} ctx_t;

static void do_decode(void* p) {
  ctx_t* c = p;
  c->rc |= ckw_f32_wav_decode(c->audio, c->n, c->wav, c->wav_bytes);
}
static void do_resample(void* p) {
  ctx_t* c = p;
  c->rc |= ckw_f32_resample(c->resampled, c->n_out, c->audio, c->n_in, c->sr_in, 16000, c->scratch, c->scratch_bytes);
}
static void do_pad(void* p) {
  ctx_t* c = p;
  ckw_f32_pad_or_truncate(c->padded, c->n_samples, c->resampled, c->n_out);
}
static void do_tables(void* p) {
  ctx_t* c = p;
  ckw_f32_stft_tables(c->window, c->twiddles);
}
static void do_stft(void* p) {
  ctx_t* c = p;
  c->stft(c->power, c->n_frames, c->padded, c->n_samples, 0, c->n_frames, c->window, c->twiddles);
}
static void do_filters(void* p) {
  ctx_t* c = p;
  ckw_f32_mel_filters(c->filters, 80, 400, 16000);
}
static void do_log_mel(void* p) {
  ctx_t* c = p;
  ckw_f32_log_mel(c->mel, c->power, c->filters, 80, 201, c->n_frames);
}
static void do_chain(void* p) {
  ctx_t* c = p;
  int64_t n = 0, sr = 0;
  c->rc |= ckw_f32_wav_decode_query(c->wav, c->wav_bytes, &n, &sr);
  do_decode(c);
  c->n_in = n, c->sr_in = sr;
  c->n_out = ckw_f32_resample_output_length(n, sr, 16000);
  do_resample(c);
  do_pad(c);
  do_tables(c);
  do_stft(c);
  do_filters(c);
  do_log_mel(c);
}

int main(int argc, char** argv) {
  bench b = {0, 0};
  for (int i = 1; i < argc; ++i) b.full |= strcmp(argv[i], "--benchmark") == 0;
  const double seconds = b.full ? 30.0 : 0.25;
  const int64_t n_window = b.full ? CKW_AUDIO_N_SAMPLES : 4000;
  const int64_t max_rate = 48000, max_frames = (int64_t)(seconds * max_rate) + 1;

  uint8_t* wav = malloc((size_t)(44 + 4 * max_frames));
  ctx_t c = {0};
  c.audio = malloc((size_t)max_frames * sizeof(float));
  c.resampled = malloc((size_t)max_frames * 2 * sizeof(float));
  c.padded = malloc((size_t)n_window * sizeof(float));
  c.n_samples = n_window;
  c.n_frames = n_window / CKW_STFT_HOP;
  c.power = malloc((size_t)(201 * c.n_frames) * sizeof(float));
  c.mel = malloc((size_t)(80 * c.n_frames) * sizeof(float));
  c.filters = malloc(80 * 201 * sizeof(float));
  c.window = malloc(400 * sizeof(float));
  c.twiddles = malloc(800 * sizeof(float));
  c.scratch = malloc(CKW_RESAMPLE_SCRATCH_BYTES);
  c.scratch_bytes = CKW_RESAMPLE_SCRATCH_BYTES;
  c.stft = ckw_f32_stft_power;
  c.wav = wav;

  if (b.full) {
    printf("audio frontend kernels, %.0f s of audio (x = audio seconds per wall second)\n", seconds);
    printf("%-26s %-34s %10s %13s\n", "kernel", "case", "ms/call", "realtime");
  }
  // Decode: 16 kHz mono and 44.1 kHz stereo.
  const struct {
    int channels;
    uint32_t rate;
    const char* what;
  } wavs[] = {{1, 16000, "16 kHz mono s16"}, {2, 44100, "44.1 kHz stereo s16"}};
  for (int w = 0; w < 2; ++w) {
    int64_t frames = (int64_t)(seconds * wavs[w].rate);
    c.wav_bytes = make_wav(wav, frames, wavs[w].channels, wavs[w].rate);
    c.n = frames;
    row(&b, "ckw_f32_wav_decode", wavs[w].what, time_it(&b, do_decode, &c), seconds);
    check(&b, c.rc == 0 && all_finite(c.audio, frames), "wav decode");
  }
  // Resample (the audio buffer holds the 44.1 kHz downmix now).
  const struct {
    int64_t rate;
    const char* what;
  } rates[] = {{44100, "44.1 kHz -> 16 kHz"},
               {48000, "48 kHz -> 16 kHz"},
               {8000, "8 kHz -> 16 kHz"},
               {22050, "22.05 kHz -> 16 kHz"},
               {44101, "44.101 kHz -> 16 kHz (by phase)"},
               {16000, "16 kHz (identity)"}};
  for (int r = 0; r < 6; ++r) {
    c.sr_in = rates[r].rate;
    c.n_in = (int64_t)(seconds * rates[r].rate);
    c.n_out = ckw_f32_resample_output_length(c.n_in, c.sr_in, 16000);
    c.rc = 0;
    row(&b, "ckw_f32_resample", rates[r].what, time_it(&b, do_resample, &c), seconds);
    check(&b, c.rc == 0 && all_finite(c.resampled, c.n_out), rates[r].what);
  }
  c.n_out = (int64_t)(seconds * 16000);
  row(&b, "ckw_f32_pad_or_truncate", "-> 480000", time_it(&b, do_pad, &c), 0);
  row(&b, "ckw_f32_stft_tables", "n_fft 400", time_it(&b, do_tables, &c), 0);
  const struct {
    const char* isa;
    void (*fn)(float*, int64_t, const float*, int64_t, int64_t, int64_t, const float*, const float*);
  } isas[] = {{"scalar", ckw_f32_stft_power__scalar},
              {"avx2", ckw_f32_stft_power__avx2},
              {"avx512", ckw_f32_stft_power__avx512}};
  char what[64];
  for (int i = 0; i < 3; ++i) {
    if (!ckw_f32_stft_power_isa_supported(isas[i].isa)) {
      if (b.full) printf("%-26s %-34s %10s\n", "ckw_f32_stft_power", isas[i].isa, "n/a");
      continue;
    }
    c.stft = isas[i].fn;
    snprintf(what, sizeof what, "%lld frames, %s", (long long)c.n_frames, isas[i].isa);
    row(&b, "ckw_f32_stft_power", what, time_it(&b, do_stft, &c), n_window / 16000.0);
    check(&b, all_finite(c.power, 201 * c.n_frames), "stft power");
  }
  c.stft = ckw_f32_stft_power;
  row(&b, "ckw_f32_mel_filters", "80 x 201", time_it(&b, do_filters, &c), 0);
  snprintf(what, sizeof what, "80 x %lld frames", (long long)c.n_frames);
  row(&b, "ckw_f32_log_mel", what, time_it(&b, do_log_mel, &c), n_window / 16000.0);
  check(&b, all_finite(c.mel, 80 * c.n_frames), "log mel");
  // The whole chain from 16 kHz WAV bytes to the log-mel window.
  c.wav_bytes = make_wav(wav, (int64_t)(seconds * 16000), 1, 16000);
  c.n = (int64_t)(seconds * 16000);
  row(&b, "frontend chain", "16 kHz WAV -> 80 x 3000 log-mel", time_it(&b, do_chain, &c), seconds);
  check(&b, c.rc == 0 && all_finite(c.mel, 80 * c.n_frames), "chain");
  c.wav_bytes = make_wav(wav, (int64_t)(seconds * 44100), 2, 44100);
  c.n = (int64_t)(seconds * 44100);
  row(&b, "frontend chain", "44.1 kHz stereo WAV -> log-mel", time_it(&b, do_chain, &c), seconds);
  check(&b, c.rc == 0 && all_finite(c.mel, 80 * c.n_frames), "chain 44.1k");

  free(wav), free(c.audio), free(c.resampled), free(c.padded), free(c.power), free(c.mel);
  free(c.filters), free(c.window), free(c.twiddles), free(c.scratch);
  if (b.failures) return 1;
  if (!b.full) printf("audio_frontend_bench smoke test passed (run with --benchmark for timings)\n");
  return 0;
}
