"""An output file that is either complete or absent.

`OutputFile(path)` reserves a temporary file beside `path` at once, so an unusable destination
(missing or read-only folder, a directory in the way) is reported before any work is done;
`commit(text)` writes it and renames it into place; `discard()` (also on leaving a `with` block
without commit) removes it. A failed or interrupted run never leaves a partial file under `path`.
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
            os.replace(self.tmp, self.path)
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
