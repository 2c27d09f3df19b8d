"""An output file that is either complete or absent.

`OutputFile(path)` reserves a temporary file beside `path` at once, so an unusable destination
(missing or read-only folder, a directory in the way) is reported before any work is done;
`commit(text)` writes it, flushes it to disk and renames it into place, then flushes the folder,
so a file that exists is complete even after a crash of the machine (the corpus tool journals a
file as done only after this); `discard()` (also on leaving a `with` block without commit)
removes it. A failed or interrupted run never leaves a partial file under `path`.
`write_file(path, text)` does both at once, creating the folder first.
"""

import os
from typing import Self


class OutputFileError(OSError):
    """A one-line reason that names the destination."""


class OutputFile:
    def __init__(self, path: str, label: str):
        """`label`: how messages name the destination (e.g. the flag and the path as given)."""
        self.path, self.label = path, label
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise OutputFileError(f"{label}: folder {folder} does not exist; create it first")
        if os.path.isdir(path):
            raise OutputFileError(f"{label}: is a directory; name a file")
        self.tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
        try:  # mode 0666 less the umask, as the final file would get
            os.close(os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except OSError as e:
            self.tmp = None
            raise OutputFileError(f"{label}: cannot write into {folder} ({e.strerror})") from None

    def commit(self, text: str) -> None:
        try:
            with open(self.tmp, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(self.tmp, self.path)
            folder = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        except OSError as e:
            self.discard()
            raise OutputFileError(f"{self.label}: cannot be written ({e.strerror})") from None
        self.tmp = None

    def discard(self) -> None:
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except FileNotFoundError:
                pass
            self.tmp = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.discard()


def write_file(path: str, text: str, label: str | None = None) -> None:
    """`text` to `path`, whole or not at all, creating its folder first; OutputFileError naming
    `label` (default: the path)."""
    label = label or path
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    except OSError as e:
        raise OutputFileError(f"{label}: cannot create its folder ({e.strerror})") from None
    with OutputFile(path, label) as f:
        f.commit(text)
