#define _GNU_SOURCE
#include "tools/codegen/support/ckw_handle.h"

#include <fcntl.h>
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

// Reads the "manifest_sha256" string of a manifest file into out (65 bytes); 0 on success.
static int read_manifest_hash(const char *path, char out[65]) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[1 << 16];
  size_t have = 0;
  ssize_t got;
  int found = -1;
  // The key may sit anywhere; scan in overlapping windows so it is never split.
  while ((got = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
    have += (size_t)got;
    buf[have] = 0;
    const char *key = strstr(buf, "\"manifest_sha256\"");
    if (key) {
      const char *p = key + strlen("\"manifest_sha256\"");
      while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == ':') ++p;
      if (*p == '"' && (size_t)(buf + have - (p + 1)) >= 65) {
        memcpy(out, p + 1, 64);
        out[64] = 0;
        found = p[65] == '"' ? 0 : -1;
        break;
      }
      if (key + 128 < buf + have) break;
    }
    if (have > 256) {  // keep a tail so a key split across reads is seen whole
      memmove(buf, buf + have - 256, 256);
      have = 256;
    }
  }
  close(fd);
  return found;
}

// Checks the manifest, then maps the weights file and checks the tensors lib reads.
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
  char hash[65];
  if (read_manifest_hash(manifest_path, hash) != 0) return CKW_E_IO;
  if (strcmp(hash, lib->manifest_sha256) != 0) return CKW_E_MANIFEST_MISMATCH;
  int fd = open(weights_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CKW_E_IO;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size != lib->weights_bytes) {
    close(fd);
    return CKW_E_WEIGHTS_SIZE;
  }
  void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return CKW_E_IO;
  h->weights = map;
  h->weights_bytes = (size_t)st.st_size;
  // About the cost of reading the tensors once: a corrupt file is refused, never computed with.
  for (size_t i = 0; i < lib->n_weight_checks; ++i) {
    const struct ckw_weight_check *c = &lib->weight_checks[i];
    if (ckw_xxh64(h->weights + c->offset, (size_t)c->nbytes, 0) != c->xxh64) return CKW_E_WEIGHTS_CORRUPT;
  }
  return CKW_OK;
}

// The arena, the zeroed state, the worker threads and their scratch.
static int allocate(struct ckw_handle *h, const struct ckw_library *lib, int num_threads) {
  h->arena_bytes = lib->arena_bytes > 0 ? (size_t)lib->arena_bytes : 64;
  h->arena = aligned_alloc(64, h->arena_bytes);
  const size_t state_bytes = lib->state_bytes > 0 ? (size_t)lib->state_bytes : 64;
  h->state = aligned_alloc(64, state_bytes);
  if (!h->arena || !h->state) return CKW_E_NO_MEMORY;
  memset(h->state, 0, state_bytes);
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
  free(h->state);
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

const char *ckw_handle_last_error(const struct ckw_handle *h) {
  return h && h->kernel_error ? h->kernel_error : "";
}

int64_t ckw_dim_lookup(const struct ckw_dim *dims, size_t n, const char *name) {
  if (!name) return -1;
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(dims[i].name, name) == 0) return dims[i].value;
  }
  return -1;
}
