"""Helpers shared by the kernel families' py_tests: load a family's ctypes testing library,
read a kernel map's tolerance constant, list the ISA paths this CPU can run."""

import ctypes
import os

import numpy as np

from tools.codegen import load as codegen_load


def family_dir(family):
    return os.path.join(os.environ["TEST_SRCDIR"], "ckw", "kernels", family)


def load(family, so_name):
    return ctypes.CDLL(os.path.join(family_dir(family), so_name))


def kernel_map(family, map_name):
    """The map as the compiler reads it (`extends` resolved, validated); its base files must be
    in the test's data too."""
    return codegen_load.resolve_kernel_map(os.path.join(family_dir(family), map_name + ".json"))


def tol_c(family, map_name):
    return kernel_map(family, map_name)["contract"]["tolerance_c"]


def cpu_isas():
    """ISA suffixes to test: scalar, the dispatching entry (""), and what the CPU has."""
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    isas = ["__scalar", ""]
    if {"avx2", "fma"} <= flags:
        isas.append("__avx2")
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        isas.append("__avx512")
    return isas


def ptr(a):
    assert a.flags["C_CONTIGUOUS"]
    return a.ctypes.data_as(ctypes.c_void_p)


def f32(a):
    return np.ascontiguousarray(a, dtype=np.float32)
