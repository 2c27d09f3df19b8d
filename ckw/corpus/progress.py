"""Progress lines on stderr while a batch runs, and the summary at its end.

    transcribe_corpus: 12/41 files, 0 failed, 0.03 h of audio, 24.1 audio s/s, ETA 0:00:09

Throughput is audio seconds per wall second since the batch started (all workers together).
The ETA scales the wall time so far by the input bytes still to do: the files are sorted
largest first, so bytes track audio length better than a file count does.
"""

import datetime
import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    return str(datetime.timedelta(seconds=round(seconds)))


class Progress:
    def __init__(self, total_files: int, total_bytes: int, every_seconds: float = 2.0, out: TextIO = sys.stderr):
        self.total_files, self.total_bytes = total_files, total_bytes
        self.every_seconds, self.out = every_seconds, out
        self.start = time.monotonic()
        self._last_print = -every_seconds
        self.done = 0
        self.failed: list[str] = []  # one-line errors
        self.audio_seconds = 0.0
        self.bytes_done = 0

    def file_finished(self, size: int, audio_seconds: float | None = None, error: str | None = None) -> None:
        self.bytes_done += size
        if error is None:
            self.done += 1
            self.audio_seconds += audio_seconds or 0.0
        else:
            self.failed.append(error)
        now = time.monotonic()
        finished = self.done + len(self.failed)
        if now - self._last_print >= self.every_seconds or finished == self.total_files:
            self._last_print = now
            print(f"transcribe_corpus: {self.line(now)}", file=self.out, flush=True)

    def wall_seconds(self, now: float | None = None) -> float:
        return (time.monotonic() if now is None else now) - self.start

    def rate(self, now: float | None = None) -> float:
        """Audio seconds per wall second."""
        return self.audio_seconds / max(self.wall_seconds(now), 1e-9)

    def line(self, now: float) -> str:
        wall = self.wall_seconds(now)
        eta = wall * (self.total_bytes - self.bytes_done) / self.bytes_done if self.bytes_done else None
        return (
            f"{self.done + len(self.failed)}/{self.total_files} files, {len(self.failed)} failed, "
            f"{self.audio_seconds / 3600:.2f} h of audio, {self.rate(now):.1f} audio s/s, "
            f"ETA {_clock(eta) if eta is not None else '?'}"
        )

    def summary(self, skipped: int, workers: str) -> str:
        """The closing lines: counts, throughput, then every failed file."""
        wall = self.wall_seconds()
        lines = [
            (
                f"transcribe_corpus: {self.done} transcribed, {len(self.failed)} failed, {skipped} finished before "
                f"(skipped); {self.audio_seconds:.1f} s of audio in {wall:.1f} s wall: {self.rate():.2f} audio s/s "
                f"with {workers}"
            )
        ]
        lines += [f"transcribe_corpus: failed: {error}" for error in self.failed]
        return "\n".join(lines)
