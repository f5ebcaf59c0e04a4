"""User-facing errors: one clear line on stderr and a non-zero exit, never a traceback."""


class DbfsError(Exception):
    """A problem with the user's input or environment.

    collective=True means every rank raised it with the same message (e.g. after `runtime.agree`), so
    rank 0 alone reports it and all ranks exit cleanly; otherwise the raising rank aborts the job.
    """

    def __init__(self, message: str, collective: bool = False):
        super().__init__(message)
        self.collective = collective
