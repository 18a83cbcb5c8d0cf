"""Errors meant for people: each names where the problem is and what would be valid."""


class ScabenchError(Exception):
    """Base class: the CLI prints these without a traceback."""


class SpecError(ScabenchError):
    """A spec file is wrong: names the file, the key and what is valid."""

    def __init__(self, path, key, message):
        self.path, self.key = str(path), key
        super().__init__(f"{path}: {key}: {message}" if key else f"{path}: {message}")


class RunError(ScabenchError):
    """A run failed: names the component and why. The partial result is kept."""

    def __init__(self, message, component="", result=None):
        self.component, self.result = component, result
        super().__init__(message)
