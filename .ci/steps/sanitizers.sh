#!/usr/bin/env bash
# Every cc_test and the tiny end-to-end token test (on jfk.wav), built and run with --config=asan and with
# --config=ubsan. The cc_tests run with leak detection. The token test is Python loading the
# sanitized libraries: ASan's runtime must be loaded first (LD_PRELOAD), and leak detection is
# off there (the interpreter keeps its objects to the end by design); UBSan's runtime comes in
# with the libraries. Prints the wall time of each run.
#
#   .ci/steps/sanitizers.sh [asan|ubsan ...]      (default: both)
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(asan ubsan)

mapfile -t cc_tests < <(ci_bazel query 'kind(cc_test, //...)' 2>/dev/null)
e2e=//tests/e2e:token_equality_tiny_test
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
  # jfk.wav only: the sanitized libraries are built at -O0 and the full clip list would take
  # most of CI's time; the uninstrumented run of //... covers every clip.
  ci_bazel test --config="$config" "${py_env[@]}" --test_sharding_strategy=disabled --test_arg=-k --test_arg=jfk "$e2e"
  times+=("$(printf '%-6s cc_tests %5ds   %s %5ds' "$config" $((middle - start)) "$e2e" $((SECONDS - middle)))")
done
printf '%s\n' "${times[@]}"
step_log "OK: every run clean"
