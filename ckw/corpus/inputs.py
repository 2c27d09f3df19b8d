"""The files of a corpus batch: a directory (walked recursively), a list file or one audio file,
largest first.

Each input gets an output path under the output folder that keeps its relative path and its
whole name (`talks/a.flac` -> `talks/a.flac.txt`), so `a.wav` and `a.flac` never collide.
"""

import dataclasses
import os

# What the engine reads (ckw/runtime/audio_input.py: WAV directly, the rest through a decoder).
AUDIO_EXTENSIONS = frozenset(
    {".wav", ".wave", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".mp4", ".aac", ".webm", ".aif", ".aiff"}
)


class InputError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class AudioFile:
    path: str  # absolute; the journal's key
    relpath: str  # where its output goes, below the output folder (without the format extension)
    size: int  # bytes: the scheduling order and the ETA


def _is_audio(name: str) -> bool:
    return os.path.splitext(name)[1].lower() in AUDIO_EXTENSIONS


def _from_directory(root: str) -> list[AudioFile]:
    files = []
    for parent, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if _is_audio(name) and not name.startswith("."):
                path = os.path.join(parent, name)
                files.append(AudioFile(path, os.path.relpath(path, root), os.path.getsize(path)))
    return files


def _from_list(list_path: str) -> list[AudioFile]:
    """One path a line (relative ones to the list's folder); blank lines and #-comments skipped."""
    base = os.path.dirname(list_path)
    files, seen = [], set()
    with open(list_path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            entry = line.strip()
            if not entry or entry.startswith("#"):
                continue
            path = os.path.normpath(os.path.join(base, os.path.expanduser(entry)))
            if path in seen:
                continue
            seen.add(path)
            if not os.path.isfile(path):
                raise InputError(f"{list_path}:{number}: {entry}: no such file; fix or remove the line")
            inside = os.path.commonpath([base, path]) == base
            relpath = os.path.relpath(path, base) if inside else path.lstrip(os.sep)
            files.append(AudioFile(path, relpath, os.path.getsize(path)))
    return files


def list_inputs(input_path: str) -> list[AudioFile]:
    """The batch, largest file first (so the long tail is short files, not one long file on one
    worker at the end). Raises InputError naming the input when it has nothing to transcribe."""
    path = os.path.abspath(input_path)
    if os.path.isdir(path):
        files = _from_directory(path)
        if not files:
            raise InputError(
                f"--input={input_path}: no audio files ({', '.join(sorted(AUDIO_EXTENSIONS))}) in this folder or below"
            )
    elif os.path.isfile(path) and _is_audio(path):
        files = [AudioFile(path, os.path.basename(path), os.path.getsize(path))]
    elif os.path.isfile(path):
        try:
            files = _from_list(path)
        except UnicodeDecodeError:
            raise InputError(
                f"--input={input_path}: neither a folder, an audio file nor a UTF-8 list of paths"
            ) from None
        if not files:
            raise InputError(f"--input={input_path}: the list names no files; give one audio path per line")
    else:
        raise InputError(f"--input={input_path}: no such folder or list file")
    return sorted(files, key=lambda f: (-f.size, f.path))
