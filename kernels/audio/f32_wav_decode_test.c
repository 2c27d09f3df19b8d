// ckw_f32_wav_decode against a naive decoder of WAV files built here in memory: every sample
// format, channel counts 1..3 and 6, EXTENSIBLE, odd and unknown chunks, chunk order, the
// streaming size placeholder, one case per error code, and a truncation/mutation sweep that
// must never misbehave (run under --config=asan to catch out-of-bounds reads).
#include "kernels/audio/f32_wav_decode.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/test_util.h"

#define CAP (1 << 20)

typedef struct {
  uint8_t* p;
  int64_t n;
} buf;

static void put(buf* b, const void* src, int64_t n) {
  memcpy(b->p + b->n, src, (size_t)n);
  b->n += n;
}
static void put16(buf* b, uint32_t v) { put(b, (uint8_t[2]){v & 255, (v >> 8) & 255}, 2); }
static void put32(buf* b, uint32_t v) { put(b, (uint8_t[4]){v & 255, (v >> 8) & 255, (v >> 16) & 255, v >> 24}, 4); }
static void chunk(buf* b, const char* tag, const uint8_t* body, uint32_t size) {
  put(b, tag, 4);
  put32(b, size);
  put(b, body, size);
  if (size & 1) put(b, (uint8_t[1]){0}, 1);
}
static void riff_header(buf* b) {
  b->n = 0;
  put(b, "RIFF", 4);
  put32(b, 0);  // patched by riff_finish
  put(b, "WAVE", 4);
}
static void riff_finish(buf* b) {
  uint32_t size = (uint32_t)(b->n - 8);
  for (int i = 0; i < 4; ++i) b->p[4 + i] = (uint8_t)(size >> (8 * i));
}

// fmt body: PCM/float WAVEFORMATEX (16 bytes) or EXTENSIBLE (40 bytes).
static uint32_t fmt_body(uint8_t* out, int tag, int channels, uint32_t rate, int bits, int extensible, int valid_bits) {
  buf b = {out, 0};
  put16(&b, extensible ? 0xFFFE : (uint32_t)tag);
  put16(&b, (uint32_t)channels);
  put32(&b, rate);
  put32(&b, rate * (uint32_t)(channels * bits / 8));
  put16(&b, (uint32_t)(channels * bits / 8));
  put16(&b, (uint32_t)bits);
  if (extensible) {
    put16(&b, 22);
    put16(&b, (uint32_t)valid_bits);
    put32(&b, 0);  // channel mask
    put16(&b, (uint32_t)tag);
    put(&b, (uint8_t[14]){0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71}, 14);
  }
  return (uint32_t)b.n;
}

// Naive reference value of one stored sample.
static double ref_sample(const uint8_t* p, int tag, int bits) {
  if (tag == 3 && bits == 32) {
    float f;
    memcpy(&f, p, 4);  // the test host is little-endian, like WAV
    return f;
  }
  if (tag == 3) {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  int64_t v = 0;
  for (int i = bits / 8 - 1; i >= 0; --i) v = v * 256 + p[i];
  if (bits == 8) return (double)(v - 128) / 128.0;
  int64_t half = (int64_t)1 << (bits - 1);
  if (v >= half) v -= 2 * half;
  return (double)v / (double)half;
}

static uint8_t g_wav[CAP], g_data[CAP], g_fmt[64];
static float g_out[CAP], g_ref[CAP];

static void fill_data(uint8_t* d, int64_t n, int tag, int bits, uint64_t* rng) {
  for (int64_t i = 0; i < n; i += bits / 8) {
    if (tag == 3 && bits == 32) {
      float f = test_rng_float(rng);
      memcpy(d + i, &f, 4);
    } else if (tag == 3) {
      double g = (double)test_rng_float(rng) * 1.25 + 1e-9 * (double)test_rng_float(rng);
      memcpy(d + i, &g, 8);
    } else {
      uint64_t r = test_rng_next(rng);
      for (int k = 0; k < bits / 8; ++k) d[i + k] = (uint8_t)(r >> (8 * k));
    }
  }
}

static void test_formats(void) {
  const int kinds[][2] = {{1, 8}, {1, 16}, {1, 24}, {1, 32}, {3, 32}, {3, 64}};
  const int channel_counts[] = {1, 2, 3, 6};
  const int64_t frame_counts[] = {0, 1, 7, 1001};
  uint64_t rng = 42;
  int cases = 0;
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    for (size_t c = 0; c < 4; ++c) {
      for (int ext = 0; ext < 2; ++ext) {
        for (size_t f = 0; f < 4; ++f) {
          const int tag = kinds[k][0], bits = kinds[k][1], ch = channel_counts[c];
          const int64_t frames = frame_counts[f];
          const uint32_t rate = 8000u + 1001u * (uint32_t)cases;
          const int64_t data_bytes = frames * ch * bits / 8;
          fill_data(g_data, data_bytes, tag, bits, &rng);
          // Layout varies with the case: odd unknown chunks (pad bytes), data before fmt.
          buf b = {g_wav, 0};
          riff_header(&b);
          uint32_t fs = fmt_body(g_fmt, tag, ch, rate, bits, ext, bits == 32 ? 24 : bits);
          if (cases % 3 == 1) chunk(&b, "junk", (const uint8_t*)"abc", 3);
          if (cases % 2 == 0) chunk(&b, "fmt ", g_fmt, fs);
          chunk(&b, "data", g_data, (uint32_t)data_bytes);
          if (cases % 3 == 2) chunk(&b, "LIST", (const uint8_t*)"INFOx", 5);
          if (cases % 2 == 1) chunk(&b, "fmt ", g_fmt, fs);
          if (cases % 5 == 0) chunk(&b, "id3 ", (const uint8_t*)"1", 1);
          riff_finish(&b);

          int64_t n = -1, sr = -1;
          int rc = ckw_f32_wav_decode_query(g_wav, b.n, &n, &sr);
          EXPECT(rc == 0, "case %d tag %d bits %d ch %d: %s", cases, tag, bits, ch, ckw_f32_wav_decode_strerror(rc));
          EXPECT(n == frames && sr == (int64_t)rate, "case %d: n %lld sr %lld", cases, (long long)n, (long long)sr);
          for (int64_t i = 0; i < frames; ++i) {
            double sum = 0.0;
            for (int j = 0; j < ch; ++j) {
              sum += ref_sample(g_data + (i * ch + j) * (bits / 8), tag, bits);
            }
            g_ref[i] = (float)(sum / ch);
          }
          g_out[frames] = 12345.0f;  // canary
          rc = ckw_f32_wav_decode(g_out, frames, g_wav, b.n);
          EXPECT(rc == 0, "case %d decode: %s", cases, ckw_f32_wav_decode_strerror(rc));
          EXPECT(g_out[frames] == 12345.0f, "case %d wrote past n_samples", cases);
          // Both sides compute the exact mean in double and round once: bit-equal.
          int64_t bad = -1;
          for (int64_t i = 0; i < frames && bad < 0; ++i) {
            if (memcmp(&g_out[i], &g_ref[i], 4) != 0) bad = i;
          }
          EXPECT(bad < 0, "case %d (tag %d bits %d ch %d ext %d): sample %lld got %.9g want %.9g", cases, tag, bits, ch,
                 ext, (long long)bad, bad < 0 ? 0.0 : g_out[bad], bad < 0 ? 0.0 : g_ref[bad]);
          // A stream's blocks (of 3 frames, the last one short) give the same bits.
          int64_t info[3] = {-1, -1, -1};
          rc = ckw_i64_wav_info(info, g_wav, b.n);
          EXPECT(rc == 0 && info[0] == frames && info[1] == (int64_t)rate && info[2] == ch,
                 "case %d info: %d %lld %lld %lld", cases, rc, (long long)info[0], (long long)info[1],
                 (long long)info[2]);
          for (int64_t i = 0; i < frames; i += 3) {
            const int64_t nb = frames - i < 3 ? frames - i : 3;
            float block[4] = {0, 0, 0, 4321.0f};
            rc = ckw_f32_wav_decode_range(block, nb, g_wav, b.n, i);
            EXPECT(rc == 0 && memcmp(block, g_out + i, (size_t)nb * sizeof *block) == 0 && block[3] == 4321.0f,
                   "case %d block at %lld: %s", cases, (long long)i, ckw_f32_wav_decode_strerror(rc));
          }
          EXPECT(ckw_f32_wav_decode_range(g_out, 1, g_wav, b.n, frames) == CKW_WAV_ERR_RANGE,
                 "case %d: a block past the end", cases);
          ++cases;
        }
      }
    }
  }
}

// A 16-bit stereo file in the canonical 44-byte layout, for the edge and error cases:
// fmt chunk at 12 (body at 20), data chunk at 36 (size at 40, samples at 44).
static int64_t canonical(uint8_t* out, int64_t frames) {
  buf b = {out, 0};
  riff_header(&b);
  uint32_t fs = fmt_body(g_fmt, 1, 2, 16000, 16, 0, 16);
  chunk(&b, "fmt ", g_fmt, fs);
  uint64_t rng = 7;
  fill_data(g_data, frames * 4, 1, 16, &rng);
  chunk(&b, "data", g_data, (uint32_t)(frames * 4));
  riff_finish(&b);
  return b.n;
}

static void set32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static int query(const uint8_t* w, int64_t n) {
  int64_t s, r;
  return ckw_f32_wav_decode_query(w, n, &s, &r);
}

static void test_lenient_layouts(void) {
  static uint8_t w[4096];
  int64_t n = canonical(w, 100), s = 0, r = 0;
  // RIFF size larger than the buffer, or zero: the buffer's end is used.
  set32(w + 4, 0xFFFFFFFFu);
  EXPECT(ckw_f32_wav_decode_query(w, n, &s, &r) == 0 && s == 100, "riff size too big: %lld", (long long)s);
  set32(w + 4, 0);
  EXPECT(ckw_f32_wav_decode_query(w, n, &s, &r) == 0 && s == 100, "riff size 0");
  // Bytes after the RIFF end (e.g. an appended tag) are ignored, even if they are garbage.
  set32(w + 4, (uint32_t)(n - 8));
  memcpy(w + n, "TAG\xff\xff\xff\xff\xff\xff\xff", 10);
  EXPECT(ckw_f32_wav_decode_query(w, n + 10, &s, &r) == 0 && s == 100, "trailing garbage");
  // Streaming placeholder: data runs to the end; a trailing partial frame is dropped.
  set32(w + 40, 0xFFFFFFFFu);
  EXPECT(ckw_f32_wav_decode_query(w, n - 2, &s, &r) == 0 && s == 99, "streamed: %lld", (long long)s);
  EXPECT(ckw_f32_wav_decode(g_out, 99, w, n - 2) == 0, "streamed decode");
  // A missing final pad byte (odd data, last chunk) is tolerated.
  buf b = {w, 0};
  riff_header(&b);
  uint32_t fs = fmt_body(g_fmt, 1, 1, 8000, 8, 0, 8);
  chunk(&b, "fmt ", g_fmt, fs);
  chunk(&b, "data", (const uint8_t*)"\x80\xff\x00", 3);
  riff_finish(&b);
  EXPECT(ckw_f32_wav_decode_query(w, b.n - 1, &s, &r) == 0 && s == 3, "missing pad byte");
  EXPECT(ckw_f32_wav_decode(g_out, 3, w, b.n - 1) == 0 && g_out[0] == 0.0f && g_out[1] == 127.0f / 128.0f &&
             g_out[2] == -1.0f,
         "u8 scaling: %g %g %g", g_out[0], g_out[1], g_out[2]);
  // NULL outputs are allowed in the query.
  EXPECT(ckw_f32_wav_decode_query(w, b.n, NULL, NULL) == 0, "NULL query outputs");
}

static void test_errors(void) {
  static uint8_t w[4096];
  const int64_t n = canonical(w, 10);
  static uint8_t v[4096];
#define MUTATE(stmt) (memcpy(v, w, (size_t)n), stmt)
  EXPECT(query(NULL, 10) == CKW_WAV_ERR_ARGUMENT, "NULL input");
  EXPECT(query(w, -1) == CKW_WAV_ERR_ARGUMENT, "negative length");
  EXPECT(query(w, 11) == CKW_WAV_ERR_TOO_SHORT, "11 bytes");
  EXPECT(query(NULL, 0) == CKW_WAV_ERR_TOO_SHORT, "empty");
  MUTATE(memcpy(v, "RIFG", 4));
  EXPECT(query(v, n) == CKW_WAV_ERR_NOT_RIFF, "not riff");
  MUTATE(memcpy(v, "RIFX", 4));
  EXPECT(query(v, n) == CKW_WAV_ERR_UNSUPPORTED_CONTAINER, "rifx");
  MUTATE(memcpy(v, "RF64", 4));
  EXPECT(query(v, n) == CKW_WAV_ERR_UNSUPPORTED_CONTAINER, "rf64");
  MUTATE(memcpy(v + 8, "AVI ", 4));
  EXPECT(query(v, n) == CKW_WAV_ERR_NOT_WAVE, "avi");
  MUTATE(memcpy(v + 12, "junk", 4));  // fmt becomes an unknown chunk
  EXPECT(query(v, n) == CKW_WAV_ERR_NO_FMT, "no fmt");
  MUTATE(memcpy(v + 36, "jUnk", 4));
  EXPECT(query(v, n) == CKW_WAV_ERR_NO_DATA, "no data");
  MUTATE(set32(v + 16, 0x7FFFFFF0u));
  EXPECT(query(v, n) == CKW_WAV_ERR_CHUNK_TRUNCATED, "fmt past end");
  MUTATE(set32(v + 40, 41));
  EXPECT(query(v, n) == CKW_WAV_ERR_DATA_TRUNCATED, "data past end");
  MUTATE(set32(v + 40, 38));
  EXPECT(query(v, n) == CKW_WAV_ERR_DATA_PARTIAL_FRAME, "partial frame");
  MUTATE((v[20] = 2, v[21] = 0));
  EXPECT(query(v, n) == CKW_WAV_ERR_UNSUPPORTED_FORMAT, "adpcm");
  MUTATE((v[22] = 0, v[23] = 0));
  EXPECT(query(v, n) == CKW_WAV_ERR_NO_CHANNELS, "0 channels");
  MUTATE(set32(v + 24, 0));
  EXPECT(query(v, n) == CKW_WAV_ERR_NO_SAMPLE_RATE, "0 Hz");
  MUTATE(v[34] = 12);
  EXPECT(query(v, n) == CKW_WAV_ERR_BAD_BITS, "12-bit");
  MUTATE((v[20] = 3, v[34] = 16));
  EXPECT(query(v, n) == CKW_WAV_ERR_BAD_BITS, "16-bit float");
  MUTATE(v[32] = 3);
  EXPECT(query(v, n) == CKW_WAV_ERR_BAD_BLOCK_ALIGN, "block align");
  EXPECT(ckw_f32_wav_decode(g_out, 9, w, n) == CKW_WAV_ERR_OUTPUT_TOO_SMALL, "capacity");
  EXPECT(ckw_f32_wav_decode(NULL, 10, w, n) == CKW_WAV_ERR_ARGUMENT, "NULL output");

  // fmt chunk shorter than 16 bytes; duplicated chunks.
  buf b = {v, 0};
  riff_header(&b);
  chunk(&b, "fmt ", g_fmt, 14);
  chunk(&b, "data", g_data, 4);
  EXPECT(query(v, b.n) == CKW_WAV_ERR_FMT_TOO_SHORT, "short fmt");
  uint32_t fs = fmt_body(g_fmt, 1, 1, 16000, 16, 0, 16);
  riff_header(&b);
  chunk(&b, "fmt ", g_fmt, fs);
  chunk(&b, "fmt ", g_fmt, fs);
  chunk(&b, "data", g_data, 4);
  EXPECT(query(v, b.n) == CKW_WAV_ERR_DUPLICATE_FMT, "two fmt");
  riff_header(&b);
  chunk(&b, "fmt ", g_fmt, fs);
  chunk(&b, "data", g_data, 4);
  chunk(&b, "data", g_data, 4);
  EXPECT(query(v, b.n) == CKW_WAV_ERR_DUPLICATE_DATA, "two data");

  // EXTENSIBLE: short, cbSize too small, foreign GUID, non-PCM subformat, valid bits.
  uint8_t ext[64];
  fs = fmt_body(ext, 1, 1, 16000, 16, 1, 16);
  riff_header(&b);
  chunk(&b, "fmt ", ext, 18);
  EXPECT(query(v, b.n) == CKW_WAV_ERR_EXTENSIBLE_TOO_SHORT, "ext 18 bytes");
  const struct {
    int offset, value, code;
  } ext_cases[] = {
      {16, 10, CKW_WAV_ERR_EXTENSIBLE_TOO_SHORT},     // cbSize
      {30, 0x11, CKW_WAV_ERR_UNSUPPORTED_SUBFORMAT},  // GUID tail
      {24, 2, CKW_WAV_ERR_UNSUPPORTED_SUBFORMAT},     // ADPCM subformat
      {18, 20, CKW_WAV_ERR_BAD_VALID_BITS},
  };
  for (size_t i = 0; i < sizeof ext_cases / sizeof ext_cases[0]; ++i) {
    uint8_t e[64];
    memcpy(e, ext, sizeof e);
    e[ext_cases[i].offset] = (uint8_t)ext_cases[i].value;
    riff_header(&b);
    chunk(&b, "fmt ", e, fs);
    chunk(&b, "data", g_data, 4);
    EXPECT(query(v, b.n) == ext_cases[i].code, "extensible case %zu: got %d", i, query(v, b.n));
  }

  // Every code has its own message; unknown codes get a generic one.
  for (int c = CKW_WAV_ERR_MIN; c <= 0; ++c) {
    const char* m = ckw_f32_wav_decode_strerror(c);
    EXPECT(m != NULL && strlen(m) > 1 && !strchr(m, '\n'), "message for %d", c);
    for (int d = CKW_WAV_ERR_MIN; d < c; ++d) {
      EXPECT(strcmp(m, ckw_f32_wav_decode_strerror(d)) != 0, "codes %d and %d share", c, d);
    }
  }
  EXPECT(strstr(ckw_f32_wav_decode_strerror(-999), "unknown") != NULL, "unknown code");
#undef MUTATE
}

// Every prefix and many byte mutations of a file with several chunks: the result must be
// a known code, and a success must decode exactly the queried count (canary intact).
static void test_hostile(void) {
  static uint8_t w[8192], v[8192];
  buf b = {w, 0};
  riff_header(&b);
  chunk(&b, "junk", (const uint8_t*)"abcde", 5);
  uint8_t ext[64];
  uint32_t fs = fmt_body(ext, 1, 3, 44100, 24, 1, 20);
  chunk(&b, "fmt ", ext, fs);
  uint64_t rng = 99;
  fill_data(g_data, 3 * 3 * 200, 1, 24, &rng);
  chunk(&b, "data", g_data, 3 * 3 * 200);
  const int64_t list_at = b.n;
  chunk(&b, "LIST", (const uint8_t*)"INFOabc", 7);
  riff_finish(&b);
  const int64_t n = b.n;
  for (int64_t len = 0; len < n; ++len) {
    // A fresh heap copy of exactly len bytes, so ASan flags any read past it.
    uint8_t* p = malloc(len ? (size_t)len : 1);
    memcpy(p, w, (size_t)len);
    int64_t s = -7, r;
    int rc = ckw_f32_wav_decode_query(p, len, &s, &r);
    EXPECT(rc <= 0 && rc >= CKW_WAV_ERR_MIN, "prefix %lld: code %d", (long long)len, rc);
    // Decodable: the data chunk is whole and the cut leaves under 8 bytes of the next chunk
    // header (ignored as trailing bytes) or only drops the final pad byte.
    int want_ok = (len >= list_at && len < list_at + 8) || len == n - 1;
    EXPECT((rc == 0) == want_ok, "prefix %lld of %lld: %s", (long long)len, (long long)n,
           ckw_f32_wav_decode_strerror(rc));
    if (rc == 0) EXPECT(s == 200, "prefix %lld: %lld samples", (long long)len, (long long)s);
    free(p);
  }
  int decoded = 0;
  for (int iter = 0; iter < 40000; ++iter) {
    memcpy(v, w, (size_t)n);
    int flips = 1 + (int)(test_rng_next(&rng) % 4);
    for (int f = 0; f < flips; ++f) {
      int64_t at = (int64_t)(test_rng_next(&rng) % 80);  // headers live in the first bytes
      if (test_rng_next(&rng) % 4 == 0) at = (int64_t)(test_rng_next(&rng) % (uint64_t)n);
      v[at] = (uint8_t)test_rng_next(&rng);
    }
    int64_t len = n - (int64_t)(test_rng_next(&rng) % 3);
    int64_t s = -1, r = -1;
    int rc = ckw_f32_wav_decode_query(v, len, &s, &r);
    EXPECT(rc <= 0 && rc >= CKW_WAV_ERR_MIN, "mutation %d: code %d", iter, rc);
    if (rc == 0) {
      ++decoded;
      EXPECT(s >= 0 && s <= len, "mutation %d: %lld samples", iter, (long long)s);
      if (s < 0 || s > len) continue;
      g_out[s] = 777.0f;
      rc = ckw_f32_wav_decode(g_out, s, v, len);
      EXPECT(rc == 0 && g_out[s] == 777.0f, "mutation %d: decode %d", iter, rc);
    }
  }
  EXPECT(decoded > 100, "mutations left only %d decodable files", decoded);
}

// A mono IEEE float file of `bits` (32 or 64) holding the n_bytes of `samples`, in w.
static int64_t float_file(uint8_t* w, int bits, const void* samples, uint32_t n_bytes) {
  buf b = {w, 0};
  riff_header(&b);
  uint32_t fs = fmt_body(g_fmt, 3, 1, 16000, bits, 0, bits);
  chunk(&b, "fmt ", g_fmt, fs);
  chunk(&b, "data", (const uint8_t*)samples, n_bytes);
  riff_finish(&b);
  return b.n;
}

// Float samples that are NaN, infinite or beyond CKW_WAV_MAX_FLOAT (a double beyond float's
// range too) are refused; CKW_WAV_MAX_FLOAT itself passes.
static void test_non_finite_floats(void) {
  static uint8_t w[256];
  const float kFloats[][2] = {{0.5f, NAN}, {INFINITY, 0.0f}, {-INFINITY, 0.0f}, {0.0f, 2e7f}};
  for (size_t i = 0; i < sizeof kFloats / sizeof kFloats[0]; ++i) {
    int64_t n = float_file(w, 32, kFloats[i], sizeof kFloats[i]);
    EXPECT(query(w, n) == 0, "float case %zu: the header is fine", i);
    EXPECT(ckw_f32_wav_decode(g_out, 2, w, n) == CKW_WAV_ERR_SAMPLE_RANGE, "float case %zu", i);
  }
  const double kDoubles[][2] = {{1e300, 0.0}, {-FLT_MAX, 0.0}, {CKW_WAV_MAX_FLOAT, -CKW_WAV_MAX_FLOAT}};
  const int kWant[] = {CKW_WAV_ERR_SAMPLE_RANGE, CKW_WAV_ERR_SAMPLE_RANGE, CKW_WAV_OK};
  for (size_t i = 0; i < 3; ++i) {
    int64_t n = float_file(w, 64, kDoubles[i], sizeof kDoubles[i]);
    EXPECT(ckw_f32_wav_decode(g_out, 2, w, n) == kWant[i], "double case %zu", i);
  }
}

int main(void) {
  test_formats();
  test_non_finite_floats();
  test_lenient_layouts();
  test_errors();
  test_hostile();
  return test_finish("f32_wav_decode_test");
}
