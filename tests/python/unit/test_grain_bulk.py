"""`scabench peers --grain` and `scabench bulk` on known data: the grids
they take, the ratios and tables they build, and the bad options they
refuse (one line, exit 2, before anything runs)."""

import pytest
from conftest import scabench

from scabench.errors import ScabenchError
from scabench.studies.bulk import analysis as bulk
from scabench.studies.peers import catalogue
from scabench.studies.peers import grain_analysis as grain


def _run(last_ms, ratio=None, order=None, disturbed=False):
    return {"last_packet_ms": last_ms, "ratio": ratio, "order_problem": order, "disturbed": disturbed}


def _grain_doc():
    peers = {
        "threads": {"kind": "program"},
        "zmq-inproc": {"kind": "program"},
        "scabench-credits-shm": {"kind": "scabench"},
        "scabench-exp6": {"kind": "scabench"},
    }
    coarse = {
        "work_us": 5000,
        "samples": 1024,
        "packets": 200,
        "floor_ms": 1000.0,
        "peers": {
            "threads": {"runs": [_run(1010.0, 1.01), _run(1030.0, 1.03)]},
            "zmq-inproc": {"runs": [_run(1020.0, 1.02)]},
            "scabench-credits-shm": {"runs": [_run(1030.0, 1.03), _run(1050.0, 1.05)]},
            "scabench-exp6": {"runs": [_run(1100.0, 1.1, order="stage 2 saw 1 of 200 packets out of order")]},
        },
    }
    fine = {
        "work_us": 0,
        "samples": 1024,
        "packets": 2000,
        "floor_ms": 0.0,
        "peers": {
            "threads": {"runs": [_run(10.0)]},
            "scabench-credits-shm": {"runs": [_run(50.0)]},
            "scabench-exp6": {"runs": [_run(40.0)]},
        },
    }
    doc = {"peers": peers, "points": [coarse, fine]}
    grain.summarise_points(doc)
    return doc


def test_a_points_ratios_are_to_its_floor_and_to_plain_threads():
    doc = _grain_doc()
    coarse, fine = (p["figures"] for p in doc["points"])
    # threads' median last packet is 1020 ms: every peer's median is set over it.
    assert coarse["threads"]["ratio_threads"] == pytest.approx(1.0)
    assert coarse["scabench-credits-shm"]["ratio_threads"] == pytest.approx(1040.0 / 1020.0)
    assert coarse["scabench-credits-shm"]["ratio_floor"] == pytest.approx(1.04)
    assert coarse["scabench-exp6"]["in_order"] is False
    # No work: no floor, so no ratio to it; the ratio to threads stands.
    assert fine["scabench-exp6"]["ratio_floor"] is None
    assert fine["scabench-exp6"]["ratio_threads"] == pytest.approx(4.0)
    assert "zmq-inproc" not in fine  # it did not run there


def test_the_best_ordered_scabench_strategy_leaves_out_one_out_of_order():
    doc = _grain_doc()
    coarse, fine = doc["points"]
    assert grain.best_ordered_scabench(doc, coarse) == ("scabench-credits-shm", pytest.approx(1040.0 / 1020.0))
    assert grain.best_ordered_scabench(doc, fine) == ("scabench-exp6", pytest.approx(4.0))


def test_the_grain_table_has_a_column_per_point_and_marks_lost_order():
    doc = _grain_doc()
    assert grain.grain_sizes(doc) == [1024]
    header, rows = grain.grain_table(doc, "ratio_threads", 1024)
    assert header == ["peer", "5 ms", "0 µs"]
    assert rows == [
        ["threads", "1.000", "1.000"],
        ["zmq-inproc", "1.000", "–"],
        ["scabench-credits-shm", "1.020", "5.000"],
        ["scabench-exp6", "1.078!", "4.000"],
    ]
    assert grain.grain_table(doc, "ratio_threads", 16) == (["peer"], [])
    _, floor_rows = grain.grain_table(doc, "ratio_floor", 1024)
    assert floor_rows[2] == ["scabench-credits-shm", "1.040", "–"]
    header, csv_rows = grain.grain_csv_rows(doc)
    assert len(csv_rows) == 7 and header[:2] == ["work_us", "samples"]
    assert csv_rows[-1][4:6] == ["scabench-exp6", "scabench"]


def test_a_points_packets_keep_a_run_short_and_long_enough():
    assert grain.packets_for(5000, 1024) == grain.MIN_PACKETS  # 1 s of work a stage would be 200
    assert grain.packets_for(500, 1024) == grain.MAX_PACKETS
    assert grain.packets_for(0, 16) == grain.MAX_PACKETS
    assert grain.packets_for(0, 65536) == grain.MAX_BYTES // (65536 * 8)


def test_the_grain_peers_are_every_ordered_strategy_on_every_transport():
    scabench_peers = [p for p in catalogue.GRAIN_PEERS if not p.is_program]
    placements = {("collocated" if p.collocated else p.transport or "tcp") for p in scabench_peers}
    assert placements == {"tcp", "unix", "shm", "collocated"}
    assert {p.spec for p in scabench_peers} == {catalogue.EXP6, catalogue.CREDITS}
    assert len(scabench_peers) == 8
    assert {"threads", "zmq-inproc", "zmq-ipc", "gnuradio"} <= {p.id for p in catalogue.GRAIN_PEERS}


@pytest.mark.parametrize(
    "parse, text, hint",
    [
        (grain.parse_work, "5000,x", "'x' is not valid"),
        (grain.parse_work, "-1", "from 0 to"),
        (grain.parse_work, "50,50", "given twice"),
        (grain.parse_sizes, "0", "from 1 to"),
        (grain.parse_sizes, "16,,32", "'' is not valid"),
        (bulk.parse_sizes, "1G", "from 1 to 32M"),
        (bulk.parse_sizes, "64K,65536", "given twice"),
        (bulk.parse_transports, "tcp,ssl", "use some of: tcp, unix, shm"),
    ],
)
def test_a_bad_grid_is_one_error_naming_its_flag(parse, text, hint):
    with pytest.raises(ScabenchError, match=hint):
        parse(text)


def test_grids_in_order_as_given():
    assert grain.parse_work("5000, 0,50") == (5000, 0, 50)
    assert bulk.parse_sizes("1K,4M,100") == (1024, 4 << 20, 100)


def _bulk_doc():
    doc = {
        "meta": {"sizes": [1024, 1 << 20], "transports": ["tcp", "shm"], "calls": ["twoway", "oneway"]},
        "memcpy": {"1024": 40e9, str(1 << 20): 10e9},
        "cases": [
            {"transport": "tcp", "call": "twoway", "size": 1024, "packets": 500, "runs": [{"bytes_per_s": 20e6}]},
            {
                "transport": "shm",
                "call": "oneway",
                "size": 1 << 20,
                "packets": 64,
                "runs": [{"bytes_per_s": 4e9}, {"bytes_per_s": 6e9}, {"bytes_per_s": 5e9}],
            },
        ],
    }
    bulk.summarise(doc)
    return doc


def test_the_bulk_table_sets_each_hop_beside_memcpy():
    doc = _bulk_doc()
    assert doc["cases"][1]["summary"]["bytes_per_s"] == 5e9
    assert doc["cases"][1]["summary"]["of_memcpy"] == pytest.approx(0.5)
    header, rows = bulk.bulk_table(doc)
    assert header == ["packet", "memcpy", "tcp twoway", "tcp oneway", "shm twoway", "shm oneway"]
    assert rows == [
        ["1 KB", "40", "0.02 (0%)", "–", "–", "–"],
        ["1 MB", "10", "–", "–", "–", "5 (50%)"],
    ]
    header, csv_rows = bulk.bulk_csv_rows(doc)
    assert csv_rows[1][header.index("bytes_per_s_min")] == 4e9
    assert csv_rows[1][header.index("memcpy_bytes_per_s")] == 10e9


def test_throughput_is_every_packets_bytes_over_the_time_of_the_last():
    assert bulk.throughput(1 << 20, 1000, 500.0) == pytest.approx((1 << 20) * 2000)
    with pytest.raises(ValueError):
        bulk.throughput(1024, 10, 0.0)
    assert bulk.packets_for(1024, quick=False) == bulk.MAX_PACKETS
    assert bulk.packets_for(4 << 20, quick=False) == 128
    assert bulk.packets_for(1 << 20, quick=True) == 32


def test_redhawks_figures_are_given_with_their_source():
    rows = bulk.reference_rows()
    assert [r[0] for r in rows] == ["tcp", "unix", "unix", "unix"]
    assert rows[0][2] == "2.00 GB/s" and rows[3][1] == "2000 kB"
    assert "REDHAWK 2.2.8 manual" in bulk.REDHAWK_SOURCE


@pytest.mark.parametrize(
    "args, hint",
    [
        (["peers", "--grain", "--grain-work", "5,abc"], "--grain-work: 'abc' is not valid"),
        (["peers", "--grain", "--grain-sizes", "0"], "--grain-sizes: '0' is not valid"),
        (["peers", "--grain-work", "50"], "--grain-work and --grain-sizes need --grain"),
        (["peers", "--grain", "--only", "nobody"], "--only: 'nobody' is not a peer"),
        (["bulk", "--sizes", "1K,zz"], "--sizes: 'zz' is not valid"),
        (["bulk", "--transports", "ssl"], "--transports: 'ssl' is not valid"),
        (["bulk", "--cores", "999"], "--cores"),
    ],
)
def test_bad_options_exit_2_with_one_line(tmp_path, args, hint):
    proc = scabench(*args, "--out", tmp_path / "out", timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and hint in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()
