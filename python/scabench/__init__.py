"""scabench: SCA component pipelines over omniORB, measured."""

# The one place the version is set (python/pyproject.toml reads it from here).
__version__ = "0.1.0"
