"""The Ray actor class of the corpus tool: Ray ships this module to the workers by value, and the
actor imports the worker (ckw/corpus/worker.py) there, when it starts, from the ckw wheel that the
job's runtime_env brought (ckw/corpus/shipping.py): the driver's module under the same name, since
the wheel is the tree's ckw/ as it is.

Only the standard library at the top: the workers have nothing of this checkout but the wheel.
For the same reason errors cross back as built-in exceptions carrying the worker's message (the
driver could not unpickle ckw's own classes).
"""


def _plain(error: Exception) -> Exception:
    kind = ValueError if isinstance(error, ValueError) else RuntimeError
    return kind(str(error))


class CorpusActor:
    def __init__(self, *args):
        try:
            from ckw.corpus import worker  # the wheel's, on the worker

            self.worker = worker.CorpusWorker(*args)
        except Exception as e:  # noqa: BLE001 (the engine's own error classes do not exist on the driver)
            raise _plain(e) from None

    def info(self) -> dict:
        return self.worker.info()

    def transcribe(self, path: str) -> dict:
        try:
            return self.worker.transcribe(path)
        except Exception as e:  # noqa: BLE001 (an unexpected failure: this file's error, in the driver's terms)
            raise _plain(e) from None
