"""The paper's and the slides' published figures (published.toml)."""

import tomllib
from functools import lru_cache
from pathlib import Path

PUBLISHED_FILE = Path(__file__).with_name("published.toml")
TABLE1 = ("exp1", "exp2", "exp3", "exp4", "exp5", "exp6")  # the experiments of the paper's Table 1
SETUPS = ("multicore", "singlecore")
# Packets per run in the paper and the slides: their times and reordering
# counts are of runs this long (the floors in published.toml say so too).
PAPER_PACKETS = 1000


@lru_cache(maxsize=1)
def published():
    with open(PUBLISHED_FILE, "rb") as f:
        return tomllib.load(f)


def paper_table(experiment, setup):
    """The paper's table for one experiment on one set-up, with its number."""
    data = published()
    number = data["experiment"][experiment]["tables"][setup]
    return number, data["table"][str(number)]


def paper_figure(experiment, setup):
    """The paper's send-time figure for an experiment and set-up, or (None, None)."""
    for number, fig in published()["figure"].items():
        if fig["experiment"] == experiment and fig["setup"] == setup:
            return int(number), fig
    return None, None


def paper_ratio(experiment, setup):
    _, table = paper_table(experiment, setup)
    return table["last_packet_ms"][-1] / published()["setup"][setup]["floor_ms"]
