// CKW_ISA caps the dispatch: each value is tried in a child process (the cap is read once per
// process) against what the CPU itself reports.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/common/cpu.h"

static int hw_avx2(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
static int hw_avx512(void) {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}
static int hw_avx512bf16(void) { return hw_avx512() && __builtin_cpu_supports("avx512bf16"); }
// The CPU part of AMX; the kernel's permission is ckw_cpu_amx_permitted, asked for below as the dispatch would.
static int hw_amx(void) {
  return hw_avx512bf16() && __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16");
}
// The int8 paths' sets (AMX-INT8: with the kernel's permission, as for AMX above).
static int hw_avxvnni(void) { return hw_avx2() && __builtin_cpu_supports("avxvnni"); }
static int hw_avx512vnni(void) { return hw_avx512() && __builtin_cpu_supports("avx512vnni"); }
static int hw_amxint8(void) {
  return hw_avx512vnni() && __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-int8");
}

// Exit status 0 when, under CKW_ISA=value (NULL: unset), each path is available exactly when
// the CPU has it and the cap allows it.
static int child(const char* value, int avx2, int avxvnni, int avx512, int avx512vnni, int avx512bf16, int amx) {
  if (value) {
    setenv("CKW_ISA", value, 1);
  } else {
    unsetenv("CKW_ISA");
  }
  int ok = ckw_cpu_has_scalar() == 1 && ckw_cpu_has_avx2() == (avx2 && hw_avx2()) &&
           ckw_cpu_has_avx512() == (avx512 && hw_avx512()) &&
           ckw_cpu_has_avx512bf16() == (avx512bf16 && hw_avx512bf16()) &&
           ckw_cpu_has_amx() == (amx && hw_amx() && ckw_cpu_amx_permitted()) &&
           ckw_cpu_has_avxvnni() == (avxvnni && hw_avxvnni()) &&
           ckw_cpu_has_avx512vnni() == (avx512vnni && hw_avx512vnni()) &&
           ckw_cpu_has_amxint8() == (amx && hw_amxint8() && ckw_cpu_amx_permitted());
  if (!ok) {
    fprintf(stderr,
            "CKW_ISA=%s: avx2 %d avxvnni %d avx512 %d avx512vnni %d avx512bf16 %d amx %d amxint8 %d "
            "(cpu: %d %d %d %d %d %d %d)\n",
            value ? value : "(unset)", ckw_cpu_has_avx2(), ckw_cpu_has_avxvnni(), ckw_cpu_has_avx512(),
            ckw_cpu_has_avx512vnni(), ckw_cpu_has_avx512bf16(), ckw_cpu_has_amx(), ckw_cpu_has_amxint8(), hw_avx2(),
            hw_avxvnni(), hw_avx512(), hw_avx512vnni(), hw_avx512bf16(), hw_amx(), hw_amxint8());
  }
  return ok ? 0 : 1;
}

int main(void) {
  const struct {
    const char* value;
    int avx2, avxvnni, avx512, avx512vnni, avx512bf16, amx;
  } cases[] = {
      {NULL, 1, 1, 1, 1, 1, 1},         {"", 1, 1, 1, 1, 1, 1},           {"amx", 1, 1, 1, 1, 1, 1},
      {"avx512bf16", 1, 1, 1, 1, 1, 0}, {"avx512vnni", 1, 1, 1, 1, 0, 0}, {"avx512", 1, 1, 1, 0, 0, 0},
      {"avxvnni", 1, 1, 0, 0, 0, 0},    {"avx2", 1, 0, 0, 0, 0, 0},       {"scalar", 0, 0, 0, 0, 0, 0},
      {"AVX2", 1, 1, 1, 1, 1, 1},  // not a value: no cap (the runtime refuses it)
  };
  int failures = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pid_t pid = fork();
    if (pid == 0)
      _exit(child(cases[i].value, cases[i].avx2, cases[i].avxvnni, cases[i].avx512, cases[i].avx512vnni,
                  cases[i].avx512bf16, cases[i].amx));
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  printf(
      "cpu_cap_test: %d of %zu cases failed (cpu: avx2 %d, avxvnni %d, avx512 %d, avx512vnni %d, avx512bf16 %d, "
      "amx %d, amxint8 %d, amx permitted %d)\n",
      failures, sizeof cases / sizeof cases[0], hw_avx2(), hw_avxvnni(), hw_avx512(), hw_avx512vnni(), hw_avx512bf16(),
      hw_amx(), hw_amxint8(), ckw_cpu_amx_permitted());
  return failures != 0;
}
