"""The live view's figures (run/live.py) on known records: record files
written with records.py's layout into tmp_path, some of their packets still
in progress, sampled, then written further and sampled again, as a run's
files grow under a reader."""

import time

import numpy as np
import pytest
from test_graph_figures import US, graph_spec, write_records

from scabench import latency_bins
from scabench.console import text
from scabench.report.live import dashboard, plain_line
from scabench.run.live import LATENCY_BINS, LiveSampler, percentile_of_histogram
from scabench.run.records import HEADER, HEADER_WITH_GAUGES, MAGIC, RECORD, read_records

CHAIN = ["p.out->a.in", "a.out->s.in"]


def chain_spec(packets=10):
    return graph_spec(
        {"p": "producer", "a": "stage", "s": "sink"},
        CHAIN,
        {"p": {"packets": packets, "samples": 8}, "a": {"work_us": 1000}},
    )


def set_header(path, **fields):
    """Changes header fields in place, as a component's atomic counters do."""
    header = np.memmap(path, dtype=HEADER, mode="r+", shape=(1,))
    for key, value in fields.items():
        header[0][key] = value
    header.flush()


def test_percentile_of_a_histogram_is_the_upper_edge_of_its_bin():
    counts = np.zeros(LATENCY_BINS.size + 1, np.int64)
    values = np.array([10.0] * 50 + [1000.0] * 49 + [1e5])
    counts += np.bincount(np.searchsorted(LATENCY_BINS, values), minlength=counts.size)
    assert 10.0 <= percentile_of_histogram(counts, 50) <= 10.0 * 1.13
    assert 1000.0 <= percentile_of_histogram(counts, 99) <= 1000.0 * 1.13
    assert 1e5 <= percentile_of_histogram(counts, 100) <= 1e5 * 1.13
    assert np.isnan(percentile_of_histogram(np.zeros_like(counts), 50))


def test_a_sample_reads_what_is_done_what_is_held_and_what_reordered(tmp_path):
    spec = chain_spec()
    now = time.monotonic_ns()
    t = now - 1_000_000_000 + np.arange(10) * 1000 * US  # sent 1 s ago, 1 ms apart
    write_records(tmp_path / "p.rec", np.arange(10), t, t + 10 * US)
    set_header(tmp_path / "p.rec", completed=10)
    # The stage took 6 (4 before 3: one packet overtaken), finished 4, holds 2.
    seq = np.array([0, 1, 2, 4, 3, 5])
    arrive = t[seq] + 100 * US
    done = np.where(np.arange(6) < 4, arrive + 1000 * US, 0)
    write_records(tmp_path / "a.rec", seq, arrive, done)
    set_header(tmp_path / "a.rec", completed=4, max_concurrent=2)
    # The sink got 3, each 2 ms after its send (its file has room for 5).
    write_records(tmp_path / "s.rec", np.arange(5), t[:5] + 2000 * US, t[:5] + 2010 * US)
    set_header(tmp_path / "s.rec", claimed=3, completed=3)

    sampler = LiveSampler(spec, tmp_path)
    sample = sampler.sample()
    a = sample.component("a")
    assert (a.taken, a.finished, a.holding) == (6, 4, 2)
    assert a.reordered == 3  # 4 after 2, 3 after 4, 5 after 3: each not the previous + 1
    assert a.busiest == 2
    assert a.threads_seen == 1
    assert sample.sent == 10 and sample.to_send == 10 and sample.time_left_s is None
    (lat,) = sample.latency
    assert lat.sink == "s" and lat.packets == 3
    assert 2000 <= lat.p50_us <= 2000 * 1.13
    assert [(c.id, c.packets) for c in sample.connections] == [("p.out->a.in", 6), ("a.out->s.in", 3)]
    # The stage's last packet finished about 1 s ago and it holds two: with
    # 1 ms of work a packet, that is a stall as it happens.
    assert a.stalled_s is not None and a.stalled_s > 0.25
    assert sample.component("s").stalled_s is None  # holds nothing

    # The files grow: a sample reads only the new records, and counts each once.
    set_header(tmp_path / "s.rec", claimed=5, completed=5)
    again = sampler.sample()
    assert again.latency[0].packets == 5
    assert again.component("s").reordered == 0


def test_a_record_claimed_but_not_yet_written_is_read_next_time(tmp_path):
    spec = chain_spec(packets=4)
    t = time.monotonic_ns() + np.arange(4) * 1000 * US
    write_records(tmp_path / "p.rec", np.arange(4), t, t + 10 * US)
    arrive = t + 100 * US
    arrive[2:] = 0  # slots 2 and 3 claimed, their arrival not written yet
    write_records(tmp_path / "a.rec", np.arange(4), arrive, np.zeros(4))
    sampler = LiveSampler(spec, tmp_path)
    assert sampler.sample().connections[0].packets == 2
    records = np.memmap(tmp_path / "a.rec", dtype=RECORD, mode="r+", offset=HEADER.itemsize, shape=(4,))
    records["arrive_ns"][2:] = t[2:] + 100 * US
    records.flush()
    assert sampler.sample().connections[0].packets == 4


def test_no_record_file_yet_is_a_sample_of_nothing(tmp_path):
    sample = LiveSampler(chain_spec(), tmp_path).sample()
    assert all(c.taken == 0 and c.since_last_s is None for c in sample.components)
    assert sample.latency == []


@pytest.mark.parametrize("render", [plain_line, lambda s: text([dashboard(s)], wide=True)])
def test_the_view_names_every_component_and_its_figures(tmp_path, render):
    spec = chain_spec()
    t = time.monotonic_ns() + np.arange(10) * 1000 * US
    write_records(tmp_path / "p.rec", np.arange(10), t, t + 10 * US)
    set_header(tmp_path / "p.rec", completed=10)
    write_records(tmp_path / "a.rec", np.array([0, 2, 1]), t[:3] + 100 * US, t[:3] + 1100 * US)
    out = render(LiveSampler(spec, tmp_path).sample())
    for name in ("p", "a", "s"):
        assert name in out
    assert "sent 10 of 10" in out


def test_a_component_held_back_while_others_finish_is_not_stalled(tmp_path):
    """A source blocked on a full queue holds a packet for long, but the
    stage behind it finished one just now: flow control, not a stall."""
    spec = chain_spec(packets=3)
    now = time.monotonic_ns()
    t = now - 2_000_000_000 + np.arange(3) * 1000 * US
    write_records(tmp_path / "p.rec", np.arange(3), t, np.array([t[0] + 10 * US, t[1] + 10 * US, 0]))
    set_header(tmp_path / "p.rec", completed=2)
    write_records(tmp_path / "a.rec", np.arange(2), t[:2] + 100 * US, np.array([now - 1000 * US, 0]))
    set_header(tmp_path / "a.rec", completed=1)
    sample = LiveSampler(spec, tmp_path).sample()
    assert sample.component("p").holding == 1 and sample.component("p").since_last_s > 1.0
    assert sample.component("p").stalled_s is None and sample.component("a").stalled_s is None


def test_latency_is_counted_once_when_each_packet_is_done_at_the_sink(tmp_path):
    """Send to done, as the run's table: a packet that arrived but is not
    done is counted when it is, once, whatever finished after it meanwhile."""
    spec = chain_spec(packets=3)
    t = time.monotonic_ns() + np.arange(3) * 1000 * US
    write_records(tmp_path / "p.rec", np.arange(3), t, t + 10 * US)
    write_records(tmp_path / "a.rec", np.arange(3), t + 100 * US, t + 200 * US)
    write_records(tmp_path / "s.rec", np.arange(3), t + 300 * US, np.array([t[0] + 5000 * US, 0, t[2] + 5000 * US]))
    sampler = LiveSampler(spec, tmp_path)
    assert sampler.sample().latency[0].packets == 2
    assert sampler.sample().latency[0].packets == 2  # looked at again, counted once
    records = np.memmap(tmp_path / "s.rec", dtype=RECORD, mode="r+", offset=HEADER.itemsize, shape=(3,))
    records["done_ns"][1] = t[1] + 5000 * US
    records.flush()
    (lat,) = sampler.sample().latency
    assert lat.packets == 3
    assert 5000 <= lat.p50_us <= 5000 * 1.13  # to done, not to arrival (300 µs)


def write_records_with_gauges(path, sequence, arrive_ns, done_ns, **gauges):
    """A record file as the runtime writes it now: the 192-byte header, its
    gauges set, the records after it."""
    n = len(sequence)
    header = np.zeros(1, dtype=HEADER_WITH_GAUGES)
    header["magic"], header["header_size"], header["record_size"] = MAGIC, HEADER_WITH_GAUGES.itemsize, RECORD.itemsize
    header["capacity"] = header["claimed"] = n
    for key, value in gauges.items():
        header[key] = value
    body = np.zeros(n, dtype=RECORD)
    body["sequence"], body["arrive_ns"], body["done_ns"] = sequence, arrive_ns, done_ns
    path.write_bytes(header.tobytes() + body.tobytes())


def test_the_gauges_are_read_from_a_header_that_has_them_and_none_from_one_before(tmp_path):
    spec = chain_spec(packets=4)
    t = time.monotonic_ns() + np.arange(4) * 1000 * US
    write_records_with_gauges(
        tmp_path / "a.rec", np.arange(4), t + 100 * US, np.zeros(4), worker_queued=3, reorder_held=2, upcalls=1
    )
    write_records_with_gauges(tmp_path / "p.rec", np.arange(4), t, t + 10 * US, credits_outstanding=4, ring_depth=-1)
    write_records(tmp_path / "s.rec", np.arange(2), t[:2] + 200 * US, t[:2] + 300 * US)  # the 128-byte header
    sample = LiveSampler(spec, tmp_path).sample()
    a, p, s = (sample.component(n) for n in "aps")
    assert (a.queued, a.reorder_held, a.upcalls, a.ring_depth, a.credits_outstanding) == (3, 2, 1, 0, 0)
    assert a.taken == 4 and [r.packets for r in sample.connections] == [4, 2]  # records after the longer header
    assert p.credits_outstanding == 4 and p.ring_depth == 0  # a gauge caught below zero reads 0
    assert s.queued is None and s.taken == 2
    line = plain_line(sample)
    assert "a: done 0 queued 3 reorder 2 calls 1 " in line and "p: done 0 queued 0 credits 4 " in line
    assert "s: done 0 holding 2 " in line  # no gauges: taken less finished, as before them
    # A flow depth's column appears once some component has one above zero.
    shown = text([dashboard(sample)], wide=True)
    assert "credits" in shown and "ring" not in shown

    new, old = read_records(tmp_path / "a.rec"), read_records(tmp_path / "s.rec")
    assert new.gauges is not None and new.gauges["worker_queued"] == 3 and list(new.sequence) == [0, 1, 2, 3]
    assert old.gauges is None and list(old.sequence) == [0, 1]


def test_a_header_of_another_size_is_refused_in_words(tmp_path):
    write_records(tmp_path / "x.rec", np.arange(2), np.ones(2), np.ones(2))
    set_header(tmp_path / "x.rec", header_size=160)
    with pytest.raises(ValueError, match="a record header of 160 bytes"):
        read_records(tmp_path / "x.rec")


def test_the_ports_latency_bins_are_the_live_views_and_give_the_same_quantiles():
    """One bin definition (latency_bins.py): the ports' histogram (in ns)
    and run --live's (in µs) give each quantile as the same upper edge."""
    latencies_ns = [900, 5_000, 5_000, 100_000, 2_000_000, 7_000_000_000]
    ports = [0] * latency_bins.BINS
    for ns in latencies_ns:
        ports[latency_bins.bin_of_ns(ns)] += 1
    live = np.bincount(np.searchsorted(LATENCY_BINS, np.array(latencies_ns) / 1000.0), minlength=LATENCY_BINS.size + 1)
    assert list(live) == ports
    for q in (0.5, 0.99, 1.0):
        assert latency_bins.quantile_ns(ports, q) == np.ceil(1000.0 * percentile_of_histogram(live, 100 * q))
