#!/usr/bin/env bash
# Valgrind memcheck over the end-to-end path in C (tests/hostile/memcheck/e2e_main.inc: the
# generated frontend's whole-file and streamed phases, the encoder, the decoder with cross_qk,
# greedy decoding, two beams and a reorder) of the narrow models (tests/hostile/memcheck/
# BUILD.bazel): the Whisper circuits compiled at a few hundred MFLOP on seeded random weights
# stored as tiny's are, fp32 (f16 weights) and bf16, so every generated call and kernel tiny and
# tiny_bf16 make runs here, at a fiftieth of tiny's encoder cost (MemorySanitizer runs the real
# tiny path: msan.sh). Input: the built-in demo clip (22.05 kHz: the resampler runs too). No
# interpreter runs under memcheck, so every report is about our code: any error (invalid read or
# write, use of an uninitialised value, invalid free) or definite leak fails the step, and the
# tokens under memcheck must equal a native run's (AVX2, one thread: valgrind's CPU has no
# AVX-512, so the kernels' run-time dispatch takes their AVX2 paths there). One thread per run
# (valgrind runs threads one at a time, so the pool's spin-waits would only add time; ASan and
# //models/whisper:threads_test cover the threaded calls), the two models side by side. About a
# minute on a 2-core machine; without --track-origins, which doubles that: on a failure, rerun
# the printed command with --track-origins=yes to see where an uninitialised value came from.
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
apt_install_missing valgrind

models=(narrow narrow_bf16)
targets=(//ckw/cli:demo_clip)
for m in "${models[@]}"; do targets+=("//tests/hostile/memcheck:${m}_e2e" "//tests/hostile/memcheck:${m}_checkpoint"); done
ci_bazel build "${targets[@]}"
bin="$(ci_bazel info bazel-bin 2>/dev/null)"
work="$(mktemp -d /tmp/ckw-valgrind.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# driver MODEL: the model's driver, weights and input (the words of its command line).
driver() { printf '%s\n' "$bin/tests/hostile/memcheck/$1_e2e" "$bin/tests/hostile/memcheck/$1_checkpoint/weights.bin" \
  "$bin/ckw/cli/demo_clip.wav"; }
memcheck=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite
  --error-exitcode=99 --num-callers=40)
start=$SECONDS
pids=()
for m in "${models[@]}"; do
  mapfile -t run < <(driver "$m")
  CKW_ISA=avx2 CKW_NUM_THREADS=1 "${run[@]}" >"$work/$m.native"
  CKW_NUM_THREADS=1 "${memcheck[@]}" --log-file="$work/$m.memcheck" "${run[@]}" >"$work/$m.tokens" &
  pids+=($!)
done
failed=0
for i in "${!models[@]}"; do
  m="${models[$i]}"
  status=0
  wait "${pids[$i]}" || status=$?
  if [ "$status" -ne 0 ]; then
    cat "$work/$m.memcheck"
    step_log "the run: CKW_NUM_THREADS=1 ${memcheck[*]} --track-origins=yes $(driver "$m" | tr '\n' ' ')"
    step_log "FAIL: $m: memcheck exit status $status (99: errors or definite leaks, listed above)"
    failed=1
  elif [ "$(cat "$work/$m.tokens")" != "$(cat "$work/$m.native")" ]; then
    step_log "FAIL: $m: tokens under memcheck ($(cat "$work/$m.tokens")) differ from the native run's ($(cat "$work/$m.native"))"
    failed=1
  else
    grep -E "ERROR SUMMARY|definitely lost|no leaks are possible" "$work/$m.memcheck" | sed "s/^==[0-9]*== /$m: /"
  fi
done
[ "$failed" -eq 0 ] || exit 1
step_log "OK: memcheck clean on ${models[*]} end to end ($((SECONDS - start))s side by side under valgrind)"
