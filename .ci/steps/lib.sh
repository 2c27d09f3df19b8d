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
