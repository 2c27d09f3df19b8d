"""ctypes over the generated C ABI (tools/codegen/README.md, "Generated ABI"), one place for all users.

Every generated library describes itself: `<prefix>_abi_json()` returns its ABI as JSON (the same
bytes as the `abi.json` the compiler writes beside the .c), rendered from the one description the
header is rendered from too (tools/codegen/abi.py). `Library` reads it and builds its ctypes table
from it (`ctypes_table`), so no signature of a generated entry point is restated here. Hand-declared
are only `<prefix>_abi_json` itself, `TAP_FN` (checked against the library's `<prefix>_tap_fn`) and
the map from C types to ctypes (`_CTYPES`): numpy buffers go to C without copies (ndpointer,
C-contiguous float32/int32/uint8); a C type missing from the map fails the load, naming the
function and parameter.

Error codes: the constants below (OK, E_*) are the runtime's expectation. They must exist before
any library is loaded (engine.py and tests compare statuses with them), so they are not read from
a library; instead every library loaded must agree with them, name for name and code for code, or
`Library` raises AbiError naming the differences. The codes' single source is the compiler's table
(tools/codegen/abi.py `ERRORS`); the runtime does not import the compiler, so a drift between the
two shows up as a clear load-time error, never as a misread status.
"""

import ctypes
import json
import re
import threading

import numpy as np

OK = 0
E_ARGUMENT, E_IO, E_LAYOUT_MISMATCH, E_WEIGHTS_SIZE, E_NO_MEMORY = -1, -2, -3, -4, -5
E_MISSING_INPUT, E_CROSS_KV_INVALID, E_CONTEXT_FULL, E_KERNEL = -6, -7, -8, -9
E_WEIGHTS_CORRUPT, E_BUSY = -10, -11
ERROR_CODES = {
    "OK": OK,
    "E_ARGUMENT": E_ARGUMENT,
    "E_IO": E_IO,
    "E_LAYOUT_MISMATCH": E_LAYOUT_MISMATCH,
    "E_WEIGHTS_SIZE": E_WEIGHTS_SIZE,
    "E_NO_MEMORY": E_NO_MEMORY,
    "E_MISSING_INPUT": E_MISSING_INPUT,
    "E_CROSS_KV_INVALID": E_CROSS_KV_INVALID,
    "E_CONTEXT_FULL": E_CONTEXT_FULL,
    "E_KERNEL": E_KERNEL,
    "E_WEIGHTS_CORRUPT": E_WEIGHTS_CORRUPT,
    "E_BUSY": E_BUSY,
}
ABI_VERSION = 1  # abi.json's "abi_version" this module reads


def _array(dtype):
    """A C-contiguous numpy array of `dtype` without a copy, or None for NULL (an optional output;
    the generated code refuses NULL where it is required, E_ARGUMENT)."""
    base = np.ctypeslib.ndpointer(dtype, flags="C_CONTIGUOUS")

    class Array(base):
        @classmethod
        def from_param(cls, obj):
            return None if obj is None else base.from_param(obj)

    return Array


_F32, _I32, _U8 = _array(np.float32), _array(np.int32), _array(np.uint8)
_H = ctypes.c_void_p

# Edge inspection (tools/codegen/README.md, "Edge taps"): called after each kernel call with
# (user, "<node>.<port>", data, rank, shape) per f32 output; data is valid only during the call.
TAP_FN = ctypes.CFUNCTYPE(
    None,
    ctypes.c_void_p,
    ctypes.c_char_p,
    ctypes.POINTER(ctypes.c_float),
    ctypes.c_int64,
    ctypes.POINTER(ctypes.c_int64),
)
# TAP_FN's C type, as abi.json spells it: (returns, parameter ctypes). A library whose
# <prefix>_tap_fn differs is refused.
_TAP_SIGNATURE = ("void", ["void *", "const char *", "const float *", "int64_t", "const int64_t *"])

# C type (as abi.json spells it) -> ctypes. The library's own types (`<prefix>_handle *`,
# `<prefix>_handle **`, `<prefix>_tap_fn`) are added per library by `_ctype`.
_CTYPES = {
    "int": ctypes.c_int,
    "int16_t": ctypes.c_int16,
    "int32_t": ctypes.c_int32,
    "int64_t": ctypes.c_int64,
    "uint8_t": ctypes.c_uint8,
    "size_t": ctypes.c_size_t,
    "float": ctypes.c_float,
    "double": ctypes.c_double,
    "float *": _F32,
    "const float *": _F32,
    "int32_t *": _I32,
    "const int32_t *": _I32,
    "uint8_t *": _U8,
    "const uint8_t *": _U8,
    "int64_t *": ctypes.POINTER(ctypes.c_int64),
    "const int64_t *": ctypes.POINTER(ctypes.c_int64),
    "char *": ctypes.c_char_p,
    "const char *": ctypes.c_char_p,
    "void *": ctypes.c_void_p,
    "const void *": ctypes.c_void_p,
}
_TOKEN = re.compile(r"[A-Za-z_]\w*|\*")


class AbiError(RuntimeError):
    """A non-OK status of a generated entry point (`code`), or a library whose ABI this runtime
    cannot use (`code` None). `reason` is the problem alone, without the function and library
    names (a failing kernel's own message after E_KERNEL), for callers that name the file."""

    def __init__(self, message: str, code: int | None = None, reason: str | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason if reason is not None else message


def normalize_ctype(ctype: str) -> str:
    """'const  float*' -> 'const float *', 'h * *' -> 'h **': the spelling abi.json uses."""
    out = ""
    for tok in _TOKEN.findall(ctype):
        if tok == "*":
            out += "*" if out.endswith("*") else " *"
        else:
            out += (" " if out else "") + tok
    return out


def _ctype(ctype: str, prefix: str, where: str, returns: bool = False):
    """The ctypes type for a C type of library `prefix`; AbiError naming `where` if unknown."""
    c = normalize_ctype(ctype)
    if returns and c == "void":
        return None
    if c in (f"{prefix}_handle *", f"const {prefix}_handle *"):
        return _H
    if c == f"{prefix}_handle **":
        return ctypes.POINTER(_H)
    if c == f"{prefix}_tap_fn":
        return TAP_FN
    if c in _CTYPES:
        return _CTYPES[c]
    raise AbiError(
        f"{where}: unknown C type '{ctype}': ckw/runtime/abi.py has no ctypes mapping for it "
        f"(add it to _CTYPES, or fix the generator)"
    )


def ctypes_table(abi: dict, where: str = "abi_json") -> dict[str, tuple[list, object]]:
    """Function name without `<prefix>_` -> (argtypes, restype), from a library's ABI description.
    Raises AbiError naming the function and parameter for a C type without a ctypes mapping, and
    when the library's tap type is not TAP_FN's."""
    prefix = abi["prefix"]
    for t in abi.get("types", []):
        if t["name"] == f"{prefix}_tap_fn":
            got = (normalize_ctype(t["returns"]), [normalize_ctype(p["ctype"]) for p in t["params"]])
            if got != _TAP_SIGNATURE:
                raise AbiError(
                    f"{where}: {t['name']} is {got[0]} (*)({', '.join(got[1])}), but TAP_FN is "
                    f"{_TAP_SIGNATURE[0]} (*)({', '.join(_TAP_SIGNATURE[1])}): update ckw/runtime/abi.py"
                )
    table = {}
    for fn in abi["functions"]:
        name = fn["name"]
        if not name.startswith(prefix + "_"):
            raise AbiError(f"{where}: function {name} does not carry the library prefix {prefix}_")
        argtypes = []
        for i, p in enumerate(fn["params"]):
            argtypes.append(_ctype(p["ctype"], prefix, f"{where}: {name}: parameter {i} '{p['name']}'"))
        restype = _ctype(fn["returns"], prefix, f"{where}: {name}: return type", returns=True)
        table[name[len(prefix) + 1 :]] = (argtypes, restype)
    return table


def check_errors(abi: dict, where: str = "abi_json") -> None:
    """AbiError unless the library's error codes are exactly this runtime's (ERROR_CODES)."""
    got = {e["name"]: e["code"] for e in abi["errors"]}
    if got != ERROR_CODES:
        diff = [
            f"{n}: library {got.get(n, 'none')}, runtime {ERROR_CODES.get(n, 'none')}"
            for n in sorted(set(got) | set(ERROR_CODES), key=lambda n: (ERROR_CODES.get(n, 1), n))
            if got.get(n) != ERROR_CODES.get(n)
        ]
        raise AbiError(
            f"{where}: error codes differ from ckw.runtime/abi.py's ({'; '.join(diff)}); "
            f"rebuild the library or update the constants"
        )


def read_abi_json(lib: ctypes.CDLL, prefix: str, where: str) -> str:
    """The text `<prefix>_abi_json()` returns (the only hand-declared symbol)."""
    try:
        fn = getattr(lib, prefix + "_abi_json")
    except AttributeError:
        raise AbiError(
            f"{where}: no {prefix}_abi_json(): not a generated library with prefix {prefix}, or built "
            f"before the ABI was data; rebuild it"
        ) from None
    fn.argtypes, fn.restype = [], ctypes.c_char_p
    return fn().decode("ascii")


class Library:
    """One generated library: `lib.call("prefill", h, ...)` calls <prefix>_prefill with the
    argtypes/restype its own abi_json declares. `abi` is the parsed description, `abi_json` its text."""

    def __init__(self, path: str, prefix: str, part: str):
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.prefix = prefix + "_"
        self.abi_json = read_abi_json(self.lib, prefix, path)
        self.abi = json.loads(self.abi_json)
        where = f"{path} ({prefix}_abi_json)"
        if self.abi.get("abi_version") != ABI_VERSION:
            raise AbiError(f"{where}: abi_version {self.abi.get('abi_version')!r}, this runtime reads {ABI_VERSION}")
        if (self.abi["prefix"], self.abi["part"]) != (prefix, part):
            raise AbiError(
                f"{where}: the library is {self.abi['prefix']} (part {self.abi['part']}), "
                f"expected {prefix} (part {part})"
            )
        check_errors(self.abi, where)
        self._fns = {}
        self._params = {f["name"][len(self.prefix) :]: [p["name"] for p in f["params"]] for f in self.abi["functions"]}
        for name, (args, res) in ctypes_table(self.abi, where).items():
            fn = getattr(self.lib, self.prefix + name)
            fn.argtypes, fn.restype = args, res
            self._fns[name] = fn

    @property
    def functions(self) -> list[str]:
        """The library's entry points, without the prefix, in ABI order."""
        return list(self._fns)

    @classmethod
    def for_model(cls, path: str, variant: str, part: str) -> "Library":
        return cls(path, f"ckw_{variant}_{part}", part)

    def call(self, name, *args):
        fn = self._fns.get(name)
        if fn is None:
            raise AbiError(f"{self.prefix}{name}: not in {self.path}'s ABI (it has {', '.join(self._fns)})")
        return fn(*args)

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

    def reason(self, code: int, handle=None) -> str:
        """The problem alone: the failing kernel's message after E_KERNEL, else the code's text
        from the ABI's error table (no library prefix)."""
        if code == E_KERNEL and handle is not None:
            kernel = self.call("last_error", handle).decode()
            if kernel:
                return kernel
        return next((e["text"] for e in self.abi["errors"] if e["code"] == code), f"error code {code}")


class Handle:
    """An owned handle; every non-OK status raises AbiError with the library's message.

    Misuse is an AbiError, never a crash: a call after close() ("used after free"), a second
    close() ("freed twice"), and a call or close() while another call runs on the same handle
    ("in use by another call": one handle per thread; the C entry points refuse such a call too,
    with E_BUSY)."""

    def __init__(self, lib: Library, weights=None, manifest=None, threads=None):
        self.lib = lib
        self.h = None
        self._lock = threading.Lock()  # held for each call: a second thread is refused, not queued
        rc, h = lib.create(weights, manifest, threads)
        if rc != OK:
            raise AbiError(f"{lib.prefix}create({weights}): {lib.message(rc)}", rc, lib.reason(rc))
        self.h = h

    def _enter(self, what: str):
        if not self._lock.acquire(blocking=False):
            raise AbiError(
                f"{self.lib.prefix}{what}: the handle is in use by another call (another thread's, or "
                f"this one's callback); give each thread its own handle (or engine)",
                E_BUSY,
                "in use by another call",
            )
        if self.h is None:
            self._lock.release()
            raise AbiError(
                f"{self.lib.prefix}{what}: the handle was freed (close() was called); create a new one",
                E_ARGUMENT,
                "used after free",
            )

    @property
    def num_threads(self) -> int:
        return self.query("num_threads")

    def __call__(self, name, *args):
        self._enter(name)
        try:
            rc = self.lib.call(name, self.h, *args)
            if rc != OK:
                raise AbiError(
                    f"{self.lib.prefix}{name}: {self.lib.message(rc, self.h)}", rc, self.lib.reason(rc, self.h)
                )
        finally:
            self._lock.release()

    def query(self, name):
        self._enter(name)
        try:
            return self.lib.call(name, self.h)
        finally:
            self._lock.release()

    def call_named(self, name, **args):
        """As __call__, with the arguments by their ABI names (the handle aside), so a caller does
        not depend on the order the generator gives a phase's parameters."""
        params = self.lib._params.get(name)
        if params is None:
            raise AbiError(f"{self.lib.prefix}{name}: not in {self.lib.path}'s ABI")
        wanted = params[1:]
        if set(args) != set(wanted):
            raise AbiError(f"{self.lib.prefix}{name} takes {', '.join(wanted)}; got {', '.join(sorted(args))}")
        self(name, *(args[p] for p in wanted))

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
        """Frees the handle; AbiError if it was freed already or another thread is using it."""
        if self.h is None and not self._lock.locked():
            raise AbiError(
                f"{self.lib.prefix}free: the handle is freed twice (close() on a closed handle)",
                E_ARGUMENT,
                "freed twice",
            )
        self._enter("free")
        try:
            self.lib.call("free", self.h)
            self.h = None
        finally:
            self._lock.release()

    @property
    def closed(self) -> bool:
        return self.h is None

    def __del__(self):
        if getattr(self, "h", None) is not None:
            self.lib.call("free", self.h)
            self.h = None
