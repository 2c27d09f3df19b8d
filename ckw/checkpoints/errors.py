"""The one exception type of the checkpoint library.

Every failure is a single line naming the file (and tensor, when there is one) and what to do,
so that the repository rule can pass it to `fail()` unchanged.
"""


class CheckpointError(Exception):
    """A checkpoint could not be found, read or converted. The message is one line."""

    def __init__(self, message: str):
        # Keep the promise of one line even when a path or a foreign message has a newline.
        super().__init__(" ".join(str(message).split()))
