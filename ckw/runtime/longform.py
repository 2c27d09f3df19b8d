"""Long-form transcription with openai-whisper's `transcribe()` semantics (its transcribe.py is
the reference; its hallucination_silence_threshold heuristics are not implemented).

The whole recording's log-mel (plus 30 s of padding, as `log_mel_spectrogram(audio,
padding=N_SAMPLES)`) is read in 30 s windows starting at `seek`:

- each window is decoded with timestamps (ckw/runtime/decoding.py), at the first temperature of
  the schedule and again at the next one while the result is too repetitive (gzip compression
  ratio > 2.4) or too unlikely (average log-probability < -1.0), unless it looks like silence
  (no-speech probability > 0.6 together with the low log-probability);
- a window whose no-speech probability exceeds the threshold is skipped whole unless its
  average log-probability is above the log-probability threshold;
- the tokens are cut into segments at each pair of consecutive timestamps; if the window ends
  with a single timestamp (no speech after it) the next window starts after this one,
  otherwise at the last complete segment's end timestamp (the unfinished tail is decoded
  again); without any timestamp pair the window is one segment and the next window follows it;
- the text so far is the next window's prompt (`<|startofprev|>` + at most 223 tokens, from
  the initial prompt on), unless conditioning is off or the window needed a temperature above
  0.5, after which the prompt restarts empty;
- `clip_timestamps` restricts decoding to start,end,start,end,... seconds (a clip ends at the
  end of the audio at the latest; openai-whisper can loop forever on a clip that ends later).

Language: given, "en" for English-only checkpoints, else detected on the first 30 s window
(openai-whisper's `detect_language`). Sampling at temperature > 0 uses a numpy Generator
seeded with `seed`; it cannot reproduce torch's random stream, so sampled windows are
reproducible here but differ from openai-whisper's.
"""

import dataclasses
from typing import Callable, Dict, Generator, List, Optional, Protocol, Sequence, Tuple, Union

import numpy as np

from ckw.runtime import decoding, word_timing
from ckw.runtime.decoding import DecodingOptions, DecodingResult, TextDecoder
from ckw.runtime.options import TranscribeOptions, parse_clip_timestamps
from ckw.runtime.tokenizer import WhisperTokenizer

SAMPLE_RATE = 16000
HOP_LENGTH = 160
N_FRAMES = 3000  # mel frames per 30 s window
FRAMES_PER_SECOND = SAMPLE_RATE // HOP_LENGTH  # 100


def pad_or_trim(window: np.ndarray, frames: int = N_FRAMES) -> np.ndarray:
    """[n_mels, frames]: cut, or padded with zeros (not with log-mel of silence), as openai-whisper."""
    if window.shape[-1] >= frames:
        return np.ascontiguousarray(window[:, :frames], dtype=np.float32)
    out = np.zeros((window.shape[0], frames), np.float32)
    out[:, : window.shape[-1]] = window
    return out


DecodeFn = Callable[..., DecodingResult]


class MelFrames(Protocol):
    """The log-mel of a recording plus 30 s of padding, read window by window (runtime.audio_stream's
    MelStream computes windows on demand; MelArray holds them all)."""

    n_frames: int  # content frames + N_FRAMES

    def window(self, start: int, size: int) -> np.ndarray:
        """Frames [start, start + size) as [n_mels, size] float32."""


class MelArray:
    """A whole log-mel array [n_mels, frames] as MelFrames."""

    def __init__(self, mel: np.ndarray):
        if mel.ndim != 2 or mel.shape[1] < N_FRAMES:
            raise ValueError(f"log-mel has shape {mel.shape}; needs [n_mels, frames + {N_FRAMES}] (30 s of padding)")
        self.mel, self.n_frames = mel, mel.shape[1]

    def window(self, start: int, size: int) -> np.ndarray:
        return self.mel[:, start : start + size]


class EncodedWindows:
    """Encoder memory of 30 s windows of the log-mel, the last one kept (language detection and
    the first window often share it)."""

    def __init__(self, mel: Union[np.ndarray, MelFrames], encode: Callable[[np.ndarray], np.ndarray]):
        self.mel = MelArray(mel) if isinstance(mel, np.ndarray) else mel
        if self.mel.n_frames < N_FRAMES:
            raise ValueError(f"log-mel has {self.mel.n_frames} frames; needs frames + {N_FRAMES} (30 s of padding)")
        self.encode = encode
        self.content_frames = self.mel.n_frames - N_FRAMES
        self._key: Optional[Tuple[int, int]] = None
        self._memory: Optional[np.ndarray] = None

    def memory(self, start: int, size: int) -> np.ndarray:
        if self._key != (start, size):
            window = pad_or_trim(self.mel.window(start, size))
            self._memory, self._key = np.array(self.encode(window), copy=True), (start, size)
        return self._memory


def detect_language(
    windows: EncodedWindows, decoder: TextDecoder, tokenizer: WhisperTokenizer, first_window: bool = False
):
    """openai-whisper's choice on the first 30 s of the padded log-mel (never zero-padded):
    (language code, probability of every language). first_window: on the first decoded window
    instead, zero-padded past the content (faster-whisper's batched chunks), so the encoder runs
    once for both."""
    size = min(N_FRAMES, windows.content_frames) if first_window else N_FRAMES
    return decoding.detect_language(decoder, tokenizer, windows.memory(0, size))


def transcribe(
    mel: Union[np.ndarray, MelFrames],
    encode: Callable[[np.ndarray], np.ndarray],
    decoder: TextDecoder,
    tokenizer: WhisperTokenizer,
    options: TranscribeOptions = TranscribeOptions(),
    *,
    n_audio_ctx: int = 1500,
    decode_fn: DecodeFn = decoding.decode,
    on_segment: Optional[Callable[[Dict], None]] = None,
    alignment_heads: Sequence[Sequence[int]] = (),
) -> Dict:
    """Transcribes a whole recording.

    mel: [n_mels, content frames + 3000], the log-mel of the recording padded with 30 s of
    silence, or MelFrames. encode: one window [n_mels, 3000] -> encoder memory. decode_fn: the
    window decoder (runtime.decoding.decode; tests substitute scripted ones). on_segment:
    called with every finished segment as soon as it is known.

    Returns openai-whisper's result dictionary: `text`, `segments` (id, seek, start, end, text,
    tokens, temperature, avg_logprob, compression_ratio, no_speech_prob) and `language`, plus
    `windows`: one entry per decoded window: seek, frames, skipped (as silence), and attempts
    (temperature, tokens, avg_logprob, compression_ratio, no_speech_prob of every decode).
    """
    segments = iter_segments(
        EncodedWindows(mel, encode),
        decoder,
        tokenizer,
        options,
        n_audio_ctx=n_audio_ctx,
        decode_fn=decode_fn,
        alignment_heads=alignment_heads,
    )
    while True:
        try:
            segment = next(segments)
        except StopIteration as done:
            return done.value
        if on_segment is not None:
            on_segment(segment)


def iter_segments(
    encoded: EncodedWindows,
    decoder: TextDecoder,
    tokenizer: WhisperTokenizer,
    options: TranscribeOptions = TranscribeOptions(),
    *,
    n_audio_ctx: int = 1500,
    decode_fn: DecodeFn = decoding.decode,
    on_progress: Optional[Callable[[int], None]] = None,
    alignment_heads: Sequence[Sequence[int]] = (),
) -> Generator[Dict, None, Dict]:
    """`transcribe` as a generator: yields each segment as soon as it is known and returns the
    result dictionary. on_progress: called after each window with the content frames it
    advanced (as openai-whisper's progress bar). alignment_heads: (layer, head) pairs whose
    cross-attention times the words (options.word_timestamps)."""
    content_frames = encoded.content_frames
    input_stride = N_FRAMES // n_audio_ctx  # mel frames per output position: 2
    time_precision = input_stride * HOP_LENGTH / SAMPLE_RATE  # seconds per timestamp step: 0.02
    temperatures = options.temperatures
    rng = np.random.default_rng(options.seed)
    memory_for = encoded.memory

    language = options.language
    if language is None:
        if tokenizer.is_multilingual:
            # openai-whisper: the first 30 s of the padded log-mel (never zero-padded).
            language = detect_language(encoded, decoder, tokenizer)[0]
        else:
            language = "en"

    base = DecodingOptions(
        language=language,
        task=options.task,
        sample_len=options.sample_len,
        suppress_blank=options.suppress_blank,
        without_timestamps=options.without_timestamps,
        max_initial_timestamp=options.max_initial_timestamp,
        suppress_tokens=options.suppress_tokens,
        length_penalty=options.length_penalty,
    )

    def decode_with_fallback(memory: np.ndarray, prompt: List[int]) -> Tuple[DecodingResult, List[Dict]]:
        attempts = []
        result = None
        for t in temperatures:
            # As openai-whisper: beams at temperature 0, best_of samples above.
            opts = dataclasses.replace(
                base,
                temperature=float(t),
                prompt=list(prompt),
                best_of=options.best_of if t > 0 else None,
                beam_size=options.beam_size if t == 0 else None,
                patience=options.patience if t == 0 else None,
            )
            result = decode_fn(decoder, tokenizer, memory, opts, rng)
            attempts.append(
                {
                    "temperature": float(t),
                    "tokens": list(result.tokens),
                    "avg_logprob": result.avg_logprob,
                    "compression_ratio": result.compression_ratio,
                    "no_speech_prob": result.no_speech_prob,
                }
            )
            needs_fallback = False
            if (
                options.compression_ratio_threshold is not None
                and result.compression_ratio > options.compression_ratio_threshold
            ):
                needs_fallback = True  # too repetitive
            if options.logprob_threshold is not None and result.avg_logprob < options.logprob_threshold:
                needs_fallback = True  # too unlikely
            if (
                options.no_speech_threshold is not None
                and result.no_speech_prob > options.no_speech_threshold
                and options.logprob_threshold is not None
                and result.avg_logprob < options.logprob_threshold
            ):
                needs_fallback = False  # silence
            if not needs_fallback:
                break
        return result, attempts

    seek_clips = parse_clip_timestamps(options.clip_timestamps, content_frames)
    all_tokens: List[int] = []
    all_segments: List[Dict] = []
    windows: List[Dict] = []
    prompt_reset_since = 0
    remaining_prompt_length = decoder.n_text_ctx // 2 - 1
    initial_prompt_tokens: List[int] = []
    if options.initial_prompt is not None:
        initial_prompt_tokens = tokenizer.encode(" " + options.initial_prompt.strip())
        all_tokens.extend(initial_prompt_tokens)
        remaining_prompt_length -= len(initial_prompt_tokens)

    clip_idx = 0
    seek = seek_clips[clip_idx][0]
    reported = 0  # content frames reported to on_progress

    def progress() -> None:
        nonlocal reported
        if on_progress is not None and min(seek, content_frames) > reported:
            on_progress(min(seek, content_frames) - reported)
            reported = min(seek, content_frames)

    last_speech_timestamp = 0.0  # word timestamps: the end of the last word so far
    while clip_idx < len(seek_clips):
        seek_clip_start, seek_clip_end = seek_clips[clip_idx]
        if seek < seek_clip_start:
            seek = seek_clip_start
        # openai-whisper checks the clip's end only: past the end of the audio it decodes empty
        # windows that may never move `seek` (an endless loop when a clip ends after the audio).
        if seek >= seek_clip_end or seek >= content_frames:
            clip_idx += 1
            if clip_idx < len(seek_clips):
                seek = seek_clips[clip_idx][0]
            continue
        time_offset = float(seek * HOP_LENGTH / SAMPLE_RATE)
        segment_size = min(N_FRAMES, content_frames - seek, seek_clip_end - seek)
        segment_duration = segment_size * HOP_LENGTH / SAMPLE_RATE

        if options.carry_initial_prompt:
            n_ignored = max(len(initial_prompt_tokens), prompt_reset_since)
            prompt = initial_prompt_tokens + all_tokens[n_ignored:][-remaining_prompt_length:]
        else:
            prompt = all_tokens[prompt_reset_since:]

        result, attempts = decode_with_fallback(memory_for(seek, segment_size), prompt)
        tokens = list(result.tokens)
        window = {"seek": seek, "frames": segment_size, "attempts": attempts, "skipped": False}
        windows.append(window)

        if options.no_speech_threshold is not None:
            should_skip = result.no_speech_prob > options.no_speech_threshold
            if options.logprob_threshold is not None and result.avg_logprob > options.logprob_threshold:
                should_skip = False  # likely enough despite the no-speech probability
            if should_skip:
                window["skipped"] = True
                seek += segment_size  # silence: on to the next window
                progress()
                continue

        window_seek = seek

        def new_segment(start: float, end: float, segment_tokens: List[int]) -> Dict:
            return {
                "seek": window_seek,
                "start": start,
                "end": end,
                "text": tokenizer.decode([t for t in segment_tokens if t < tokenizer.eot]),
                "tokens": list(segment_tokens),
                "temperature": result.temperature,
                "avg_logprob": result.avg_logprob,
                "compression_ratio": result.compression_ratio,
                "no_speech_prob": result.no_speech_prob,
            }

        current: List[Dict] = []
        is_ts = [t >= tokenizer.timestamp_begin for t in tokens]
        single_timestamp_ending = is_ts[-2:] == [False, True]
        consecutive = [i + 1 for i in range(len(tokens) - 1) if is_ts[i] and is_ts[i + 1]]
        if consecutive:
            slices = consecutive + ([len(tokens)] if single_timestamp_ending else [])
            last_slice = 0
            for current_slice in slices:
                piece = tokens[last_slice:current_slice]
                start_pos = piece[0] - tokenizer.timestamp_begin
                end_pos = piece[-1] - tokenizer.timestamp_begin
                current.append(
                    new_segment(time_offset + start_pos * time_precision, time_offset + end_pos * time_precision, piece)
                )
                last_slice = current_slice
            if single_timestamp_ending:
                seek += segment_size  # no speech after the last timestamp
            else:
                # the unfinished last segment is decoded again from its start timestamp
                seek += (tokens[last_slice - 1] - tokenizer.timestamp_begin) * input_stride
        else:
            duration = segment_duration
            timestamps = [t for t, ts in zip(tokens, is_ts) if ts]
            if timestamps and timestamps[-1] != tokenizer.timestamp_begin:
                # no pair, but a timestamp: it marks the end of the speech
                duration = (timestamps[-1] - tokenizer.timestamp_begin) * time_precision
            current.append(new_segment(time_offset, time_offset + duration, tokens))
            seek += segment_size

        if options.word_timestamps:
            word_timing.add_word_timestamps(
                current,
                decoder,
                tokenizer,
                memory_for(window_seek, segment_size),
                segment_size,
                alignment_heads,
                language,
                options.task,
                last_speech_timestamp,
                options.prepend_punctuations,
                options.append_punctuations,
            )
            last_word_end = word_timing.last_word_end(current)
            if not single_timestamp_ending and last_word_end is not None and last_word_end > time_offset:
                seek = round(last_word_end * FRAMES_PER_SECOND)  # the next window starts after the last word
            if last_word_end is not None:
                last_speech_timestamp = last_word_end

        for segment in current:  # instantaneous or textless segments keep no text
            if segment["start"] == segment["end"] or segment["text"].strip() == "":
                segment["text"] = ""
                segment["tokens"] = []
                if options.word_timestamps:
                    segment["words"] = []
        all_tokens.extend(t for segment in current for t in segment["tokens"])
        for segment in current:
            all_segments.append({"id": len(all_segments), **segment})
            yield all_segments[-1]
        progress()

        if not options.condition_on_previous_text or result.temperature > 0.5:
            prompt_reset_since = len(all_tokens)  # no prompt after a high-temperature window

    return {
        "text": tokenizer.decode(all_tokens[len(initial_prompt_tokens) :]),
        "segments": all_segments,
        "language": language,
        "windows": windows,
    }
