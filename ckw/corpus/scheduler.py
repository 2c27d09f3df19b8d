"""The driver loop: each actor holds at most its seats' worth of files (one, or --streams), largest
first; every outcome journaled.

The queue stays in the driver, strictly largest first, and the journal's `started` record names
the process that has the file. Outcomes:

- the actor returns a transcript: the driver writes the output (ckw/runtime/output_file.py write_file), then
  journals `done`: the journal is the commit point, and only this process writes either;
- the actor returns an error (a bad file): `failed`, and the batch goes on;
- the actor process dies (killed, crashed, out of memory, node lost): `worker_died`, the file
  goes back to the front of the queue for the next idle actor, and Ray restarts the actor
  (max_restarts) in a fresh process; after MAX_ATTEMPTS deaths the file is `failed`, so one
  file that crashes the engine cannot stop the batch.
"""

import dataclasses
import heapq
import os
import sys
import time
from collections.abc import Callable

from ckw.corpus import outputs
from ckw.corpus.inputs import AudioFile
from ckw.corpus.journal import Journal
from ckw.corpus.progress import Progress
from ckw.runtime import output_file

MAX_ATTEMPTS = 3
RESTART_POLL_SECONDS = 0.5
RESTART_POLLS = 240  # an actor not back within two minutes is given up


class NoWorkersError(RuntimeError):
    pass


def one_line(error: BaseException) -> str:
    """The last line of an error (Ray's carry tracebacks): usually `Type: message`."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {str(cause).strip().splitlines()[-1] if str(cause).strip() else ''}"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__


@dataclasses.dataclass
class Slot:
    """One actor as the driver sees it."""

    actor: object
    name: str = "(starting)"  # host:pid, known once it answers
    polls: int = 0
    seats: int = 1  # files it holds at once
    busy: int = 0  # files it holds now
    up: bool = False  # answered its last ping (a dead actor is pinged until it is back)


class Scheduler:
    def __init__(
        self,
        ray,
        actors: list[object],
        journal: Journal,
        output_dir: str,
        output_format: str,
        progress: Progress,
        log: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True),
        seats: int = 1,
    ):
        self.ray = ray
        self.slots = [Slot(a, seats=seats) for a in actors]
        self.journal, self.output_dir, self.output_format = journal, output_dir, output_format
        self.progress, self.log = progress, log
        self.queue: list[tuple[int, str, AudioFile]] = []
        self.attempts: dict[str, int] = {}
        self.pending: dict[object, tuple[str, Slot, AudioFile | None]] = {}  # ObjectRef -> (kind, slot, file)
        self.lost: list[str] = []

    def run(self, files: list[AudioFile]) -> None:
        self.queue = [(-f.size, f.path, f) for f in files]
        heapq.heapify(self.queue)
        for slot in self.slots:
            self._ping(slot)
        while self.queue or any(kind == "task" for kind, _, _ in self.pending.values()):
            for slot in self.slots:
                while slot.up and slot.busy < slot.seats and self.queue:
                    self._dispatch(slot, heapq.heappop(self.queue)[2])
            if not self.pending:
                raise NoWorkersError("no worker is left: " + "; ".join(dict.fromkeys(self.lost)))
            (ref,), _ = self.ray.wait(list(self.pending), num_returns=1)
            kind, slot, file = self.pending.pop(ref)
            if kind == "ping":
                self._on_ping(ref, slot)
            else:
                self._on_result(ref, slot, file)

    def _ping(self, slot: Slot) -> None:
        self.pending[slot.actor.info.remote()] = ("ping", slot, None)

    def _dispatch(self, slot: Slot, file: AudioFile) -> None:
        attempt = self.attempts[file.path] = self.attempts.get(file.path, 0) + 1
        self.journal.append(
            {"file": file.path, "status": "started", "attempt": attempt, "worker": slot.name}, durable=False
        )
        slot.busy += 1
        self.pending[slot.actor.transcribe.remote(file.path)] = ("task", slot, file)

    def _on_ping(self, ref, slot: Slot) -> None:
        exceptions = self.ray.exceptions
        try:
            slot.name = self.ray.get(ref)["worker"]
        except exceptions.ActorDiedError as e:  # for good: its engine failed to load, or no restarts left
            if one_line(e) not in self.lost:  # once per reason: all workers usually fail alike
                self.log(f"transcribe_corpus: a worker is gone for good: {one_line(e)}")
            self.lost.append(one_line(e))
            return
        except exceptions.RayActorError as e:  # still restarting
            slot.polls += 1
            if slot.polls > RESTART_POLLS:
                self.lost.append(f"not back after a restart ({one_line(e)})")
                return
            time.sleep(RESTART_POLL_SECONDS)
            self._ping(slot)
            return
        slot.polls = 0
        slot.up = True

    def _on_result(self, ref, slot: Slot, file: AudioFile) -> None:
        slot.busy -= 1
        try:
            result = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as e:
            self._worker_died(slot, file, e)
            return
        except self.ray.exceptions.RayTaskError as e:  # an exception the worker did not expect: this file's error
            result = {"error": f"{file.path}: {one_line(e)}", "wall_seconds": None}
        record = {
            "file": file.path,
            "attempt": self.attempts[file.path],
            "worker": slot.name,
            "wall_seconds": _round(result.get("wall_seconds")),
        }
        if "error" in result:
            self._finish(file, dict(record, status="failed", audio_seconds=None, error=result["error"]))
            return
        relpath = outputs.output_relpath(file.relpath, self.output_format)
        output_file.write_file(os.path.join(self.output_dir, relpath), result["output"])
        self._finish(
            file, dict(record, status="done", output=relpath, audio_seconds=_round(result["audio_seconds"]), error=None)
        )

    def _worker_died(self, slot: Slot, file: AudioFile, error: BaseException) -> None:
        reason = f"worker {slot.name} died while transcribing it ({one_line(error)})"
        attempt = self.attempts[file.path]
        self.journal.append(
            {"file": file.path, "status": "worker_died", "attempt": attempt, "worker": slot.name, "error": reason}
        )
        self.log(
            f"transcribe_corpus: {file.path}: {reason}; "
            + ("retrying it on another worker" if attempt < MAX_ATTEMPTS else "giving up on it")
        )
        if attempt < MAX_ATTEMPTS:
            heapq.heappush(self.queue, (-file.size, file.path, file))
        else:
            self._finish(
                file,
                {
                    "file": file.path,
                    "status": "failed",
                    "attempt": attempt,
                    "worker": slot.name,
                    "wall_seconds": None,
                    "audio_seconds": None,
                    "error": f"{file.path}: {MAX_ATTEMPTS} workers died transcribing it; last: {reason}",
                },
            )
        if slot.up:  # its other files' errors arrive too: ping it once
            slot.up = False
            self._ping(slot)  # Ray restarts the actor in a new process; it is idle again once it answers

    def _finish(self, file: AudioFile, record: dict) -> None:
        self.journal.append(record)
        self.progress.file_finished(file.size, record["audio_seconds"], record["error"])


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
