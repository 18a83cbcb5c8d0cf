"""Foreign load: one definition of busy for every meter (measure/load.py)."""

from types import SimpleNamespace

from scabench.measure.load import busy_jiffies, core_jiffies
from scabench.measure.window import window_result


def test_busy_is_everything_but_idle_and_iowait_steal_included():
    #        user nice system idle iowait irq softirq steal
    fields = [10, 1, 4, 70, 5, 2, 3, 5]
    assert busy_jiffies(fields) == 10 + 1 + 4 + 2 + 3 + 5


def test_the_steady_window_counts_foreign_load_by_the_same_definition():
    before = SimpleNamespace(wall=0.0, cores=[0] * 8, processes={}, ctxt=0)
    after = SimpleNamespace(wall=1.0, cores=[10, 1, 4, 70, 5, 2, 3, 5], processes={}, ctxt=100)
    result = window_result(before, after)
    assert result["foreign_pct"] == 100.0 * busy_jiffies(after.cores) / sum(after.cores)


def test_core_jiffies_sums_the_cpus_asked_for():
    one, machine = core_jiffies([0]), core_jiffies()
    assert len(one) == 8 and all(v >= 0 for v in one)
    assert sum(machine) >= sum(one)
    assert all(b >= o for b, o in zip(core_jiffies([0, 1]), one))  # CPU 1 adds to CPU 0 (or is absent)
