"""What `scabench granularity` measures and for how long: the Plan and the
named plans (default, quick, and tiny for the tests). The lab (lab.py) runs
one; its result carries the plan as a dict (result["plan"])."""

from dataclasses import dataclass, field

# A process per component over each transport (shm: the samples in shared
# memory, docs/architecture.md "Shared-memory transport"), and all in one.
PLACEMENTS = (("process", "tcp"), ("process", "unix"), ("process", "shm"), ("collocated", "none"))
PARTS = ("fir", "s4285")  # the FIR steps 1-5, and the STANAG 4285 transmitter (step 6)


@dataclass
class Plan:
    """What to measure and for how long."""

    name: str
    cores: list = field(default_factory=lambda: [0])
    pr: int = 40
    warmup_s: float = 1.0
    window_s: float = 3.0
    repeats: int = 2  # runs per point of the test application
    # Fig. 6's runs per point, FUNC's and every configuration's taken in turn
    # (Lab.fig6_point): the W11/FUNC ratio is the study's answer, and one
    # window of each, minutes apart, can give anything from 1.2 to 2.6 on a
    # shared machine (docs/findings/granularity.md, "Is collocated W11/FUNC
    # 1.2 or 2?").
    fig6_repeats: int = 2
    fig6_nb: tuple = (20000, 100000)
    fig6_samples: int = 2000
    fig6_configs: tuple = ("W2", "W3", "W5", "W11")
    fig7_samples: tuple = (500, 2000, 8000, 32000)
    fig7_configs: tuple = ("W2", "W3", "W5", "W11")
    fig7_repeats: int = 1
    fig7_target_pct: float = 10.0
    placements: tuple = PLACEMENTS
    test_samples: tuple = (500, 4000, 16000)
    # The test application at two rates: warm (a packet every 2.5 ms, caches
    # and branch predictors stay warm: model (1)'s "no loss" parameters) and
    # cold (the experiments' rate: 25 ms of idle before each packet, in which
    # this VM's core runs other guests and forgets ours).
    test_pr: int = 400
    test_pr_cold: int = 40
    test_warmup_s: float = 1.0
    test_window_s: float = 3.0
    call: str = "twoway"
    foreign_limit_pct: float = 5.0
    max_redo: int = 2
    redo_budget: float = 0.3  # at most this share of extra runs, so a busy machine cannot stall the lab
    workload: str = "fir"
    parts: tuple = PARTS
    # The STANAG 4285 transmitter (lab_s4285.py), with the warm-up
    # above; its window is at least s4285_window_s and s4285_window_frames
    # frames, in whole frame periods.
    s4285_mode: str = "2400L"
    s4285_rates: tuple = (2400, 25600, 64000)
    s4285_splits: tuple = (2, 7, 11)
    s4285_placements: tuple = ("process", "collocated")
    s4285_repeats: int = 3
    s4285_window_s: float = 3.0
    s4285_window_frames: int = 64


PLANS = {
    "default": Plan("default"),
    "quick": Plan(
        "quick",
        warmup_s=0.5,
        window_s=1.2,
        repeats=1,
        fig6_repeats=3,
        fig6_configs=("W2", "W11"),
        fig7_samples=(500, 8000),
        fig7_configs=("W11",),
        placements=(("process", "tcp"), ("process", "shm"), ("collocated", "none")),
        test_samples=(1000, 8000),
        test_warmup_s=0.5,
        test_window_s=1.2,
        test_pr_cold=0,
        max_redo=0,
        s4285_rates=(2400, 64000),
        s4285_splits=(2, 11),
        s4285_repeats=1,
        s4285_window_s=1.2,
        s4285_window_frames=16,
    ),
    # For the tests: every code path, as short as it gets.
    "tiny": Plan(
        "tiny",
        warmup_s=0.3,
        window_s=0.6,
        repeats=1,
        fig6_repeats=1,
        fig6_nb=(20000,),
        fig6_configs=("W3",),
        fig7_samples=(4000,),
        fig7_configs=("W3",),
        fig7_target_pct=2.0,
        placements=(("process", "unix"), ("collocated", "none")),
        test_samples=(1000, 4000),
        test_pr=200,
        test_pr_cold=0,
        test_warmup_s=0.3,
        test_window_s=0.5,
        max_redo=0,
        foreign_limit_pct=100.0,
        s4285_rates=(25600,),
        s4285_splits=(2, 11),
        s4285_repeats=1,
        s4285_window_s=0.5,
        s4285_window_frames=0,
    ),
}
