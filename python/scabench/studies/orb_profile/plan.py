"""What `scabench profile` measures: the cases scabench-profile times (one
IDL operation of idl/profile.idl each) and the Plan that says how much to
measure. Data only: measure.py runs it, analysis.py reads the result."""

from dataclasses import dataclass, field

from scabench.model.checks import SAMPLE_BYTES

TRANSPORTS = ("collocated", "unix", "tcp")
TYPES = ("octet", "short", "float", "double")
ELEMENT_BYTES = SAMPLE_BYTES
ARRAY_LENGTH = 1024  # idl/profile.idl ARRAY_LENGTH, and the sequences of the profile's cases
SWEEP_TYPE = "double"


@dataclass(frozen=True)
class Case:
    name: str  # what scabench-profile calls it
    kind: str  # invocation, oneway, basic, array, sequence
    type: str | None
    elements: int  # elements carried (0 for the null calls)
    operation: str  # the IDL operation, as it appears on the wire

    @property
    def payload_bytes(self):
        return self.elements * ELEMENT_BYTES[self.type] if self.type else 0


def _cases():
    cases = [Case("null", "invocation", None, 0, "nullCall"), Case("oneway", "oneway", None, 0, "nullOneway")]
    for kind, elements in (("basic", 1), ("array", ARRAY_LENGTH), ("sequence", ARRAY_LENGTH)):
        for t in TYPES:
            cases.append(Case(f"{kind}-{t}", kind, t, elements, kind + t.capitalize()))
    cases.append(Case("sequence-double-oneway", "oneway", "double", ARRAY_LENGTH, "sequenceDoubleOneway"))
    return cases


CASES = _cases()
CASES_BY_NAME = {c.name: c for c in CASES}


@dataclass
class Plan:
    """How much to measure. Rounds are sized in time, so that a slow case
    does not take longer than a fast one."""

    rounds: int = 7
    round_s: float = 0.1
    warmup_s: float = 0.05
    min_calls: int = 5
    max_calls: int = 20000
    sweep_elements: list = field(default_factory=lambda: [4**k for k in range(11)])  # 1 .. 1M
    sweep_rounds: int = 5
    first_samples: int = 15  # fresh client processes, one first call each
    first_follow: int = 20  # steady calls after the first one, for the comparison
    wire_calls: int = 3
    foreign_threshold_pct: float = 10.0
    max_attempts: int = 3  # per round, when foreign load spoils it
    transports: tuple = TRANSPORTS
    core: int = 0  # client and server both run here
    spread_cases: tuple = ("null", "basic-double", "sequence-double")

    @classmethod
    def quick(cls):
        return cls(
            rounds=3,
            round_s=0.03,
            warmup_s=0.01,
            sweep_elements=[1, 64, 4096, 262144],
            sweep_rounds=3,
            first_samples=3,
            first_follow=5,
            wire_calls=1,
            max_attempts=2,
        )
