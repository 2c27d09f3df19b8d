# Shared by the .ci/steps scripts (sourced): logging, Debian installs, Bazel with CI's flags.
# CI_BAZEL_FLAGS (from .ci/run): extra flags for every Bazel command, e.g. the remote cache.

step_log() { echo "ci[$(basename "$0" .sh)]: $*"; }

# apt_install_missing PACKAGE...: installs those not installed yet (dpkg's view).
apt_install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  step_log "installing ${missing[*]}"
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}" >/dev/null
}

# ci_bazel COMMAND [ARGS...]: ./bazelw COMMAND with CI's flags.
ci_bazel() {
  local cmd="$1"
  shift
  # shellcheck disable=SC2086  # CI_BAZEL_FLAGS is a list of flags
  ./bazelw "$cmd" ${CI_BAZEL_FLAGS:-} "$@"
}

# c_sources TARGET: the C files the build compiles for TARGET, its dependencies' included (Bazel's
# compile actions, tools excluded), one path a line: workspace sources from the workspace root,
# generated ones (the circuits' C) under bazel-bin. For building TARGET again with clang's
# sanitizers.
c_sources() {
  local bin
  bin="$(ci_bazel info bazel-bin 2>/dev/null)"
  ci_bazel aquery "mnemonic('CppCompile', deps($1))" --notool_deps --output=text 2>/dev/null |
    awk '/^ *-c \\$/ { getline; gsub(/^ +| \\$|\)$/, ""); print }' | grep -E '\.c$' | grep -v '^external/' |
    sed -E "s|^bazel-out/[^/]+/bin/|$bin/|" | sort -u
}

# clang_binary OUT SOURCE... -- CFLAG...: OUT built with clang-14 from SOURCEs (one object per
# source, as many compiling at once as there are cores) with CFLAGs, linked with -lm -pthread.
clang_binary() {
  local out="$1" sources=() objects=() i=0
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sources+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  rm -rf "$out.o" && mkdir -p "$out.o"
  for src in "${sources[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
    objects+=("$out.o/$i.o")
    { clang-14 "$@" -c "$src" -o "$out.o/$i.o" || echo "$src" >>"$out.o/failed"; } &
    i=$((i + 1))
  done
  wait
  [ ! -e "$out.o/failed" ] || { step_log "clang-14 could not compile $(head -1 "$out.o/failed")"; return 1; }
  clang-14 "$@" "${objects[@]}" -lm -pthread -o "$out"
}
