"""The one exception the compiler raises: a single-line diagnostic for the user."""


class CompileError(Exception):
    """A fatal, user-facing problem; str(error) is the whole one-line diagnostic.

    `context` says where it failed as data (e.g. `phase`, `op`, `edge`: (producer, consumer) as
    the message names them, `candidates`), so a tool can draw the failure on the graph."""

    def __init__(self, message: str, **context):
        super().__init__(" ".join(message.split()))
        self.context = context
