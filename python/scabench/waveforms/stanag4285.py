"""The STANAG 4285 waveform, ready to drive: the transmitter's 2-, 7- and
11-component assemblies (experiments/stanag4285/split*.toml) and the
transceiver's 5-, 7- and 15-component ones (transceiver*.toml: transmitter,
channel, receiver, BER sink) with one set of settings applied to every
component, and the plain program (scabench-s4285) with the same settings,
which also gives the BER-against-SNR table (ber_table). Runs report the CPU
they used (user and system seconds)."""

import json
from pathlib import Path
from typing import Any

from scabench.errors import ScabenchError
from scabench.model.catalog import kind_properties
from scabench.model.load import load_spec
from scabench.model.pipeline import S4285_SYMBOLS_PER_FRAME
from scabench.model.spec import Spec
from scabench.paths import experiments_dir, program
from scabench.run.processes import run_program

SPLITS = (2, 7, 11)
TRANSCEIVER_SPLITS = (5, 7, 15)
MONITORED_SPLITS = (7,)  # the transceivers with a monitor on the channel's audio (a fan-out)
PROFILES = ("none", "two-path", "harsh")  # the channel's static multipath profiles
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


def transceiver_spec_path(components: int, collocated: bool = False, monitor: bool = False) -> Path:
    splits = MONITORED_SPLITS if monitor else TRANSCEIVER_SPLITS
    if components not in splits:
        what = "monitored STANAG 4285 transceiver" if monitor else "STANAG 4285 transceiver"
        raise ScabenchError(f"no {components}-component {what}; valid: {', '.join(map(str, splits))}")
    stem = f"transceiver{components}" + ("-monitor" if monitor else "") + ("-collocated" if collocated else "")
    return SPEC_DIR / f"{stem}.toml"


def load_transceiver(
    components: int,
    collocated: bool = False,
    monitor: bool = False,
    *,
    mode: str | None = None,
    packets: int | None = None,
    symbol_rate: float | None = None,
    seed: int | None = None,
    profile: str | None = None,
    snr_db: float | None = None,
    noise: bool | None = None,
    channel_seed: int | None = None,
) -> Spec:
    """The transceiver's spec with `mode` on every component that has one,
    `seed` on the source and the BER sink (which regenerates the source's
    bytes from it), the source's packets and symbol_rate, and the channel's
    profile, snr_db (in 3 kHz), noise and seed, where given."""
    spec = load_spec(transceiver_spec_path(components, collocated, monitor))
    channel = {
        "profile": profile,
        "snr_db": None if snr_db is None else float(snr_db),
        "noise": noise,
        "seed": channel_seed,
    }
    for comp in spec.components:
        if mode is not None and "mode" in comp.properties:
            comp.properties["mode"] = mode
        if seed is not None and comp.kind in ("s4285-source", "s4285-ber"):
            comp.properties["seed"] = seed
        if comp.kind == "s4285-source":
            if packets is not None:
                comp.properties["packets"] = packets
            if symbol_rate is not None:
                comp.properties["symbol_rate"] = float(symbol_rate)
        if comp.kind == "s4285-channel":
            comp.properties.update({k: v for k, v in channel.items() if v is not None})
    return spec


def plain_argv(
    *,
    mode="2400L",
    packets=100,
    symbol_rate=2400.0,
    seed=4285,
    dither_us=0,
    audio_file=None,
    channel: str | None = None,
    snr_db: float | None = None,
    channel_seed: int = 1,
    lead_samples: int = 0,
):
    """The plain program's command line with these settings; with `channel`
    (a profile), through the channel (snr_db in 3 kHz, None: no noise) into
    the receiver and the BER counter."""
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
    if channel is not None:
        args += ["--channel", channel, "--snr_db", "none" if snr_db is None else repr(float(snr_db))]
        args += ["--channel_seed", str(channel_seed), "--lead_samples", str(lead_samples)]
    return args


def run_plain(
    *,
    mode="2400L",
    packets=100,
    symbol_rate=2400.0,
    seed=4285,
    dither_us=0,
    audio_file=None,
    timeout=None,
    channel: str | None = None,
    snr_db: float | None = None,
    channel_seed: int = 1,
    lead_samples: int = 0,
):
    """Runs the plain program once; returns its JSON line as a dict (frames,
    audio_samples, audio_digest, user_s, system_s, voluntary_ctxsw,
    involuntary_ctxsw, wall_s; with `channel` also bits, bit_errors, ber,
    snr_db, esn0_db, receiver_latency_frames)."""
    args = plain_argv(
        mode=mode,
        packets=packets,
        symbol_rate=symbol_rate,
        seed=seed,
        dither_us=dither_us,
        audio_file=audio_file,
        channel=channel,
        snr_db=snr_db,
        channel_seed=channel_seed,
        lead_samples=lead_samples,
    )
    if timeout is None:
        timeout = 60 + (packets * SYMBOLS_PER_FRAME / symbol_rate if symbol_rate > 0 else 0)
    out = run_program(args, timeout=timeout)
    if out.returncode != 0:
        raise ScabenchError(out.stderr.strip().splitlines()[0] if out.stderr.strip() else f"exit {out.returncode}")
    return json.loads(out.stdout)


def mode_names() -> list[str]:
    """The modes, as the components declare them (the runtime's one list)."""
    return list(kind_properties("s4285-source")["mode"]["values"])


BER_COLUMNS = ("mode", "profile", "snr_db", "esn0_db", "frames", "bits", "bit_errors", "ber")


def ber_table(
    modes: list[str],
    snrs: list[float],
    *,
    profile: str = "none",
    frames: int = 300,
    seed: int = 4285,
    channel_seed: int = 1,
    lead_samples: int = 437,
    log: Any = None,
) -> list[dict[str, Any]]:
    """Bit error rate against SNR (in 3 kHz): for each mode and SNR, the
    plain program sends `frames` frames of the source's bytes through the
    channel into the receiver, unpaced, and counts bit errors on what comes
    back (all but the last receiver_latency_frames' worth). One row each,
    BER_COLUMNS."""
    if profile not in PROFILES:
        raise ScabenchError(f"no multipath profile {profile!r}; valid: {', '.join(PROFILES)}")
    valid = mode_names()
    for mode in modes:
        if mode not in valid:
            raise ScabenchError(f"no STANAG 4285 mode {mode!r}; valid: {', '.join(valid)}")
    rows = []
    for mode in modes:
        for snr in snrs:
            out = run_plain(
                mode=mode,
                packets=frames,
                symbol_rate=0,
                seed=seed,
                channel=profile,
                snr_db=snr,
                channel_seed=channel_seed,
                lead_samples=lead_samples,
            )
            if log:
                log(f"{mode} {profile} {snr:g} dB: {out['bit_errors']} errors in {out['bits']} bits")
            rows.append({"profile": profile, **{k: out[k] for k in BER_COLUMNS if k != "profile"}})
    return rows
