"""Hostile or broken peers on a data port, over real processes. A client that
is not the connection's sender (scabench-hostile, built from the
repository's IDL) reads a running stage's reference from the run directory
and sends what a sending port never would. The real stream must come through
whole and in order, every refusal must be counted by reason, the run must be
marked as not clean, and the stage's memory must stay bounded. No timing is
judged: the real stream is paced long enough for the attacks to land in it."""

import subprocess
import threading
import time
from pathlib import Path

from conftest import pipeline_toml

from scabench.model.load import load_spec
from scabench.paths import program
from scabench.report.tables import format_run
from scabench.run.runner import run_spec

PACKETS = 100
SAMPLES = 256
# 100 packets 20 ms apart: the stream lasts 2 s, ample for the client to start and send.
PERIOD_US = 20_000


def _status(pid):
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def _watch(pid, peak):
    """The most threads and resident memory the process had, until it ends."""
    while True:
        try:
            status = _status(pid)
        except OSError:
            return
        if "VmRSS" not in status:  # exiting: its memory is gone
            return
        peak["threads"] = max(peak["threads"], int(status["Threads"]))
        peak["rss_kb"] = max(peak["rss_kb"], int(status["VmRSS"].split()[0]))
        time.sleep(0.01)


def run_with_hostile(write_spec, policy, attacks, target="stage1"):
    """Runs producer -> stage1 -> stage2 and, once the stream has started,
    scabench-hostile against `target`'s input port. Returns the result, the
    client's output and the target host's peak threads and memory."""
    text = pipeline_toml(
        packets=PACKETS, policy=policy, work="cpu", work_us=1000, period_us=PERIOD_US, stages=2, run="timeout_s = 60"
    ).replace("samples = 256", f"samples = {SAMPLES}")
    spec = load_spec(write_spec(text))
    seen = {"peak": {"threads": 0, "rss_kb": 0}}

    def on_start(pids, names):
        pid = pids[next(i for i, n in enumerate(names) if n.endswith(f"-{target}"))]
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        record_dir = Path(argv[argv.index("--record-dir") + 1])
        seen["watcher"] = threading.Thread(target=_watch, args=(pid, seen["peak"]))
        seen["watcher"].start()
        seen["client"] = subprocess.run(
            [
                str(program("scabench-hostile")),
                "--ior",
                str(record_dir / f"{target}.ior"),
                "--port",
                "in",
                "--sample-type",
                "double",
                "--samples",
                str(SAMPLES),
                *attacks,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return None

    result = run_spec(spec, on_start=on_start)
    seen["watcher"].join(timeout=30)
    client = seen["client"]
    assert client.returncode == 0, client.stdout + client.stderr
    return result, client.stdout, seen["peak"]


def stage(doc, name):
    return next(s for s in doc["stages"] if s["name"] == name)


def assert_real_stream_whole(doc):
    assert doc["status"] == "ok"
    assert doc["producer"]["sent"] == PACKETS
    for s in doc["stages"]:
        assert s["received"] == PACKETS, s
        assert s["output_reordered_from_previous"] == 0, s
        assert s["skipped"] == 0 and s["late"] == 0 and s["duplicates"] == 0, s


def test_a_resequencing_port_with_credits_refuses_bad_numbers_lengths_and_a_spoofed_end(write_spec):
    # Before these checks: the far-future number made the port skip and drop
    # the real packets, the one near 2^64 made it allocate until it died
    # (1.8 GB in 15 s), the spoofed end of stream cut the run short, and the
    # empty and wrong-length packets were processed as extra packets.
    flood = 1000
    result, out, peak = run_with_hostile(
        write_spec,
        'call = "oneway"\nordering = "resequence"\nflow = "credits(16)"\npacket_length = 256\n',
        ["far-future", "near-wrap", "spoof-eos", "wrong-length", "stranger", f"flood:{flood}"],
    )
    doc = result.as_dict()
    assert f"flood:{flood} sent {flood}" in out
    assert_real_stream_whole(doc)
    target = stage(doc, "stage1")
    assert target["refused_by"] == {
        "sequence": 2,
        "length": 1 + flood,
        "eos": 1,
        "credit": 0,
        "threads": 0,
        "sender": 1,
    }, target
    assert target["refused"] == 5 + flood
    assert stage(doc, "stage2")["refused"] == 0 and doc["producer"]["refused"] == 0
    assert doc["refusals"] == 5 + flood and doc["clean"] is False
    table = format_run(result)
    assert (
        f"NOT CLEAN: ports refused {5 + flood} packets or signals from peers (sequence 2, length {1 + flood}, "
        "eos 1, sender 1)" in table
    )
    assert "refused from peers" in table
    # The port allocated nothing for the bad numbers: the stage stays near its
    # size at rest (about 10 MB), nowhere near what one skip to 2^64 asked for.
    rusage = next(h["rusage"] for h in doc["hosts"] if h["name"].endswith("-stage1"))
    assert rusage["max_rss_kb"] < 100_000 and peak["rss_kb"] < 100_000, (rusage, peak)


def test_an_arrival_port_refuses_a_strangers_flood_and_cannot_be_taken_over(write_spec):
    # Before: every empty packet of the flood ran the stage's work on an ORB
    # thread of its own (50 at once), the stage forwarded them, and the
    # producer's end of stream counted them, so the run ended early.
    flood = 2000
    result, out, peak = run_with_hostile(
        write_spec, 'call = "twoway"\n', ["attach", "spoof-eos", "stranger", f"flood:{flood}"]
    )
    doc = result.as_dict()
    assert "attach refused" in out
    assert_real_stream_whole(doc)
    for s in doc["stages"]:
        assert s["reordered_from_original"] == 0, s
    target = stage(doc, "stage1")
    # No packet of the flood did any work: the port served one call at a time,
    # the real two-way sender's.
    assert target["max_server_threads"] == 1, target
    assert target["refused_by"] == {
        "sequence": 0,
        "length": 0,
        "eos": 1,
        "credit": 0,
        "threads": 0,
        "sender": 1 + 1 + flood,
    }, target
    assert doc["clean"] is False and doc["refusals"] == 3 + flood
    rusage = next(h["rusage"] for h in doc["hosts"] if h["name"].endswith("-stage1"))
    assert rusage["max_rss_kb"] < 100_000, rusage
    print(f"stage1 under a flood of {flood}: at most {peak['threads']} threads, {peak['rss_kb']} kB resident")


def test_a_clean_run_says_so(write_spec):
    result = run_spec(load_spec(write_spec(pipeline_toml(packets=10, policy="packet_length = 256\n"))))
    doc = result.as_dict()
    assert doc["clean"] is True and doc["refusals"] == 0
    assert "NOT CLEAN" not in format_run(result) and "refused from peers" not in format_run(result)
    for s in [doc["producer"], *doc["stages"]]:
        assert s["refused"] == 0 and set(s["refused_by"]) == {
            "sequence",
            "length",
            "eos",
            "credit",
            "threads",
            "sender",
        }
