"""The figures the claims are judged on, read from the campaign's entries
({"exp1@multicore": CampaignEntry, ...}, measure/campaign.py), and
the paper's published counterparts. A configuration without a successful run
raises Missing, which claims.py turns into "not run": nothing was measured
that could reproduce the claim or refute it."""

from scabench.studies.paper.published import published


class Missing(Exception):
    """A configuration the claim needs was not measured: args (name, why)."""


def entry(entries, name):
    e = entries.get(name)
    if not e:
        raise Missing(name, "was not in this campaign")
    if not e.summary:
        raise Missing(name, "has no successful run (every run failed)")
    return e


def last_ms(entries, name):
    return entry(entries, name).summary.stages[-1].last_packet_ms.median


def ratio(entries, name):
    return entry(entries, name).summary.overhead_ratio.median


def floor_ms(entries, name):
    return entry(entries, name).summary.floor_ms


def reordered(entries, name, kind="reordered_from_previous", stage=-1):
    return getattr(entry(entries, name).summary.stages[stage], kind).median


def most_reordered(entries, name):
    """The most packets any run reordered at any stage, by either count."""
    runs = entry(entries, name).runs
    return max(max(s.reordered_from_previous, s.reordered_from_original) for r in runs for s in r.stages)


def run_count(entries, name):
    return len(entry(entries, name).runs)


def core_count(entries, name):
    return len(entry(entries, name).config.cores)


def stage_count(entries, name):
    return sum(1 for s in entry(entries, name).summary.stages if s.name != "sink")


def setup_label(entries, name):
    return entry(entries, name).config.setup_label


def paper_last_ms(table):
    return published()["table"][str(table)]["last_packet_ms"][-1]


def paper_reordered(table, kind="reordered_from_previous"):
    return published()["table"][str(table)][kind][-1]


def ms(v):
    return f"{v:,.0f} ms"
