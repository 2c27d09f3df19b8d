#!/usr/bin/env bash
# libFuzzer on the WAV parser and on the whole generated frontend entry point (harnesses in
# tests/hostile/fuzz/), each for a bounded time, with ASan (leaks included) and UBSan. Fails on
# any crash, sanitizer report, leak, timeout (10 s for one input) or out-of-memory (2 GiB), and
# prints executions per second and total executions. clang 14 comes from Debian.
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
ci_bazel build //tests/hostile/fuzz:seeds //models/whisper:frontend_c_files
bin="$(ci_bazel info bazel-bin 2>/dev/null)"
mapfile -t kernel_sources < <(ci_bazel cquery 'kind("source file", deps(//models/whisper:frontend_lib))' \
  --output=label 2>/dev/null | sed -n 's|^//\([^:]*\):\(.*\.c\)\( (.*)\)\?$|\1/\2|p' | sort -u)
[ ${#kernel_sources[@]} -gt 0 ] || { step_log "no C sources found for //models/whisper:frontend_lib"; exit 1; }

cflags=(-std=c11 -O2 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
  -fno-sanitize-recover=all -ffp-contract=off -I. -I"$bin" -pthread)
step_log "building the fuzzers with clang-14 (${#kernel_sources[@]} kernel sources)"
clang-14 "${cflags[@]}" tests/hostile/fuzz/wav_decode_fuzz.c kernels/audio/f32_wav_decode.c -lm \
  -o "$work/wav_decode_fuzz"
clang-14 "${cflags[@]}" tests/hostile/fuzz/frontend_fuzz.c "$bin/models/whisper/frontend_c/ckw_whisper_frontend.c" \
  "${kernel_sources[@]}" -lm -o "$work/frontend_fuzz"

report=()
for fuzzer in wav_decode_fuzz frontend_fuzz; do
  corpus="$work/corpus_$fuzzer"
  mkdir -p "$corpus" "$work/artifacts_$fuzzer"
  step_log "$fuzzer: ${seconds}s from $(find "$bin/tests/hostile/fuzz/seeds" -type f | wc -l) seeds"
  # Any finding (crash, sanitizer report, leak, timeout, OOM) ends the run with a non-zero
  # status and leaves the input in artifacts_* (printed below).
  if ! "$work/$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts_$fuzzer/" "$corpus" "$bin/tests/hostile/fuzz/seeds" \
    >"$work/$fuzzer.log" 2>&1; then
    tail -60 "$work/$fuzzer.log"
    for a in "$work/artifacts_$fuzzer"/*; do
      [ -e "$a" ] && { step_log "reproducer $(basename "$a") (base64):"; base64 -w 100 "$a" | head -40; }
    done
    step_log "FAIL: $fuzzer found a problem"
    exit 1
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$fuzzer.log")"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$fuzzer.log")"
  added="$(sed -n 's/^stat::new_units_added: *//p' "$work/$fuzzer.log")"
  report+=("$(printf '%-16s %8ss %14s %12s %10s' "$fuzzer" "$seconds" "$runs" "$rate" "$added")")
done
printf '%-16s %9s %14s %12s %10s\n' fuzzer time executions "exec/s" "new units"
printf '%s\n' "${report[@]}"
step_log "OK: no crash, sanitizer report, leak or timeout"
