// ckw_handle: the return-code table is complete (every code from 0 down to the last one has its
// own text, nothing else has one); create checks the manifest's layout, the weights file's size
// and each checked tensor against its manifest entry, so other weights of the layout (a
// fine-tune) pass and a corrupt file does not (a refused file leaves nothing allocated: ASan's
// leak check); it allocates the arena and zeroed state and starts the threads; one call at a
// time, free during a call, the arena growing, a kernel's failure message and dim lookup.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/common/test_util.h"
#include "tools/codegen/support/ckw_handle.h"
#include "tools/codegen/support/xxh64.h"

// A generated handle: the support part first, then the circuit's fields.
struct test_handle {
  struct ckw_handle base;
  int64_t position;
};

static void test_status_table(void) {
  int n = 0, lowest = 1;
#define COUNT(name, code, text) \
  ++n;                          \
  if ((code) < lowest) lowest = (code);
  CKW_STATUS_TABLE(COUNT)
#undef COUNT
  EXPECT(n == 12 && lowest == -11, "%d codes down to %d: a code was added; update this test and abi.ERRORS", n, lowest);
  const char *unknown = ckw_status_text(1);
  EXPECT(strcmp(unknown, "unknown error code") == 0, "code 1: '%s'", unknown);
  EXPECT(strcmp(ckw_status_text(lowest - 1), unknown) == 0, "code %d has a text", lowest - 1);
  for (int code = 0; code >= lowest; --code) {  // every code in the range has its own text
    const char *text = ckw_status_text(code);
    EXPECT(strcmp(text, unknown) != 0 && strlen(text) > 1, "code %d has no text", code);
    for (int other = 0; other > code; --other) {
      EXPECT(strcmp(text, ckw_status_text(other)) != 0, "codes %d and %d share '%s'", code, other, text);
    }
  }
  EXPECT(CKW_OK == 0 && CKW_E_BUSY == -11 && CKW_E_KERNEL == -9, "enum values");
  EXPECT(strcmp(ckw_status_text(CKW_E_NO_MEMORY), "out of memory") == 0, "E_NO_MEMORY's text");
}

// A weights file of 256 bytes and a manifest beside it, in a fresh directory.
struct files {
  char dir[400], weights[448], manifest[448];
  uint8_t bytes[256];
};

static const char kLayout[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  EXPECT(f && fwrite(data, 1, n, f) == n, "writing %s", path);
  if (f) fclose(f);
}

// Writes f->manifest: layout `layout`, tensors "a" (0, 64) and "b" (128, `b_offset`, 128 bytes)
// with the xxh64 of f->bytes there, "b"'s xor'ed with `b_flip`. `pretty`: laid out as pack.dump
// writes it (indent 2, keys sorted, the shape over several lines); else compact, other key order.
static void write_manifest(const struct files *f, const char *layout, int64_t b_offset, uint64_t b_flip, int pretty) {
  char json[1024];
  const unsigned long long a = ckw_xxh64(f->bytes, 64, 0), b = ckw_xxh64(f->bytes + 128, 128, 0) ^ b_flip;
  const int n =
      pretty ? snprintf(json, sizeof(json),
                        "{\n  \"layout_sha256\": \"%s\",\n  \"tensors\": [\n    {\n      \"dtype\": \"f32\",\n"
                        "      \"name\": \"a\",\n      \"nbytes\": 64,\n      \"offset\": 0,\n      \"shape\": [\n"
                        "        16\n      ],\n      \"xxh64\": \"%016llx\"\n    },\n    {\n      \"dtype\": \"f32\",\n"
                        "      \"name\": \"b\",\n      \"nbytes\": 128,\n      \"offset\": %lld,\n      \"shape\": [\n"
                        "        32\n      ],\n      \"xxh64\": \"%016llx\"\n    }\n  ]\n}\n",
                        layout, a, (long long)b_offset, b)
             : snprintf(json, sizeof(json),
                        "{\"tensors\":[{\"xxh64\":\"%016llx\",\"offset\":0,\"nbytes\":64,\"name\":\"a\"},"
                        "{\"name\":\"b\",\"xxh64\":\"%016llx\",\"offset\":%lld,\"nbytes\":128}],"
                        "\"layout_sha256\":\"%s\"}",
                        a, b, (long long)b_offset, layout);
  EXPECT(n > 0 && (size_t)n < sizeof(json), "manifest text");
  write_file(f->manifest, json, (size_t)n);
}

static void make_files(struct files *f) {
  strcpy(f->dir, "/tmp/ckw_handle_test.XXXXXX");
  const char *tmp = getenv("TEST_TMPDIR");
  if (tmp && strlen(tmp) + 24 < sizeof(f->dir)) snprintf(f->dir, sizeof(f->dir), "%s/files.XXXXXX", tmp);
  EXPECT(mkdtemp(f->dir) != NULL, "mkdtemp %s", f->dir);
  snprintf(f->weights, sizeof(f->weights), "%s/weights.bin", f->dir);
  snprintf(f->manifest, sizeof(f->manifest), "%s/manifest.json", f->dir);
  for (int i = 0; i < 256; ++i) f->bytes[i] = (uint8_t)(i * 7 + 3);
  write_file(f->weights, f->bytes, sizeof(f->bytes));
  write_manifest(f, kLayout, 128, 0, 1);
}

static void remove_files(const struct files *f) {
  unlink(f->weights);
  unlink(f->manifest);
  rmdir(f->dir);
}

static int create(const struct ckw_library *lib, const char *weights, const char *manifest, int threads,
                  struct test_handle **out) {
  struct ckw_handle *base = NULL;
  const int rc = ckw_handle_create(lib, sizeof(struct test_handle), weights, manifest, threads, &base);
  EXPECT((rc == CKW_OK) == (base != NULL), "status %d with handle %p", rc, (void *)base);
  *out = (struct test_handle *)base;
  return rc;
}

static void test_weights_are_checked(void) {
  struct files f;
  make_files(&f);
  const struct ckw_weight_check checks[] = {{"a", 0, 64}, {"b", 128, 128}};
  struct ckw_library lib = {kLayout, 256, checks, 2, 128, 192, 0, 0};
  struct test_handle *h = NULL;
  EXPECT(create(&lib, f.weights, NULL, 0, &h) == CKW_OK, "the manifest beside the weights");
  if (h) {
    EXPECT(h->base.weights && h->base.weights_bytes == 256 && memcmp(h->base.weights, f.bytes, 256) == 0, "mapping");
    EXPECT(h->base.arena && h->base.arena_bytes == 128 && (uintptr_t)h->base.arena % 64 == 0, "arena");
    EXPECT(h->base.state && (uintptr_t)h->base.state % 64 == 0, "state");
    int zero = 1;
    for (int i = 0; i < 192; ++i) zero &= h->base.state[i] == 0;
    EXPECT(zero && h->position == 0, "state and circuit fields start zeroed");
    EXPECT(h->base.pool == NULL && ckw_pool_threads(h->base.pool) == 1, "no split call: no pool");
    ckw_handle_free(&h->base);
  }
  EXPECT(create(&lib, f.weights, f.manifest, 0, &h) == CKW_OK, "an explicit manifest");
  if (h) ckw_handle_free(&h->base);
  write_manifest(&f, kLayout, 128, 0, 0);
  EXPECT(create(&lib, f.weights, NULL, 0, &h) == CKW_OK, "a compact manifest, keys in another order");
  if (h) ckw_handle_free(&h->base);

  // Other weights of the same layout (a fine-tune): their manifest records their hashes.
  for (int i = 0; i < 256; ++i) f.bytes[i] ^= 0x5a;
  write_file(f.weights, f.bytes, sizeof(f.bytes));
  write_manifest(&f, kLayout, 128, 0, 1);
  EXPECT(create(&lib, f.weights, NULL, 0, &h) == CKW_OK, "other weights of the same layout");
  if (h) ckw_handle_free(&h->base);

  write_manifest(&f, "f123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 128, 0, 1);
  EXPECT(create(&lib, f.weights, NULL, 0, &h) == CKW_E_LAYOUT_MISMATCH, "another layout");
  write_manifest(&f, kLayout, 192, 0, 1);
  EXPECT(create(&lib, f.weights, NULL, 0, &h) == CKW_E_LAYOUT_MISMATCH, "an entry at another offset");
  const struct ckw_weight_check unknown[] = {{"a", 0, 64}, {"c", 128, 128}};
  struct ckw_library other = lib;
  other.weight_checks = unknown;
  write_manifest(&f, kLayout, 128, 0, 1);
  EXPECT(create(&other, f.weights, NULL, 0, &h) == CKW_E_LAYOUT_MISMATCH, "a tensor the manifest lacks");
  write_manifest(&f, kLayout, 128, 1, 1);
  EXPECT(create(&lib, f.weights, NULL, 0, &h) == CKW_E_WEIGHTS_CORRUPT, "a tensor failing its checksum");
  write_manifest(&f, kLayout, 128, 0, 1);
  f.bytes[200] ^= 1;
  write_file(f.weights, f.bytes, sizeof(f.bytes));
  EXPECT(create(&lib, f.weights, NULL, 0, &h) == CKW_E_WEIGHTS_CORRUPT, "a flipped byte");
  f.bytes[200] ^= 1;
  write_file(f.weights, f.bytes, sizeof(f.bytes));

  char missing[448];
  snprintf(missing, sizeof(missing), "%s/none.json", f.dir);
  EXPECT(create(&lib, f.weights, missing, 0, &h) == CKW_E_IO, "no manifest");
  snprintf(missing, sizeof(missing), "%s/none.bin", f.dir);
  EXPECT(create(&lib, missing, f.manifest, 0, &h) == CKW_E_IO, "no weights file");
  EXPECT(create(&lib, NULL, f.manifest, 0, &h) == CKW_E_ARGUMENT, "no weights path");
  struct ckw_library larger = lib;
  larger.weights_bytes = 320;
  EXPECT(create(&larger, f.weights, NULL, 0, &h) == CKW_E_WEIGHTS_SIZE, "a file of another size");
  EXPECT(create(&lib, f.weights, NULL, 0, &h) == CKW_OK, "the files restored");
  if (h) ckw_handle_free(&h->base);
  remove_files(&f);
}

static void test_weightless_and_threads(void) {
  struct ckw_library lib = {"", 0, NULL, 0, 0, 0, 4, 256};
  struct test_handle *h = NULL;
  EXPECT(create(&lib, NULL, NULL, 3, &h) == CKW_OK, "weightless library, 3 threads");
  if (h) {
    EXPECT(h->base.weights == NULL && h->base.arena_bytes == 64 && h->base.state,
           "no mapping; minimal arena and state");
    EXPECT(ckw_pool_threads(h->base.pool) == 3, "threads: %d", ckw_pool_threads(h->base.pool));
    EXPECT(h->base.thread_scratch && (uintptr_t)h->base.thread_scratch % 64 == 0, "scratch for threads 1 and 2");
    memset(h->base.thread_scratch, 1, 2 * 256);  // ASan: the region is that large
    ckw_handle_free(&h->base);
  }
  EXPECT(create(&lib, NULL, NULL, 9, &h) == CKW_OK, "9 threads asked");
  if (h) {
    EXPECT(ckw_pool_threads(h->base.pool) == 4, "capped at max_threads: %d", ckw_pool_threads(h->base.pool));
    ckw_handle_free(&h->base);
  }
  EXPECT(create(&lib, NULL, NULL, 1, &h) == CKW_OK, "one thread");
  if (h) {
    EXPECT(ckw_pool_threads(h->base.pool) == 1 && h->base.thread_scratch == NULL, "one thread: no thread scratch");
    ckw_handle_free(&h->base);
  }
  EXPECT(create(&lib, NULL, NULL, -1, &h) == CKW_E_ARGUMENT, "negative thread count");
  struct ckw_handle not_null, *base = &not_null;  // overwritten with NULL
  EXPECT(ckw_handle_create(&lib, sizeof(struct ckw_handle) - 1, NULL, NULL, 0, &base) == CKW_E_ARGUMENT && !base,
         "a handle smaller than its base");
  EXPECT(ckw_handle_create(&lib, sizeof(struct ckw_handle), NULL, NULL, 0, NULL) == CKW_E_ARGUMENT, "no out");
}

static const char *message(int status) { return status == -4 ? "four" : "other"; }

static void test_calls(void) {
  struct ckw_library lib = {"", 0, NULL, 0, 256, 64, 0, 0};
  struct test_handle *h = NULL;
  EXPECT(create(&lib, NULL, NULL, 0, &h) == CKW_OK, "create");
  if (!h) return;
  struct ckw_handle *b = &h->base;
  EXPECT(ckw_handle_enter(b) == 1, "enter an idle handle");
  EXPECT(ckw_handle_enter(b) == 0, "a second call is refused (E_BUSY)");
  ckw_handle_leave(b);
  EXPECT(ckw_handle_enter(b) == 1, "idle again after leave");
  ckw_handle_leave(b);

  EXPECT(strcmp(ckw_handle_last_error(b), "") == 0 && strcmp(ckw_handle_last_error(NULL), "") == 0, "no error yet");
  EXPECT(ckw_handle_kernel_failed(b, -4, message) == CKW_E_KERNEL, "E_KERNEL");
  EXPECT(b->kernel_status == -4 && strcmp(ckw_handle_last_error(b), "four") == 0, "the kernel's message");
  ckw_handle_kernel_failed(b, 3, NULL);
  EXPECT(strcmp(ckw_handle_last_error(b), "kernel failed") == 0, "no message function");

  EXPECT(ckw_handle_reserve_arena(b, 100) == 0 && b->arena_bytes == 256, "a smaller arena keeps the arena");
  EXPECT(ckw_handle_reserve_arena(b, 1000) == 0 && b->arena_bytes == 1024 && (uintptr_t)b->arena % 64 == 0, "grown");
  memset(b->arena, 0, 1000);  // ASan: it is that large

  // free() during a call: the call frees the handle as it leaves (ASan: no leak, no use after free).
  EXPECT(ckw_handle_enter(b) == 1, "enter");
  ckw_handle_free(b);
  EXPECT(ckw_handle_enter(b) == 0, "free pending: calls refused");
  ckw_handle_free(b);  // a second free while pending: nothing
  ckw_handle_leave(b);
  ckw_handle_free(NULL);
}

static void test_dims(void) {
  static const struct ckw_dim dims[] = {{"n_vocab", 51865}, {"d_model", 384}};
  EXPECT(ckw_dim_lookup(dims, 2, "d_model") == 384, "d_model");
  EXPECT(ckw_dim_lookup(dims, 2, "n_vocab") == 51865, "n_vocab");
  EXPECT(ckw_dim_lookup(dims, 2, "n_mels") == -1, "unknown dim");
  EXPECT(ckw_dim_lookup(dims, 2, NULL) == -1, "NULL name");
  EXPECT(ckw_dim_lookup(NULL, 0, "d_model") == -1, "no dims");
  EXPECT(ckw_max64(3, -2) == 3 && ckw_align64(1) == 64 && ckw_align64(128) == 128, "max64, align64");
}

int main(void) {
  test_status_table();
  test_weights_are_checked();
  test_weightless_and_threads();
  test_calls();
  test_dims();
  return test_finish("ckw_handle");
}
