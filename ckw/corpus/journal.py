"""The batch journal: JSON lines in the output folder, the commit point of every file.

The first record describes the batch (model, output format, decoding options); a rerun with
other settings is refused rather than mixing outputs (unless no file was started yet). Then one
record per event of a file:

    {"file": "/abs/a.flac", "status": "started", "attempt": 1, "worker": "10.0.0.5:4711"}
    {"file": "/abs/a.flac", "status": "done", "output": "a.flac.txt", "audio_seconds": 10.4,
     "wall_seconds": 0.8, "error": null, ...}
    {"file": "/abs/b.wav", "status": "failed", "error": "/abs/b.wav: ...", ...}
    {"file": "/abs/c.wav", "status": "worker_died", "error": "...", ...}  (retried elsewhere)

A file is finished when its last record is `done`; `failed`, `started` and `worker_died` are
retried by the next run. One process writes a journal at a time (an exclusive flock); every
record is flushed and fsynced before the next file is counted. A torn last line (the writer was
killed mid-record) is cut off when the journal is opened: that record never committed.
"""

import fcntl
import json
import os
import sys
import time

JOURNAL_NAME = "journal.jsonl"
FINISHED = "done"


class JournalError(RuntimeError):
    pass


def _canonical(value):
    """JSON round trip: tuples become lists, so a stored header compares equal to a fresh one."""
    return json.loads(json.dumps(value, sort_keys=True))


class Journal:
    def __init__(self, output_dir: str, batch: dict):
        self.path = os.path.join(output_dir, JOURNAL_NAME)
        os.makedirs(output_dir, exist_ok=True)
        self._f = open(self.path, "a+b")  # noqa: SIM115 (held open, and locked, until close())
        try:
            fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._f.close()
            raise JournalError(
                f"{self.path}: another transcribe_corpus is writing to this output folder; wait for it "
                "to finish or give another --output_dir"
            ) from None
        records = self._read()
        batch = _canonical(batch)
        if len(records) == 1 and isinstance(records[0].get("batch"), dict):
            # No file was started under those settings (they stopped every worker): replace them.
            self._f.truncate(0)
            records = []
        if records:
            self._check_batch(records[0].get("batch"), batch)
        else:
            self.append({"batch": batch})
        # Only the last status per file is kept: a million-file batch stays small in memory.
        self.status: dict[str, str] = {r["file"]: r["status"] for r in records if "file" in r}

    def _read(self) -> list[dict]:
        self._f.seek(0)
        data = self._f.read()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            print(
                f"transcribe_corpus: {self.path}: dropped an unfinished last record (the previous run stopped while "
                "writing it)",
                file=sys.stderr,
            )
            self._f.truncate(end)
        records = []
        for number, line in enumerate(data[:end].splitlines(), start=1):
            try:
                records.append(json.loads(line))
            except ValueError:
                raise JournalError(
                    f"{self.path}:{number}: not a JSON record; the journal was edited or damaged: "
                    "repair or delete that line (its file is then transcribed again)"
                ) from None
        return records

    def _check_batch(self, stored, batch: dict) -> None:
        if not isinstance(stored, dict):
            raise JournalError(
                f"{self.path}: the first record is not a batch description; this is not a "
                "transcribe_corpus journal: give another --output_dir"
            )
        if stored != batch:
            keys = sorted(k for k in set(stored) | set(batch) if stored.get(k) != batch.get(k))
            diff = ", ".join(f"{k}: {json.dumps(stored.get(k))} then, {json.dumps(batch.get(k))} now" for k in keys)
            raise JournalError(
                f"{self.path}: this output folder holds a batch made with other settings ({diff}); "
                "rerun with the same settings or give another --output_dir"
            )

    def finished(self) -> set[str]:
        return {f for f, status in self.status.items() if status == FINISHED}

    def append(self, record: dict, durable: bool = True) -> None:
        """Writes one record; durable: fsynced before returning (outcomes; a lost `started`
        record only loses information)."""
        if "file" in record:
            record = dict(record, time=round(time.time(), 3))
            self.status[record["file"]] = record["status"]
        self._f.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        self._f.flush()
        if durable:
            os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()  # releases the lock
