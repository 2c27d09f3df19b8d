#!/usr/bin/env bash
# The style gates: the import layers (tools/lint/layers.py), ruff (lint and format; the version
# pinned in requirements_lock.txt, from .venv), clang-format (Google style, .clang-format) on
# hand-written C, buildifier (format and lint) on BUILD and .bzl files. Fails on any finding and
# names the file. Also what pre-commit runs (.pre-commit-config.yaml).
#
#   .ci/steps/lint.sh          check
#   .ci/steps/lint.sh --fix    rewrite the files in place (ruff --fix and format, clang-format -i,
#                              buildifier), then check again
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
fix=0
[ "${1:-}" = "--fix" ] && fix=1
BUILDIFIER_VERSION=8.2.1  # npm's @bazel/buildifier (its binary ships inside the package)

# ruff from .venv (./bazelw builds it from the lock), clang-format from Debian, buildifier from npm
# into a cache outside the checkout.
# `bazel help` exits 0 without a workspace server (`bazel version` exits 2 on bazel-bootstrap).
[ -x .venv/bin/ruff ] || ./bazelw help >/dev/null
ruff="$PWD/.venv/bin/ruff"
[ -x "$ruff" ] || { step_log "no $ruff: requirements_lock.txt pins ruff; rebuild .venv with ./bazelw"; exit 1; }
apt_install_missing clang-format
clang_format="$(command -v clang-format)"
tools_dir="${XDG_CACHE_HOME:-$HOME/.cache}/ckw/lint-tools/buildifier-$BUILDIFIER_VERSION"
buildifier="$tools_dir/node_modules/.bin/buildifier"
if [ ! -x "$buildifier" ]; then
  command -v npm >/dev/null 2>&1 || apt_install_missing npm
  step_log "installing @bazel/buildifier@$BUILDIFIER_VERSION into $tools_dir"
  mkdir -p "$tools_dir"
  npm install --prefix "$tools_dir" --no-audit --no-fund --silent "@bazel/buildifier@$BUILDIFIER_VERSION" >/dev/null
fi

# Hand-written C only: generated C is a build output, and the codegen goldens are its snapshot.
mapfile -t c_files < <(git ls-files '*.c' '*.h' '*.inc' | grep -v '/testdata/golden/')
mapfile -t bazel_files < <(git ls-files 'BUILD' 'BUILD.bazel' '*/BUILD' '*/BUILD.bazel' '*.bzl' 'WORKSPACE' \
  'MODULE.bazel' '*.BUILD')
# Bazel 4.2.3's rules are native: the third_party shims re-export them (native-* warnings there are
# the point), and their own files follow their upstream.
mapfile -t linted_bazel_files < <(printf '%s\n' "${bazel_files[@]}" | grep -v '^third_party/')

if [ "$fix" = 1 ]; then
  "$ruff" check --fix --quiet .
  "$ruff" format --quiet .
  "$clang_format" -i "${c_files[@]}"
  "$buildifier" -mode=fix -lint=off "${bazel_files[@]}"
  "$buildifier" -mode=fix -lint=fix "${linted_bazel_files[@]}"  # not the shims: their native rules are the point
fi

failed=()
step_log "ruff check ($("$ruff" --version))"
"$ruff" check . || failed+=("ruff check")
step_log "ruff format --check"
"$ruff" format --check . || failed+=("ruff format")
step_log "clang-format --dry-run on ${#c_files[@]} hand-written C files ($("$clang_format" --version | head -1))"
"$clang_format" --dry-run -Werror "${c_files[@]}" || failed+=("clang-format")
step_log "buildifier on ${#bazel_files[@]} BUILD/.bzl files ($("$buildifier" --version | head -1))"
"$buildifier" -mode=check -lint=off "${bazel_files[@]}" || failed+=("buildifier format")
"$buildifier" -mode=check -lint=warn "${linted_bazel_files[@]}" || failed+=("buildifier lint")
step_log "import layers (tools/lint/layers.py)"
.venv/bin/python3 tools/lint/layers.py || failed+=("import layers")

if [ ${#failed[@]} -gt 0 ]; then
  step_log "FAIL: ${failed[*]} (see above; .ci/steps/lint.sh --fix rewrites what the formatters can)"
  exit 1
fi
step_log "clean"
