"""User-facing errors: one clear line on stderr and a non-zero exit, never a traceback."""

import signal


class DbfsError(Exception):
    """A problem with the user's input or environment.

    collective=True means every rank raised it with the same message (e.g. after `runtime.agree`), so
    rank 0 alone reports it and all ranks exit cleanly; otherwise the raising rank aborts the job.
    """

    def __init__(self, message: str, collective: bool = False):
        super().__init__(message)
        self.collective = collective


class Interrupted(BaseException):
    """SIGINT (Ctrl-C) or SIGTERM (scancel, kill) arrived: raised in the main thread so that cleanup
    (finally blocks, temporary files) runs on the way out, and not caught by `except Exception`."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
