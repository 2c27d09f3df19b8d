"""The generated ABI, end to end on the toy decoder (naive test kernels): layout and weight
checks (another layout refused, other weights of the layout run),
cross-K/V cache facts, self-KV incremental decode equal to a full prefill, error codes, and the
edge taps (every call's f32 outputs, in call order, with their shapes and values), and the
handle's worker threads (the toy linear and logits maps declare splits): same bits for any count.
The library is called through ckw/runtime/abi.py, whose ctypes table comes from the library's own
`ckw_toy_decoder_abi_json()`; that string, abi.json and the header agree."""

import ctypes
import hashlib
import json
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np
import xxhash

from ckw.checkpoints.packed import tensors_digest
from ckw.runtime import abi
from ckw.runtime.abi import TAP_FN
from tools.codegen.testing.c_header import declarations, error_codes
from tools.codegen.testing.toy import toy_manifest_hashes, toy_weights

HERE = "tools/codegen/testdata/toy"
GENERATED = f"{HERE}/toy_decoder_c"  # plan_<phase>.json, abi.json and the header of the library under test
OK, E_ARGUMENT, E_LAYOUT = abi.OK, abi.E_ARGUMENT, abi.E_LAYOUT_MISMATCH
E_MISSING, E_CROSS, E_FULL = abi.E_MISSING_INPUT, abi.E_CROSS_KV_INVALID, abi.E_CONTEXT_FULL


def load():
    return abi.Library(os.path.abspath(f"{HERE}/libckw_toy_decoder.so"), "ckw_toy_decoder", "decoder")


class ToyBase(unittest.TestCase):
    """The library, a weights file of random values and a manifest beside it."""

    @classmethod
    def setUpClass(cls):
        cls.lib = load()
        cls.tmp = tempfile.mkdtemp()
        manifest = json.load(open(f"{HERE}/manifest.json"))
        weights = toy_weights(manifest)
        cls.weights = os.path.join(cls.tmp, "weights.bin")
        open(cls.weights, "wb").write(weights)
        shutil.copy(f"{HERE}/manifest.json", os.path.join(cls.tmp, "manifest.json"))
        bad = dict(manifest, layout_sha256="0" * 64)
        cls.bad_manifest = os.path.join(cls.tmp, "bad.json")
        json.dump(bad, open(cls.bad_manifest, "w"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def call(self, name, *args):
        return self.lib.call(name, *args)

    def handle(self):
        h = ctypes.c_void_p()
        self.assertEqual(self.call("create", self.weights.encode(), None, ctypes.byref(h)), OK)
        self.addCleanup(self.call, "free", h)
        return h


class ToyAbiDataTest(unittest.TestCase):
    """The library describes itself: its abi_json is the abi.json built beside it, and the ctypes
    table built from it covers every function the header declares."""

    @classmethod
    def setUpClass(cls):
        cls.lib = load()
        with open(f"{GENERATED}/ckw_toy_decoder.h") as f:
            cls.header = f.read()

    def test_embedded_string_is_abi_json(self):
        with open(f"{GENERATED}/abi.json") as f:
            self.assertEqual(self.lib.abi_json, f.read())

    def test_table_covers_the_header(self):
        decls = {k: v for k, v in declarations(self.header).items() if v.get("kind") != "function_pointer"}
        self.assertEqual(sorted("ckw_toy_decoder_" + n for n in self.lib.functions), sorted(decls))
        for name, d in decls.items():
            fn = getattr(self.lib.lib, name)
            self.assertEqual(len(fn.argtypes), len(d["params"]), name)
            self.assertEqual(fn.restype is None, d["returns"] == "void", name)

    def test_error_codes_match_the_runtime(self):
        self.assertEqual(error_codes(self.header, "ckw_toy_decoder"), abi.ERROR_CODES)

    def test_strerror_is_the_error_table(self):
        # The texts come from tools/codegen/support/ckw_handle.h, the codes and abi.json's texts
        # from abi.ERRORS: one table.
        for e in self.lib.abi["errors"]:
            self.assertEqual(self.lib.call("strerror", e["code"]).decode(), f"ckw_toy_decoder: {e['text']}", e["name"])
        self.assertEqual(self.lib.call("strerror", 7), b"ckw_toy_decoder: unknown error code")

    def test_unknown_names_are_refused(self):
        with self.assertRaisesRegex(abi.AbiError, "ckw_toy_decoder_run: not in .*'s ABI"):
            self.lib.call("run")


class ToyAbiTest(ToyBase):
    def test_layout_mismatch_is_refused(self):
        h = ctypes.c_void_p()
        rc = self.call("create", self.weights.encode(), self.bad_manifest.encode(), ctypes.byref(h))
        self.assertEqual(rc, E_LAYOUT)
        self.assertIn(b"layout", self.call("strerror", rc))
        self.assertFalse(h.value)

    def test_other_weights_of_the_layout_run(self):
        """A fine-tune: other values in the same layout, with the manifest that records their
        hashes, is accepted and computes with its own weights; the toy's manifest refuses them."""
        with open(f"{HERE}/manifest.json") as f:
            manifest = json.load(f)
        tuned = bytearray(toy_weights(manifest))
        first = manifest["tensors"][0]
        values = np.frombuffer(tuned, np.float32, first["nbytes"] // 4, first["offset"]).copy()
        tuned[first["offset"] : first["offset"] + first["nbytes"]] = (values * 1.5).tobytes()
        self.assertEqual(self.create_with(bytes(tuned)), abi.E_WEIGHTS_CORRUPT)  # the toy's own manifest
        entries = [
            dict(
                t,
                sha256=hashlib.sha256(tuned[t["offset"] : t["offset"] + t["nbytes"]]).hexdigest(),
                xxh64=xxhash.xxh64_hexdigest(tuned[t["offset"] : t["offset"] + t["nbytes"]]),
            )
            for t in manifest["tensors"]
        ]
        tuned_manifest = dict(manifest, tensors=entries, manifest_sha256=tensors_digest(entries))
        self.assertEqual(tuned_manifest["layout_sha256"], manifest["layout_sha256"])
        self.assertEqual(self.create_with(bytes(tuned), tuned_manifest), OK)
        memory = np.random.default_rng(3).standard_normal((5, 8)).astype(np.float32)
        tokens = np.array([1, 2, 3], np.int32)
        V = self.call("dim", b"n_vocab")
        logits = {}
        for name, weights, m in (("toy", toy_weights(manifest), manifest), ("tuned", bytes(tuned), tuned_manifest)):
            h = self.handle_for(weights, m)
            out = np.zeros((3, V), np.float32)
            self.assertEqual(self.call("set_memory", h, memory), OK)
            self.assertEqual(self.call("prefill", h, tokens, 3, out), OK)
            logits[name] = out
        self.assertFalse(np.array_equal(logits["toy"], logits["tuned"]), "the tuned weights were not used")

    def test_committed_manifest_hashes_the_toy_weights(self):
        with open(f"{HERE}/manifest.json") as f:
            manifest = json.load(f)
        self.assertEqual(manifest, toy_manifest_hashes(manifest))

    def write_variant(self, weights: bytes, manifest: dict | None) -> str:
        """`weights` and `manifest` (None: the toy's) in a folder of their own; the weights' path."""
        folder = tempfile.mkdtemp(dir=self.tmp)
        with open(os.path.join(folder, "manifest.json"), "w") as f:
            if manifest is None:
                f.write(open(f"{HERE}/manifest.json").read())
            else:
                json.dump(manifest, f, indent=2, sort_keys=True)
        path = os.path.join(folder, "weights.bin")
        with open(path, "wb") as f:
            f.write(weights)
        return path

    def create_with(self, weights: bytes, manifest: dict | None = None) -> int:
        """create()'s status for `weights` beside `manifest` (a handle, if any, is freed)."""
        h = ctypes.c_void_p()
        rc = self.call("create", self.write_variant(weights, manifest).encode(), None, ctypes.byref(h))
        self.assertEqual(bool(h.value), rc == OK)
        self.call("free", h)
        return rc

    def handle_for(self, weights: bytes, manifest: dict):
        h = ctypes.c_void_p()
        self.assertEqual(self.call("create", self.write_variant(weights, manifest).encode(), None, ctypes.byref(h)), OK)
        self.addCleanup(self.call, "free", h)
        return h

    def test_weights_are_checked_at_create(self):
        with open(self.weights, "rb") as f:
            good = f.read()
        self.assertEqual(self.create_with(good), OK)
        with open(f"{HERE}/manifest.json") as f:
            manifest = json.load(f)
        for t in (manifest["tensors"][0], manifest["tensors"][-1]):  # first and last byte of tensors
            for at in (t["offset"], t["offset"] + t["nbytes"] - 1):
                flipped = bytearray(good)
                flipped[at] ^= 0x10
                self.assertEqual(self.create_with(bytes(flipped)), abi.E_WEIGHTS_CORRUPT, (t["name"], at))
        self.assertEqual(self.create_with(good[:-4]), abi.E_WEIGHTS_SIZE)  # truncated
        self.assertEqual(self.create_with(good + b"\0" * 64), abi.E_WEIGHTS_SIZE)  # another, larger file
        self.assertIn(b"xxh64", self.call("strerror", abi.E_WEIGHTS_CORRUPT))

    def test_cross_cache_lifecycle(self):
        h = self.handle()
        V = self.call("dim", b"n_vocab")
        logits = np.zeros((6, V), np.float32)
        memory = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32)
        tokens = np.array([1, 2, 3], np.int32)
        self.assertEqual(self.call("prefill", h, tokens, 3, logits), E_MISSING)
        self.assertEqual(self.call("decode", h, 4, logits), E_CROSS)
        self.assertEqual(self.call("set_memory", h, memory), OK)
        self.assertEqual(self.call("decode", h, 4, logits), E_CROSS)  # fact 4: no stale read
        self.assertEqual(self.call("prefill", h, tokens, 3, logits), OK)
        self.assertEqual(self.call("cross_kv_projections", h), 1)
        for t in (4, 5, 6):
            self.assertEqual(self.call("decode", h, t, logits), OK)
        self.assertEqual(self.call("cross_kv_projections", h), 1)  # decode reuses the cache
        self.assertEqual(self.call("position", h), 6)
        self.assertEqual(self.call("decode", h, 7, logits), E_FULL)
        self.call("reset", h)
        self.assertEqual(self.call("prefill", h, tokens, 3, logits), OK)
        self.assertEqual(self.call("cross_kv_projections", h), 1)  # same memory: still valid
        self.assertEqual(self.call("set_memory", h, memory * 2), OK)
        self.assertEqual(self.call("decode", h, 4, logits), E_CROSS)
        self.assertEqual(self.call("prefill", h, tokens, 3, logits), OK)
        self.assertEqual(self.call("cross_kv_projections", h), 2)

    def test_incremental_decode_equals_full_prefill(self):
        V = self.call("dim", b"n_vocab")
        memory = np.random.default_rng(2).standard_normal((5, 8)).astype(np.float32)
        seq = np.array([3, 1, 4, 1, 5], np.int32)
        full = np.zeros((5, V), np.float32)
        a = self.handle()
        self.call("set_memory", a, memory)
        self.assertEqual(self.call("prefill", a, seq, 5, full), OK)
        b = self.handle()  # a second handle in the same process: no shared state
        self.call("set_memory", b, memory)
        step = np.zeros((2, V), np.float32)
        self.assertEqual(self.call("prefill", b, seq[:2], 2, step), OK)
        np.testing.assert_allclose(step, full[:2], rtol=1e-5, atol=1e-5)
        for i in range(2, 5):
            one = np.zeros((1, V), np.float32)
            self.assertEqual(self.call("decode", b, int(seq[i]), one), OK)
            np.testing.assert_allclose(one[0], full[i], rtol=1e-5, atol=1e-5)
        self.assertTrue(np.abs(full).max() > 0)


class Recorder:
    """A tap that copies every reported edge: [(edge, array)] in call order."""

    def __init__(self):
        self.edges = []
        self.fn = TAP_FN(self._tap)  # keep a reference: C holds only the pointer

    def _tap(self, user, edge, data, rank, shape):
        dims = tuple(shape[i] for i in range(rank))
        self.edges.append((edge.decode(), np.ctypeslib.as_array(data, shape=dims).copy()))

    def names(self):
        return [e for e, _ in self.edges]

    def get(self, name):
        found = [a for e, a in self.edges if e == name]
        assert len(found) == 1, f"{name}: reported {len(found)} times"
        return found[0]


def expected_edges(phase):
    """`<node>.<port>` for every f32 output of every call the plan lists, in call order; ports
    from the kernel maps (independent of the tap code the compiler emits)."""
    maps = {}
    for name in sorted(os.listdir(f"{HERE}/kernels")):
        m = json.load(open(f"{HERE}/kernels/{name}"))
        maps[m["kernel"]] = sorted(p for p, s in m["ports"].items() if s["role"] == "output" and s["dtype"] == "f32")
    plan = json.load(open(f"{GENERATED}/plan_{phase}.json"))
    return [f"{c['node']}.{p}" for c in plan["calls"] for p in maps[c["kernel"]]]


def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b


def gelu(x):
    from math import erf

    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def attention(q, k, v, H, causal, q0):
    """q [T, H*Dh]; k, v [S, H*Dh] (token rows); float64."""
    T, Dh = q.shape[0], q.shape[1] // H
    out = np.zeros_like(q)
    for h in range(H):
        sl = slice(h * Dh, (h + 1) * Dh)
        s = q[:, sl] @ k[:, sl].T / np.sqrt(Dh)
        if causal:
            s = np.where(np.arange(k.shape[0])[None, :] <= q0 + np.arange(T)[:, None], s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        out[:, sl] = (p / p.sum(-1, keepdims=True)) @ v[:, sl]
    return out


def toy_reference(weights, manifest, config, tokens, memory):
    """The toy circuit in numpy (float64): every op output by its edge name, all rows 0..T-1."""
    W = {
        t["name"]: np.frombuffer(weights, np.float32, int(np.prod(t["shape"])), t["offset"])
        .reshape(t["shape"])
        .astype(np.float64)
        for t in manifest["tensors"]
    }

    def lin(x, p):
        return x @ W[p + ".w"].T + W[p + ".b"]

    H = config["n_head"]
    edges = {"embed.y": W["embed.tokens"][tokens] + W["embed.positions"][: len(tokens)]}
    x = edges["embed.y"]
    mem = memory.astype(np.float64)
    for i in range(config["n_layer"]):
        b = f"blocks.{i}"
        n = edges[f"{b}.norm.y"] = layer_norm(x, W[f"{b}.norm.g"], W[f"{b}.norm.b"])
        k = edges[f"{b}.k_proj.y"] = lin(n, f"{b}.k")
        v = edges[f"{b}.v_proj.y"] = lin(n, f"{b}.v")
        q = edges[f"{b}.q_proj.y"] = lin(n, f"{b}.q")
        ck = edges[f"{b}.cross_k_proj.y"] = lin(mem, f"{b}.xk")
        cv = edges[f"{b}.cross_v_proj.y"] = lin(mem, f"{b}.xv")
        a = edges[f"{b}.self_attn.y"] = attention(q, k, v, H, True, 0)
        c = edges[f"{b}.cross_attn.y"] = attention(a, ck, cv, H, False, 0)
        x = edges[f"{b}.mlp.y"] = gelu(lin(c, f"{b}.mlp"))
    edges["logits.y"] = x @ W["embed.tokens"].T
    return edges


def head_major(rows, H, capacity, first_row=0):
    """Token rows [T, H*Dh] placed at rows first_row.. of a zeroed [H, capacity, Dh] cache."""
    T, Dh = rows.shape[0], rows.shape[1] // H
    cache = np.zeros((H, capacity, Dh))
    cache[:, first_row : first_row + T] = rows.reshape(T, H, Dh).transpose(1, 0, 2)
    return cache


class ToyTapTest(ToyBase):
    """set_tap: every call's f32 outputs, named `<node>.<port>`, with the right shapes and values."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.manifest = json.load(open(f"{HERE}/manifest.json"))
        cls.config = {k: cls.call_static("dim", k.encode()) for k in ("n_head", "n_layer", "ctx", "n_vocab", "mem_len")}
        cls.memory = np.random.default_rng(3).standard_normal((cls.config["mem_len"], 8)).astype(np.float32)
        cls.tokens = np.array([3, 1, 4, 1, 5], np.int32)
        cls.ref = toy_reference(open(cls.weights, "rb").read(), cls.manifest, cls.config, cls.tokens, cls.memory)

    @classmethod
    def call_static(cls, name, *args):
        return cls.lib.call(name, *args)

    def assert_edge(self, rec, name, want):
        got = rec.get(name)
        self.assertEqual(got.shape, want.shape, name)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)

    def test_prefill_reports_every_output_with_shape_and_value(self):
        h = self.handle()
        rec = Recorder()
        self.assertEqual(self.call("set_tap", h, rec.fn, None), OK)
        self.call("set_memory", h, self.memory)
        T, H, C = 3, self.config["n_head"], self.config["ctx"]
        logits = np.zeros((T, self.config["n_vocab"]), np.float32)
        self.assertEqual(self.call("prefill", h, self.tokens[:T], T, logits), OK)
        self.assertEqual(rec.names(), expected_edges("prefill"))
        ref = self.ref
        for name, want in ref.items():
            mem_rows = ".cross_" in name and "_proj." in name
            self.assert_edge(rec, name, want if mem_rows else want[:T])
        for i in range(self.config["n_layer"]):
            # Cache writes: the whole (zero-initialised) cache instance, this call's rows in place.
            self.assert_edge(
                rec, f"state:self_k[{i},0]<-head_major.y", head_major(ref[f"blocks.{i}.k_proj.y"][:T], H, C)
            )
            self.assert_edge(
                rec, f"state:self_v[{i},0]<-head_major.y", head_major(ref[f"blocks.{i}.v_proj.y"][:T], H, C)
            )
            mem = self.config["mem_len"]
            self.assert_edge(
                rec, f"state:cross_k[{i},0]<-head_major.y", head_major(ref[f"blocks.{i}.cross_k_proj.y"], H, mem)
            )
            self.assert_edge(
                rec, f"state:cross_v[{i},0]<-head_major.y", head_major(ref[f"blocks.{i}.cross_v_proj.y"], H, mem)
            )
        np.testing.assert_array_equal(rec.get("logits.y"), logits)  # the caller's buffer itself

    def test_decode_reports_rows_of_the_step_and_the_cache_view(self):
        h = self.handle()
        self.call("set_memory", h, self.memory)
        V, H, C = self.config["n_vocab"], self.config["n_head"], self.config["ctx"]
        self.assertEqual(self.call("prefill", h, self.tokens[:3], 3, np.zeros((3, V), np.float32)), OK)
        rec = Recorder()
        self.call("set_tap", h, rec.fn, None)
        self.assertEqual(self.call("decode", h, int(self.tokens[3]), np.zeros((1, V), np.float32)), OK)
        self.assertEqual(rec.names(), expected_edges("decode"))  # no cross projections: cached
        for name, want in self.ref.items():
            if ".cross_" in name and "_proj." in name:
                continue
            self.assert_edge(rec, name, want[3:4])
        for i in range(self.config["n_layer"]):
            k = rec.get(f"state:self_k[{i},0]<-head_major.y")
            self.assertEqual(k.shape, (H, C, 8 // H))
            np.testing.assert_allclose(k, head_major(self.ref[f"blocks.{i}.k_proj.y"][:4], H, C), rtol=1e-4, atol=1e-4)

    def test_null_disables_and_handle_is_required(self):
        h = self.handle()
        rec = Recorder()
        self.assertEqual(self.call("set_tap", h, rec.fn, None), OK)
        self.assertEqual(self.call("set_tap", h, TAP_FN(), None), OK)  # TAP_FN(): a NULL function pointer
        self.call("set_memory", h, self.memory)
        V = self.config["n_vocab"]
        self.assertEqual(self.call("prefill", h, self.tokens[:2], 2, np.zeros((2, V), np.float32)), OK)
        self.assertEqual(rec.edges, [])
        self.assertEqual(self.call("set_tap", None, rec.fn, None), E_ARGUMENT)


class ToyCallStateTest(ToyBase):
    """One call at a time per handle: a call during another (a tap re-entering, another thread)
    gets E_BUSY and changes nothing; free() during a call takes effect when the call returns."""

    def prefill_with_tap(self, h, during, handle_survives=True):
        """Runs prefill on h with a tap that calls during(h) at the first edge; returns the
        prefill's status and what during returned. The tap is removed after (C keeps only a
        pointer to it), unless the handle is gone."""
        seen = []

        def tap(user, edge, data, rank, shape):
            if not seen:
                seen.append(during(h))

        fn = TAP_FN(tap)
        self.assertEqual(self.call("set_tap", h, fn, None), OK)
        self.assertEqual(self.call("set_memory", h, self.memory), OK)
        V = self.call("dim", b"n_vocab")
        rc = self.call("prefill", h, np.array([1, 2], np.int32), 2, np.zeros((2, V), np.float32))
        if handle_survives:
            self.assertEqual(self.call("set_tap", h, TAP_FN(), None), OK)
        return rc, seen[0]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        lib = cls.lib
        cls.memory = (
            np.random.default_rng(3)
            .standard_normal((lib.call("dim", b"mem_len"), lib.call("dim", b"d_model")))
            .astype(np.float32)
        )

    def test_reentrant_calls_are_refused(self):
        h = self.handle()
        V = self.call("dim", b"n_vocab")
        for name, args in (
            ("decode", (4, np.zeros((1, V), np.float32))),
            ("reset", ()),
            ("set_memory", (self.memory,)),
            ("set_tap", (TAP_FN(), None)),
            ("prefill", (np.array([1], np.int32), 1, np.zeros((1, V), np.float32))),
        ):
            rc, inner = self.prefill_with_tap(h, lambda h, name=name, args=args: self.call(name, h, *args))
            self.assertEqual((rc, inner), (OK, abi.E_BUSY), name)
        self.assertEqual(self.call("position", h), 2)  # the refused reset changed nothing

    def test_a_second_thread_is_refused_while_a_call_runs(self):
        import threading

        h = self.handle()
        V = self.call("dim", b"n_vocab")

        def from_another_thread(h):
            got = []
            t = threading.Thread(target=lambda: got.append(self.call("decode", h, 4, np.zeros((1, V), np.float32))))
            t.start()
            t.join()
            return got[0]

        self.assertEqual(self.prefill_with_tap(h, from_another_thread), (OK, abi.E_BUSY))
        self.assertEqual(self.call("decode", h, 4, np.zeros((1, V), np.float32)), OK)  # idle again

    def test_free_during_a_call_frees_when_it_returns(self):
        h = ctypes.c_void_p()
        self.assertEqual(self.call("create", self.weights.encode(), None, ctypes.byref(h)), OK)
        # The call completes on valid memory (ASan/valgrind would report otherwise) and frees h.
        self.assertEqual(self.prefill_with_tap(h, lambda h: self.call("free", h), handle_survives=False), (OK, None))


class ToyThreadsTest(ToyBase):
    def handle_with(self, threads):
        h = ctypes.c_void_p()
        self.assertEqual(self.call("create_with_threads", self.weights.encode(), None, threads, ctypes.byref(h)), OK)
        self.addCleanup(self.call, "free", h)
        return h

    def test_thread_count_from_argument_environment_or_cpus(self):
        self.assertEqual([self.call("num_threads", self.handle_with(n)) for n in (1, 2, 3, 100)], [1, 2, 3, 8])
        h = ctypes.c_void_p()
        self.assertEqual(self.call("create_with_threads", self.weights.encode(), None, -1, ctypes.byref(h)), E_ARGUMENT)
        old = os.environ.get("CKW_NUM_THREADS")
        try:
            os.environ["CKW_NUM_THREADS"] = "3"
            self.assertEqual(self.call("num_threads", self.handle()), 3)
            self.assertEqual(self.call("num_threads", self.handle_with(0)), 3)
            self.assertEqual(self.call("num_threads", self.handle_with(2)), 2)  # the argument wins
            os.environ["CKW_NUM_THREADS"] = "many"  # not a positive integer: the CPU count
            self.assertEqual(self.call("num_threads", self.handle()), min(len(os.sched_getaffinity(0)), 8))
        finally:
            os.environ.pop("CKW_NUM_THREADS", None) if old is None else os.environ.__setitem__("CKW_NUM_THREADS", old)
        self.assertEqual(self.call("num_threads", None), E_ARGUMENT)

    def run_sequence(self, threads):
        h = self.handle_with(threads)
        rng = np.random.default_rng(1)
        V, M, D = self.call("dim", b"n_vocab"), self.call("dim", b"mem_len"), self.call("dim", b"d_model")
        self.assertEqual(self.call("set_memory", h, rng.standard_normal((M, D)).astype(np.float32)), OK)
        tokens = np.array([1, 2, 3, 4], np.int32)
        prefill = np.zeros((4, V), np.float32)
        self.assertEqual(self.call("prefill", h, tokens, 4, prefill), OK)
        steps = [np.zeros((1, V), np.float32) for _ in range(2)]
        for t, out in zip((5, 6), steps):
            self.assertEqual(self.call("decode", h, t, out), OK)
        return [prefill] + steps

    def test_same_bits_for_any_thread_count(self):
        one = self.run_sequence(1)
        for threads in (2, 3, 8):
            for a, b in zip(one, self.run_sequence(threads)):
                self.assertEqual(a.tobytes(), b.tobytes(), f"{threads} threads")


if __name__ == "__main__":
    sys.exit(unittest.main())
