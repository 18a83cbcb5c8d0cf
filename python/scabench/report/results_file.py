"""Results on disk: one way to write a command's JSON, so every result file
looks alike and its folder is made on the way."""
import json
from pathlib import Path


def write_json(doc, path):
    """Writes `doc` as indented JSON to `path`, creating its folder; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path
