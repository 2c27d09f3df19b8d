#!/usr/bin/env bash
# Valgrind memcheck over the tiny end-to-end path in C (//tests/hostile/memcheck:tiny_e2e: the
# generated frontend's whole-file and streamed phases, the encoder, the decoder with cross_qk,
# greedy decoding, two beams and a reorder) on the built-in demo clip (22.05 kHz: the resampler
# runs too). No interpreter runs under memcheck, so every report is about our code: any error
# (invalid read or write, use of an uninitialised value, invalid free) or definite leak fails the
# step, and the tokens under memcheck must equal a native run's. Valgrind's CPU has no AVX-512,
# so the kernels' run-time dispatch takes their AVX2 paths. One thread: valgrind runs threads one
# at a time, so the pool's spin-waits would only add time (ASan and //models/whisper:threads_test
# cover the threaded calls). About 10 minutes on a 2-core machine, the encoder's 37 GFLOP most of
# it; without --track-origins, which doubles that: on a failure, rerun the printed command with
# --track-origins=yes to see where an uninitialised value came from.
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
apt_install_missing valgrind

ci_bazel build //tests/hostile/memcheck:tiny_e2e //tools:demo_clip @whisper_tiny//:checkpoint
bin="$(ci_bazel info bazel-bin 2>/dev/null)"
weights="$(ci_bazel info output_base 2>/dev/null)/external/whisper_tiny/weights.bin"
driver=("$bin/tests/hostile/memcheck/tiny_e2e" "$weights" "$bin/tools/demo_clip.wav")
work="$(mktemp -d /tmp/ckw-valgrind.XXXXXX)"
trap 'rm -rf "$work"' EXIT

native="$("${driver[@]}")"
start=$SECONDS
status=0
CKW_NUM_THREADS=1 valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --error-exitcode=99 --num-callers=40 --log-file="$work/memcheck.txt" \
  "${driver[@]}" >"$work/tokens.txt" || status=$?
elapsed=$((SECONDS - start))
if [ "$status" -ne 0 ]; then
  cat "$work/memcheck.txt"
  step_log "the run: CKW_NUM_THREADS=1 valgrind --tool=memcheck --track-origins=yes ${driver[*]}"
  step_log "FAIL: memcheck exit status $status (99: errors or definite leaks, listed above)"
  exit 1
fi
grep -E "ERROR SUMMARY|definitely lost" "$work/memcheck.txt" | sed 's/^==[0-9]*== //'
if [ "$(cat "$work/tokens.txt")" != "$native" ]; then
  step_log "FAIL: tokens under memcheck ($(cat "$work/tokens.txt")) differ from the native run's ($native)"
  exit 1
fi
step_log "OK: memcheck clean on the tiny end-to-end path (${elapsed}s under valgrind), tokens: $native"
