#!/usr/bin/env bash
# The ISA-sensitive tests (Bazel tag "isa": token equality, precision gates, long-form, beams,
# words, language, batched and multi-stream) again with the kernels capped at AVX2
# (CKW_ISA=avx2), so a machine with AVX-512 cannot hide a failure of the AVX2 paths, which
# AVX2-only CPUs (Zen 2/3, older Intel, many small cloud VMs) run. On a machine whose best path is
# AVX2 already, the test phase ran them on it and this step says so and stops. The portable path
# (CKW_ISA=scalar) is //tests/e2e:token_equality_tiny_scalar_test, part of //...
#
#   .ci/steps/isa.sh [ISA]      (default avx2)
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/steps/lib.sh
isa="${1:-avx2}"

flags="$(grep -m1 '^flags' /proc/cpuinfo || true)"
has() { echo " $flags " | grep -q " $1 "; }
if [ "$isa" = avx2 ] && ! { has avx512f && has avx512bw && has avx512dq && has avx512vl; }; then
  step_log "this CPU's best kernel path is AVX2 already: the test phase ran the isa tests on it"
  exit 0
fi
step_log "the isa-tagged tests with CKW_ISA=$isa ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs))"
ci_bazel test //... --test_tag_filters=isa --test_env=CKW_ISA="$isa"
