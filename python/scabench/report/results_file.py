"""Results on disk: one way to write a command's JSON, so every result file
looks alike and its folder is made on the way. Typed results (a RunResult,
run/results.py) become JSON here, through their as_dict().

Every result file names the scabench that measured it, as its first key:
`scabench`: {"version", "commit"} (scabench/version.py). It is put in when
the result is made (a run when it runs, RunResult.scabench, so the runs
inside a study's document carry it too; a document by stamped()), not when
it is written: a document read back and written again (a report
re-rendered) keeps the version that measured it, or none if it was
measured before versions were recorded."""

import csv
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from scabench.errors import ScabenchError, one_line
from scabench.files import FileRefused, read_regular
from scabench.measure.repeat import Benchmark
from scabench.run.results import RunResult
from scabench.version import version_info

# A table for --csv: its header, and its rows of raw figures (None: a missing one).
CsvTable = tuple[list[str], list[list[Any]]]


def _as_json(value: Any) -> Any:
    """What json cannot write itself: a typed result, as its dict."""
    if hasattr(value, "as_dict"):
        return value.as_dict()
    raise TypeError(f"{type(value).__name__} cannot be written as JSON")


def write_json(doc: Any, path: str | os.PathLike) -> Path:
    """Writes `doc` as indented JSON to `path`, creating its folder; returns
    the path. `doc` may hold typed results anywhere (a campaign's runs)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1, default=_as_json) + "\n"
    # Written beside and renamed over: a signal or a full disk mid-write
    # leaves the last whole file, which a study or a sweep resumes from.
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        part.write_text(text)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
    return path


def stamped(doc: dict[str, Any]) -> dict[str, Any]:
    """A document as a command makes it, with the scabench that measured it
    as its first key (the module docstring)."""
    return {"scabench": version_info(), **doc}


def write_csv(header: Sequence[str], rows: Iterable[Sequence[Any]], path: str | os.PathLike) -> Path:
    """Writes a table as CSV (`--csv`): the figures raw, in the units their
    column names say (`_ms`, `_bps`), a missing one empty; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(header)
        out.writerows([["" if v is None else v for v in row] for row in rows])
    return path


def records_table(records: Iterable[dict], first: Sequence[str] = ()) -> CsvTable:
    """Dicts (a study's rows) as (header, rows) for write_csv: a column per
    key that holds a plain value in any of them, `first` ones first, then in
    the order met; nested values are left to the JSON."""
    header = list(first)
    for record in records:
        header += [
            k for k, v in record.items() if k not in header and (v is None or isinstance(v, (str, int, float, bool)))
        ]
    return header, [[r.get(k) if not isinstance(r.get(k), (dict, list)) else None for k in header] for r in records]


# The most a result file read back may hold. A run writes about 50 bytes per
# packet (every send time and every latency, a line each), so 1 GiB is some
# twenty million packet-runs: far above any result a command writes (the
# largest kept in tests/python/data is 66 kB), and small enough to parse in
# this machine's memory. docs/architecture.md, "Faults".
MAX_RESULT_BYTES = 1 << 30


def read_result(path: str | os.PathLike, flag: str) -> Any:
    """The JSON in a result file, read only if it is a regular file of at
    most MAX_RESULT_BYTES (scabench/files.py: a named pipe or /dev/zero is
    refused, not read); anything else is a ScabenchError naming the flag and
    the file. Every reader of a kept result reads through here."""
    try:
        return json.loads(read_regular(path, MAX_RESULT_BYTES, "a JSON result file").decode("utf-8"))
    except FileRefused as exc:
        raise ScabenchError(f"{flag}: {one_line(path)}: {exc.reason}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ScabenchError(f"{flag}: {one_line(path)} is not a JSON result file ({type(exc).__name__})") from None


def read_json(path: str | os.PathLike, flag: str, expect_key: str) -> dict[str, Any]:
    """A result file this tool wrote, read back (read_result); anything else
    is a ScabenchError naming the flag, the file and what was expected."""
    doc = read_result(path, flag)
    if not isinstance(doc, dict) or expect_key not in doc:
        raise ScabenchError(f"{flag}: {path} is not a result of this command (no {expect_key!r})")
    return doc


def read_runs(path: str | os.PathLike, flag: str) -> tuple[list[RunResult], list[str], dict[str, Any]]:
    """The runs in a result of `scabench run --json`: one run, or every run
    of a benchmark (--runs); with the benchmark's warnings. Anything else is
    a ScabenchError naming the flag, the file and what was expected."""
    doc = read_json(path, flag, "status")
    try:
        if "benchmark" in doc:
            bench = Benchmark.from_dict(doc)
            return [r for r in bench.runs if finished(r)], bench.warnings(), bench.spec
        run = RunResult.from_dict(doc)
    except (ValueError, KeyError, TypeError) as exc:
        raise ScabenchError(f"{flag}: {path} is not a result of scabench run --json ({exc})") from None
    if not finished(run):
        # Its figures are of a cut stream, or there are none: not a run to set beside another.
        why = f": {run.error}" if run.error else ""
        raise ScabenchError(
            f"{flag}: {path} holds a run that did not finish (status {run.status}{why}); "
            "only runs that finished compare"
        )
    return [run], [], run.spec


def finished(run: RunResult) -> bool:
    """A run that went to its end and whose records were read: its figures
    are the whole stream's."""
    return run.status == "ok" and run.analysed
