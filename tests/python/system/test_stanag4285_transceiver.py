"""The STANAG 4285 transceiver over real processes: source, transmitter,
channel, receiver and BER sink as SCA components. At high SNR every bit that
comes back is right (2400 and 600 bps, through two-path multipath, the start
unknown to the receiver); the chain counts exactly what the plain program
counts on the same settings, errors included at low SNR; the BER sink's
ber.json holds the figures."""

import csv
import json
from pathlib import Path

import pytest
from conftest import scabench

from scabench.model.load import load_spec
from scabench.run.runner import run_spec
from scabench.waveforms.stanag4285 import load_transceiver, run_plain

FRAMES = 24  # 12 or 13 frames of receiver latency at 2400S and 600S: about half come back


def record_dir_of(pid: int) -> Path:
    """A host process's --record-dir, from its command line."""
    args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return Path(args[args.index(b"--record-dir") + 1].decode())


def run_transceiver(components, collocated, mode, snr_db):
    """Runs the transceiver; returns its result and the BER sink's ber.json,
    read while the run is held (the run's folder goes with it)."""
    spec = load_transceiver(
        components,
        collocated,
        mode=mode,
        packets=FRAMES,
        symbol_rate=0,
        profile="two-path",
        snr_db=snr_db,
    )
    seen = {}

    def on_start(pids, hosts):
        seen["dir"] = record_dir_of(pids[0])

    def on_hold(naming):
        seen["ber"] = json.loads((seen["dir"] / "ber.ber.json").read_text())

    result = run_spec(spec, on_start=on_start, on_hold=on_hold)
    return spec, result, seen["ber"]


def plain(mode, snr_db):
    # The channel settings of the transceiver specs: two-path, lead 437 samples, noise seed 1.
    return run_plain(
        mode=mode,
        packets=FRAMES,
        symbol_rate=0,
        channel="two-path",
        snr_db=snr_db,
        lead_samples=437,
        channel_seed=1,
    )


@pytest.mark.parametrize(
    ("components", "collocated", "mode"),
    [(7, False, "2400S"), (7, False, "600S"), (5, True, "2400S"), (15, False, "600S")],
)
def test_high_snr_gives_every_bit_back(components, collocated, mode):
    spec, result, ber = run_transceiver(components, collocated, mode, snr_db=30.0)
    assert len(spec.hosts) == (1 if collocated else components)
    assert result.status == "ok"
    reference = plain(mode, 30.0)
    bytes_per_frame = {"2400S": 32, "600S": 8}[mode]
    expected_bits = (FRAMES - reference["receiver_latency_frames"]) * bytes_per_frame * 8
    assert ber["mode"] == mode
    assert ber["frames"] == FRAMES  # a packet per frame, empty ones while the receiver fills
    assert ber["bits"] >= expected_bits > 0
    assert ber["bit_errors"] == 0
    assert ber["ber"] == 0.0
    assert ber["bits"] == reference["bits"]
    # The same figures reach the result as run stats.
    assert int(result.stats["ber"]["bits"]) == ber["bits"]
    assert int(result.stats["ber"]["bit_errors"]) == 0


def test_low_snr_errors_are_counted_as_the_plain_program_counts_them():
    _, result, ber = run_transceiver(7, True, "2400S", snr_db=3.0)
    reference = plain("2400S", 3.0)
    assert ber["bit_errors"] > 0
    assert ber["bits"] == reference["bits"]
    assert ber["bit_errors"] == reference["bit_errors"]  # the same seeded noise, the same blocks


def test_the_monitored_transceiver_fans_the_channel_out():
    spec = load_transceiver(7, True, monitor=True, packets=FRAMES, symbol_rate=0, mode="2400S")
    seen = {}

    def on_start(pids, hosts):
        seen["dir"] = record_dir_of(pids[0])

    def on_hold(naming):
        seen["monitor"] = json.loads((seen["dir"] / "monitor.monitor.json").read_text())
        seen["ber"] = json.loads((seen["dir"] / "ber.ber.json").read_text())

    result = run_spec(spec, on_start=on_start, on_hold=on_hold)
    assert result.status == "ok"
    assert seen["ber"]["bit_errors"] == 0
    assert seen["monitor"]["frames"] == FRAMES
    # The signal occupies 1800 +- 1440 Hz; its spectrum peaks inside that band.
    assert 360 < seen["monitor"]["peak_frequency_hz"] < 3240
    assert seen["monitor"]["mean_power"] > 0


def test_the_monitor_measures_the_channels_audio(tmp_path):
    # The monitor at the end of a chain (no fan-out): the transmitter's
    # audio through the channel, its power and spectrum.
    spec_file = tmp_path / "monitor.toml"
    spec_file.write_text(
        'chain = ["source", "modulator", "channel", "monitor"]\n'
        "[policy]\n"
        'call = "twoway"\n'
        "[[component]]\n"
        'name = "source"\nkind = "s4285-source"\nmode = "2400S"\npackets = 10\nsymbol_rate = 0.0\n'
        "[[component]]\n"
        'name = "modulator"\nkind = "s4285-modulator"\nmode = "2400S"\n'
        "[[component]]\n"
        'name = "channel"\nkind = "s4285-channel"\nnoise = false\n'
        "[[component]]\n"
        'name = "monitor"\nkind = "s4285-monitor"\n'
    )
    seen = {}

    def on_start(pids, hosts):
        seen["dir"] = record_dir_of(pids[0])

    def on_hold(naming):
        seen["monitor"] = json.loads((seen["dir"] / "monitor.monitor.json").read_text())

    result = run_spec(load_spec(spec_file), on_start=on_start, on_hold=on_hold)
    assert result.status == "ok"
    monitor = seen["monitor"]
    assert monitor["frames"] == 10
    assert monitor["blocks"] == 10  # a frame is 1024 samples, a block
    # The signal occupies 1800 +- 1440 Hz; its spectrum peaks inside that band.
    assert 360 < monitor["peak_frequency_hz"] < 3240
    # Unit-power baseband (the RRC interpolator keeps the symbols' power) at 8192 PCM
    # units per unit, half of it in the real passband: 8192^2 / 2; the first frame's
    # start, while the filter fills, pulls the mean down a little.
    assert monitor["mean_power"] == pytest.approx(8192**2 / 2, rel=0.1)
    assert float(result.stats["monitor"]["mean_power"]) == pytest.approx(monitor["mean_power"])


def test_the_ber_command_prints_and_writes_the_table(tmp_path):
    out = tmp_path / "ber.csv"
    proc = scabench("s4285-ber", "--mode", "600S", "--snr=-9,20", "--frames", 30, "--csv", out)
    assert proc.returncode == 0, proc.stderr
    assert "SNR 3 kHz" in proc.stdout
    rows = list(csv.DictReader(out.open()))
    assert [(r["mode"], float(r["snr_db"])) for r in rows] == [("600S", -9.0), ("600S", 20.0)]
    assert float(rows[0]["esn0_db"]) == pytest.approx(-9 + 0.969, abs=1e-3)
    # 30 frames, 13 of latency at most at 600S: at least 17 frames of 8 bytes come back.
    assert 17 * 64 <= int(rows[1]["bits"]) < 30 * 64
    assert int(rows[1]["bit_errors"]) == 0
    assert float(rows[0]["ber"]) > 0.1  # nothing decodes at -9 dB


def test_the_ber_command_refuses_an_unknown_mode_before_running():
    proc = scabench("s4285-ber", "--mode", "700S")
    assert proc.returncode == 2
    assert "no STANAG 4285 mode '700S'" in proc.stderr
