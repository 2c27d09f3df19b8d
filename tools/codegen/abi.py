"""The generated C ABI as data: every exported function (name, return ctype, parameters with
name, ctype and doc), the types they use and the error codes, built from the call IR.

This one description is what the header template renders (abi.h.j2 declares exactly these
functions and types, in this order) and what the compiler writes as `abi.json` and embeds in
the generated C as `<prefix>_abi_json()`; ckw/runtime/abi.py builds its ctypes table from it. So
the header, the data and the runtime cannot disagree.
"""

import json

ABI_VERSION = 1

# Return codes of every generated entry point: (name, code, text). The header's #defines,
# strerror() and abi.json's "errors" all come from here.
ERRORS = [
    ("OK", 0, "ok"),
    ("E_ARGUMENT", -1, "invalid argument (null pointer or a count out of range)"),
    ("E_IO", -2, "cannot read the weights or manifest file"),
    (
        "E_LAYOUT_MISMATCH",
        -3,
        "the manifest's layout (tensor names, dtypes, shapes, offsets) is not the one this library was built for",
    ),
    (
        "E_WEIGHTS_SIZE",
        -4,
        "weights file size differs from the manifest's (truncated, or another checkpoint's weights)",
    ),
    ("E_NO_MEMORY", -5, "out of memory"),
    ("E_MISSING_INPUT", -6, "a required input was not set (call the set_* function first)"),
    ("E_CROSS_KV_INVALID", -7, "cross-K/V cache is not valid: run prefill after setting encoder memory"),
    ("E_CONTEXT_FULL", -8, "the position would pass the text context capacity"),
    ("E_KERNEL", -9, "a kernel reported an error"),
    (
        "E_WEIGHTS_CORRUPT",
        -10,
        "a tensor in the weights file fails the xxh64 checksum its manifest records: the file is corrupt",
    ),
    ("E_BUSY", -11, "the handle is in use by another call (one call at a time per handle: give each thread its own)"),
]


def _param(name: str, ctype: str, doc: str = "") -> dict:
    return {"name": name, "ctype": ctype, "doc": doc}


def _fn(name: str, returns: str, params: list[dict], doc: str) -> dict:
    return {"name": name, "returns": returns, "params": params, "doc": doc}


def describe(ir: dict) -> dict:
    """The ABI of one artifact. `doc` strings use "\\n" for a hard line break (the header wraps
    the rest); a parameter without a doc has ""."""
    p = ir["prefix"]
    P = p.upper()
    handle, const_handle = f"{p}_handle *", f"const {p}_handle *"
    h = _param("h", handle)
    threads = ir["threads"]
    fns = [
        _fn(
            f"{p}_create",
            "int",
            [
                _param("weights_path", "const char *", "the weights file (NULL for a library without weights)"),
                _param("manifest_path", "const char *", "NULL: manifest.json next to the weights file"),
                _param("out", f"{p}_handle **", "the new handle (NULL on failure)"),
            ],
            "Maps the weights file read-only and allocates the handle's arena and state. The manifest's "
            f"layout_sha256 must equal the one baked in here and its entry of every tensor this library reads "
            f"the offset and size baked in ({P}_E_LAYOUT_MISMATCH otherwise), the file must have the layout's "
            f"size ({P}_E_WEIGHTS_SIZE) and every tensor this library reads the xxh64 the manifest records "
            f"({P}_E_WEIGHTS_CORRUPT): any checkpoint of this layout runs, a fine-tune too.\n"
            "Every entry point that takes a non-const handle runs "
            f"one call at a time on it: a call while another runs (another thread, or a tap re-entering) "
            f"returns {P}_E_BUSY and changes nothing.",
        ),
        _fn(
            f"{p}_create_with_threads",
            "int",
            [
                _param("weights_path", "const char *", "as create"),
                _param("manifest_path", "const char *", "as create"),
                _param(
                    "num_threads",
                    "int",
                    f">= 1: that many (the caller's included); 0: CKW_NUM_THREADS (a positive "
                    f"integer), else the CPUs this process may run on; at most {threads['max']}",
                ),
                _param("out", f"{p}_handle **", "the new handle (NULL on failure)"),
            ],
            "As create, and the handle starts its worker threads (joined by free). Calls whose kernel declares a "
            "split run in chunks over outputs only, so every thread count gives the same bits. create() is "
            f"create_with_threads(..., 0, out). Negative num_threads: {P}_E_ARGUMENT.",
        ),
        _fn(
            f"{p}_num_threads",
            "int",
            [_param("h", const_handle)],
            "Threads the handle runs calls on, the caller's included ("
            + (f"1 .. {threads['max']}" if threads["pool"] else "always 1: no call of this library is split")
            + ").",
        ),
        _fn(
            f"{p}_free",
            "void",
            [h],
            "Joins the handle's threads and releases everything it owns (NULL: no-op). "
            "During a call on the handle (from another thread or a tap), the call frees it as it returns.",
        ),
        _fn(
            f"{p}_strerror",
            "const char *",
            [_param("code", "int", f"{P}_OK or a {P}_E_* code")],
            "A return code's message (static storage).",
        ),
        _fn(
            f"{p}_layout_sha256",
            "const char *",
            [],
            'The checkpoint layout this library was generated for (64 hex digits, "" when weightless): '
            "the manifest's layout_sha256.",
        ),
        _fn(
            f"{p}_last_error",
            "const char *",
            [_param("h", const_handle)],
            f'The failing kernel\'s own message after {P}_E_KERNEL ("" otherwise).',
        ),
        _fn(
            f"{p}_dim",
            "int64_t",
            [_param("name", "const char *", 'e.g. "n_vocab"')],
            "A resolved circuit dim by name, or -1 when there is none.",
        ),
        _fn(
            f"{p}_abi_json",
            "const char *",
            [],
            "This ABI as JSON (the artifact's abi.json, byte for byte): functions, parameters, types and "
            "error codes; ckw/runtime/abi.py builds its ctypes table from it.",
        ),
        _fn(
            f"{p}_set_tap",
            "int",
            [
                h,
                _param("fn", f"{p}_tap_fn", "NULL disables the tap (then each call costs one untaken branch)"),
                _param("user", "void *", "passed to fn as is"),
            ],
            f"Sets the handle's edge tap. Returns {P}_OK, or {P}_E_ARGUMENT without a handle.",
        ),
    ]
    cross = ir["cross_kv"]
    entries = cross["entries"] if cross else None
    for s in ir["setters"]:
        doc = f"Copies {s['name']} [{', '.join(map(str, s['shape']))}] into the handle."
        if s["invalidates_cross_kv"] and entries:
            doc += (
                f" It is for cross-K/V entry `entry` and invalidates that entry alone: the next "
                f"{cross['populate_phase']} with {entries['index']} = entry projects it (any other entry's "
                f"{cross['populate_phase']} needing a projection fails with {P}_E_MISSING_INPUT until its own "
                f"{s['name']} is set); {cross['reuse_phase']} rows naming it fail until then. An entry outside "
                f"0 .. {entries['count'] - 1}: {P}_E_ARGUMENT."
            )
        elif s["invalidates_cross_kv"]:
            doc += (
                f" Invalidates the cross-K/V cache: the next {cross['populate_phase']} projects it again; "
                f"{cross['reuse_phase']} fails until then."
            )
        fns.append(
            _fn(
                f"{p}_set_{s['name']}", "int", [h] + [_param(q["name"], q["ctype"], q["doc"]) for q in s["params"]], doc
            )
        )
    if entries:
        fns.append(
            _fn(
                f"{p}_cross_kv_invalidate",
                "int",
                [h, _param("entry", "int64_t", f"0 .. {entries['count'] - 1}")],
                f"Marks cross-K/V entry `entry` not projected (a finished or cancelled request), so a later "
                f"use of the index can never read its old K/V: {cross['reuse_phase']} rows naming it fail "
                f"with {P}_E_CROSS_KV_INVALID until a {cross['populate_phase']} projects it again. An entry "
                f"outside the range: {P}_E_ARGUMENT.",
            )
        )
    for ph in ir["phases"]:
        if ph["shape_function"]:
            sf = ph["shape_function"]
            params = [h] + [_param(q["name"], q["ctype"], q["doc"]) for q in ph["input_params"]]
            params += [
                _param(f"{o['name']}_shape", "int64_t *", f"[{len(o['dims'])}] receives {o['name']}'s shape")
                for o in sf["outputs"]
            ]
            fns.append(
                _fn(
                    sf["function"],
                    "int",
                    params,
                    f"Shape of each output of {ph['function']} for this input (call it first to allocate).",
                )
            )
        fns.append(
            _fn(ph["function"], "int", [h] + [_param(q["name"], q["ctype"], q["doc"]) for q in ph["params"]], ph["doc"])
        )
    if ir["sequence"]:
        seq = ir["sequence"]
        fns.append(
            _fn(
                f"{p}_reset",
                "int",
                [h],
                f"Forgets the token sequence ({seq['counter']} = 0); keeps inputs set with set_*"
                + (" and the cross-K/V cache." if ir["cross_kv"] else "."),
            )
        )
        fns.append(
            _fn(
                f"{p}_{seq['counter']}",
                "int64_t",
                [_param("h", const_handle)],
                f"Tokens in the sequence so far (at most {seq['capacity']}); -1 without a handle.",
            )
        )
    if ir["cross_kv"]:
        fns.append(
            _fn(
                f"{p}_cross_kv_projections",
                "int64_t",
                [_param("h", const_handle)],
                "How many times the cross-K/V cache was computed from encoder memory (once per memory"
                + (", summed over the entries)." if entries else ")."),
            )
        )
    types = [
        {"name": f"{p}_handle", "kind": "struct", "doc": "Opaque: owns the weights mapping, arena, state and threads."},
        {
            "name": f"{p}_tap_fn",
            "kind": "function_pointer",
            "returns": "void",
            "params": [
                _param("user", "void *", "set_tap's user"),
                _param(
                    "edge",
                    "const char *",
                    '"<node>.<port>", e.g. "blocks.0.q_proj.y" (converters: "<consumer>:<port><-<layout>.<port>")',
                ),
                _param(
                    "data",
                    "const float *",
                    "the output as the call left it, valid only during the callback (the arena is reused)",
                ),
                _param("rank", "int64_t", "entries of shape"),
                _param("shape", "const int64_t *", "dims, row-major, as the kernel sees the tensor"),
            ],
            "doc": "Edge inspection. After every kernel call of an entry point (circuit ops and the layout converters "
            "the compiler inserted, in call order) the handle's tap, when set, is called once per f32 output of "
            "that call. An output written as a window into persistent state (a KV-cache append) is reported as "
            "the whole cache instance it writes into, with the cache's full shape. Calls that an entry point "
            "skips (e.g. cached cross-K/V projections) report nothing.",
        },
    ]
    return {
        "abi_version": ABI_VERSION,
        "prefix": p,
        "part": ir["part"],
        "circuit": ir["circuit"],
        "errors": [{"name": n, "code": c, "text": t} for n, c, t in ERRORS],
        "types": types,
        "functions": fns,
    }


def dumps(abi: dict) -> str:
    """abi.json's text (and the string `<prefix>_abi_json()` returns): sorted keys, no timestamps."""
    return json.dumps(abi, indent=2, sort_keys=True) + "\n"
