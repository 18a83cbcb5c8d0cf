"""scabench as a library (docs/api.md): a waveform built in code, or loaded
from a TOML spec or an SCA waveform's SAD; checked; run once, or K times
under the measurement guard; swept; its results read typed or as rows.

A Waveform is the tables of a TOML spec and nothing more. The builder's
calls write those tables, `load` reads them from a file, and every check,
run and sweep hands them to the one loader (model/spec_toml.py, parse_spec), so a
waveform written in Python, TOML or SAD XML is judged and runs alike, with
the command line's one-line errors. Where a spec's file would be named, a
waveform built (or changed) in code is `<waveform NAME>`.

What is checked when: the builder checks nothing but its own arguments'
shape (a table is what the caller says it is); spec(), validate(), run()
and sweep() check everything, as `scabench validate` and `scabench run` do."""

import copy
import io
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

import tomli_w

from scabench.errors import ScabenchError, SpecError
from scabench.files import check_writable
from scabench.measure.guard import GuardSettings
from scabench.measure.repeat import MAX_RUNS, Benchmark, guard_settings, run_benchmark
from scabench.measure.sweep import SweepResult, grid_axes, plan, run_sweep
from scabench.model.catalog import EXTERNAL, PYTHON_KINDS, declared_kinds, kind_declaration, kind_ports, port_names
from scabench.model.load import find_spec, load_spec
from scabench.model.resources import check_memory
from scabench.model.sad.export import Exported, export_sad
from scabench.model.sad.load import is_sad, waveform_stem
from scabench.model.spec import CODE_SOURCE, FILE_PROPERTIES, Spec, code_source
from scabench.model.spec_toml import parse_spec, read_toml
from scabench.report.results_file import read_json, write_json
from scabench.run.live import LiveSample
from scabench.run.results import RunResult
from scabench.run.runner import run_spec

if TYPE_CHECKING:
    from scabench.run.top import PortStatisticsSampler

# A component's keys that name files: relative ones are from the waveform's
# folder (the spec's, for a file; the current directory when it was built in
# code). An exec without a "/" is a name looked up on PATH.
PATH_KEYS = ("library", "exec")
# The name of a waveform built in code where there is no other: it names the
# run's naming context.
DEFAULT_NAME = "waveform"


@dataclass(frozen=True)
class Port:
    """A component's port, as a connection names it ("stage1.out")."""

    component: str
    name: str

    def __str__(self) -> str:
        return f"{self.component}.{self.name}"


class Component:
    """A component of a Waveform: a view of its [[component]] table (name,
    kind, and its properties, or for an external component how it is
    started or found). `component.port("out")` is one of its ports, checked
    against its kind's; `component["out"]` names one unchecked."""

    def __init__(self, table: dict[str, Any], where: Path | None = None, folder: Path | None = None) -> None:
        self._table = table
        self._where = where if where is not None else code_source(DEFAULT_NAME)
        self._folder = folder if folder is not None else Path.cwd()

    @property
    def name(self) -> str | None:
        """Its name in the waveform (None: a table given without one)."""
        return self._table.get("name")

    @property
    def kind(self) -> str | None:
        """Its kind (scabench.kinds(), "py-stage", "external", or a component library's)."""
        return self._table.get("kind")

    @property
    def properties(self) -> dict[str, Any]:
        """Every key of its table but name and kind (a copy)."""
        return {k: copy.deepcopy(v) for k, v in self._table.items() if k not in ("name", "kind")}

    def set(self, **keys: Any) -> Self:
        """Sets keys of its table: properties (work_us=500), or library,
        exec, ...; a key set to None is removed (the runtime's default).
        Returns the component."""
        _update(self._table, keys)
        return self

    def __getitem__(self, port: str) -> Port:
        if not isinstance(port, str):
            raise TypeError(f"a port is named by a string, like component['out'], not {type(port).__name__}")
        return Port(str(self.name), port)

    def port(self, name: str) -> Port:
        """Its port `name`, which its kind must have (uses or provides; an
        external component's ports are its own, any name goes): a SpecError
        naming the port and listing the kind's ports otherwise. Connect it
        with Waveform.connect, as often as it has connections."""
        port = self[name]
        kind, library = self.kind, self._table.get("library")
        if not isinstance(kind, str) or kind == EXTERNAL:
            return port
        try:
            declared = kind_declaration(kind, self._folder / library if isinstance(library, str) else None)
        except (KeyError, ScabenchError):
            raise SpecError(
                self._where, f"{self.name}.{name}", f"{kind!r} is not a kind whose ports are known"
            ) from None
        ports = kind_ports(declared) if declared is not None else {}
        if name not in ports:
            have = "; ".join(f"{d} {', '.join(port_names(ports, d)) or 'none'}" for d in ("uses", "provides"))
            raise SpecError(self._where, f"{self.name}.{name}", f"{kind} has no port {name!r}; it has: {have}")
        return port

    def __repr__(self) -> str:
        return f"Component({self.name!r}, kind={self.kind!r})"


class Waveform:
    """A waveform: components with their properties, connections with their
    messaging policy, placement on processes, and the run's settings (cores,
    transport, network), held as the tables of a TOML spec.

        wf = Waveform("exp6", transport="unix", cores=[0, 1])
        producer = wf.component("producer", "producer", packets=1000, samples=1024)
        stage = wf.component("stage1", "stage", work_us=5000)
        wf.connect(producer["out"], stage["in"], call="twoway", worker=True)
        result = wf.run(packets=100)

    `name` names the waveform ([experiment] name) and its runs' naming
    context; `title` and `notes` go to [experiment] too; every other keyword
    is a [run] key (sample_type, transport, cores, pin, scheduler,
    timeout_s), checked when the waveform is."""

    def __init__(self, name: str, *, title: str | None = None, notes: str | None = None, **run: Any) -> None:
        if not isinstance(name, str) or not CODE_SOURCE.fullmatch(str(code_source(name))):
            raise SpecError(
                f"<waveform {name!r}>",
                "experiment.name",
                "a waveform's name is letters, digits, ., - "
                "and _, starting with a letter or digit (it names the run's naming context and files)",
            )
        experiment = {"name": name}
        _update(experiment, {"title": title, "notes": notes})
        self._doc: dict[str, Any] = {"experiment": experiment}
        if run:
            self.settings(**run)
        self._folder = Path.cwd()
        self._source: Path | None = None
        self._loaded: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, doc: dict[str, Any], folder: str | os.PathLike | None = None) -> Self:
        """A waveform from the tables of a TOML spec (what tomllib reads from
        one; a copy is taken). `folder`: where its relative paths are from
        (default: the current directory)."""
        if not isinstance(doc, dict):
            raise TypeError(f"a waveform's tables are a dict, not {type(doc).__name__}")
        return cls._made(_plain(copy.deepcopy(doc)), Path(folder) if folder is not None else Path.cwd())

    @classmethod
    def _made(cls, doc: dict[str, Any], folder: str | os.PathLike, source: Path | None = None) -> Self:
        wf = cls.__new__(cls)
        wf._doc, wf._folder, wf._source = doc, Path(os.path.abspath(folder)), source
        wf._loaded = copy.deepcopy(doc) if source is not None else None
        return wf

    # -- what it is ------------------------------------------------------

    @property
    def name(self) -> str:
        """The waveform's name: its file's (exp6.toml: exp6), or the one it was built with."""
        if self._source is not None:
            return waveform_stem(self._source)
        name = self._doc.get("experiment", {}).get("name") if isinstance(self._doc.get("experiment"), dict) else None
        return name if isinstance(name, str) and CODE_SOURCE.fullmatch(str(code_source(name))) else DEFAULT_NAME

    @property
    def source(self) -> Path | None:
        """The file it was loaded from (a TOML spec or a SAD), or None."""
        return self._source

    @property
    def folder(self) -> Path:
        """Where its relative paths (a component's library or exec) are from."""
        return self._folder

    @property
    def components(self) -> list[Component]:
        """Its components, in the order they were declared."""
        return [Component(t, self._where(), self.folder) for t in self._tables()]

    def __getitem__(self, name: str) -> Component:
        found = next((t for t in self._tables() if t.get("name") == name), None)
        if found is None:
            raise KeyError(
                f"no component named {name!r}; the waveform has: "
                f"{', '.join(str(t.get('name')) for t in self._tables()) or 'none'}"
            )
        return Component(found, self._where(), self.folder)

    def to_dict(self) -> dict[str, Any]:
        """Its tables, as a TOML spec's (a copy)."""
        return copy.deepcopy(self._doc)

    def to_toml(self) -> str:
        """Its tables as the text of a TOML spec. Relative paths stay as they
        are (from the waveform's folder): save() writes them for the file's."""
        return tomli_w.dumps(self._doc)

    def save(self, path: str | os.PathLike) -> Path:
        """Writes the waveform as a TOML spec at `path`, its relative paths
        rewritten from the file's folder; loading the file gives an equal
        waveform. Returns the path. (A SAD: export_sad.)"""
        path = Path(path)
        if is_sad(path):
            raise ValueError(f"{path}: save writes a TOML spec; export_sad(out_dir) writes a SAD and its packages")
        doc = copy.deepcopy(self._doc)
        for table in _component_tables(doc):
            for key in _path_keys(table):
                if _relative(key, table.get(key)):
                    table[key] = os.path.relpath(self._folder / table[key], path.parent.absolute())
        path.write_text(tomli_w.dumps(doc))
        return path

    def export_sad(self, out_dir: str | os.PathLike) -> Exported:
        """Writes the waveform as an SCA waveform under out_dir (SAD, its
        sidecar, a package per component kind: `scabench export-sad`);
        returns what was written (.sad, .sidecar, .packages)."""
        return export_sad(self.spec(), out_dir)

    def __eq__(self, other: object) -> bool:
        """Equal tables, relative paths taken from each one's folder."""
        if not isinstance(other, Waveform):
            return NotImplemented
        return self._resolved() == other._resolved()

    __hash__ = None  # type: ignore[assignment]  # it changes

    def __repr__(self) -> str:
        return (
            f"Waveform({self.name!r}: {len(self._tables())} components, "
            f"{len(self._doc.get('connection') or [])} connections"
            + (f", chain of {len(self._doc['chain'])}" if self._doc.get("chain") else "")
            + ")"
        )

    # -- building ----------------------------------------------------------

    def component(self, name: str, kind: str, **keys: Any) -> Component:
        """Adds a component of `kind` (scabench.kinds(); "py-stage"; or
        "external" with exec=... or ref=...) with its properties and other
        keys of its [[component]] table (library="build/libgain.so", ...;
        None: left out). Returns it. With a placement set, it gets a process
        of its own."""
        table = {"name": name, "kind": kind}
        _update(table, keys)
        self._doc.setdefault("component", []).append(table)
        hosts = self._hosts()
        if hosts is not None and _hosted(kind):
            hosts.append([name])
        return Component(table, self._where(), self.folder)

    def chain(self, *components: Component | str) -> Self:
        """Connects each component's "out" to the next one's "in" (a spec's
        chain, with the default policy). Once per waveform."""
        if "chain" in self._doc:
            raise SpecError(
                self._where(),
                "chain",
                f"given already ({', '.join(map(str, self._doc['chain']))}); a "
                "waveform has one chain: add more connections with connect()",
            )
        self._doc["chain"] = [_name(c) for c in components]
        return self

    def connect(self, uses: Port | Component | str, provides: Port | Component | str, **policy: Any) -> str:
        """Connects a uses port to a provides port (a Port, "stage1.out", or a
        component for its "out" and "in"), with policy keys of its own over
        the default policy (call="oneway", worker=16, ...). A uses port
        connected several times feeds each connection every packet (fan-out;
        its `fanout` policy says how), a provides port takes from each
        (fan-in). Returns the connection's id, "a.out->b.in"."""
        table = {"from": _end(uses, "out"), "to": _end(provides, "in")}
        _update(table, policy)
        self._doc.setdefault("connection", []).append(table)
        return f"{table['from']}->{table['to']}"

    def policy(self, **keys: Any) -> Self:
        """Sets keys of the default policy of every connection ([policy]:
        call, sync, dispatch, worker, worker_resume, ordering, flow, ...;
        scabench.policy_schema()). None removes a key. Returns the waveform."""
        _update(self._doc.setdefault("policy", {}), keys)
        return self

    def settings(self, **run: Any) -> Self:
        """Sets [run] keys: sample_type, transport ("tcp", "unix", "shm"), cores
        ("all" or a list), pin, scheduler ("normal", "batch"), timeout_s.
        None removes a key. Returns the waveform."""
        _update(self._doc.setdefault("run", {}), run)
        return self

    def network(self, **link: Any) -> Self:
        """Runs each process on a network host of its own behind an emulated
        link ([network]: delay_ms, jitter_ms; needs root); no keys: on
        loopback again. Returns the waveform."""
        if link:
            self._doc["network"] = {}
            _update(self._doc["network"], link)
        else:
            self._doc.pop("network", None)
        return self

    def place(self, *components: Component | str | None) -> Self:
        """Puts these components in one process ([placement]): their calls
        become direct calls. Every other component of the runtime keeps a
        process of its own (or its place from an earlier call). Returns the
        waveform."""
        names = [_name(c) for c in components]
        hosts = self._hosts()
        if hosts is None:
            hosts = [[t.get("name")] for t in self._tables() if _hosted(t.get("kind"))]
        at = next((i for i, h in enumerate(hosts) if any(n in h for n in names)), len(hosts))
        rest = [[n for n in h if n not in names] for h in hosts]
        placement = self._doc.setdefault("placement", {})
        placement["hosts"] = [h for h in rest[:at] if h] + [names] + [h for h in rest[at:] if h]
        return self

    def on_node(self, node: str, *components: Component | str) -> Self:
        """Runs these components' processes on the node agent `node`
        (`scabench node`, registered in the domain set with domain()):
        [placement] nodes. A process's components go to one node; what no
        node names runs on this machine. Returns the waveform."""
        nodes = self._doc.setdefault("placement", {}).setdefault("nodes", {})
        names = [_name(c) for c in components]
        for members in nodes.values():
            members[:] = [n for n in members if n not in names]
        nodes.setdefault(node, []).extend(names)
        for empty in [k for k, members in nodes.items() if not members]:
            del nodes[empty]
        return self

    def domain(self, naming: str | None) -> Self:
        """The domain whose Naming Service the nodes are registered in
        ([domain] naming, a corbaloc such as "corbaloc::10.0.0.1:2809/NameService";
        None: the run's own Naming Service). Returns the waveform."""
        if naming is None:
            self._doc.pop("domain", None)
        else:
            self._doc["domain"] = {"naming": naming}
        return self

    def collocate(self) -> Self:
        """Every component of the runtime in one process (external ones are
        processes of their own). Returns the waveform."""
        return self.place(*(t.get("name") for t in self._tables() if _hosted(t.get("kind"))))

    # -- checking and running --------------------------------------------

    def spec(self, packets: int | None = None) -> Spec:
        """The resolved spec (model/spec.py's Spec), checked as `scabench run`
        checks a file: SpecError, one line naming the waveform, the key and
        what is valid. `packets`: what every packet source sends (--packets)."""
        spec = parse_spec(self._resolved(), self._where())
        if packets is not None:
            spec = spec.with_packets(packets, where="packets")
        return spec

    def validate(self, packets: int | None = None) -> Spec:
        """Checks everything `scabench validate` does, the memory a run would
        need included, starting nothing; returns the resolved Spec."""
        spec = self.spec(packets)
        check_memory(spec)
        return spec

    def describe(self) -> dict[str, Any]:
        """The fully resolved spec, as every result stores it (its "spec")."""
        return self.spec().describe()

    def run(
        self,
        runs: int | None = None,
        *,
        warmup: int = 0,
        packets: int | None = None,
        quiet_wait_s: float = GuardSettings.quiet_wait_s,
        progress: bool | TextIO = False,
        on_hold: Callable[[dict[str, str]], None] | None = None,
        on_sample: Callable[[LiveSample], None] | None = None,
    ) -> RunResult | Benchmark:
        """Runs the waveform over real processes.

        runs=None: one run, as `scabench run`; returns its RunResult. A run
        that fails raises RunError (its `result`: what was measured).
        on_hold(naming), if given, is called once the stream has ended, with
        the components still up and bound in the run's Naming Service
        (naming: {"corbaloc", "context"}); they are released when it returns.
        on_sample(sample), if given, gets the run's figures while it goes on
        (a LiveSample, as `scabench run --live` shows them) every half
        second, from a thread of its own, and once more at the end.

        runs=K: a benchmark, as `scabench run --runs K --warmup W`: each run
        after waiting up to quiet_wait_s for a quiet machine, redone when
        others disturbed it or it stalled; returns the Benchmark.

        progress: False (quiet), True (lines on stderr) or a stream."""
        if runs is None:
            if warmup:
                raise ValueError("warmup: warm-up runs come before runs=K; give runs too")
            return run_spec(self.spec(packets), on_hold=on_hold, on_sample=on_sample)
        if on_hold is not None:
            raise ValueError("on_hold keeps one run's components up; it cannot be used with runs=K")
        if on_sample is not None:
            raise ValueError("on_sample watches one run; it cannot be used with runs=K")
        _check_count("runs", runs, 1)
        _check_count("warmup", warmup, 0)
        return run_benchmark(self.spec(packets), runs, warmup, guard_settings(quiet_wait_s), stream=_stream(progress))

    def sweep(
        self,
        grid: dict[str, list[Any]],
        *,
        runs: int = 3,
        warmup: int = 0,
        packets: int | None = None,
        max_latency_ms: float | None = None,
        quiet_wait_s: float = GuardSettings.quiet_wait_s,
        out: str | os.PathLike | None = None,
        progress: bool | TextIO = False,
    ) -> SweepResult:
        """Measures the waveform at every point of the crossed grids, `runs`
        guarded runs each, as `scabench sweep` does, and answers: the fastest
        configuration that kept 0 packets reordered at every output (within
        max_latency_ms, given one). Returns the SweepResult.

        grid: {key: [values]}, a key being policy.KEY (every connection),
        COMPONENT.KEY (a property) or run.KEY (packets, cores, scheduler,
        transport, pin, collocated, link_delay_ms, link_jitter_ms); every point is checked
        before the first run. out: a folder for results.json, written after
        every run; a sweep given the same folder again resumes it: every run
        measured is kept (a point cut half-way included), only the runs
        missing are measured, and `reused` counts the points taken whole;
        another spec, grid or packet count there is a SpecError."""
        _check_count("runs", runs, 1)
        _check_count("warmup", warmup, 0)
        axes = grid_axes(grid)
        points = plan(self.spec, axes, packets)
        results = Path(out) / "results.json" if out is not None else None
        previous = None
        if results is not None:
            check_writable(results, "out")
            previous = read_json(results, "out", "points") if results.exists() else None

        def save(doc: dict[str, Any]) -> Path | None:
            return write_json(doc, results) if results is not None else None

        doc, resumed = run_sweep(
            str(points[0].spec.path),
            axes,
            points,
            runs,
            warmup,
            guard_settings(quiet_wait_s),
            save,
            previous,
            max_latency_ms,
            packets,
            stream=_stream(progress),
            where=results if results is not None else "out",
        )
        return SweepResult.from_dict(doc, resumed.points)

    # -- inside ----------------------------------------------------------

    def _tables(self) -> list[dict[str, Any]]:
        return list(_component_tables(self._doc))

    def _hosts(self) -> list[list[str | None]] | None:
        """The placement's list of hosts, or None where none is set."""
        placement = self._doc.get("placement")
        hosts = placement.get("hosts") if isinstance(placement, dict) else None
        return hosts if isinstance(hosts, list) and all(isinstance(h, list) for h in hosts) else None

    def _where(self) -> Path:
        """What the loader names in errors and results: the file, while the
        waveform is what was loaded from it; else <waveform NAME>."""
        if self._source is not None and self._doc == self._loaded:
            return self._source
        return code_source(self.name)

    def _resolved(self) -> dict[str, Any]:
        """Its tables with relative paths made absolute from its folder."""
        doc = copy.deepcopy(self._doc)
        for table in _component_tables(doc):
            for key in _path_keys(table):
                if _relative(key, table.get(key)):
                    table[key] = os.path.abspath(self._folder / table[key])
        return doc


def load(spec: str | os.PathLike, check: bool = True) -> Waveform:
    """A waveform from a spec: the path of a TOML spec or of an SCA
    waveform's SAD (.sad.xml, with its sidecar), or the name of a spec under
    the specs that come with scabench ("exp6"; scabench.paths.experiments_dir).
    check: check it at once (SpecError, one line), as `scabench run` would.

    A TOML spec's tables are kept as written (saving gives the same tables);
    a SAD becomes the tables of the spec it loads to (Spec.document())."""
    path = find_spec(str(spec))
    if is_sad(path):
        return Waveform._made(load_spec(path).document(), path.parent, source=path)
    wf = Waveform._made(read_toml(path), path.parent, source=path)
    if check:
        wf.spec()
    return wf


def kinds() -> dict[str, dict[str, Any]]:
    """Every component kind a waveform may name without a library, and its
    declaration: {kind: {"sample_types", "provides", "uses", "properties",
    "ports"}}, "ports" giving each port's direction, type ("sample": the
    run's sample_type) and whether it must be connected (the runtime's, from
    scabench-host --describe, and the Python kinds). "external" is any
    program: it declares nothing."""
    return {kind: {**declared, "ports": kind_ports(declared)} for kind, declared in declared_kinds().items()}


def text(result: RunResult | Benchmark | SweepResult, wide: bool = False) -> str:
    """What the command line prints for a result, as plain text: a RunResult
    (`scabench run`), a Benchmark (`scabench run --runs K`) or a SweepResult
    (`scabench sweep`: the table, then the answer in words)."""
    from scabench.console import text as plain
    from scabench.report.sweep import sweep_view
    from scabench.report.tables import benchmark_view, run_view

    if isinstance(result, RunResult):
        return plain(run_view(result), wide)
    if isinstance(result, Benchmark):
        return plain(benchmark_view(result), wide)
    if isinstance(result, SweepResult):
        return plain(sweep_view(result.as_dict()), wide)
    raise TypeError(f"text() shows a RunResult, a Benchmark or a SweepResult, not {type(result).__name__}")


def _component_tables(doc: dict[str, Any]) -> list[dict[str, Any]]:
    items = doc.get("component")
    return [t for t in items if isinstance(t, dict)] if isinstance(items, list) else []


def _hosted(kind: str | None) -> bool:
    """A kind scabench-host hosts, placed in a process of the runtime."""
    return kind != EXTERNAL and kind not in PYTHON_KINDS


def _path_keys(table: dict[str, Any]) -> tuple[str, ...]:
    """The keys of a component's table that name files (a bare exec is a program on PATH)."""
    kind = table.get("kind")
    return PATH_KEYS + ((FILE_PROPERTIES.get(kind) if isinstance(kind, str) else None) or ())


def _relative(key: str, value: Any) -> bool:
    return isinstance(value, str) and bool(value) and not os.path.isabs(value) and (key != "exec" or "/" in value)


def _name(component: Component | str | None) -> str | None:
    return component.name if isinstance(component, Component) else component


def _end(end: Port | Component | str, port: str) -> str:
    """A connection's end as a spec writes it: "component.port"."""
    if isinstance(end, Component):
        return f"{end.name}.{port}"
    return str(end) if isinstance(end, Port) else end


def _plain(value: Any) -> Any:
    """A value as a TOML table holds it: paths as text, tuples as lists."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _update(table: dict[str, Any], keys: dict[str, Any]) -> None:
    """Sets keys of a table; None removes one."""
    for key, value in keys.items():
        if value is None:
            table.pop(key, None)
        else:
            table[key] = _plain(value)


def _check_count(name: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_RUNS:
        raise ValueError(f"{name}: {value!r} is not valid; give a whole number from {least} to {MAX_RUNS}")


def _stream(progress: bool | TextIO) -> TextIO:
    """Where progress lines go: nowhere, stderr, or the caller's stream."""
    if progress is True:
        return sys.stderr
    return progress or io.StringIO()


def watch(target: str, naming: str | None = None) -> "PortStatisticsSampler":
    """A running waveform's live figures over CORBA, as `scabench top`
    reads them: `watch("exp6_1", naming=corbaloc).sample()` is a LiveSample
    from its components' port statistics, with each component's latency
    so far (send to arrival at its provides ports) in `latency`. target: a
    naming context's name in the Naming Service at `naming`, or a
    corbaname:, corbaloc: or IOR: URL of a context or of one component."""
    from scabench.run.top import PortStatisticsSampler  # the ORB: only when watched

    return PortStatisticsSampler(target, naming)
