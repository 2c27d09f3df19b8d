#!/usr/bin/env bash
# Every cc_test and the tiny end-to-end token test, built and run with --config=asan and with
# --config=ubsan. The cc_tests run with leak detection. The token test is Python loading the
# sanitized libraries: ASan's runtime must be loaded first (LD_PRELOAD), and leak detection is
# off there (the interpreter keeps its objects to the end by design); UBSan's runtime comes in
# with the libraries. The token test runs on jfk.wav and three LibriSpeech clips (2 to 10 s,
# flac and wav): every clip takes the same code paths, and all 42 take a quarter of an hour
# under ASan (CKW_SANITIZER_CLIPS=all runs them all). Prints the wall time of each run.
#
#   .ci/steps/sanitizers.sh [asan|ubsan ...]      (default: both)
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(asan ubsan)

# A plain query: CI's flags (--config=ci, --remote_cache) are build options that query refuses.
mapfile -t cc_tests < <(./bazelw query 'kind(cc_test, //...)' 2>/dev/null)
[ ${#cc_tests[@]} -gt 0 ] || { step_log "bazel query found no cc_test under //...; run './bazelw query \"kind(cc_test, //...)\"' to see why"; exit 1; }
e2e=//tests/e2e:token_equality_tiny_test
clips=(--test_arg=-k --test_arg="jfk or 1089-134686-0000 or 1089-134686-0002 or 1089-134691-0000")
[ "${CKW_SANITIZER_CLIPS:-}" = all ] && clips=()
asan_runtime="$(gcc -print-file-name=libasan.so)"
[ -e "$asan_runtime" ] || { step_log "gcc has no libasan.so ($asan_runtime)"; exit 1; }
times=()
for config in "${configs[@]}"; do
  case "$config" in
    asan) py_env=(--test_env=LD_PRELOAD="$asan_runtime" --test_env=ASAN_OPTIONS=detect_leaks=0) ;;
    ubsan) py_env=(--test_env=UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1) ;;
    *) step_log "unknown config '$config'; use asan or ubsan"; exit 2 ;;
  esac
  start=$SECONDS
  step_log "--config=$config: ${#cc_tests[@]} cc_tests"
  ci_bazel test --config="$config" --test_env=ASAN_OPTIONS=detect_leaks=1 "${cc_tests[@]}"
  middle=$SECONDS
  step_log "--config=$config: $e2e"
  ci_bazel test --config="$config" "${py_env[@]}" "${clips[@]}" "$e2e"
  times+=("$(printf '%-6s cc_tests %5ds   %s %5ds' "$config" $((middle - start)) "$e2e" $((SECONDS - middle)))")
done
printf '%s\n' "${times[@]}"
step_log "OK: every run clean"
