"""ctypes declarations of the generated C ABI (tools/codegen/README.md), one place for all users.

numpy buffers go to C without copies (ndpointer, C-contiguous float32/int32).
"""

import ctypes

import numpy as np

OK = 0
E_ARGUMENT, E_IO, E_MANIFEST_MISMATCH, E_WEIGHTS_SIZE, E_NO_MEMORY = -1, -2, -3, -4, -5
E_MISSING_INPUT, E_CROSS_KV_INVALID, E_CONTEXT_FULL, E_KERNEL = -6, -7, -8, -9

_F32 = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
_I32 = np.ctypeslib.ndpointer(np.int32, flags="C_CONTIGUOUS")
_U8 = np.ctypeslib.ndpointer(np.uint8, flags="C_CONTIGUOUS")
_H = ctypes.c_void_p

# Edge inspection (tools/codegen/README.md, "Edge taps"): called after each kernel call with
# (user, "<node>.<port>", data, rank, shape) per f32 output; data is valid only during the call.
TAP_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_float), ctypes.c_int64,
                          ctypes.POINTER(ctypes.c_int64))

_COMMON = {
    "create": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_H)], ctypes.c_int),
    "create_with_threads": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_H)], ctypes.c_int),
    "num_threads": ([_H], ctypes.c_int),
    "free": ([_H], None),
    "strerror": ([ctypes.c_int], ctypes.c_char_p),
    "last_error": ([_H], ctypes.c_char_p),
    "manifest_sha256": ([], ctypes.c_char_p),
    "dim": ([ctypes.c_char_p], ctypes.c_int64),
    "set_tap": ([_H, TAP_FN, ctypes.c_void_p], ctypes.c_int),
}
_PARTS = {
    "encoder": {"run": ([_H, _F32, _F32], ctypes.c_int)},
    "decoder": {
        "set_encoder_memory": ([_H, _F32], ctypes.c_int),
        "prefill": ([_H, _I32, ctypes.c_int64, _F32], ctypes.c_int),
        "decode": ([_H, ctypes.c_int32, _F32], ctypes.c_int),
        "reset": ([_H], ctypes.c_int),
        "position": ([_H], ctypes.c_int64),
        "cross_kv_projections": ([_H], ctypes.c_int64),
    },
    "frontend": {
        "run_shape": ([_H, _U8, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)], ctypes.c_int),
        "run": ([_H, _U8, ctypes.c_int64, _F32, ctypes.c_int64], ctypes.c_int),
    },
}


class AbiError(RuntimeError):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


class Library:
    """One generated library: `lib.call("prefill", h, ...)` calls <prefix>_prefill."""

    def __init__(self, path: str, prefix: str, part: str):
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.prefix = prefix + "_"
        for name, (args, res) in {**_COMMON, **_PARTS[part]}.items():
            fn = getattr(self.lib, self.prefix + name)
            fn.argtypes, fn.restype = args, res

    @classmethod
    def for_model(cls, path: str, variant: str, part: str) -> "Library":
        return cls(path, f"ckw_{variant}_{part}", part)

    def call(self, name, *args):
        return getattr(self.lib, self.prefix + name)(*args)

    def dim(self, name: str) -> int:
        return self.call("dim", name.encode())

    def create(self, weights, manifest=None, threads=None):
        """(status, handle). threads: the handle's worker threads, the caller's included (None:
        CKW_NUM_THREADS, else the CPUs this process may use; the library caps it)."""
        h = _H()
        w, m = weights.encode() if weights else None, manifest.encode() if manifest else None
        if threads is None:
            rc = self.call("create", w, m, ctypes.byref(h))
        else:
            rc = self.call("create_with_threads", w, m, int(threads), ctypes.byref(h))
        return rc, h

    def message(self, code: int, handle=None) -> str:
        text = self.call("strerror", code).decode()
        if code == E_KERNEL and handle is not None:
            text += ": " + self.call("last_error", handle).decode()
        return text


class Handle:
    """An owned handle; every non-OK status raises AbiError with the library's message."""

    def __init__(self, lib: Library, weights=None, manifest=None, threads=None):
        self.lib = lib
        rc, self.h = lib.create(weights, manifest, threads)
        if rc != OK:
            raise AbiError(f"{lib.prefix}create({weights}): {lib.message(rc)}", rc)

    @property
    def num_threads(self) -> int:
        return self.lib.call("num_threads", self.h)

    def __call__(self, name, *args):
        rc = self.lib.call(name, self.h, *args)
        if rc != OK:
            raise AbiError(f"{self.lib.prefix}{name}: {self.lib.message(rc, self.h)}", rc)

    def query(self, name):
        return self.lib.call(name, self.h)

    def set_tap(self, fn=None):
        """Calls `fn(edge: str, data: np.ndarray)` after every kernel call, once per f32 output
        (`data` views C memory that is reused once the callback returns: copy what you keep);
        None disables. An exception in `fn` cannot cross C: the tap goes quiet and the next
        set_tap call raises it (so disable the tap with set_tap() when done)."""
        error, self._tap_error = getattr(self, "_tap_error", None), None
        if fn is None:
            self._tap = TAP_FN()  # NULL
        else:
            def tap(_user, edge, data, rank, shape):
                if self._tap_error is not None:
                    return
                try:
                    fn(edge.decode(), np.ctypeslib.as_array(data, shape=tuple(shape[i] for i in range(rank))))
                except BaseException as e:  # noqa: BLE001 (raised by the next set_tap)
                    self._tap_error = e

            self._tap = TAP_FN(tap)  # kept alive here: C holds only the pointer
        self("set_tap", self._tap, None)
        if error is not None:
            raise error

    def close(self):
        if self.h:
            self.lib.call("free", self.h)
            self.h = None

    def __del__(self):
        self.close()
