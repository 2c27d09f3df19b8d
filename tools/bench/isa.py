"""`--isa avx2` for the benchmarks: the AVX2 paths measured on an AVX-512 machine, every engine's
capped by the environment variable its library reads when it loads (hence a fresh process)."""

import os
import sys

# ckw's kernels (CKW_ISA), CTranslate2's (CT2_FORCE_CPU_ISA), OpenBLAS's for the sgemm probe
# (OPENBLAS_CORETYPE); whisper.cpp runs what its wheel was built for.
ISA_ENV = {"avx2": {"CKW_ISA": "avx2", "CT2_FORCE_CPU_ISA": "AVX2", "OPENBLAS_CORETYPE": "Haswell"}}
CHOICES = ["best", *ISA_ENV]


def reexec_for(isa: str) -> None:
    """Runs this program again in a process whose environment has ISA_ENV[isa] from the start:
    OpenBLAS and CTranslate2 are loaded (numpy, faster_whisper imports) before flags are parsed.
    Returns when the environment is already so (or isa is "best")."""
    env = ISA_ENV.get(isa, {})
    if all(os.environ.get(k) == v for k, v in env.items()):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **env})
