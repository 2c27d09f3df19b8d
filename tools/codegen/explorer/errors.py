"""The explorer's one user-facing error: a single line naming the file or flag and what to do."""


class ExploreError(Exception):
    pass
