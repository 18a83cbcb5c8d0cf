"""The granularity lab's rows, typed: one measured configuration each, as
granularity.json keeps them (result["configurations"] for the FIR load,
result["stanag4285"]["configurations"] for the transmitter). as_dict() gives
a row's object, keys in the file's order; read_result() reads a result back
with its rows typed (`scabench granularity --from-json`). The lab (lab.py,
lab_s4285.py) makes the rows, analysis.py models and summarises them, and
the report reads them; the rest of the result stays plain JSON."""

from dataclasses import dataclass

from scabench.typed import Typed, figure, optional


@dataclass
class FirRow(Typed):
    """FUNC or one configuration of the FIR load at one (N, B): where it ran,
    what its steady windows measured (the mean of its runs, % of the plan's
    cores), and, once analysis.apply_models put them on it, both models."""

    experiment: str  # "fig6" or "fig7"
    workload: str  # a key of workloads.WORKLOADS
    config: str  # "FUNC", "W2", "W3", ...
    components: int  # M
    placement: str  # "standalone" (FUNC), "process" or "collocated"
    transport: str  # "none", "tcp", "unix" or "shm"
    taps: int  # N
    samples: int  # B
    nb: int  # N·B
    pr: int  # packets per second
    user_pct: float
    system_pct: float
    total_pct: float
    csw_per_s: float
    sar_user_pct: float
    sar_total_pct: float
    system_csw_per_s: float
    foreign_pct: float
    user_sample_s: float  # the tick samples behind the user/system split, summed over the runs
    system_sample_s: float
    split_source: str
    runs: list  # each run's window: user_pct, total_pct, csw_per_s, foreign_pct, ...
    processes: list  # each process's mean share: name, user_pct, system_pct, total_pct, csw_per_s
    checksum: float | None  # the sink's (FUNC's own), the same in every run; None if they differed
    output_matches_func: bool | None
    work_ns_per_packet: float | None = optional()  # FUNC only: its filters' CPU per packet (thread clock)
    sink_ns_per_packet: float | None = optional()  # FUNC only
    model1_cold_total_pct: float | None = optional()  # model (1) on the cold test application, if measured
    # The models (analysis.apply_models); a row of an interrupted lab has none.
    N: int | None = figure()
    B: int | None = figure()
    PR: int | None = figure()
    model1_user_pct: float | None = figure()
    model1_total_pct: float | None = figure()
    cs_indirect_ns: float | None = figure()
    model2_user_pct: float | None = figure()
    model2_total_pct: float | None = figure()
    implied_cs_ns: float | None = figure()  # what a switch would cost to close model (1)'s gap; None without switches

    @property
    def analysed(self):
        """The models were put on the row."""
        return self.N is not None


@dataclass
class S4285Row(Typed):
    """The STANAG 4285 transmitter, plain or split, at one symbol rate: the
    median of its runs' U+S with their range, U split from all their tick
    samples (None when no tick fell), and its audio against the plain
    program's."""

    workload: str  # "s4285"
    config: str  # "plain", "split2", "split7", "split11"
    components: int
    placement: str  # "standalone", "process" or "collocated"
    transport: str
    mode: str
    symbol_rate: int
    frame_rate: float
    frames: int
    window_s: float  # whole frame periods
    dither_us: int
    user_pct: float | None
    system_pct: float | None
    total_pct: float
    csw_per_s: float
    total_spread: list  # [lowest, highest] U+S of the runs
    us_per_frame: float
    audio_digest: str
    output_matches_plain: bool | None  # None for the plain program
    foreign_pct: float
    sar_user_pct: float
    sar_total_pct: float
    system_csw_per_s: float
    user_sample_s: float
    system_sample_s: float
    split_source: str
    runs: list
    processes: list


def read_result(doc):
    """A result as granularity.json keeps it, with its rows typed (a copy;
    the rest as it is). ValueError or KeyError if it is not one the lab
    wrote."""
    result = {**doc, "configurations": [FirRow.from_dict(r) for r in doc["configurations"]]}
    if result.get("stanag4285") is not None:
        part = result["stanag4285"]
        result["stanag4285"] = {**part, "configurations": [S4285Row.from_dict(r) for r in part["configurations"]]}
    return result
