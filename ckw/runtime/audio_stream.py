"""Audio of any length and container -> Whisper's log-mel, block by block, in bounded memory.

Every numeric step runs in the generated frontend library (circuits/whisper_audio_frontend.json,
its stream phases); this module moves blocks between them:

    source blocks: mono float32 at the file's own rate
        WAV: the C parser (`wav_info`, `wav_block`) over a read-only mapping of the file,
             whose pages are dropped after each block;
        any other container (m4a, mp4, webm, opus, aac, flac, ogg, mp3, ...): PyAV (FFmpeg),
             packet by packet, channels averaged in float64 as the WAV parser does;
    -> 16 kHz: the C resampler (`resample_span`, `resample_block`) computes the outputs that
       the samples received so far determine, with the bits of resampling the whole file;
    -> 30 s of zeros appended -> log-mel frames (`mel_peak`, `mel_block`).

openai-whisper clamps the log-mel at (its maximum over the whole recording) - 8, so the
frames come in two passes: `MelStream` first runs the file once for that peak (keeping
nothing), then decodes it again and computes frames on demand as the transcription moves
forward (`window`), holding only the frames of the windows asked for. Held at once: one
source block (30 s), the resampler's history, one block of 16 kHz samples, a block of
frames and the current window: a few MB whatever the file's length. The frames equal the
whole-file `run` phase bit for bit.
"""

import ctypes
import io
import mmap
import os
from collections.abc import Iterator

import numpy as np

from ckw.runtime import abi, audio_input
from ckw.runtime.audio_input import AudioInputError, is_wav

SAMPLE_RATE = 16000
HOP = 160
N_PAD = 30 * SAMPLE_RATE  # openai-whisper's padding=N_SAMPLES
N_MELS = 80
SOURCE_BLOCK_SECONDS = 30  # source samples read at once
MEL_BLOCK_FRAMES = 3000  # frames computed per frontend call
CONTEXT_FRAMES = 2  # a frame reads 200 samples either side of its centre: 2 hops of history

_I64P = ctypes.POINTER(ctypes.c_int64)


def _kernel_message(e: abi.AbiError) -> str:
    """The failing kernel's own message, without the library's names."""
    return e.reason


class Source:
    """Mono float32 blocks of a recording at `sample_rate`; `blocks()` starts from the beginning
    each time it is called (the log-mel takes two passes)."""

    name: str
    sample_rate: int

    def blocks(self) -> Iterator[np.ndarray]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class WavSource(Source):
    """A RIFF/WAVE file or buffer through the generated frontend's C parser."""

    def __init__(self, frontend: abi.Handle, name: str, path: str | None = None, data: bytes | None = None):
        self.frontend, self.name = frontend, name
        self._file = self._map = None
        if path is not None:
            self._file = open(path, "rb")  # noqa: SIM115 (the mapping outlives __init__; close() closes both)
            self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
            self._bytes = np.frombuffer(self._map, np.uint8)
        else:
            self._bytes = np.frombuffer(data, np.uint8)
        info = np.zeros(3, np.int64)
        problem = None
        try:
            frontend.call_named(
                "wav_info", wav=self._bytes, n_bytes=self._bytes.size, wav_info=info.ctypes.data_as(_I64P)
            )
        except abi.AbiError as e:
            problem = _kernel_message(e)
        if problem is not None:  # outside the handler: its traceback still references the mapping
            self.close()
            raise AudioInputError(name, problem)
        self.n_frames, self.sample_rate, self.channels = (int(v) for v in info)

    def blocks(self) -> Iterator[np.ndarray]:
        step = SOURCE_BLOCK_SECONDS * self.sample_rate
        for begin in range(0, self.n_frames, step):
            n = min(step, self.n_frames - begin)
            y = np.empty(n, np.float32)
            problem = None
            try:
                self.frontend.call_named(
                    "wav_block", wav=self._bytes, n_bytes=self._bytes.size, block_begin=begin, n_block=n, wav_samples=y
                )
            except abi.AbiError as e:  # e.g. a NaN sample: the file is corrupt
                problem = _kernel_message(e)
            if problem is not None:  # outside the handler: its traceback still references the mapping
                raise AudioInputError(self.name, problem)
            if self._map is not None:
                self._map.madvise(mmap.MADV_DONTNEED)  # the block is decoded: its pages may go
            yield y

    def close(self) -> None:
        self._bytes = None  # the array holds an export of the mapping
        if self._map is not None:
            self._map.close()
            self._file.close()
            self._map = self._file = None


def _mono(frame) -> np.ndarray:
    """A decoded PyAV audio frame as mono float32: channels averaged in float64, integer
    formats scaled as the WAV parser scales them (u8 (b - 128) / 128, signed n-bit v / 2^(n-1))."""
    a = frame.to_ndarray()
    fmt = frame.format
    channels = len(frame.layout.channels)
    if not fmt.is_planar:
        a = a.reshape(-1, channels).T
    if a.dtype.kind == "f":
        x = a.astype(np.float64)
    elif a.dtype.kind == "u":
        x = (a.astype(np.float64) - 128.0) / 128.0
    else:
        x = a.astype(np.float64) / float(2 ** (8 * a.dtype.itemsize - 1))
    return x.mean(axis=0).astype(np.float32)


class AvSource(Source):
    """Any container FFmpeg reads (through PyAV): its first audio stream, decoded packet by packet."""

    def __init__(self, name: str, path: str | None = None, data: bytes | None = None):
        import av  # only for containers other than WAV

        self._av, self.name, self._path, self._data = av, name, path, data
        with self._open() as container:
            if not container.streams.audio:
                kinds = sorted({s.type for s in container.streams}) or ["nothing"]
                raise AudioInputError(
                    name, f"no audio stream (the file holds {', '.join(kinds)}); give a recording with sound"
                )
            stream = container.streams.audio[0]
            self.sample_rate = int(stream.codec_context.sample_rate or stream.rate or 0)
        if self.sample_rate <= 0:
            raise AudioInputError(name, "the audio stream declares no sample rate; convert it to WAV first")

    def _open(self):
        try:
            return self._av.open(self._path if self._path is not None else io.BytesIO(self._data), mode="r")
        except self._av.error.FFmpegError as e:
            raise AudioInputError(
                self.name, f"neither WAV nor a format FFmpeg can read ({e.strerror}); convert it to WAV"
            ) from None

    def blocks(self) -> Iterator[np.ndarray]:
        av = self._av
        pending: list[np.ndarray] = []
        held = 0
        with self._open() as container:
            stream = container.streams.audio[0]
            try:
                for frame in container.decode(stream):
                    if frame.sample_rate != self.sample_rate:
                        raise AudioInputError(
                            self.name,
                            f"the sample rate changes from {self.sample_rate} to "
                            f"{frame.sample_rate} Hz mid-stream; convert it to WAV first",
                        )
                    pending.append(_mono(frame))
                    held += pending[-1].size
                    if held >= SOURCE_BLOCK_SECONDS * self.sample_rate:
                        yield np.concatenate(pending)
                        pending, held = [], 0
            except av.error.FFmpegError as e:
                raise AudioInputError(
                    self.name, f"FFmpeg cannot decode the audio ({e.strerror}); the file is truncated or damaged"
                ) from None
        if pending:
            yield np.concatenate(pending)


class ArraySource(Source):
    """Samples already in memory (mono float32 at `sample_rate`)."""

    def __init__(self, samples: np.ndarray, sample_rate: int = SAMPLE_RATE, name: str = "audio array"):
        samples = np.asarray(samples)
        if samples.ndim != 1 or samples.dtype.kind != "f":
            raise AudioInputError(
                name, f"expected a 1-D float array of mono samples, got {samples.dtype} {list(samples.shape)}"
            )
        if sample_rate <= 0:
            raise AudioInputError(name, f"sample rate {sample_rate} Hz must be positive")
        self.samples, self.sample_rate, self.name = np.ascontiguousarray(samples, np.float32), int(sample_rate), name

    def blocks(self) -> Iterator[np.ndarray]:
        step = SOURCE_BLOCK_SECONDS * self.sample_rate
        for begin in range(0, self.samples.size, step):
            yield self.samples[begin : begin + step]


Audio = str | os.PathLike | bytes | np.ndarray


def open_source(frontend: abi.Handle, audio: Audio) -> Source:
    """A path, a file's bytes, or mono 16 kHz float samples, as a Source. One-line
    AudioInputError for a missing, empty or unreadable file or one without audio."""
    if isinstance(audio, np.ndarray):
        return ArraySource(audio)
    if isinstance(audio, (bytes, bytearray, memoryview)):
        data = bytes(audio)
        if not data:
            raise AudioInputError("audio bytes", "empty")
        return WavSource(frontend, "audio bytes", data=data) if is_wav(data) else AvSource("audio bytes", data=data)
    path = os.fspath(audio)
    head = audio_input.read_head(path, 12)
    if head[:4] == b"RIFX":  # big-endian WAV: FFmpeg reads its samples as little-endian; soundfile does not
        return WavSource(frontend, path, data=audio_input.decode_other(path, audio_input.read_file(path)))
    return WavSource(frontend, path, path=path) if is_wav(head) else AvSource(path, path=path)


def resample_16k(frontend: abi.Handle, source: Source) -> Iterator[np.ndarray]:
    """The recording at 16 kHz, block by block: each source block yields the outputs the samples
    so far determine (the last block the rest), bit-identical to resampling it whole."""
    rate = source.sample_rate
    span = np.zeros(2, np.int64)

    def input_span(n_begin: int) -> tuple[int, int]:
        try:
            frontend.call_named(
                "resample_span", src_rate=rate, out_begin=n_begin, n_out=1, input_span=span.ctypes.data_as(_I64P)
            )
        except abi.AbiError as e:  # a rate the resampler does not take
            raise AudioInputError(source.name, _kernel_message(e)) from None
        return int(span[0]), int(span[1])

    # Output n reads inputs floor(n rate / 16000) + [first, end) (the kernel's documented taps).
    first, end = input_span(0)
    buf = np.zeros(0, np.float32)
    buf_begin = received = n_next = 0

    def outputs(n_end: int, total: int) -> np.ndarray:
        y = np.empty(n_end - n_next, np.float32)
        try:
            frontend.call_named(
                "resample_block",
                samples=buf,
                n_samples_in=buf.size,
                samples_begin=buf_begin,
                samples_total=total,
                out_begin=n_next,
                n_out=y.size,
                src_rate=rate,
                audio_16k=y,
                audio_16k_capacity=y.size,
            )
        except abi.AbiError as e:
            raise AudioInputError(source.name, _kernel_message(e)) from None
        return y

    for block in source.blocks():
        buf = np.concatenate([buf, block]) if buf.size else np.ascontiguousarray(block, np.float32)
        received += block.size
        last = received - end  # outputs n with floor(n rate / 16000) <= last are determined
        n_end = ((last + 1) * SAMPLE_RATE - 1) // rate + 1 if last >= 0 else 0
        if n_end > n_next:
            yield outputs(n_end, -1)
            n_next = n_end
        keep = max(0, n_next * rate // SAMPLE_RATE + first)  # no later output reads before this
        if keep > buf_begin:
            buf = buf[keep - buf_begin :]
            buf_begin = keep
    n_total = -(-received * SAMPLE_RATE // rate)
    if n_total > n_next:
        yield outputs(n_total, received)


class MelStream:
    """The log-mel of a whole recording plus 30 s of padding (openai-whisper's
    `log_mel_spectrogram(audio, padding=N_SAMPLES)`), produced in two passes over the source.

    Construction runs pass 1 (the peak and the length). `window(start, size)` returns frames
    [start, start + size) as [n_mels, size] float32; windows are served moving forward (an
    earlier start restarts pass 2 from the beginning)."""

    def __init__(self, frontend: abi.Handle, source: Source):
        self.frontend, self.source = frontend, source
        self.samples_16k = 0
        peak = np.float32(-np.inf)
        for _, value in self._blocks(peak=None):
            peak = max(peak, value)
        self.peak = np.array([peak], np.float32)
        self.n_frames = (self.samples_16k + N_PAD) // HOP
        self.duration = self.samples_16k / SAMPLE_RATE
        self._pass2 = None
        self._held: list[tuple[int, np.ndarray]] = []  # (first frame, [n_mels, frames]) in order
        self._produced = 0

    def _padded_16k(self) -> Iterator[np.ndarray]:
        n = 0
        for block in resample_16k(self.frontend, self.source):
            n += block.size
            yield block
        self.samples_16k = n
        for begin in range(0, N_PAD, MEL_BLOCK_FRAMES * HOP):
            yield np.zeros(min(MEL_BLOCK_FRAMES * HOP, N_PAD - begin), np.float32)

    def _blocks(self, peak: np.ndarray | None):
        """Pass 1 (peak None): (first frame, the block's peak); pass 2: (first frame, frames)."""
        buf = np.zeros(0, np.float32)
        buf_begin = received = t_next = 0  # buf holds 16 kHz samples buf_begin .. received - 1
        blocks = self._padded_16k()
        done = False
        while not done:
            block = next(blocks, None)
            if block is None:
                done = True  # every sample and the padding are in: frames up to the end
                t_end = received // HOP
            else:
                buf = np.concatenate([buf, block]) if buf.size else block
                received += block.size
                t_end = (received - 200) // HOP + 1 if received >= 200 else 0  # frames whose samples are in
            while t_end - t_next >= (1 if done else MEL_BLOCK_FRAMES):
                n = min(MEL_BLOCK_FRAMES, t_end - t_next)
                args = {
                    "audio_block": buf,
                    "n_audio": buf.size,
                    "frame_begin": t_next - buf_begin // HOP,
                    "n_block_frames": n,
                }
                if peak is None:
                    out = np.zeros(1, np.float32)
                    self.frontend.call_named("mel_peak", peak=out, **args)
                    yield t_next, out[0]
                else:
                    out = np.empty((N_MELS, n), np.float32)
                    self.frontend.call_named("mel_block", peak=peak, mel_block=out, **args)
                    yield t_next, out
                t_next += n
                keep = max(0, (t_next - CONTEXT_FRAMES) * HOP)
                if keep > buf_begin:
                    buf = buf[keep - buf_begin :]
                    buf_begin = keep

    def window(self, start: int, size: int) -> np.ndarray:
        stop = min(start + size, self.n_frames)
        if start < 0 or size < 0:
            raise ValueError(f"mel window [{start}, {start + size}) is outside [0, {self.n_frames})")
        if self._pass2 is None or start < (self._held[0][0] if self._held else self._produced):
            self._pass2, self._held, self._produced = self._blocks(self.peak), [], 0
        while self._produced < stop:
            t0, frames = next(self._pass2)
            self._held.append((t0, frames))
            self._produced = t0 + frames.shape[1]
        self._held = [(t0, f) for t0, f in self._held if t0 + f.shape[1] > start]
        out = np.empty((N_MELS, max(stop - start, 0)), np.float32)
        for t0, f in self._held:
            lo, hi = max(start, t0), min(stop, t0 + f.shape[1])
            if lo < hi:
                out[:, lo - start : hi - start] = f[:, lo - t0 : hi - t0]
        return out

    def close(self) -> None:
        self._pass2 = None
        self.source.close()
