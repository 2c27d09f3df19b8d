"""The Ray actor class of the corpus tool: Ray ships this module to the workers by value, and the
actor imports the worker (tools/corpus/worker.py) there from the ckw wheel that the job's
runtime_env brought (`ckw.tools.corpus.worker`, tools/corpus/shipping.py).

Only the standard library here: the workers have neither this checkout's packages nor the names
the driver uses. For the same reason errors cross back as built-in exceptions carrying the
worker's message (the driver could not unpickle ckw's own classes).
"""

import importlib


def _plain(error: Exception) -> Exception:
    kind = ValueError if isinstance(error, ValueError) else RuntimeError
    return kind(str(error))


class CorpusActor:
    def __init__(self, worker_module: str, *args):
        try:
            self.worker = importlib.import_module(worker_module).CorpusWorker(*args)
        except Exception as e:  # noqa: BLE001 (the engine's own error classes do not exist on the driver)
            raise _plain(e) from None

    def info(self) -> dict:
        return self.worker.info()

    def transcribe(self, path: str) -> dict:
        try:
            return self.worker.transcribe(path)
        except Exception as e:  # noqa: BLE001 (an unexpected failure: this file's error, in the driver's terms)
            raise _plain(e) from None
