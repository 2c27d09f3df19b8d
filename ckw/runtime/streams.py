"""Many transcriptions at once in one engine (issue 25, docs/multi-stream.md).

    streams = Streams(engine)                              # or Streams.from_runfiles("tiny")
    a = streams.submit("meeting.m4a", language=None)      # any thread; returns at once
    b = streams.submit("call.wav", beam_size=5, word_timestamps=True)
    for s in a.segments():                                 # as they are decoded
        print(s.start, s.text)
    result = b.result()                                    # openai-whisper's dictionary
    streams.close()

Each request runs Engine.transcribe's code (ckw/runtime/engine.py `transcription`: openai-whisper's
transcribe() loop, windows, temperature fallback, beams, best_of, conditioning, word timestamps,
language detection) in its own thread, with its own frontend handle, the engine's encoder (one
window at a time, shared) and a SequenceGroup of the shared multi-sequence decoder, where the
decode steps of every request in flight run as one call (ckw/runtime/paged_decoder.py). Every
request's segments, tokens and words equal a solo Engine.transcribe with the same options.

Admission: at most `max_streams` requests run at once (and no more than the decoder holds:
max_seqs // max_beams); later ones wait for a slot in submission order. Scheduling: between a
request's decode steps the others run theirs in the same call; encoder windows and prefills of
newcomers take the decoder between two steps, so a new request starts after at most one step and
the encoder window ahead of it.
"""

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator

import numpy as np

from ckw.runtime import abi, recording
from ckw.runtime.engine import Engine, EngineError
from ckw.runtime.errors import OptionError
from ckw.runtime.paged_decoder import Cancelled
from ckw.runtime.transcription import Segment, TranscriptionInfo, collect

DEFAULT_STREAMS = 8
log = logging.getLogger("ckw.streams")
_END = object()


class Streams:
    """Many requests on `engine`'s multi-sequence decoder (the engine is then theirs: close()
    closes it, and it transcribes nothing else meanwhile)."""

    def __init__(self, engine: Engine, max_streams: int = DEFAULT_STREAMS):
        if max_streams < 1:
            engine.close()
            raise EngineError(f"max_streams={max_streams}: give at least 1")
        self.engine = engine
        self.paged = engine.paged
        self.max_streams = min(max_streams, self.paged.max_groups)
        if max_streams > self.max_streams:
            log.warning(
                "ckw: max_streams=%d: this decoder holds %d requests at once (%d sequences, up to %d beams "
                "each); %d decode at once, the others wait",
                max_streams,
                self.max_streams,
                self.paged.max_seqs,
                self.paged.max_beams,
                self.max_streams,
            )
        self._slots = threading.Semaphore(self.max_streams)
        self._turn = threading.Lock()  # admission in submission order
        self._requests = set()
        self._lock = threading.Lock()
        self.closed = False

    @classmethod
    def from_runfiles(
        cls, variant: str, max_streams: int = DEFAULT_STREAMS, threads: int | None = None, precision: str = "fp32"
    ) -> "Streams":
        """tiny or base from the runfiles (//ckw/runtime:engine_data_<variant>[_<precision>] in the
        target's data)."""
        return cls(Engine.from_runfiles(variant, precision=precision, threads=threads), max_streams)

    def submit(self, audio, *, on_progress: Callable[[float], None] | None = None, **options) -> "Request":
        """Starts transcribing `audio` (as Engine.transcribe: a path, bytes or 16 kHz samples)
        with openai-whisper's transcribe() options; checked here (ValueError at once)."""
        if self.closed:
            raise EngineError("Streams.submit: closed; create a new one")
        opts = self.engine.check_options(**options)
        if opts.batch_size is not None:
            raise OptionError(
                "batch_size",
                f"={opts.batch_size}: a Streams request is one sequential transcription; "
                "call Engine.transcribe(batch_size=...) for batched chunks",
            )
        request = Request(self, audio, opts, on_progress)
        with self._lock:
            self._requests.add(request)
        request._thread.start()
        return request

    def _encode(self, group) -> Callable[[np.ndarray], np.ndarray]:
        def encode(window: np.ndarray) -> np.ndarray:
            self.paged._leave_loop(group)  # the other requests' steps do not wait for this window
            # Between two steps, not beside one: both run on every core, and two at once thrash.
            return self.paged._call(lambda: self.engine.encoder.run(window), group)

        return encode

    def load(self) -> dict:
        """Requests submitted and not finished (`pending`), those of them decoding (`running`; the
        others wait for a slot) and their sequences in the decoder: for admission and metrics."""
        with self._lock:
            pending = len(self._requests)
        running, sequences = self.paged.load()
        return {"pending": pending, "running": running, "sequences": sequences}

    def close(self) -> None:
        """Cancels what is still running, waits for it, frees the decoder and the engine."""
        self.closed = True
        with self._lock:
            running = list(self._requests)
        for r in running:
            r.cancel()
        for r in running:
            r._thread.join()
        self.engine.close()

    def __enter__(self) -> "Streams":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Request:
    """One submitted transcription: its segments as they are decoded, its result, cancel()."""

    def __init__(self, streams: Streams, audio, opts, on_progress):
        self._streams = streams
        self._audio, self._opts, self._on_progress = audio, opts, on_progress
        self._segments: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        self._group = None
        self._cancelled = False
        self.info: TranscriptionInfo | None = None
        self.started = threading.Event()  # set once `info` is known (duration, language), or the request ended
        self._thread = threading.Thread(target=self._run, name="ckw-stream", daemon=True)

    def _run(self) -> None:
        s = self._streams
        try:
            with s._turn:
                s._slots.acquire()
            try:
                self._transcribe()
            finally:
                s._slots.release()
        except BaseException as e:  # handed to the consumer
            self._error = e
        finally:
            self.started.set()
            self._segments.put(_END)
            with s._lock:
                s._requests.discard(self)

    def _transcribe(self) -> None:
        s = self._streams
        if self._cancelled:
            raise Cancelled("the request was cancelled")
        group = self._group = s.paged.open_group()
        frontend = abi.Handle(s.engine.frontend.handle.lib)  # its own: audio is read block by block
        try:
            if self._cancelled:
                group.cancel()
            segments, self.info = recording.transcription(
                self._audio,
                self._opts,
                frontend,
                s._encode(group),
                group,
                s.engine.tokenizer,
                s.engine.config,
                s.engine.model_info(),
                self._on_progress,
                hold=contextlib.nullcontext,
                speech_probabilities=s.engine.speech_probabilities,
            )
            self.started.set()
            for segment in segments:
                self._segments.put(segment)
        finally:
            group.close()
            frontend.close()

    def cancel(self) -> None:
        """Stops the request at its next decoder call and frees its blocks and entry; segments()
        then raises Cancelled after what was decoded."""
        self._cancelled = True
        if self._group is not None:
            self._group.cancel()

    def segments(self) -> Iterator[Segment]:
        """The segments as they are decoded; raises the request's error (EngineError,
        AudioInputError, Cancelled) after the last one."""
        while True:
            item = self._segments.get()
            if item is _END:
                self._segments.put(_END)  # a second iteration ends too
                break
            yield item
        if self._error is not None:
            raise self._error

    def result(self) -> dict:
        """All segments, then openai-whisper's result dictionary (as Engine.transcribe_long)."""
        done = list(self.segments())
        return collect(iter(done), self.info, self._streams.engine.tokenizer.eot)
