"""Which link sequences a receiving port has finished with, over a bounded
window: the C++ runtime's LinkWindow (cpp/runtime/include/scabench/runtime/
link_window.hpp) in Python. The contiguous prefix of finished numbers, and
the finished numbers of the `size` after it.

A number at or beyond prefix + size is AHEAD: no legitimate sender gets
there, so the port refuses it before it does anything with it. A number
below the prefix, or in the window and finished, is BEHIND: seen before.
The rest are INSIDE. finish() marks a number done and moves the prefix over
every number finished in a row: what end of stream waits for.
"""

import threading

BEHIND, INSIDE, AHEAD = "behind", "inside", "ahead"


class LinkWindow:
    def __init__(self, size):
        if size < 1:
            raise ValueError("a link window must hold at least one number")
        self.size = size
        self._prefix = 0
        self._done = set()  # finished numbers in (prefix, prefix + size): at most size of them
        self._lock = threading.Lock()

    def place(self, n):
        with self._lock:
            if n < self._prefix:
                return BEHIND
            if n - self._prefix >= self.size:
                return AHEAD
            return BEHIND if n in self._done else INSIDE

    def finish(self, n):
        """Marks n finished (ignored outside the window); returns the new prefix."""
        with self._lock:
            if self._prefix <= n < self._prefix + self.size:
                self._done.add(n)
                while self._prefix in self._done:
                    self._done.remove(self._prefix)
                    self._prefix += 1
            return self._prefix

    @property
    def prefix(self):
        with self._lock:
            return self._prefix
