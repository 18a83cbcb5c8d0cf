"""A connection's messaging policy: the vocabulary, its checks, and what each
setting becomes in the runtime (port properties and ORB options).

  call      twoway | oneway
  sync      none | transport | server | target   (one-way only; see
            cpp/runtime/include/scabench/runtime/senders.hpp for how each
            is realised)
  dispatch  pool | pool:N | serial | single      (receiving side)
  worker    false | true | depth                 (receiving side; with
            worker_resume = "auto" | "half" | r: the queue level at which a
            caller blocked on the full queue resumes; "auto" is "half" for
            two-way and the first free slot, d - 1, for one-way)
  ordering  arrival | resequence                 (receiving side; with
            reorder_capacity = c packets and reorder_timeout_ms = t)
  flow      none | "watermarks(lo, hi)" | "credits(w)"   (both sides)

Placement decides whether a connection is remote or collocated: a collocated
call is a direct call, so dispatch does not apply to it.

The ports take these keys as they are written here, as `<port>.<key>`
properties (the runtime's policy table: scabench-host --describe, "policy");
the runtime resolves worker_resume = "auto" per call.
"""
import re
from dataclasses import dataclass, asdict

CALLS = ("twoway", "oneway")
SYNCS = ("none", "transport", "server", "target")
DISPATCH_FORMS = "pool, pool:N (N >= 1), serial or single"
POLICY_KEYS = ("call", "sync", "dispatch", "worker", "worker_resume", "ordering", "reorder_capacity",
               "reorder_timeout_ms", "flow")
ORDERINGS = ("arrival", "resequence")
FLOW_FORMS = 'none, "watermarks(lo, hi)" with 0 <= lo < hi, or "credits(w)" with w >= 1'
DEFAULT_REORDER_CAPACITY = 64
DEFAULT_REORDER_TIMEOUT_MS = 50.0

# Two-way + worker needs slack in each queue to keep both cores of a 2-core
# machine busy behind three equal stages. A two-way caller blocked on a full
# queue resumes at half the depth (worker_resume = "auto", resolved per call by
# the runtime), so it sleeps once per burst rather than once per packet. exp6
# on 2 cores, 4 guarded runs each:
# depth 16 1.030-1.036 x floor, 64 1.024-1.028, 256 1.021-1.025, 1024
# 1.020-1.029; 64 resuming at the first free slot, as before, 1.032-1.053.
# So 64 is the knee. It costs 64 packets of memory (512 KiB of doubles) per
# port; with a paced source the queue stays nearly empty and adds no latency.
DEFAULT_WORKER_DEPTH = 64


class PolicyValueError(ValueError):
    """A bad value; the caller knows the file and key."""

    def __init__(self, key, message):
        self.key = key
        super().__init__(message)


@dataclass(frozen=True)
class Policy:
    call: str = "twoway"
    sync: str = "transport"
    dispatch: str = "pool"
    worker_depth: int = 0
    worker_resume: object = "auto"   # "auto", "half" (the runtime's d // 2) or 0 <= r < d
    ordering: str = "arrival"
    reorder_capacity: int = DEFAULT_REORDER_CAPACITY
    reorder_timeout_ms: float = DEFAULT_REORDER_TIMEOUT_MS
    flow: str = "none"          # none | watermarks | credits
    flow_low: int = 0
    flow_high: int = 0
    credits: int = 0

    def as_dict(self):
        return asdict(self)

    @property
    def max_server_threads_per_connection(self):
        """The omniORB setting behind `dispatch`, or None for its default."""
        if self.dispatch == "serial":
            return 1
        if self.dispatch.startswith("pool:"):
            return int(self.dispatch.split(":", 1)[1])
        return None

    def orb_options(self):
        """ORB options for the host that receives on this connection."""
        n = self.max_server_threads_per_connection
        return [] if n is None else ["-ORBmaxServerThreadPerConnection", str(n)]

    @property
    def flow_text(self):
        return {"none": "none", "watermarks": f"watermarks({self.flow_low}, {self.flow_high})",
                "credits": f"credits({self.credits})"}[self.flow]

    def uses_properties(self, port):
        return {f"{port}.call": self.call, f"{port}.sync": self.sync, f"{port}.flow": self.flow_text}

    def provides_properties(self, port):
        resume = self.worker_resume if self.worker_resume in ("auto", "half") else str(self.worker_resume)
        return {f"{port}.worker": self.worker_depth, f"{port}.worker_resume": resume,
                f"{port}.dispatch": self.dispatch, f"{port}.ordering": self.ordering,
                f"{port}.reorder_capacity": self.reorder_capacity,
                f"{port}.reorder_timeout_ms": float(self.reorder_timeout_ms), f"{port}.flow": self.flow_text}


def parse_policy(table, base=None):
    """Builds a Policy from a TOML table, on top of `base`. Raises
    PolicyValueError naming the key and the valid values."""
    base = base or Policy()
    fields = base.as_dict()
    for key, value in table.items():
        if key == "call":
            if value not in CALLS:
                raise PolicyValueError(key, f"{value!r} is not valid; use one of: {', '.join(CALLS)}")
            fields["call"] = value
        elif key == "sync":
            if value not in SYNCS:
                raise PolicyValueError(key, f"{value!r} is not valid; use one of: {', '.join(SYNCS)}")
            fields["sync"] = value
        elif key == "dispatch":
            fields["dispatch"] = _check_dispatch(value)
        elif key == "worker":
            fields["worker_depth"] = _worker_depth(value)
        elif key == "worker_resume":
            if value not in ("auto", "half") and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise PolicyValueError(key, f"{value!r} is not valid; use \"auto\", \"half\" or a queue level r >= 0")
            fields["worker_resume"] = value
        elif key == "ordering":
            if value not in ORDERINGS:
                raise PolicyValueError(key, f"{value!r} is not valid; use one of: {', '.join(ORDERINGS)}")
            fields["ordering"] = value
        elif key == "reorder_capacity":
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise PolicyValueError(key, f"{value!r} is not valid; the reorder buffer holds c >= 1 packets")
            fields["reorder_capacity"] = value
        elif key == "reorder_timeout_ms":
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                raise PolicyValueError(key, f"{value!r} is not valid; use a time in ms >= 0")
            fields["reorder_timeout_ms"] = float(value)
        elif key == "flow":
            fields.update(_flow(value))
        else:
            raise PolicyValueError(key, f"unknown policy key; valid keys: {', '.join(POLICY_KEYS)}")
    resume, depth = fields["worker_resume"], fields["worker_depth"]
    if resume not in ("auto", "half") and not resume < depth:
        raise PolicyValueError("worker_resume", f"{resume!r} is not valid with worker depth {depth}; "
                               f"use \"auto\", \"half\" or 0 <= r < {depth}" if depth else
                               "it applies to a worker queue; set worker = true or a depth")
    if fields["call"] == "twoway" and "sync" in table and table["sync"] != "transport":
        raise PolicyValueError("sync", "a sync scope only applies to call = \"oneway\"")
    return Policy(**fields)


def _flow(value):
    """"none", "watermarks(lo, hi)" or "credits(w)" -> the Policy fields."""
    text = value.replace(" ", "") if isinstance(value, str) else ""
    if text == "none":
        return {"flow": "none", "flow_low": 0, "flow_high": 0, "credits": 0}
    m = re.fullmatch(r"watermarks\((\d+),(\d+)\)", text)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo >= hi:
            raise PolicyValueError("flow", f"{value!r}: the low watermark must be below the high one (lo < hi)")
        return {"flow": "watermarks", "flow_low": lo, "flow_high": hi, "credits": 0}
    m = re.fullmatch(r"credits\((\d+)\)", text)
    if m:
        w = int(m.group(1))
        if w < 1:
            raise PolicyValueError("flow", f"{value!r}: a credit window needs w >= 1 packets")
        return {"flow": "credits", "flow_low": 0, "flow_high": 0, "credits": w}
    raise PolicyValueError("flow", f"{value!r} is not valid; use {FLOW_FORMS}")


def _check_dispatch(value):
    if isinstance(value, str):
        if value in ("pool", "serial", "single"):
            return value
        if value.startswith("pool:"):
            n = value.split(":", 1)[1]
            if n.isdigit() and int(n) >= 1:
                return f"pool:{int(n)}"
    raise PolicyValueError("dispatch", f"{value!r} is not valid; use {DISPATCH_FORMS}")


def _worker_depth(value):
    if value is True:
        return DEFAULT_WORKER_DEPTH
    if value is False:
        return 0
    if isinstance(value, int) and value >= 1:
        return value
    raise PolicyValueError("worker", f"{value!r} is not valid; use false, true (depth "
                           f"{DEFAULT_WORKER_DEPTH}) or a queue depth >= 1")
