"""The STANAG 4285 transmitter, ready to drive: its 2-, 7- and 11-component
assemblies (experiments/stanag4285/split*.toml) with one set of settings
applied to every component, and the plain program (scabench-s4285) with the
same settings. Both report the CPU they used (user and system seconds)."""

import json

from scabench.errors import ScabenchError
from scabench.model.load import load_spec
from scabench.model.pipeline import S4285_SYMBOLS_PER_FRAME
from scabench.paths import experiments_dir, program
from scabench.run.processes import run_program

SPLITS = (2, 7, 11)
SYMBOLS_PER_FRAME = S4285_SYMBOLS_PER_FRAME  # one packet is one frame
SPEC_DIR = experiments_dir() / "stanag4285"


def split_spec_path(components, collocated=False):
    if components not in SPLITS:
        raise ScabenchError(f"no {components}-component STANAG 4285 split; valid: {', '.join(map(str, SPLITS))}")
    return SPEC_DIR / (f"split{components}" + ("-collocated" if collocated else "") + ".toml")


def load_split(
    components,
    collocated=False,
    *,
    mode=None,
    packets=None,
    symbol_rate=None,
    seed=None,
    dither_us=None,
    audio_file=None,
):
    """The split's spec, with `mode` on every component and the source's and
    sink's settings replaced where given."""
    spec = load_spec(split_spec_path(components, collocated))
    for comp in spec.components:
        if mode is not None:
            comp.properties["mode"] = mode
        if comp.kind == "s4285-source":
            for key, value in (
                ("packets", packets),
                ("symbol_rate", symbol_rate),
                ("seed", seed),
                ("dither_us", dither_us),
            ):
                if value is not None:
                    comp.properties[key] = float(value) if key == "symbol_rate" else value
        if comp.kind in ("s4285-sink", "s4285-tx") and audio_file is not None:
            comp.properties["audio_file"] = str(audio_file)
    return spec


def plain_argv(*, mode="2400L", packets=100, symbol_rate=2400.0, seed=4285, dither_us=0, audio_file=None):
    """The plain program's command line with these settings."""
    args = [
        str(program("scabench-s4285")),
        "--mode",
        mode,
        "--packets",
        str(packets),
        "--symbol_rate",
        str(symbol_rate),
        "--seed",
        str(seed),
        "--dither_us",
        str(dither_us),
    ]
    if audio_file is not None:
        args += ["--audio_file", str(audio_file)]
    return args


def run_plain(*, mode="2400L", packets=100, symbol_rate=2400.0, seed=4285, dither_us=0, audio_file=None, timeout=None):
    """Runs the plain program once; returns its JSON line as a dict (frames,
    audio_samples, audio_digest, user_s, system_s, voluntary_ctxsw,
    involuntary_ctxsw, wall_s)."""
    args = plain_argv(
        mode=mode, packets=packets, symbol_rate=symbol_rate, seed=seed, dither_us=dither_us, audio_file=audio_file
    )
    if timeout is None:
        timeout = 60 + (packets * SYMBOLS_PER_FRAME / symbol_rate if symbol_rate > 0 else 0)
    out = run_program(args, timeout=timeout)
    if out.returncode != 0:
        raise ScabenchError(out.stderr.strip().splitlines()[0] if out.stderr.strip() else f"exit {out.returncode}")
    return json.loads(out.stdout)
