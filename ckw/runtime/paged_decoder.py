"""Many requests on one multi-sequence decoder (decoder_paged, docs/multi-stream.md).

`PagedDecoder` owns one decoder_paged handle, its block pool and cross-K/V entries. Each request
gets a `SequenceGroup`, the decoding.TextDecoder (and word_timing.AligningDecoder) its
openai-whisper loop already drives, so decoding.py, longform.py and word_timing.py run unchanged
per request. A group's `decode_batch` does not call C itself: it joins the next step, and one
call runs the pending rows of every request (the weights read once per step for all of them).

Step policy: a step runs as soon as every group in a decode loop has its rows pending, or when
the oldest pending rows have waited STEP_WAIT_S (a group busy elsewhere, in its encoder or its
Python policy work, delays the others by at most that). Other calls on the handle (encoder
windows, prefills, reorders, frees) go first: no step starts while one waits, so a newcomer's
encoder window waits for at most the step in flight and the calls queued before it (one per
request at most). Which rows share a step never changes a row's logits (each row is computed as
if alone), so the policy affects speed only. `events` records the order (bounded), for tests and
metrics: ("wait", call id, group), ("run", call id, group), ("step", groups).

Capacity: a group holds at most max_beams sequences and a PagedDecoder at most max_seqs //
max_beams groups, so the pool (n_blocks >= max_seqs * seq_blocks) never runs out of blocks and no
request is ever preempted; `open_group` beyond that, or beyond the cross-K/V entries, raises
PoolFull (the caller queues the request).
"""

import collections
import itertools
import threading
import time
from collections.abc import Sequence

import numpy as np

from ckw.runtime import abi
from ckw.runtime.decoding import prompt_rows
from ckw.runtime.kv_pool import BlockPool, EntryPool

STEP_WAIT_S = 0.003
HISTORY = 65536  # steps and events kept (a server runs for days)


class PoolFull(RuntimeError):
    """No room for another request's sequences or cross-K/V entry right now."""


class Cancelled(RuntimeError):
    """The request was cancelled: its next decoder call raises this."""


class PagedDecoder:
    def __init__(self, path: str, variant: str, weights: str, threads: int | None = None, max_beams: int = 8):
        self.lib = abi.Library.for_model(path, variant, "decoder_paged")
        self.handle = abi.Handle(self.lib, weights, threads=threads)
        d = self.lib.dim
        self.n_vocab, self.n_text_ctx, self.max_seqs = d("n_vocab"), d("n_ctx"), d("max_seqs")
        self.max_beams = min(max_beams, self.max_seqs)
        self.qk_shape = (d("n_layers"), d("n_heads"), d("n_audio"))
        if d("n_blocks") < self.max_seqs * d("seq_blocks"):
            raise abi.AbiError(f"{path}: {d('n_blocks')} blocks cannot hold {self.max_seqs} full sequences")
        self.pool = BlockPool(d("n_blocks"), d("block_rows"), d("seq_blocks"))
        self.entries = EntryPool(d("max_entries"))
        self.max_groups = min(self.max_seqs // self.max_beams, d("max_entries"))
        self._groups = set()
        self._cv = threading.Condition()
        self._pending = []  # [group, tokens, logits or None, error or None, time submitted]
        self._decoding = set()  # groups inside a decode loop (their next call is a step)
        self._running = False
        self._calls_waiting = 0
        self._call_ids = itertools.count()
        self.steps = collections.deque(maxlen=HISTORY)  # per step: (rows, requests, seconds of its C calls)
        self.events = collections.deque(maxlen=HISTORY)

    def close(self) -> None:
        self.handle.close()

    def load(self) -> tuple[int, int]:
        """(requests holding a group, their sequences)."""
        with self._cv:
            return len(self._groups), sum(len(g.seqs) for g in self._groups)

    def open_group(self) -> "SequenceGroup":
        with self._cv:
            if len(self._groups) >= self.max_groups:
                raise PoolFull(f"{len(self._groups)} requests in flight: this decoder holds {self.max_groups}")
            group = SequenceGroup(self, self.entries.acquire())
            self._groups.add(group)
            return group

    def top_log_probs(self, scores: np.ndarray, k: int, group: "SequenceGroup | None" = None):
        """The rank phase: each row's k best tokens of filtered logits `scores` [n, n_vocab] and
        their float32 log-probabilities, best first ([n, k] int32 and float32; ties in token
        order): token_choice.top_log_probs's ranking, in C between steps."""
        scores = np.ascontiguousarray(scores, dtype=np.float32)
        n = scores.shape[0]
        tokens, logprobs = np.empty((n, k), np.int32), np.empty((n, k), np.float32)
        self._call(
            lambda: self.handle.call_named(
                "rank", scores=scores, n_seqs=n, n_top=k, top_tokens=tokens, top_logprobs=logprobs
            ),
            group,
        )
        return tokens, logprobs

    # -- calls on the handle: one at a time, steps between them --------------------------------

    def _call(self, fn, group: "SequenceGroup | None" = None):
        """Runs fn() on the handle between steps (prefills, memory, copies)."""
        if group is not None and group.cancelled:
            raise Cancelled("the request was cancelled")
        with self._cv:
            call = next(self._call_ids)
            self.events.append(("wait", call, id(group)))
            self._calls_waiting += 1
            try:
                while self._running:
                    self._cv.wait()
            finally:
                self._calls_waiting -= 1
            self._running = True
            self.events.append(("run", call, id(group)))
        try:
            return fn()
        finally:
            with self._cv:
                self._running = False
                self._cv.notify_all()

    def _leave_loop(self, group: "SequenceGroup") -> None:
        with self._cv:
            self._decoding.discard(group)
            self._cv.notify_all()

    def _step(self, group: "SequenceGroup", tokens: np.ndarray) -> np.ndarray:
        """Joins the next step with one token per sequence of `group`; returns their logits."""
        item = [group, tokens, None, None, time.monotonic()]
        with self._cv:
            self._decoding.add(group)
            self._pending.append(item)
            self._cv.notify_all()
            while item[2] is None and item[3] is None:
                if group.cancelled and item in self._pending:
                    self._pending.remove(item)
                    self._decoding.discard(group)
                    raise Cancelled("the request was cancelled")
                if not self._running and not self._calls_waiting and self._pending and self._ready():
                    batch, self._pending = self._pending, []
                    self._running = True
                    self.events.append(("step", tuple(id(it[0]) for it in batch)))
                    self._cv.release()
                    try:
                        self._run(batch)
                    finally:
                        self._cv.acquire()
                        self._running = False
                        self._cv.notify_all()
                    continue
                self._cv.wait(STEP_WAIT_S)
        if item[3] is not None:
            raise item[3]
        return item[2]

    def _ready(self) -> bool:
        waiting = {id(it[0]) for it in self._pending}
        if all(id(g) in waiting for g in self._decoding):
            return True
        return time.monotonic() - self._pending[0][4] >= STEP_WAIT_S

    def _run(self, batch: list) -> None:
        """One C decode over every row in `batch` (copy-on-write first); results into the items."""
        seqs = [s for it in batch for s in it[0].seqs]
        try:
            src, dst = self.pool.prepare_append(seqs, 1)
        except BaseException as e:  # capacity is admission-controlled; this is a bug if it happens
            for it in batch:
                it[3] = e
            return
        t0 = time.perf_counter()
        try:
            if src.size:
                self.handle.call_named("copy_blocks", copy_src=src, copy_dst=dst, n_copies=src.size)
            pos, table = self.pool.tables(seqs)
            entries = np.array([[it[0].entry] for it in batch for _ in it[0].seqs], np.int32)
            tokens = np.concatenate([it[1] for it in batch]).astype(np.int32)
            logits = np.empty((len(seqs), self.n_vocab), np.float32)
            self.handle.call_named(
                "decode",
                seq_pos=pos,
                tokens=tokens,
                block_table=table,
                seq_entry=entries,
                n_seqs=len(seqs),
                logits=logits,
            )
        except BaseException as e:
            self.pool.abort_append()
            for it in batch:
                it[3] = e
            return
        self.pool.commit_append(seqs, 1)
        self.steps.append((len(seqs), len(batch), time.perf_counter() - t0))
        row = 0
        for it in batch:
            n = len(it[0].seqs)
            it[2] = logits[row : row + n]
            row += n


class SequenceGroup:
    """One request's sequences on a PagedDecoder: decoding.TextDecoder and word_timing's
    AligningDecoder. A prefill starts a fresh sequence, reorder forks (no row copies), and the
    encoder memory is projected into the request's own cross-K/V entry once per memory."""

    def __init__(self, paged: PagedDecoder, entry: int):
        self.paged = paged
        self.entry = entry
        self.n_text_ctx = paged.n_text_ctx
        self.max_beams = paged.max_beams
        self.seqs = []
        self.cancelled = False  # set from any thread (cancel): the group's next decoder call raises
        self._memory = None  # the memory set and not yet projected into the entry
        self._projected = None
        self.calls = {"prefill": 0.0, "decode": 0.0}

    def cancel(self) -> None:
        """From any thread: the request's next decoder call raises Cancelled (a step it waits for
        runs without it); its owner then closes the group."""
        self.cancelled = True
        with self.paged._cv:
            self.paged._cv.notify_all()

    def close(self) -> None:
        """Frees the request's blocks and drops its entry (a later request reusing the index can
        never read these K/V)."""
        paged = self.paged
        paged._leave_loop(self)
        self._free()
        with paged._cv:
            if self not in paged._groups:
                return
            paged._groups.discard(self)
        try:
            paged._call(lambda: paged.handle("cross_kv_invalidate", self.entry))
        finally:
            paged.entries.release(self.entry)

    def _free(self) -> None:
        def free():
            for s in self.seqs:
                s.free()
            self.seqs = []

        self.paged._call(free)  # between steps: the pool is the steps' too

    def set_encoder_memory(self, memory: np.ndarray) -> None:
        # The memory the entry holds, set again (a temperature fallback, a window after language
        # detection), is not projected again; any other is, at the next prefill.
        self._memory = None if memory is self._projected else np.ascontiguousarray(memory, dtype=np.float32)

    def prefill(self, tokens: Sequence[int], rows: Sequence[int] = (-1,)) -> np.ndarray:
        ids = np.asarray(tokens, dtype=np.int32)
        picked = prompt_rows(rows, ids.size)
        logits = np.empty((picked.size, self.paged.n_vocab), np.float32)
        self._prefill(ids, picked, None, logits)
        return logits

    def align(self, tokens: Sequence[int]):
        ids = np.asarray(tokens, dtype=np.int32)
        n_layers, n_heads, n_audio = self.paged.qk_shape
        logits = np.empty((ids.size, self.paged.n_vocab), np.float32)
        qk = np.empty((n_layers, 1, n_heads, ids.size, n_audio), np.float32)
        self._prefill(ids, np.arange(ids.size, dtype=np.int32), qk, logits)
        return logits, qk[:, 0]

    def _prefill(self, ids: np.ndarray, rows: np.ndarray, qk, logits: np.ndarray) -> None:
        t0 = time.perf_counter()
        paged = self.paged
        paged._leave_loop(self)

        def run():
            for s in self.seqs:
                s.free()
            self.seqs = [paged.pool.new_seq()]
            paged.pool.prepare_append(self.seqs, ids.size)
            try:
                if self._memory is not None:
                    paged.handle("set_encoder_memory", self.entry, self._memory)
                pos, table = paged.pool.tables(self.seqs)
                paged.handle.call_named(
                    "prefill",
                    seq_pos=int(pos[0]),
                    tokens=ids,
                    n_tokens=ids.size,
                    block_table=table,
                    seq_entry=self.entry,
                    logit_rows=rows,
                    n_logit_rows=rows.size,
                    cross_qk=qk,
                    prompt_logits=logits,
                )
            except BaseException:
                paged.pool.abort_append()
                raise
            paged.pool.commit_append(self.seqs, ids.size)
            if self._memory is not None:
                self._projected, self._memory = self._memory, None

        paged._call(run, self)
        self.calls["prefill"] += time.perf_counter() - t0

    def decode(self, token: int) -> np.ndarray:
        return self.decode_batch([token])[0]

    def decode_batch(self, tokens: Sequence[int]) -> np.ndarray:
        t0 = time.perf_counter()
        ids = np.asarray(tokens, dtype=np.int32)
        if ids.size != len(self.seqs):
            raise ValueError(f"decode_batch: {ids.size} tokens for {len(self.seqs)} sequences")
        out = self.paged._step(self, ids)
        self.calls["decode"] += time.perf_counter() - t0
        return out

    def top_log_probs(self, scores: np.ndarray, k: int):
        return self.paged.top_log_probs(scores, k, self)

    def reorder(self, source: Sequence[int]) -> None:
        if len(source) > self.max_beams:
            raise ValueError(f"reorder: {len(source)} sequences; a request runs at most {self.max_beams}")
        self.paged._call(lambda: setattr(self, "seqs", self.paged.pool.reorder(self.seqs, source)), self)

    @property
    def cross_kv_projections(self) -> int:
        return self.paged.handle.query("cross_kv_projections")
