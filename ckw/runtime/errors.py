"""The engine's errors: each message names the file, what is wrong and what to do."""


class EngineError(RuntimeError):
    """The engine cannot be created or used (checkpoint refused, handle misuse, ...)."""


class AudioError(EngineError):
    """The audio was refused (malformed, unsupported): the message is the problem alone, for the
    caller to prefix with the file's name."""


class OptionError(ValueError):
    """A wrong option value; `name` is the option, the message begins with it (ckw/runtime/options.py
    and ckw/runtime/speech_timestamps.py raise it; runtime.options.OptionError is this class)."""

    def __init__(self, name: str, message: str):
        super().__init__(f"{name}{message}")
        self.name = name
