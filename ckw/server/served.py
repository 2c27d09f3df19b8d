"""One served model: its engine's Streams (ckw/runtime/streams.py), the admission bound, and each
request as a Job whose segments reach the event loop as they are decoded.

Admission: a model holds at most `max_streams` requests decoding and `max_queue` waiting for a slot;
one more is refused at once (QueueFull), never queued without bound. A Job's segments come from a
thread that iterates the request (Request.segments blocks) and hands each to the loop; cancelling
a Job (its client went away) frees the request's sequences and cross-K/V entry at its next call.
"""

import asyncio
import threading

from ckw.runtime.audio_input import AudioInputError
from ckw.runtime.errors import AudioError, EngineError
from ckw.runtime.paged_decoder import Cancelled
from ckw.runtime.streams import Streams
from ckw.runtime.transcription import collect
from ckw.server.form import ApiError, Ask

RETRY_AFTER_S = 1  # what a refused client is told to wait; requests turn over in seconds


class ServedModel:
    def __init__(self, name: str, streams: Streams, max_queue: int, max_audio_s: float):
        self.name = name
        self.streams = streams
        self.max_queue = max_queue
        self.max_audio_s = max_audio_s
        self._admit = threading.Lock()

    def submit(self, audio: bytes, filename: str, ask: Ask, loop: asyncio.AbstractEventLoop) -> "Job":
        """Starts the transcription; ApiError 429 when the model's queue is full, 400 for options
        the checkpoint cannot honour (German on tiny.en, more beams than the decoder runs)."""
        with self._admit:  # the count and the submit together: no two requests take the last seat
            load = self.streams.load()
            if load["pending"] >= self.streams.max_streams + self.max_queue:
                raise ApiError(
                    429,
                    f"{self.name}: {load['pending']} requests in flight and queued, the most this "
                    f"server takes (--max_streams {self.streams.max_streams} + --max_queue "
                    f"{self.max_queue}); retry after {RETRY_AFTER_S} s",
                    None,
                    "rate_limit_exceeded",
                    kind="rate_limit_error",
                    headers={"Retry-After": str(RETRY_AFTER_S)},
                )
            try:
                request = self.streams.submit(audio, **ask.options)
            except ValueError as e:
                name = getattr(e, "name", None)
                raise ApiError(400, str(e), name, "invalid_value") from None
        return Job(self, request, filename, loop)

    def load(self) -> dict:
        """The scheduler's counts (ckw/runtime/streams.py Streams.load) for /metrics."""
        return self.streams.load()

    def close(self) -> None:
        self.streams.close()


class Job:
    """One request's progress as events on the loop: ("started", seconds of audio) once it decodes,
    ("segment", Segment) as each is decoded, then ("done", result); or ("error", ApiError) at any
    point. `duration` is set before "started" is put."""

    replica = None  # which engine answers: only a Ray Serve replica's job names one (ckw/server/replicas.py)

    def __init__(self, model: ServedModel, request, filename: str, loop: asyncio.AbstractEventLoop):
        self.model = model
        self.request = request
        self.filename = filename
        self.duration: float | None = None
        self.events: asyncio.Queue = asyncio.Queue()
        self._loop = loop
        threading.Thread(target=self._pump, name="ckw-serve-job", daemon=True).start()

    def cancel(self) -> None:
        self.request.cancel()

    def _put(self, kind: str, value) -> None:
        self._loop.call_soon_threadsafe(self.events.put_nowait, (kind, value))

    def _pump(self) -> None:
        r = self.request
        r.started.wait()
        limit = self.model.max_audio_s
        if r.info is not None and limit and r.info.duration > limit:
            r.cancel()
            self._drain()
            self._put(
                "error",
                ApiError(
                    400,
                    f"file {self.filename}: {r.info.duration:.1f} s of audio, more than the "
                    f"{limit:g} s this server takes (--max_audio_seconds); send a shorter part",
                    "file",
                    "audio_too_long",
                ),
            )
            return
        if r.info is not None:
            self.duration = r.info.duration
            self._put("started", self.duration)
        done = []
        try:
            for segment in r.segments():
                done.append(segment)
                self._put("segment", segment)
            self._put("done", collect(iter(done), r.info, self.model.streams.engine.tokenizer.eot))
        except Cancelled:
            self._put("error", ApiError(499, "the request was cancelled", code="cancelled"))
        except AudioInputError as e:
            self._put("error", ApiError(400, f"file {self.filename}: {e.reason}", "file", "invalid_audio"))
        except (AudioError, ValueError) as e:
            self._put("error", ApiError(400, f"file {self.filename}: {e}", "file", "invalid_audio"))
        except EngineError as e:
            self._put("error", ApiError(500, f"{self.model.name}: {e}", kind="server_error"))
        except BaseException as e:  # a bug: answered, never lost
            self._put("error", ApiError(500, f"internal error: {type(e).__name__}: {e}", kind="server_error"))

    def _drain(self) -> None:
        try:
            for _ in self.request.segments():
                pass
        except BaseException:  # the cancellation itself, or the file's own error: the limit answers
            pass
