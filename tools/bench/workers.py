"""Files transcribed by worker processes, each with its own single-thread engine: the corpus
tool's best setup (one file per worker, one thread each) without Ray, the peer //tools:benchmark_streams
holds ckw/runtime/streams.py to. Processes, not threads: each has its own GIL. 'spawn', not 'fork':
a child inherits no engine threads or locks, only the environment (the runfiles tree: RUNFILES_DIR
and PYTHONPATH, set by the py_binary's launcher)."""

import multiprocessing
import queue
import time
import traceback

from ckw.runtime.engine import Engine
from ckw.runtime.transcription import collect


def _serve(model: str, options: dict, jobs, results) -> None:
    """One worker: loads its engine, says ("ready",), then answers each (index, path) job with
    (index, text, audio seconds) until None; ("error", traceback) if anything fails."""
    try:
        engine = Engine.from_runfiles(model, threads=1)
        results.put(("ready",))
        for index, path in iter(jobs.get, None):
            segments, info = engine.transcribe(path, **options)
            results.put((index, collect(segments, info, engine.tokenizer.eot)["text"], info.duration))
        engine.close()
    except BaseException:
        results.put(("error", traceback.format_exc()))


def _get(results, procs):
    """The next message; RuntimeError for a worker's error or a worker that died without one."""
    while True:
        try:
            message = results.get(timeout=1.0)
        except queue.Empty:
            dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f"a worker process exited with code {dead[0]}") from None
            continue
        if message[0] == "error":
            raise RuntimeError(f"a worker failed:\n{message[1]}")
        return message


def transcribe(model: str, paths: list[str], options: dict, workers: int = 2):
    """(audio seconds, wall seconds, texts in the order of `paths`) of `workers` processes pulling
    the files from one queue. The clock starts once every engine is loaded."""
    ctx = multiprocessing.get_context("spawn")
    jobs, results = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=_serve, args=(model, options, jobs, results), daemon=True) for _ in range(workers)]
    for p in procs:
        p.start()
    try:
        for _ in procs:
            _get(results, procs)  # ("ready",)
        t0 = time.perf_counter()
        for job in enumerate(paths):
            jobs.put(job)
        done = sorted(_get(results, procs) for _ in paths)
        wall = time.perf_counter() - t0
        for _ in procs:
            jobs.put(None)
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
    return sum(seconds for _, _, seconds in done), wall, [text for _, text, _ in done]
