"""Termination signals as an exception that unwinds through the code that
owns processes, so that each owner stops what it started and keeps what it
measured (docs/architecture.md, "Faults").

SIGINT, SIGTERM and SIGHUP raise Interrupted in the main thread. Interrupted
is a KeyboardInterrupt, so code that already cleans up on Ctrl-C cleans up
on the other two as well. Only the first signal raises: a second Ctrl-C
while the run is being taken down must not cut the clean-up short."""

import contextlib
import signal
import threading
import time

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A termination signal arrived. `result` is whatever the interrupted
    command had measured (set by the code that owned the measurement), and
    `saved_to` where it was written."""

    def __init__(self, signum, result=None):
        super().__init__(signum)
        self.signum, self.result, self.saved_to = signum, result, None

    @property
    def name(self):
        return signal.Signals(self.signum).name

    @property
    def exit_code(self):
        # The shell's convention for a command ended by a signal.
        return 128 + self.signum


_state = {"installed": False, "raised": False}


def _on_signal(signum, frame):
    if _state["raised"]:
        return
    _state["raised"] = True
    raise Interrupted(signum)


def install():
    """Makes the termination signals raise Interrupted (from the main thread
    only, where Python delivers signals). Idempotent."""
    if threading.current_thread() is not threading.main_thread() or _state["installed"]:
        return
    for s in SIGNALS:
        signal.signal(s, _on_signal)
    _state["installed"] = True


def installed():
    return _state["installed"]


@contextlib.contextmanager
def while_owning():
    """For code used as a library, outside the CLI (which installs for good):
    raises Interrupted on the termination signals while the block owns
    something that must be taken down (network namespaces, processes), and
    puts the caller's handlers back afterwards."""
    if installed() or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    install()
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        _state["installed"] = _state["raised"] = False


def wait(done: threading.Event | None = None, releases: tuple = SIGNALS) -> "Interrupted | None":
    """Blocks until a termination signal arrives, then lets the next one
    raise again: a command that waits for Ctrl-C as its normal end
    (`scabench run --hold`) can still be interrupted afterwards. A signal in
    `releases` ends the wait (its Interrupted is returned); any other is
    raised as from anywhere else (exit 128 + its number). done (a
    threading.Event), if given, ends the wait too (returns None)."""
    try:
        while done is None or not done.wait(0.2):
            if done is None:
                time.sleep(3600)
    except Interrupted as exc:
        if exc.signum not in releases:
            raise
        _state["raised"] = False
        return exc
    return None
