"""The server on Ray Serve (//tools:serve --ray): the same FastAPI app (ckw/server/app.py) as the
ingress, and each model's engines as the replicas of a deployment of their own.

    client -> Serve's proxy -> ingress replica: create_app over one RemoteModel per model
                            -> an engine replica (one Streams: ckw/runtime/streams.py), streamed back

A request's events (started, each segment, then done or error) come back from its engine replica
as they are decoded. When that replica dies mid-request (killed, crashed, its node lost), the
ingress sends the request again and Serve's router, which has dropped the dead replica, gives it
to another. Decoding is deterministic, so the second run's segments equal the first's: those
already passed on are skipped and a streaming client sees each segment once. After RETRIES deaths
the request is answered 503. This module runs inside the replicas, from the ckw wheel
(ckw/server/deployments.py).
"""

import asyncio
import logging
import os
import socket

from ckw import model_spec
from ckw.runtime.streams import Streams
from ckw.server.app import Limits, create_app
from ckw.server.form import ApiError, Ask
from ckw.server.served import ServedModel

log = logging.getLogger("ckw.serve")
RETRIES = 3  # replica deaths one request survives


class EngineReplica:
    """One engine replica: a ServedModel (its own admission bound) whose jobs are streamed out."""

    def __init__(self, name: str, spec: dict, max_streams: int, max_queue: int, max_audio_s: float, threads: int):
        engine = model_spec.open_engine(spec, threads=threads or None)
        self.model = ServedModel(name, Streams(engine, max_streams), max_queue, max_audio_s)
        self.replica = f"{socket.gethostname()}:{os.getpid()}"

    async def transcribe(self, audio: bytes, filename: str, ask: Ask):
        """The job's events; "started" carries (seconds of audio, this replica)."""
        try:
            job = self.model.submit(audio, filename, ask, asyncio.get_running_loop())
        except ApiError as e:  # queue full, an option the model cannot honour
            yield "error", e
            return
        try:
            while True:
                kind, value = await job.events.get()
                yield kind, ((value, self.replica) if kind == "started" else value)
                if kind in ("done", "error"):
                    return
        finally:
            job.cancel()  # the ingress cancelled the call (its client left): free the sequences now


class RemoteModel:
    """A model whose engines are Serve replicas, behind ServedModel's interface for create_app."""

    def __init__(self, name: str, handle):
        self.name = name
        self.handle = handle.options(stream=True)
        self.jobs: set[RemoteJob] = set()

    def submit(self, audio: bytes, filename: str, ask: Ask, loop: asyncio.AbstractEventLoop) -> "RemoteJob":
        return RemoteJob(self, audio, filename, ask, loop)

    def load(self) -> dict:
        """What this ingress knows: its requests in flight, and those a replica has started."""
        return {"pending": len(self.jobs), "running": sum(j.duration is not None for j in self.jobs)}

    def close(self) -> None:
        for job in list(self.jobs):
            job.cancel()


class RemoteJob:
    """Job's interface (ckw/server/served.py) for a request decoded by an engine replica."""

    def __init__(self, model: RemoteModel, audio: bytes, filename: str, ask: Ask, loop: asyncio.AbstractEventLoop):
        self.model, self.filename = model, filename
        self.duration: float | None = None
        self.replica: str | None = None
        self.events: asyncio.Queue = asyncio.Queue()
        self._call = None
        model.jobs.add(self)
        self._task = loop.create_task(self._run(audio, ask))

    def cancel(self) -> None:
        self._task.cancel()
        if self._call is not None:
            self._call.cancel()  # the replica's generator stops and cancels its request

    async def _run(self, audio: bytes, ask: Ask) -> None:
        from ray.exceptions import RayActorError

        try:
            passed_on = 0  # segments already put on self.events
            for attempt in range(RETRIES + 1):
                self._call = self.model.handle.transcribe.remote(audio, self.filename, ask)
                seen = 0
                try:
                    async for kind, value in self._call:
                        if kind == "started":
                            first = self.duration is None
                            (self.duration, self.replica) = value
                            if not first:
                                continue
                            value = self.duration
                        elif kind == "segment":
                            seen += 1
                            if seen <= passed_on:
                                continue
                            passed_on = seen
                        self.events.put_nowait((kind, value))
                        if kind in ("done", "error"):
                            return
                    raise RuntimeError("the replica ended the request without an answer")
                except RayActorError as e:
                    log.warning(
                        "ckw serve: %s: engine replica %s died with %s in flight (attempt %d of %d): %s",
                        self.model.name,
                        self.replica or "?",
                        self.filename,
                        attempt + 1,
                        RETRIES + 1,
                        str(e).splitlines()[0],
                    )
            self.events.put_nowait(
                (
                    "error",
                    ApiError(
                        503,
                        f"{self.model.name}: {RETRIES + 1} engine replicas died while decoding {self.filename}; retry",
                        code="replica_died",
                        kind="server_error",
                        headers={"Retry-After": "1"},
                    ),
                )
            )
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 (a bug or Serve's own failure: answered, never lost)
            self.events.put_nowait(
                ("error", ApiError(500, f"{self.model.name}: {type(e).__name__}: {e}", kind="server_error"))
            )
        finally:
            self.model.jobs.discard(self)


def ingress_app(handles: dict, limits: dict, alias: str | None):
    """The ingress's ASGI app: ckw/server/app.py's, its models the engine deployments' handles."""
    loaders = {name: (lambda n=name, h=handle: RemoteModel(n, h)) for name, handle in handles.items()}
    # The engine replicas bound their own queues; the ingress refuses oversized uploads and keys.
    return create_app(loaders, Limits(**limits), alias)
