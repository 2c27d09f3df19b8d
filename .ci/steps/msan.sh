#!/usr/bin/env bash
# MemorySanitizer over the real tiny end-to-end path in C (//tests/hostile/memcheck:tiny_e2e:
# the generated frontend's whole-file and streamed phases, the encoder on a 30 s window, the
# decoder with cross_qk, greedy decoding, two beams and a reorder) on the built-in demo clip
# (22.05 kHz: the resampler runs too). The driver, the generated C and every kernel it links
# (their sources from the build's dependency graph) are compiled again with clang-14
# -fsanitize=memory and origin tracking; the C library's calls are intercepted, so every use of an
# uninitialised value in our code fails the step, with the allocation it came from. The tokens
# must equal the native build's. Valgrind checks the same path on the narrow models (valgrind.sh);
# this is where the real model's sizes run, at native speed over the encoder's 37 GFLOP.
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
apt_install_missing clang-14 libclang-rt-14-dev

driver=//tests/hostile/memcheck:tiny_e2e
ci_bazel build "$driver" //ckw/cli:demo_clip @whisper_tiny//:checkpoint
bin="$(ci_bazel info bazel-bin 2>/dev/null)"
weights="$(ci_bazel info output_base 2>/dev/null)/external/whisper_tiny/weights.bin"
work="$(mktemp -d /tmp/ckw-msan.XXXXXX)"
trap 'rm -rf "$work"' EXIT

mapfile -t sources < <(c_sources "$driver")
[ ${#sources[@]} -gt 1 ] || { step_log "no C sources found for $driver"; exit 1; }
start=$SECONDS
step_log "building $driver with clang-14 -fsanitize=memory (${#sources[@]} sources)"
clang_binary "$work/tiny_e2e_msan" "${sources[@]}" -- -std=c11 -O1 -g -fno-omit-frame-pointer -ffp-contract=off \
  -fsanitize=memory -fsanitize-memory-track-origins=2 -I. -I"$bin"
built=$SECONDS

run=("$weights" "$bin/ckw/cli/demo_clip.wav")
native="$("$bin/tests/hostile/memcheck/tiny_e2e" "${run[@]}")"
status=0
MSAN_OPTIONS=halt_on_error=1:exitcode=99 "$work/tiny_e2e_msan" "${run[@]}" >"$work/tokens.txt" 2>"$work/msan.txt" || status=$?
if [ "$status" -ne 0 ]; then
  cat "$work/msan.txt"
  step_log "FAIL: tiny_e2e under MemorySanitizer: exit status $status (99: a report, above)"
  exit 1
fi
if [ "$(cat "$work/tokens.txt")" != "$native" ]; then
  step_log "FAIL: tokens under MemorySanitizer ($(cat "$work/tokens.txt")) differ from the native run's ($native)"
  exit 1
fi
step_log "OK: MemorySanitizer clean on the tiny end-to-end path (build $((built - start))s, run $((SECONDS - built))s), tokens: $native"
