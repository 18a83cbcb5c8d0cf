"""scabench profile and scabench datarate: Eq. 1, the statistics, the GIOP
relay's parser, and a quick profile end to end over real processes."""

import struct

import numpy as np
import pytest
from conftest import scabench

from scabench.studies.orb_profile import datarate, seed
from scabench.studies.orb_profile import render as profile_render
from scabench.studies.orb_profile.analysis import block_size_analysis, fit_fixed_and_per_byte, summarize_rounds
from scabench.studies.orb_profile.wire import GiopStreamParser

# --- Eq. 1 -----------------------------------------------------------------


@pytest.mark.parametrize("example", seed.EQ1_EXAMPLES, ids=lambda e: f"{e['cycles']}-cycles")
def test_eq1_gives_the_papers_examples(example):
    assert datarate.max_data_rate_bps(example["cycles"], seed.CLOCK_HZ, example["elements"]) == example["bps"]


def test_eq1_scales_with_its_terms():
    base = datarate.max_data_rate(1000, 1e9, 16)
    assert datarate.max_data_rate(2000, 1e9, 16) == base / 2  # twice the delay
    assert datarate.max_data_rate(1000, 1e9, 32) == base * 2  # twice the packet
    assert datarate.max_data_rate(1000, 1e9, 16, samples_per_symbol=4) == base * 2
    assert datarate.max_data_rate(1000, 1e9, 16, bits_per_symbol=3) == base * 3


def test_eq1_refuses_nonsense():
    with pytest.raises(ValueError):
        datarate.max_data_rate(0, 720e6, 1)
    with pytest.raises(ValueError):
        datarate.max_data_rate(100, 720e6, 0)


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--cycles", "8075", "--clock-mhz", "720", "--elements", "1"], "11.14 kbit/s (11145 bit/s)"),
        (["--cycles", "67461", "--clock-mhz", "720", "--elements", "1024"], "1.366 Mbit/s (1366122 bit/s)"),
        (
            [
                "--cycles",
                "67461",
                "--clock-mhz",
                "720",
                "--elements",
                "1024",
                "--samples-per-symbol",
                "4",
                "--bits-per-symbol",
                "2",
            ],
            "5.464 Mbit/s (5464490 bit/s)",
        ),
        # Scaled however large: a femtosecond call of a megasample.
        (
            ["--cycles", "1", "--clock-mhz", "1000000000", "--elements", "1000000"],
            "125 Ebit/s (125000000000000000000 bit/s)",
        ),
    ],
)
def test_datarate_command(args, expected):
    out = scabench("datarate", *args)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected


@pytest.mark.parametrize(
    "args,option",
    [
        (["--cycles", "-5", "--clock-mhz", "720", "--elements", "1"], "--cycles"),
        (["--cycles", "5", "--clock-mhz", "720", "--elements", "0"], "--elements"),
        (["--cycles", "5", "--clock-mhz", "720"], "--elements"),
    ],
)
def test_datarate_bad_input_is_one_clear_line(args, option):
    out = scabench("datarate", *args)
    assert out.returncode == 2
    assert option in out.stderr and "Traceback" not in out.stderr


# --- statistics ------------------------------------------------------------


def test_summary_is_median_of_round_medians_and_pooled_p99():
    rounds = [[10, 11, 12], [20, 21, 22], [30, 31, 1000]]
    s = summarize_rounds(rounds, tsc_hz=1e9)
    assert s["round_median_cycles"] == [11, 21, 31]
    assert s["median_cycles"] == 21
    assert s["p99_cycles"] == pytest.approx(np.percentile(np.concatenate(rounds), 99))
    assert s["median_ns"] == 21  # 1 GHz: a cycle is a nanosecond
    assert s["calls_per_round"] == [3, 3, 3]


def test_summary_needs_calls():
    with pytest.raises(ValueError):
        summarize_rounds([[1, 2], []], 1e9)


def test_fit_recovers_fixed_and_per_byte_cost():
    x = np.array([8, 64, 512, 4096, 32768, 262144])
    fixed, per_byte, worst = fit_fixed_and_per_byte(x, 5000 + 0.25 * x)
    assert fixed == pytest.approx(5000)
    assert per_byte == pytest.approx(0.25)
    assert worst < 1e-9


def test_fit_weights_small_calls_as_much_as_big_ones():
    # 20 % noise on the biggest call must not swamp the fixed cost.
    x = np.array([8, 64, 512, 4096, 32768, 1048576], dtype=float)
    y = 5000 + 0.25 * x
    y[-1] *= 1.2
    fixed, _, _ = fit_fixed_and_per_byte(x, y)
    assert fixed == pytest.approx(5000, rel=0.1)


def test_fit_needs_two_sizes():
    with pytest.raises(ValueError):
        fit_fixed_and_per_byte([8, 8], [1, 2])


def _sweep(sizes, fixed, per_byte):
    return [{"elements": b // 8, "payload_bytes": b, "mb_per_s": b / (fixed + per_byte * b) * 1e3} for b in sizes]


def test_block_size_where_the_fixed_cost_is_a_tenth():
    sizes = [8 * 4**k for k in range(10)]
    b = block_size_analysis(5000, 0.25, _sweep(sizes, 5000, 0.25))
    assert b["model_bytes"] == pytest.approx(9 * 5000 / 0.25)
    assert b["asymptotic_mb_per_s"] == pytest.approx(4000)
    best = max(p["mb_per_s"] for p in _sweep(sizes, 5000, 0.25))
    smaller = [p for p in _sweep(sizes, 5000, 0.25) if p["payload_bytes"] < b["measured_bytes"]]
    assert all(p["mb_per_s"] < 0.9 * best for p in smaller)


def test_no_per_byte_cost_means_no_block_size():
    sizes = [8, 512, 32768]
    b = block_size_analysis(60, 1e-12, _sweep(sizes, 60, 1e-12))
    assert b["model_bytes"] is None and b["asymptotic_mb_per_s"] is None


# --- the relay's GIOP parser --------------------------------------------------


def _giop_request(operation, body, request_id=7, fragment_at=None):
    """A little-endian GIOP 1.2 Request, as omniORB writes one."""

    def align(buf, n):
        return buf + b"\0" * (-len(buf) % n)

    header = struct.pack("<I", request_id) + bytes([3, 0, 0, 0])  # response expected
    header += struct.pack("<H", 0)  # KeyAddr
    header = align(b"\0" * 12 + header, 4)[12:]
    key = b"profile"
    header += struct.pack("<I", len(key)) + key
    header = align(b"\0" * 12 + header, 4)[12:]
    op = operation.encode() + b"\0"
    header += struct.pack("<I", len(op)) + op
    header = align(b"\0" * 12 + header, 4)[12:]
    header += struct.pack("<I", 0)  # no service contexts
    message = b"\0" * 12 + header
    if body:
        message = align(message, 8) + body
    payload = message[12:]
    if fragment_at is None:
        return b"GIOP\x01\x02\x01\x00" + struct.pack("<I", len(payload)) + payload
    first, rest = payload[:fragment_at], payload[fragment_at:]
    return (
        b"GIOP\x01\x02\x03\x00"
        + struct.pack("<I", len(first))
        + first
        + b"GIOP\x01\x02\x01\x07"
        + struct.pack("<I", 4 + len(rest))
        + struct.pack("<I", request_id)
        + rest
    )


def _parse(stream, chunk):
    seen = []
    parser = GiopStreamParser("request", seen.append)
    for i in range(0, len(stream), chunk):
        parser.feed(stream[i : i + chunk])
    return seen


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_parser_reads_operation_and_body_whatever_the_chunks(chunk):
    body = struct.pack("<I", 3) + b"\0" * 4 + struct.pack("<3d", 1, 2, 3)  # sequence<double> of 3
    stream = _giop_request("sequenceDouble", body) + _giop_request("nullCall", b"", request_id=8)
    first, second = _parse(stream, chunk)
    assert (first.operation, first.request_id, first.oneway) == ("sequenceDouble", 7, False)
    assert first.body_bytes == len(body) and first.body_offset % 8 == 0
    assert first.bytes == len(_giop_request("sequenceDouble", body))
    assert (second.operation, second.body_bytes) == ("nullCall", 0)


def test_parser_joins_fragments_into_one_message():
    body = bytes(range(256)) * 40
    stream = _giop_request("arrayOctet", body, fragment_at=100)
    (message,) = _parse(stream, 1000)
    assert message.frames == 2
    assert message.bytes == len(stream)
    assert message.body_bytes == len(body)


def test_parser_refuses_what_is_not_giop():
    with pytest.raises(ValueError, match="not a GIOP message"):
        _parse(b"HTTP/1.1 200 OK\r\n", 64)


# --- the C++ program's own errors ------------------------------------------------


# --- end to end ------------------------------------------------------------


def _drawn(monkeypatch, draw, result, path):
    """The figure draw() made, kept open."""
    kept = []
    monkeypatch.setattr(profile_render.plt, "close", kept.append)
    draw(result, path)
    return kept[0]


def test_profile_figures_compare_what_they_seem_to(tmp_path, monkeypatch):
    result = _synthetic_profile()
    fig = _drawn(monkeypatch, profile_render.plot_fig8, result, tmp_path / "fig8.png")
    panels = fig.axes
    # The paper's DSP and our three transports on one log axis: 160 cycles
    # collocated must not be drawn as tall as the DSP's 125,000.
    assert len(panels) == 4 and all(ax.get_yscale() == "log" for ax in panels)
    assert all(panels[0].get_shared_y_axes().joined(panels[0], ax) for ax in panels[1:])
    assert "log scale, shared" in panels[0].get_ylabel()
    fig = _drawn(monkeypatch, profile_render.plot_sweep, result, tmp_path / "sweep.png")
    _, throughput = fig.axes
    assert [line.get_label() for line in throughput.get_lines()] == ["unix", "tcp"]  # no collocated "throughput"
    assert any("moves no bytes" in t.get_text() for t in throughput.texts)


def _synthetic_profile():
    """What profile.json holds, for the figures: Table 1's cases, a sweep
    and its fit per transport (collocated: a direct call, no per-byte cost)."""
    transports = {}
    for tr, call_ns, per_byte_ns in (("collocated", 60.0, 0.0), ("unix", 4700.0, 0.14), ("tcp", 6400.0, 0.28)):
        cases = {
            f"{k}-{t}": {"median_cycles": call_ns * 2.6 * (1 + i)}
            for i, k in enumerate(("basic", "array", "sequence"))
            for t in ("octet", "short", "float", "double")
        }
        sweep = [
            {
                "payload_bytes": 8 * n,
                "median_ns": call_ns + per_byte_ns * 8 * n,
                "mb_per_s": 8 * n / (call_ns + per_byte_ns * 8 * n) * 1e3,
            }
            for n in (1, 64, 4096, 262144)
        ]
        transports[tr] = {"cases": cases, "sweep": sweep, "fit": {"fixed_ns": call_ns, "per_byte_ns": per_byte_ns}}
    return {"transports": transports}


def test_profile_bad_option():
    out = scabench("profile", "--rounds", "3")
    assert out.returncode == 2 and "--rounds" in out.stderr and "Traceback" not in out.stderr
