#!/usr/bin/env bash
# Valgrind memcheck over the tiny end-to-end path: the built CLI (//tools:transcribe: Python,
# the generated frontend, encoder and decoder libraries) transcribing the built-in demo clip
# (22.05 kHz: the resampler runs too), and the checked transcript. Every memcheck error
# (invalid read or write, use of uninitialised memory, invalid free) and every definite leak
# whose stack, or whose uninitialised value's origin, is in our libraries fails the step
# (.ci/steps/valgrind_check.py; the interpreter's own reports are counted, not failed).
# Valgrind's CPU has no AVX-512, so the kernels' run-time dispatch takes their AVX2 paths.
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
apt_install_missing valgrind

ci_bazel build //tools:transcribe
bin="$(ci_bazel info bazel-bin 2>/dev/null)"
work="$(mktemp -d /tmp/ckw-valgrind.XXXXXX)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS
# PYTHONMALLOC=malloc: every Python allocation goes through malloc, where memcheck sees it.
PYTHONMALLOC=malloc CKW_NUM_THREADS=2 valgrind --tool=memcheck --trace-children=yes --track-origins=yes \
  --leak-check=full --show-leak-kinds=definite --num-callers=40 --xml=yes --xml-file="$work/report.%p.xml" \
  --log-file="$work/log.%p.txt" "$bin/tools/transcribe" --output_format json --output "$work/out.json"
elapsed=$((SECONDS - start))
python3 .ci/steps/valgrind_check.py "$work"/report.*.xml
python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['text']; assert 'demo clip' in t.lower(), t; print('transcript:', t)" \
  "$work/out.json"
step_log "OK: memcheck clean in our code on the tiny end-to-end path (${elapsed}s under valgrind)"
