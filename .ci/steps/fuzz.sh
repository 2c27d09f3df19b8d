#!/usr/bin/env bash
# libFuzzer on the WAV parser and on the whole generated frontend entry point (harnesses in
# tests/hostile/fuzz/), side by side (two processes, one core each), each for a bounded time, with
# ASan (leaks included) and UBSan. Fails on any crash, sanitizer report, leak, timeout (10 s for
# one input) or out-of-memory (2 GiB), and prints executions per second and total executions.
# clang 14 comes from Debian.
#
#   .ci/steps/fuzz.sh [SECONDS_PER_FUZZER]      (default 60; env CKW_FUZZ_SECONDS)
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
seconds="${1:-${CKW_FUZZ_SECONDS:-60}}"

apt_install_missing clang-14 libclang-rt-14-dev
work="$(mktemp -d /tmp/ckw-fuzz.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# The seeds and the generated frontend C come from the build; the kernels' sources from the
# frontend library's own dependency graph, so the fuzzed code is exactly what the model links.
ci_bazel build //tests/hostile/fuzz:seeds //models/whisper:frontend_lib
bin="$(ci_bazel info bazel-bin 2>/dev/null)"
mapfile -t frontend_sources < <(c_sources //models/whisper:frontend_lib)
[ ${#frontend_sources[@]} -gt 1 ] || { step_log "no C sources found for //models/whisper:frontend_lib"; exit 1; }

cflags=(-std=c11 -O2 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
  -fno-sanitize-recover=all -ffp-contract=off -I. -I"$bin")
step_log "building the fuzzers with clang-14 (frontend: ${#frontend_sources[@]} sources)"
clang_binary "$work/wav_decode_fuzz" tests/hostile/fuzz/wav_decode_fuzz.c kernels/audio/f32_wav_decode.c -- "${cflags[@]}"
clang_binary "$work/frontend_fuzz" tests/hostile/fuzz/frontend_fuzz.c "${frontend_sources[@]}" -- "${cflags[@]}"

# Both fuzzers at once (one core each), each for its own time budget. Any finding (crash,
# sanitizer report, leak, timeout, OOM) ends a run with a non-zero status and leaves the input in
# artifacts_* (printed below).
fuzzers=(wav_decode_fuzz frontend_fuzz)
seeds="$bin/tests/hostile/fuzz/seeds"
step_log "${fuzzers[*]} side by side, ${seconds}s each, from $(find "$seeds" -type f | wc -l) seeds"
pids=()
for fuzzer in "${fuzzers[@]}"; do
  mkdir -p "$work/corpus_$fuzzer" "$work/artifacts_$fuzzer"
  "$work/$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts_$fuzzer/" "$work/corpus_$fuzzer" "$seeds" >"$work/$fuzzer.log" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!fuzzers[@]}"; do
  wait "${pids[$i]}" || failed+=("${fuzzers[$i]}")
done
for fuzzer in "${failed[@]}"; do
  tail -60 "$work/$fuzzer.log"
  for a in "$work/artifacts_$fuzzer"/*; do
    [ -e "$a" ] && { step_log "reproducer $(basename "$a") (base64):"; base64 -w 100 "$a" | head -40; }
  done
  step_log "FAIL: $fuzzer found a problem"
done
[ ${#failed[@]} -eq 0 ] || exit 1
printf '%-16s %9s %14s %12s %10s\n' fuzzer time executions "exec/s" "new units"
for fuzzer in "${fuzzers[@]}"; do
  stat() { sed -n "s/^stat::$1: *//p" "$work/$fuzzer.log"; }
  printf '%-16s %8ss %14s %12s %10s\n' "$fuzzer" "$seconds" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "$(stat new_units_added)"
done
step_log "OK: no crash, sanitizer report, leak or timeout"
