// main() for a fuzz harness outside libFuzzer: runs LLVMFuzzerTestOneInput once on each file
// given, or on each file in each directory given (a seed corpus, or crash inputs to reproduce).
// The fuzzing build links libFuzzer's own main instead. Exit status 0 when every input ran
// (a failing property aborts) and there was at least one.
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int run_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: %s: cannot open\n", path);
    return -1;
  }
  uint8_t* data = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t* grown = realloc(data, cap);
      if (!grown) abort();
      data = grown;
    }
    size_t got = fread(data + size, 1, cap - size, f);
    if (got == 0) break;
    size += got;
  }
  fclose(f);
  LLVMFuzzerTestOneInput(size ? data : NULL, size);
  free(data);
  return 1;
}

static int by_name(const struct dirent** a, const struct dirent** b) { return strcmp((*a)->d_name, (*b)->d_name); }

int main(int argc, char** argv) {
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[i]) < 0) return 1;
      ++inputs;
      continue;
    }
    struct dirent** entries;
    int n = scandir(argv[i], &entries, NULL, by_name);
    if (n < 0) return 1;
    for (int k = 0; k < n; ++k) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], entries[k]->d_name);
      if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        if (run_file(path) < 0) return 1;
        ++inputs;
      }
      free(entries[k]);
    }
    free(entries);
  }
  printf("replay: %d inputs, every property held\n", inputs);
  return inputs > 0 ? 0 : 1;
}
