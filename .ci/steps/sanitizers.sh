#!/usr/bin/env bash
# Every cc_test and the engine's end-to-end paths from Python, built once with ASan and UBSan
# together (--config=san) and run. The cc_tests run with leak detection. The Python tests load the
# sanitized libraries: ASan's runtime must be loaded first (LD_PRELOAD), and leak detection is off
# there (the interpreter keeps its objects to the end by design); UBSan's runtime comes in with
# the libraries. They run unsharded, with a -k filter that picks, per target:
#   //tests/e2e:token_equality_tiny_test  greedy on jfk.wav and three LibriSpeech clips (2 to 10 s,
#                                         flac and wav); CKW_SANITIZER_CLIPS=all: every clip
#   //tests/e2e:beam_openai_tiny_test     beam 5 on jfk.wav (beams, reorder, the cross-K/V shared)
#   //ckw/cli:transcribe_test               the bf16 build on jfk.wav, and word timestamps (the
#                                         decoder's cross_qk output)
#   //models/whisper:paged_decoder_test   the multi-sequence decoder (block tables, entries, forks,
#                                         copy-on-write, refused calls); a unittest: -k is ignored
# Every clip takes the same code paths (all 42 take a quarter of an hour). Prints the wall time
# of each run.
#
#   .ci/steps/sanitizers.sh [san|asan|ubsan ...]      (default: san, ASan and UBSan in one build)
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(san)

# A plain query: CI's flags (--config=ci, --remote_cache) are build options that query refuses.
mapfile -t cc_tests < <(./bazelw query 'kind(cc_test, //...)' 2>/dev/null)
[ ${#cc_tests[@]} -gt 0 ] || { step_log "bazel query found no cc_test under //...; run './bazelw query \"kind(cc_test, //...)\"' to see why"; exit 1; }
py_tests=(//tests/e2e:token_equality_tiny_test //tests/e2e:beam_openai_tiny_test //ckw/cli:transcribe_test
  //models/whisper:paged_decoder_test)
greedy="greedy and (jfk or 1089-134686-0000 or 1089-134686-0002 or 1089-134691-0000)"
[ "${CKW_SANITIZER_CLIPS:-}" = all ] && greedy="greedy"
select="($greedy) or (beam and jfk.wav and not patience and not penalty) or precision_bf16 or word_timestamps_in_json"
asan_runtime="$(gcc -print-file-name=libasan.so)"
[ -e "$asan_runtime" ] || { step_log "gcc has no libasan.so ($asan_runtime)"; exit 1; }
ubsan_env=(--test_env=UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
times=()
for config in "${configs[@]}"; do
  case "$config" in
    san | asan) py_env=(--test_env=LD_PRELOAD="$asan_runtime" --test_env=ASAN_OPTIONS=detect_leaks=0) ;;
    ubsan) py_env=() ;;
    *) step_log "unknown config '$config'; use san, asan or ubsan"; exit 2 ;;
  esac
  start=$SECONDS
  step_log "--config=$config: ${#cc_tests[@]} cc_tests"
  ci_bazel test --config="$config" --test_env=ASAN_OPTIONS=detect_leaks=1 "${ubsan_env[@]}" "${cc_tests[@]}"
  middle=$SECONDS
  step_log "--config=$config: ${py_tests[*]} -k '$select'"
  ci_bazel test --config="$config" "${py_env[@]}" "${ubsan_env[@]}" --test_sharding_strategy=disabled \
    --test_arg=-k --test_arg="$select" "${py_tests[@]}"
  times+=("$(printf '%-6s cc_tests %5ds   Python end to end %5ds' "$config" $((middle - start)) $((SECONDS - middle)))")
done
printf '%s\n' "${times[@]}"
step_log "OK: every run clean"
