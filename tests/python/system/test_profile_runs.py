"""scabench profile over real processes: the profile program's bad command
lines and a quick profile end to end (Eq. 1, the statistics and the GIOP
relay's parser: unit/test_profile.py)."""

import json
import subprocess

from conftest import scabench

from scabench.paths import program
from scabench.studies.orb_profile.plan import CASES, TRANSPORTS


def test_profile_program_bad_input():
    prog = str(program("scabench-profile"))
    out = subprocess.run([prog, "drive"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 2 and "exactly one of --ior REF and --collocated" in out.stderr
    out = subprocess.run(
        [prog, "drive", "--collocated"],
        input="time bogus 0 1\ntime null x 1\nquit\n",
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert out.stdout.splitlines() == ["error unknown case 'bogus'", "error usage: time CASE ELEMENTS CALLS"]


def test_quick_profile_end_to_end(tmp_path):
    out = scabench("profile", "--quick", "--out", tmp_path / "report", "--json", tmp_path / "p.json", timeout=240)
    assert out.returncode == 0, out.stderr
    assert "Table 1" in out.stdout and "Table 2" in out.stdout
    assert (tmp_path / "report" / "report.md").is_file() and (tmp_path / "report" / "report.html").is_file()
    html = (tmp_path / "report" / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 2
    result = json.loads((tmp_path / "p.json").read_text())
    assert set(result["transports"]) == set(TRANSPORTS)
    for t in result["transports"].values():
        assert set(t["cases"]) == {c.name for c in CASES}
        for m in t["cases"].values():
            assert m["median_cycles"] > 0 and m["p99_cycles"] >= min(m["round_median_cycles"])
            assert len(m["round_median_cycles"]) == result["plan"]["rounds"]
        assert t["cases"]["basic-float"]["datarate_bps"] > 0 and t["cases"]["null"]["datarate_bps"] is None
        assert t["fit"]["fixed_ns"] > 0
        assert len(t["first_call"]["samples"]) == result["plan"]["first_samples"]
    # Bytes on the wire: CDR bodies as omniORB marshals them, the same on both sockets.
    unix, tcp = (result["transports"][t]["wire"]["cases"] for t in ("unix", "tcp"))
    assert unix == tcp
    body = {name: w["request_body_bytes"] for name, w in unix.items()}
    assert body["null"] == 0 and body["basic-octet"] == 1 and body["basic-double"] == 8
    assert body["array-octet"] == 1024 and body["array-double"] == 8192
    assert body["sequence-octet"] == 4 + 1024 and body["sequence-double"] == 4 + 4 + 8192  # length, pad, data
    assert unix["oneway"]["reply_bytes"] == 0 and unix["null"]["reply_bytes"] > 0
    assert result["transports"]["collocated"]["wire"] is None
    # The report opens with the answer, then its contents; the collocated
    # sweep, a direct call that moves no bytes, has no throughput.
    md = (tmp_path / "report" / "report.md").read_text()
    assert md.split("\n")[2].startswith("**A round trip carrying a sequence of 1024 doubles: collocated ")
    assert md.index("**Contents**") < md.index("## Table 1") and md.rstrip().split("\n## ")[-1].startswith("Conditions")
    collocated_sweep = md[md.index("### Size sweep, collocated") : md.index("### Size sweep, unix")]
    assert collocated_sweep.count("| – (no bytes move) |") == len(result["plan"]["sweep_elements"])
    assert "| – (no bytes move) |" not in md[md.index("### Size sweep, unix") :]
