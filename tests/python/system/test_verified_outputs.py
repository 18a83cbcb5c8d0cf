"""Verified outputs: what the producer sends is what docs/architecture.md
says (scabench.producer_signal computes it with numpy), the sink's checksum
is a number, its capture a SigMF recording the sigmf package reads, a file
source plays one, and a FIR stage's and a Python decimating FIR's outputs
are scipy's filtering of the same input. Real processes, few packets."""

import os
import re
import sys
import warnings

import numpy as np
import pytest
from conftest import REPO
from conftest import scabench as scabench_cli
from scipy.signal import firwin, lfilter
from sigmf import sigmffile

import scabench
from scabench.model.load import load_spec
from scabench.run.results import RunResult
from scabench.run.runner import run_spec

EXAMPLE = REPO / "examples" / "python" / "decimating-fir" / "decimating-fir.toml"


def pipeline(producer, middle="", sample_type="double", sink='checksum = true\ncapture = "out/capture"', policy=""):
    """producer -> [middle] -> sink, twoway (packets in order)."""
    chain = ["producer", "mid", "sink"] if middle else ["producer", "sink"]
    text = f"chain = {chain!r}\n".replace("'", '"') + f'[run]\nsample_type = "{sample_type}"\n'
    text += f'[[component]]\nname = "producer"\nkind = "producer"\n{producer}\n'
    if middle:
        text += f'[[component]]\nname = "mid"\n{middle}\n'
    text += f'[[component]]\nname = "sink"\nkind = "sink"\n{sink}\n[policy]\ncall = "twoway"\n{policy}\n'
    return text


def run(write_spec, text):
    result = run_spec(load_spec(write_spec(text)))
    assert result.status == "ok", result.error
    return result


def sigmf_checked(base):
    """The recording, its metadata validated by the sigmf package against SigMF's schema."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        meta = sigmffile.fromfile(str(base))
        meta.validate()
    return meta


@pytest.mark.parametrize("signal", ["sine", "ramp", "noise"])
def test_the_producer_sends_the_documented_signal(write_spec, tmp_path, signal):
    props = {"packets": 5, "samples": 64, "signal": signal, "amplitude": 3.5, "seed": 11, "radians_per_sample": 0.2}
    producer = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in props.items())
    result = run(write_spec, pipeline(producer))
    sink = result.stages[-1]
    assert sink.capture == str(tmp_path / "out" / "capture")
    meta = sigmf_checked(sink.capture)
    assert meta.get_global_field("core:datatype") == "rf64_le"
    got = scabench.read_recording(sink.capture)
    expected = scabench.producer_signal(props)
    assert got.dtype == np.float64 and got.size == 5 * 64
    # Ramp and noise are exact arithmetic; the sine goes through libm and numpy's sin.
    np.testing.assert_allclose(got, expected, rtol=0, atol=0 if signal != "sine" else 1e-13)
    if signal == "sine":  # the same packet every time, as the producer always sent
        assert np.array_equal(got[:64], got[64:128])
    # The checksum: a number in the result, its rows and the table, numpy's sum of the capture.
    assert isinstance(sink.checksum, float) and sink.checksum == pytest.approx(got.sum(), rel=1e-12, abs=1e-9)
    assert next(r for r in result.rows() if r["component"] == "sink")["checksum"] == sink.checksum
    assert RunResult.from_dict(result.as_dict()).stages[-1].checksum == sink.checksum
    assert f"sink checksum {sink.checksum!r}" in scabench.text(result)


def test_noise_in_a_short_pipeline_is_truncated_and_wrapped_as_documented(write_spec):
    props = {"packets": 3, "samples": 100, "signal": "noise", "amplitude": 40000.0, "seed": 3}
    result = run(
        write_spec, pipeline("\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in props.items()), sample_type="short")
    )
    got = scabench.read_recording(result.stages[-1].capture)
    assert got.dtype == np.int16
    assert np.array_equal(got, scabench.producer_signal(props, "short"))


def test_a_fir_stage_filters_a_played_recording_as_scipy_does(write_spec, tmp_path):
    # A recording of 1000 float samples, played in packets of 96 (the last one wraps to its start).
    x = np.random.default_rng(5).standard_normal(1000).astype(np.float32)
    source = scabench.write_recording(tmp_path / "in" / "noise", x, "float")
    sigmf_checked(source)
    result = run(
        write_spec,
        pipeline(
            'packets = 11\nsamples = 96\nsignal = "file"\npath = "in/noise.sigmf-meta"',
            'kind = "fir"\nfilters = 1\ntaps = 16',
            sample_type="float",
        ),
    )
    got = scabench.read_recording(result.stages[-1].capture)
    assert got.dtype == np.float32 and got.size == 11 * 96
    played = np.resize(x, 11 * 96)
    assert np.array_equal(
        played, scabench.producer_signal({"packets": 11, "samples": 96, "signal": "file", "path": str(source)}, "float")
    )
    # The stage's taps: a Hamming-windowed sinc cut at a quarter of the rate, unit gain at DC, in float.
    h = firwin(16, 0.5, window="hamming").astype(np.float32)
    expected = lfilter(h.astype(np.float64), 1.0, played.astype(np.float64))  # the state runs across packets
    np.testing.assert_allclose(got, expected, rtol=0, atol=2e-5 * np.abs(played).max())


def test_the_python_decimating_fir_example_matches_scipy(tmp_path, monkeypatch):
    # Its program's first line is "#!/usr/bin/env python3": this interpreter, with scabench and omniORBpy.
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    waveform = scabench.load(EXAMPLE)
    waveform["sink"].set(capture=str(tmp_path / "decimated"))
    result = waveform.run(packets=6)
    assert result.status == "ok", result.error
    producer, fir = waveform["producer"].properties, waveform["fir"].properties
    x = scabench.producer_signal({**producer, "packets": 6})
    expected = lfilter(firwin(fir["taps"], 1.0 / fir["decimation"]), 1.0, x)[:: fir["decimation"]]
    got = scabench.read_recording(result.stages[-1].capture)
    assert got.size == expected.size == 6 * 1000 // 4
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def one_line(proc):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = (proc.stdout + proc.stderr).strip().splitlines()  # validate says it on stdout, run on stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    "producer, sink, key, words",
    [
        ('signal = "sinus"', "", "component[0].signal", "'sinus' is not valid; use one of: sine, ramp, noise, file"),
        ('signal = "file"', "", "component[0].path", 'signal = "file" plays the SigMF recording named by path'),
        ('signal = "file"\npath = "missing"', "", "component[0].path", "missing.sigmf-meta: no such file"),
        (
            'signal = "file"\npath = "rec"',
            "",
            "component[0].path",
            "the recording's datatype is rf32_le; a double pipeline plays rf64_le",
        ),
        ("", 'capture = "spec.toml/cap"', "component[1].capture", "cannot be created"),
    ],
)
def test_bad_signals_and_captures_are_one_line_before_any_process(write_spec, tmp_path, producer, sink, key, words):
    scabench.write_recording(tmp_path / "rec", np.zeros(8), "float")
    spec = write_spec(pipeline(f"packets = 2\n{producer}", sink=sink))
    for command in ("validate", "run"):
        line = one_line(scabench_cli(command, spec))
        assert re.search(rf"{re.escape(str(spec))}: {re.escape(key)}: .*{re.escape(words)}", line), line
