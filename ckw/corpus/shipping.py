"""What the corpus tool's workers run, given to Ray as the job's runtime_env: the ckw wheel built with
this tool (//:wheel). The driver unpacks its package and Ray uploads it to each node as a py_module,
so a node that joins with `ray start --address` needs no checkout, only a Python with Ray and the
wheel's dependencies (its Requires-Dist). The workers' folder is an empty working_dir: without one,
Ray puts the driver's script folder and current folder on the workers' sys.path. The checkpoint
directory (converted or derived by the driver) and the audio are read at the driver's paths, so the
nodes share that file system.
"""

import glob
import os
import zipfile

from ckw import runfiles

PACKAGE = "ckw"


def wheel_file() -> str:
    """The ckw wheel in this program's runfiles (//:wheel's folder holds exactly one)."""
    folder = runfiles.locate(runfiles.WORKSPACE, "wheel")
    wheels = glob.glob(os.path.join(folder, f"{PACKAGE}-*.whl"))
    if len(wheels) != 1:
        raise FileNotFoundError(f"{folder}: expected one {PACKAGE}-*.whl, found {len(wheels)}; rebuild //:wheel")
    return wheels[0]


def unpack_package(wheel: str, into: str) -> str:
    """The wheel's package folder, extracted under `into` (a py_module's folder is named as the module)."""
    with zipfile.ZipFile(wheel) as z:
        z.extractall(into, [name for name in z.namelist() if name.startswith(PACKAGE + "/")])
    return os.path.join(into, PACKAGE)


def runtime_env(threads: int, scratch: str) -> dict:
    """The job's runtime_env; `scratch` is a folder of the driver's that lives until the batch ends."""
    working_dir = os.path.join(scratch, "working_dir")
    os.makedirs(working_dir)
    package = unpack_package(wheel_file(), os.path.join(scratch, "wheel"))
    return {"py_modules": [package], "working_dir": working_dir, "env_vars": {"CKW_NUM_THREADS": str(threads)}}
