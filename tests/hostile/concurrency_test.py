"""Engines in several threads at once give exactly the serial results; misuse of an engine or a
handle is an error, never a crash or silent corruption.

  three threads, each with its own tiny.en engine, three different files at once
      -> segments (tokens, times, text) identical to one engine transcribing them one by one;
  an engine used by a second thread while the first transcribes -> EngineError "in use by
      another thread", and the first thread's transcript is still exactly the serial one;
  an engine used after close() -> EngineError "was closed"; close() twice -> nothing to do;
  a handle used after close() -> AbiError "was freed"; closed twice -> AbiError "freed twice";
  a handle called from its own callback (a tap) -> AbiError "in use by another call".
(The C ABI's own E_BUSY and free-during-a-call are tested on the toy library:
//tools/codegen:toy_abi_test, ToyCallStateTest.)
"""

import os
import threading

import pytest

from ckw.runtime import abi, audio_input
from ckw.runtime.engine import Engine, EngineError

ROOT = os.environ["TEST_SRCDIR"]
FILES = ["jfk.wav", "librispeech/1089-134686-0000.flac", "librispeech/1089-134686-0002.wav"]


def audio(name):
    return audio_input.load_audio_bytes(os.path.join(ROOT, "test_audio", name))


def summary(result):
    return [(s["start"], s["end"], s["text"], s["tokens"]) for s in result["segments"]]


@pytest.fixture(scope="module")
def serial():
    with Engine.from_runfiles("tiny") as engine:
        return {name: summary(engine.transcribe_long(audio(name))) for name in FILES}


def test_engines_in_threads_give_the_serial_results(serial):
    engines = [Engine.from_runfiles("tiny") for _ in FILES]
    results, errors = {}, []
    start = threading.Barrier(len(FILES))

    def work(engine, name):
        try:
            start.wait()
            results[name] = summary(engine.transcribe_long(audio(name)))
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(e, n)) for e, n in zip(engines, FILES)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in engines:
        e.close()
    assert not errors, errors
    assert results == serial
    assert all(serial[name] for name in FILES)


def test_second_thread_on_one_engine_is_refused(serial):
    engine = Engine.from_runfiles("tiny")
    refusals = []

    def second_thread():
        try:
            engine.transcribe_long(audio(FILES[1]))
        except EngineError as e:
            refusals.append(str(e))

    def on_segment(_segment):  # runs inside the first thread's transcription
        if not refusals:
            t = threading.Thread(target=second_thread)
            t.start()
            t.join()

    first = engine.transcribe_long(audio(FILES[0]), on_segment=on_segment)
    assert refusals and "in use by another thread" in refusals[0], refusals
    assert summary(first) == serial[FILES[0]]
    engine.close()


def test_engine_after_close():
    engine = Engine.from_runfiles("tiny")
    engine.close()
    engine.close()  # freeing a closed engine again: nothing to do
    with pytest.raises(EngineError, match="was closed"):
        engine.transcribe_long(audio(FILES[0]))


def test_handle_misuse_is_an_error():
    engine = Engine.from_runfiles("tiny")
    handle = engine.frontend.handle
    handle.close()
    with pytest.raises(abi.AbiError, match="was freed"):
        handle("run_shape", None, 0, None)
    with pytest.raises(abi.AbiError, match="freed twice"):
        handle.close()
    decoder = engine.decoder.handle
    calls = []

    def reenter(edge, data):
        if not calls:
            try:
                decoder("reset")
            except abi.AbiError as e:
                calls.append(e)

    decoder.set_tap(reenter)
    with pytest.raises(EngineError):
        engine.transcribe_long(audio(FILES[0]))  # the frontend handle was freed
    engine.decoder.set_encoder_memory(engine.encoder.run(engine_mel(engine)))
    engine.decoder.prefill([engine.tokenizer.sot])
    decoder.set_tap()
    assert calls and calls[0].code == abi.E_BUSY and "in use by another call" in str(calls[0])
    engine.close()


def engine_mel(engine):
    import numpy as np

    return np.zeros((engine.config["n_mels"], 3000), np.float32)
