#include "kernels/audio/f32_wav_decode.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define FORMAT_PCM 0x0001
#define FORMAT_IEEE_FLOAT 0x0003
#define FORMAT_EXTENSIBLE 0xFFFE

// Writers that cannot seek back (pipes) leave the data size at this placeholder; it then
// means "to the end of the file".
#define SIZE_UNKNOWN 0xFFFFFFFFu

typedef struct {
  int format;  // FORMAT_PCM or FORMAT_IEEE_FLOAT after EXTENSIBLE is resolved
  int64_t channels;
  int64_t sample_rate;
  int64_t bytes_per_sample;
  int64_t data_offset;
  int64_t n_frames;
} wav_layout;

static uint32_t le16(const uint8_t* p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t le32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int tag_is(const uint8_t* p, const char* tag) { return memcmp(p, tag, 4) == 0; }

// fmt chunk body f[0 .. size), size already checked to lie inside the buffer.
static int parse_fmt(const uint8_t* f, int64_t size, wav_layout* w) {
  if (size < 16) return CKW_WAV_ERR_FMT_TOO_SHORT;
  uint32_t format = le16(f);
  uint32_t channels = le16(f + 2);
  uint32_t rate = le32(f + 4);
  uint32_t block_align = le16(f + 12);
  uint32_t bits = le16(f + 14);
  if (format == FORMAT_EXTENSIBLE) {
    // KSDATAFORMAT_SUBTYPE_* GUIDs are 0000xxxx-0000-0010-8000-00aa00389b71, xxxx = tag.
    const uint8_t kGuidTail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
    if (size < 40 || le16(f + 16) < 22) return CKW_WAV_ERR_EXTENSIBLE_TOO_SHORT;
    if (memcmp(f + 26, kGuidTail, sizeof kGuidTail) != 0) {
      return CKW_WAV_ERR_UNSUPPORTED_SUBFORMAT;
    }
    format = le16(f + 24);
    if (format != FORMAT_PCM && format != FORMAT_IEEE_FLOAT) {
      return CKW_WAV_ERR_UNSUPPORTED_SUBFORMAT;
    }
    // Valid bits only say how much of the container is meaningful: samples are left-
    // justified, so scaling by the container width is already right.
    if (le16(f + 18) > bits) return CKW_WAV_ERR_BAD_VALID_BITS;
  } else if (format != FORMAT_PCM && format != FORMAT_IEEE_FLOAT) {
    return CKW_WAV_ERR_UNSUPPORTED_FORMAT;
  }
  if (channels == 0) return CKW_WAV_ERR_NO_CHANNELS;
  if (rate == 0) return CKW_WAV_ERR_NO_SAMPLE_RATE;
  int bits_ok =
      format == FORMAT_PCM ? (bits == 8 || bits == 16 || bits == 24 || bits == 32) : (bits == 32 || bits == 64);
  if (!bits_ok) return CKW_WAV_ERR_BAD_BITS;
  if (block_align != channels * (bits / 8)) return CKW_WAV_ERR_BAD_BLOCK_ALIGN;
  w->format = (int)format;
  w->channels = channels;
  w->sample_rate = rate;
  w->bytes_per_sample = bits / 8;
  return CKW_WAV_OK;
}

static int parse(const uint8_t* d, int64_t n, wav_layout* w) {
  if (n < 0 || (d == NULL && n > 0)) return CKW_WAV_ERR_ARGUMENT;
  if (n < 12) return CKW_WAV_ERR_TOO_SHORT;
  if (tag_is(d, "RIFX") || tag_is(d, "RF64")) return CKW_WAV_ERR_UNSUPPORTED_CONTAINER;
  if (!tag_is(d, "RIFF")) return CKW_WAV_ERR_NOT_RIFF;
  if (!tag_is(d + 8, "WAVE")) return CKW_WAV_ERR_NOT_WAVE;

  // The RIFF size only bounds where chunks may start (bytes after it, e.g. an appended tag,
  // are ignored); writers often get it wrong, so a size beyond the buffer means "all of it".
  uint32_t riff_size = le32(d + 4);
  int64_t end = (riff_size >= 4 && (int64_t)riff_size <= n - 8) ? 8 + (int64_t)riff_size : n;

  int have_fmt = 0, have_data = 0, data_to_end = 0;
  int64_t data_offset = 0, data_size = 0;
  int64_t pos = 12;
  while (end - pos >= 8) {
    const uint8_t* chunk = d + pos;
    uint32_t size = le32(chunk + 4);
    int64_t body = pos + 8;
    int64_t avail = n - body;  // bodies are checked against the buffer, not the RIFF size
    if (tag_is(chunk, "data")) {
      if (have_data) return CKW_WAV_ERR_DUPLICATE_DATA;
      have_data = 1;
      data_offset = body;
      if (size == SIZE_UNKNOWN && (int64_t)size > avail) {
        data_size = avail;
        data_to_end = 1;
      } else if ((int64_t)size > avail) {
        return CKW_WAV_ERR_DATA_TRUNCATED;
      } else {
        data_size = size;
      }
    } else {
      if ((int64_t)size > avail) return CKW_WAV_ERR_CHUNK_TRUNCATED;
      if (tag_is(chunk, "fmt ")) {
        if (have_fmt) return CKW_WAV_ERR_DUPLICATE_FMT;
        have_fmt = 1;
        int rc = parse_fmt(chunk + 8, size, w);
        if (rc != CKW_WAV_OK) return rc;
      }
    }
    if (data_to_end) break;
    pos = body + (int64_t)size + (size & 1);  // odd sizes are followed by a pad byte
  }
  if (!have_fmt) return CKW_WAV_ERR_NO_FMT;
  if (!have_data) return CKW_WAV_ERR_NO_DATA;

  int64_t block = w->channels * w->bytes_per_sample;
  // A streamed file may stop mid-frame (the partial frame is dropped); a declared size must
  // be whole frames.
  if (data_size % block != 0 && !data_to_end) return CKW_WAV_ERR_DATA_PARTIAL_FRAME;
  w->data_offset = data_offset;
  w->n_frames = data_size / block;
  return CKW_WAV_OK;
}

int ckw_f32_wav_decode_query(const uint8_t* wav, int64_t n_bytes, int64_t* n_samples, int64_t* sample_rate) {
  wav_layout w;
  int rc = parse(wav, n_bytes, &w);
  if (rc != CKW_WAV_OK) return rc;
  if (n_samples) *n_samples = w.n_frames;
  if (sample_rate) *sample_rate = w.sample_rate;
  return CKW_WAV_OK;
}

// Integer PCM sample as a signed integer in units of 2^-(bits - 1) (u8 is offset by 128).
static int32_t pcm_at(const uint8_t* p, int64_t bytes) {
  switch (bytes) {
    case 1:
      return (int32_t)p[0] - 128;
    case 2:
      return (int16_t)le16(p);
    case 3:  // placed in the top of an int32 for the sign, then divided back down (exact)
      return (int32_t)((uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24) / 256;
    default:
      return (int32_t)le32(p);
  }
}

static double float_at(const uint8_t* p, int64_t bytes) {
  if (bytes == 4) {
    uint32_t u = le32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  uint64_t u = (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
  double g;
  memcpy(&g, &u, sizeof g);
  return g;
}

// Frames frame_begin .. frame_begin + n - 1 of the data into y[0 .. n); CKW_WAV_OK or
// CKW_WAV_ERR_SAMPLE_RANGE.
static int decode_frames(float* restrict y, const uint8_t* restrict wav, const wav_layout* w, int64_t frame_begin,
                         int64_t n) {
  const int64_t bytes = w->bytes_per_sample, channels = w->channels;
  const uint8_t* p = wav + w->data_offset + frame_begin * channels * bytes;
  // Each output is the exact channel mean rounded once to float: integer PCM sums exactly in
  // int64 (at most 65535 terms of 32 bits) and is divided once in double.
  if (w->format == FORMAT_PCM) {
    const double denominator = (double)channels * (bytes == 1 ? 128.0 : ldexp(1.0, 8 * (int)bytes - 1));
    // Dividing by a power of two is multiplying by its exact reciprocal.
    const int pow2 = (channels & (channels - 1)) == 0;
    const double inverse = 1.0 / denominator;
    if (bytes == 2 && channels == 1) {  // the common case, kept tight
      for (int64_t i = 0; i < n; ++i) {
        y[i] = (float)(int16_t)le16(p + 2 * i) * (1.0f / 32768.0f);  // exact in float
      }
      return CKW_WAV_OK;
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t sum = 0;
      for (int64_t c = 0; c < channels; ++c, p += bytes) sum += pcm_at(p, bytes);
      y[i] = (float)(pow2 ? (double)sum * inverse : (double)sum / denominator);
    }
    return CKW_WAV_OK;
  }
  // NaN, infinity or a magnitude beyond CKW_WAV_MAX_FLOAT would turn log-mel frames into
  // garbage (NaN, or float overflow in the power spectrum): refused as a corrupt file.
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int64_t c = 0; c < channels; ++c, p += bytes) sum += float_at(p, bytes);
    y[i] = (float)(sum / (double)channels);
    if (!(fabsf(y[i]) <= (float)CKW_WAV_MAX_FLOAT)) return CKW_WAV_ERR_SAMPLE_RANGE;  // NaN too
  }
  return CKW_WAV_OK;
}

int ckw_f32_wav_decode(float* restrict y, int64_t capacity, const uint8_t* restrict wav, int64_t n_bytes) {
  wav_layout w;
  int rc = parse(wav, n_bytes, &w);
  if (rc != CKW_WAV_OK) return rc;
  if (capacity < w.n_frames) return CKW_WAV_ERR_OUTPUT_TOO_SMALL;
  if (y == NULL && w.n_frames > 0) return CKW_WAV_ERR_ARGUMENT;
  return decode_frames(y, wav, &w, 0, w.n_frames);
}

int ckw_f32_wav_decode_range(float* restrict y, int64_t n, const uint8_t* restrict wav, int64_t n_bytes,
                             int64_t frame_begin) {
  wav_layout w;
  int rc = parse(wav, n_bytes, &w);
  if (rc != CKW_WAV_OK) return rc;
  if (n < 0 || frame_begin < 0 || (y == NULL && n > 0)) return CKW_WAV_ERR_ARGUMENT;
  if (frame_begin > w.n_frames || n > w.n_frames - frame_begin) return CKW_WAV_ERR_RANGE;
  return decode_frames(y, wav, &w, frame_begin, n);
}

int ckw_i64_wav_info(int64_t* info, const uint8_t* wav, int64_t n_bytes) {
  wav_layout w;
  int rc = parse(wav, n_bytes, &w);
  if (rc != CKW_WAV_OK) return rc;
  if (info == NULL) return CKW_WAV_ERR_ARGUMENT;
  info[0] = w.n_frames;
  info[1] = w.sample_rate;
  info[2] = w.channels;
  return CKW_WAV_OK;
}

const char* ckw_f32_wav_decode_strerror(int code) {
  switch (code) {
    case CKW_WAV_OK:
      return "ok";
    case CKW_WAV_ERR_ARGUMENT:
      return "NULL buffer or negative length passed by the caller";
    case CKW_WAV_ERR_TOO_SHORT:
      return "input shorter than the 12-byte RIFF header; is the file empty or cut off?";
    case CKW_WAV_ERR_NOT_RIFF:
      return "input does not start with 'RIFF'; not a WAV file (convert it to WAV first)";
    case CKW_WAV_ERR_UNSUPPORTED_CONTAINER:
      return "RIFX (big-endian) and RF64 containers are not supported; re-encode as RIFF WAV";
    case CKW_WAV_ERR_NOT_WAVE:
      return "RIFF form type is not 'WAVE' (e.g. an AVI or WebP file)";
    case CKW_WAV_ERR_CHUNK_TRUNCATED:
      return "a chunk's declared size runs past the end of the input; the file is truncated";
    case CKW_WAV_ERR_DUPLICATE_FMT:
      return "more than one 'fmt ' chunk; the file is ambiguous";
    case CKW_WAV_ERR_DUPLICATE_DATA:
      return "more than one 'data' chunk; the file is ambiguous";
    case CKW_WAV_ERR_NO_FMT:
      return "no 'fmt ' chunk, so the sample format is unknown";
    case CKW_WAV_ERR_NO_DATA:
      return "no 'data' chunk; the file holds no audio";
    case CKW_WAV_ERR_FMT_TOO_SHORT:
      return "'fmt ' chunk shorter than the 16 bytes of WAVEFORMAT";
    case CKW_WAV_ERR_EXTENSIBLE_TOO_SHORT:
      return "WAVE_FORMAT_EXTENSIBLE 'fmt ' chunk shorter than 40 bytes or cbSize < 22";
    case CKW_WAV_ERR_UNSUPPORTED_FORMAT:
      return "format tag is not PCM (1), IEEE float (3) or EXTENSIBLE; compressed WAV "
             "(ADPCM, mu-law, ...) must be converted to PCM first";
    case CKW_WAV_ERR_UNSUPPORTED_SUBFORMAT:
      return "EXTENSIBLE subformat GUID is not PCM or IEEE float; convert to PCM first";
    case CKW_WAV_ERR_NO_CHANNELS:
      return "'fmt ' declares 0 channels";
    case CKW_WAV_ERR_NO_SAMPLE_RATE:
      return "'fmt ' declares a sample rate of 0 Hz";
    case CKW_WAV_ERR_BAD_BITS:
      return "unsupported bits per sample (PCM takes 8/16/24/32, float takes 32/64)";
    case CKW_WAV_ERR_BAD_VALID_BITS:
      return "EXTENSIBLE valid bits per sample exceed the container's bits per sample";
    case CKW_WAV_ERR_BAD_BLOCK_ALIGN:
      return "block align is not channels * bytes per sample; the header is corrupt";
    case CKW_WAV_ERR_DATA_TRUNCATED:
      return "'data' chunk's declared size runs past the end of the input; the file is "
             "truncated";
    case CKW_WAV_ERR_DATA_PARTIAL_FRAME:
      return "'data' size is not a whole number of frames (block align); the header is "
             "corrupt";
    case CKW_WAV_ERR_SAMPLE_RANGE:
      return "float samples include NaN, infinity or magnitudes above 2^24 (full scale is 1); the "
             "file is corrupt";
    case CKW_WAV_ERR_OUTPUT_TOO_SMALL:
      return "output buffer smaller than the sample count from ckw_f32_wav_decode_query";
    case CKW_WAV_ERR_RANGE:
      return "frames requested past the end of the 'data' chunk";
    default:
      return "unknown error code";
  }
}
