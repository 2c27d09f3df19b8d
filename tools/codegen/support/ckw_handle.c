#define _GNU_SOURCE
#include "tools/codegen/support/ckw_handle.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/codegen/support/xxh64.h"

// A handle runs one call at a time: kBusy while an entry point runs (another call gets E_BUSY),
// kFreeWhenIdle when free() came during a call (the call frees the handle as it returns).
enum { kIdle = 0, kBusy = 1, kFreeWhenIdle = 2 };

const char *ckw_status_text(int code) {
  switch (code) {
#define CKW_STATUS_CASE_(name, code, text) \
  case CKW_##name:                         \
    return text;
    CKW_STATUS_TABLE(CKW_STATUS_CASE_)
#undef CKW_STATUS_CASE_
    default:
      return "unknown error code";
  }
}

// A manifest larger than this is refused (the largest Whisper's is under a megabyte).
#define MANIFEST_MAX_BYTES ((size_t)64 << 20)

// The manifest file's bytes, NUL-terminated, in a malloc'd *out of *len bytes; 0 on success.
static int read_manifest(const char *path, char **out, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  char *buf = NULL;
  size_t have = 0;
  if (fstat(fd, &st) == 0 && st.st_size >= 0 && (size_t)st.st_size <= MANIFEST_MAX_BYTES &&
      (buf = malloc((size_t)st.st_size + 1)) != NULL) {
    ssize_t got;
    while (have < (size_t)st.st_size && (got = read(fd, buf + have, (size_t)st.st_size - have)) > 0)
      have += (size_t)got;
  }
  close(fd);
  if (!buf || have != (size_t)st.st_size) {
    free(buf);
    return -1;
  }
  buf[have] = 0;
  *out = buf;
  *len = have;
  return 0;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The first occurrence of needle (n bytes) in [begin, end), or NULL.
static const char *find(const char *begin, const char *end, const char *needle, size_t n) {
  return end - begin >= (ptrdiff_t)n ? memmem(begin, (size_t)(end - begin), needle, n) : NULL;
}

// The value after the first key `"key"` (quotes included in `quoted`) in [begin, end): what
// follows its ':' and any whitespace; NULL when the key is absent.
static const char *value_of(const char *begin, const char *end, const char *quoted) {
  const size_t n = strlen(quoted);
  for (const char *k = find(begin, end, quoted, n); k; k = find(k + 1, end, quoted, n)) {
    const char *p = k + n;
    while (p < end && is_space(*p)) ++p;
    if (p >= end || *p != ':') continue;  // a string value equal to the key's name
    ++p;
    while (p < end && is_space(*p)) ++p;
    return p < end ? p : NULL;
  }
  return NULL;
}

// The string value of `quoted` in [begin, end) when it is exactly n characters, copied into out
// (n + 1 bytes); 0 on success.
static int string_value(const char *begin, const char *end, const char *quoted, char *out, size_t n) {
  const char *v = value_of(begin, end, quoted);
  if (!v || *v != '"' || end - v < (ptrdiff_t)(n + 2) || v[n + 1] != '"' || memchr(v + 1, '"', n)) return -1;
  memcpy(out, v + 1, n);
  out[n] = 0;
  return 0;
}

// The non-negative integer value of `quoted` in [begin, end), or -1.
static int64_t integer_value(const char *begin, const char *end, const char *quoted) {
  const char *v = value_of(begin, end, quoted);
  if (!v || *v < '0' || *v > '9') return -1;
  int64_t x = 0;
  for (; v < end && *v >= '0' && *v <= '9'; ++v) {
    if (x > (INT64_MAX - 9) / 10) return -1;
    x = x * 10 + (*v - '0');
  }
  return x;
}

// The tensor entry `{... "name": "<name>" ...}` of the manifest, searched from *cursor on and then
// from the start (checks come in file order, as the manifest lists them: one pass in all), as
// [*begin, *end); 0 on success.
static int tensor_entry(const char *buf, size_t len, size_t *cursor, const char *name, const char **begin,
                        const char **end) {
  char quoted[512];
  const int n = snprintf(quoted, sizeof(quoted), "\"%s\"", name);
  if (n < 0 || (size_t)n >= sizeof(quoted)) return -1;
  const char *stop = buf + len;
  for (int pass = 0; pass < 2; ++pass) {
    const char *from = pass == 0 ? buf + *cursor : buf;
    const char *to = pass == 0 ? stop : buf + *cursor + (size_t)n;
    if (to > stop) to = stop;
    for (const char *q = find(from, to, quoted, (size_t)n); q; q = find(q + 1, to, quoted, (size_t)n)) {
      const char *p = q;  // the value of a "name" key: `"name"`, whitespace, ':', whitespace before it
      while (p > buf && is_space(p[-1])) --p;
      if (p == buf || p[-1] != ':') continue;
      --p;
      while (p > buf && is_space(p[-1])) --p;
      if (p - buf < 6 || memcmp(p - 6, "\"name\"", 6) != 0) continue;
      const char *b = q, *e = q;
      while (b > buf && *b != '{') --b;  // a tensor entry holds no nested object
      while (e < stop && *e != '}') ++e;
      if (*b != '{' || e >= stop) return -1;
      *begin = b;
      *end = e;
      *cursor = (size_t)(e - buf);
      return 0;
    }
  }
  return -1;
}

// The xxh64 (16 hex digits) the manifest entry [begin, end) records; 0 on success.
static int entry_xxh64(const char *begin, const char *end, uint64_t *out) {
  char hex[17];
  if (string_value(begin, end, "\"xxh64\"", hex, 16) != 0) return -1;
  uint64_t x = 0;
  for (int i = 0; i < 16; ++i) {
    const char c = hex[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return -1;
    x = x << 4 | (uint64_t)d;
  }
  *out = x;
  return 0;
}

// Checks the manifest's layout_sha256 against lib's, maps the weights file (lib's exact size),
// and checks each tensor lib reads against its manifest entry: the same offset and size, and the
// xxh64 recorded there.
static int check_weights(struct ckw_handle *h, const struct ckw_library *lib, int fd, const char *manifest,
                         size_t manifest_len) {
  char layout[65];
  const char *end = manifest + manifest_len;
  if (string_value(manifest, end, "\"layout_sha256\"", layout, 64) != 0 || strcmp(layout, lib->layout_sha256) != 0) {
    return CKW_E_LAYOUT_MISMATCH;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) return CKW_E_IO;
  if (st.st_size != lib->weights_bytes) return CKW_E_WEIGHTS_SIZE;
  void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return CKW_E_IO;
  h->weights = map;
  h->weights_bytes = (size_t)st.st_size;
  // About the cost of reading the tensors once: a corrupt file is refused, never computed with.
  size_t cursor = 0;
  for (size_t i = 0; i < lib->n_weight_checks; ++i) {
    const struct ckw_weight_check *c = &lib->weight_checks[i];
    const char *b, *e;
    uint64_t want;
    if (tensor_entry(manifest, manifest_len, &cursor, c->name, &b, &e) != 0 ||
        integer_value(b, e, "\"offset\"") != c->offset || integer_value(b, e, "\"nbytes\"") != c->nbytes ||
        entry_xxh64(b, e, &want) != 0) {
      return CKW_E_LAYOUT_MISMATCH;  // the manifest does not describe the layout it claims
    }
    if (ckw_xxh64(h->weights + c->offset, (size_t)c->nbytes, 0) != want) return CKW_E_WEIGHTS_CORRUPT;
  }
  return CKW_OK;
}

// Reads the manifest (manifest_path NULL: manifest.json beside the weights), then checks and
// maps the weights file.
static int map_weights(struct ckw_handle *h, const struct ckw_library *lib, const char *weights_path,
                       const char *manifest_path) {
  if (!weights_path) return CKW_E_ARGUMENT;
  char default_manifest[4096];
  if (!manifest_path) {
    const char *slash = strrchr(weights_path, '/');
    size_t dir = slash ? (size_t)(slash - weights_path + 1) : 0;
    if (dir + sizeof("manifest.json") > sizeof(default_manifest)) return CKW_E_ARGUMENT;
    memcpy(default_manifest, weights_path, dir);
    memcpy(default_manifest + dir, "manifest.json", sizeof("manifest.json"));
    manifest_path = default_manifest;
  }
  char *manifest = NULL;
  size_t manifest_len = 0;
  if (read_manifest(manifest_path, &manifest, &manifest_len) != 0) return CKW_E_IO;
  int fd = open(weights_path, O_RDONLY | O_CLOEXEC);
  int rc = CKW_E_IO;
  if (fd >= 0) {
    rc = check_weights(h, lib, fd, manifest, manifest_len);
    close(fd);
  }
  free(manifest);
  return rc;
}

// The arena, the zeroed state, the worker threads and their scratch.
static int allocate(struct ckw_handle *h, const struct ckw_library *lib, int num_threads) {
  h->arena_bytes = lib->arena_bytes > 0 ? (size_t)lib->arena_bytes : 64;
  h->arena = aligned_alloc(64, h->arena_bytes);
  // The state is mapped, not allocated: the pages come zeroed and only those written take memory,
  // so a pool sized for its maximum (KV blocks, cross-K/V entries) costs what is in use.
  h->state_bytes = lib->state_bytes > 0 ? (size_t)lib->state_bytes : 64;
  void *state = mmap(NULL, h->state_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  h->state = state == MAP_FAILED ? NULL : state;
  if (!h->arena || !h->state) return CKW_E_NO_MEMORY;
  if (lib->max_threads < 1) return CKW_OK;  // no call of this library is split across threads
  h->pool = ckw_pool_create(ckw_pool_thread_count(num_threads, lib->max_threads));
  if (!h->pool) return CKW_E_NO_MEMORY;
  const int threads = ckw_pool_threads(h->pool);
  if (lib->thread_scratch_bytes > 0 && threads > 1) {
    h->thread_scratch = aligned_alloc(64, (size_t)((threads - 1) * lib->thread_scratch_bytes));
    if (!h->thread_scratch) return CKW_E_NO_MEMORY;
  }
  return CKW_OK;
}

static void destroy(struct ckw_handle *h) {
  ckw_pool_free(h->pool);
  free(h->thread_scratch);
  if (h->weights) munmap((void *)h->weights, h->weights_bytes);
  free(h->arena);
  if (h->state) munmap(h->state, h->state_bytes);
  free(h);
}

int ckw_handle_create(const struct ckw_library *lib, size_t handle_bytes, const char *weights_path,
                      const char *manifest_path, int num_threads, struct ckw_handle **out) {
  if (!out) return CKW_E_ARGUMENT;
  *out = NULL;
  if (!lib || handle_bytes < sizeof(struct ckw_handle) || num_threads < 0) return CKW_E_ARGUMENT;
  struct ckw_handle *h = calloc(1, handle_bytes);
  if (!h) return CKW_E_NO_MEMORY;
  atomic_init(&h->call_state, kIdle);
  int rc = lib->weights_bytes > 0 ? map_weights(h, lib, weights_path, manifest_path) : CKW_OK;
  if (rc == CKW_OK) rc = allocate(h, lib, num_threads);
  if (rc != CKW_OK) {
    destroy(h);
    return rc;
  }
  *out = h;
  return CKW_OK;
}

int ckw_handle_enter(struct ckw_handle *h) {
  int idle = kIdle;
  return atomic_compare_exchange_strong(&h->call_state, &idle, kBusy);
}

void ckw_handle_leave(struct ckw_handle *h) {
  int busy = kBusy;
  if (!atomic_compare_exchange_strong(&h->call_state, &busy, kIdle)) destroy(h);
}

void ckw_handle_free(struct ckw_handle *h) {
  if (!h) return;
  int state = atomic_load(&h->call_state);
  for (;;) {  // idle: free now; busy: the running call frees it; already pending: nothing to do
    if (state == kIdle && atomic_compare_exchange_weak(&h->call_state, &state, kBusy)) break;
    if (state == kBusy && atomic_compare_exchange_weak(&h->call_state, &state, kFreeWhenIdle)) return;
    if (state == kFreeWhenIdle) return;
  }
  destroy(h);
}

int ckw_handle_reserve_arena(struct ckw_handle *h, int64_t bytes) {
  if (bytes <= (int64_t)h->arena_bytes) return 0;
  uint8_t *grown = aligned_alloc(64, (size_t)ckw_align64(bytes));
  if (!grown) return -1;
  free(h->arena);
  h->arena = grown;
  h->arena_bytes = (size_t)ckw_align64(bytes);
  return 0;
}

int ckw_handle_kernel_failed(struct ckw_handle *h, int status, const char *(*message)(int)) {
  h->kernel_status = status;
  h->kernel_error = message ? message(status) : "kernel failed";
  return CKW_E_KERNEL;
}

const char *ckw_handle_last_error(const struct ckw_handle *h) { return h && h->kernel_error ? h->kernel_error : ""; }

int64_t ckw_dim_lookup(const struct ckw_dim *dims, size_t n, const char *name) {
  if (!name) return -1;
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(dims[i].name, name) == 0) return dims[i].value;
  }
  return -1;
}
