"""The engine's errors: each message names the file, what is wrong and what to do."""


class EngineError(RuntimeError):
    """The engine cannot be created or used (checkpoint refused, handle misuse, ...)."""


class AudioError(EngineError):
    """The audio was refused (malformed, unsupported): the message is the problem alone, for the
    caller to prefix with the file's name."""
