"""The one exception the compiler raises: a single-line diagnostic for the user."""


class CompileError(Exception):
    """A fatal, user-facing problem; str(error) is the whole one-line diagnostic."""

    def __init__(self, message: str):
        super().__init__(" ".join(message.split()))
