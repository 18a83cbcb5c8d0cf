"""Errors meant for people: each names where the problem is and what would be valid."""


class ScabenchError(Exception):
    """Base class: the CLI prints these without a traceback."""


def one_line(text):
    """Text as it may appear in a one-line error: control characters (a key
    or value from a file can hold newlines) are shown escaped."""
    text = str(text)
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


class SpecError(ScabenchError):
    """A spec file is wrong: names the file, the key and what is valid."""

    def __init__(self, path, key, message):
        self.path, self.key, self.message = str(path), key, message
        path, key, message = one_line(path), one_line(key), one_line(message)
        super().__init__(f"{path}: {key}: {message}" if key else f"{path}: {message}")


class RunError(ScabenchError):
    """A run failed: names the component and why. The partial result is kept."""

    def __init__(self, message, component="", result=None):
        self.component, self.result = component, result
        super().__init__(message)
