"""A connection's messaging policy: the vocabulary, its checks, and what each
setting becomes in the runtime (port properties and ORB options).

  call      twoway | oneway
  sync      none | transport | server | target   (one-way only; see
            cpp/include/scabench/messaging.hpp for how each is realised)
  dispatch  pool | pool:N | serial | single      (receiving side)
  worker    false | true | depth                 (receiving side)

Placement decides whether a connection is remote or collocated: a collocated
call is a direct call, so dispatch does not apply to it.
"""
from dataclasses import dataclass, asdict

CALLS = ("twoway", "oneway")
SYNCS = ("none", "transport", "server", "target")
DISPATCH_FORMS = "pool, pool:N (N >= 1), serial or single"
POLICY_KEYS = ("call", "sync", "dispatch", "worker")

# Two-way + worker needs slack in each queue to keep both cores of a 2-core
# machine busy behind three equal stages: the paper's exp6 on 2 cores measured
# 1.046 x floor at depth 16, 1.035 at 64 and 1.035 at 256 (3 runs each), so
# 64 is the knee. It costs 64 packets of memory (512 KiB of doubles) per port;
# with a paced source the queue stays nearly empty and adds no latency.
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

    def uses_properties(self, port):
        return {f"{port}.call": self.call, f"{port}.sync": self.sync}

    def provides_properties(self, port):
        return {f"{port}.worker_depth": self.worker_depth,
                f"{port}.dispatch": "single" if self.dispatch == "single" else "orb"}


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
        else:
            raise PolicyValueError(key, f"unknown policy key; valid keys: {', '.join(POLICY_KEYS)}")
    if fields["call"] == "twoway" and "sync" in table and table["sync"] != "transport":
        raise PolicyValueError("sync", "a sync scope only applies to call = \"oneway\"")
    return Policy(**fields)


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
