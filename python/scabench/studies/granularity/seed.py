"""The seed's published figures for `scabench granularity`: what "Effects of
SCA component granularity on processor workload" gives, which the lab stores
in its result (result["seed"]) and the analysis and the report compare with.
Constants only: nothing here measures or computes."""

from typing import Any

# What the seed's text gives about its Figs. 3 (user %) and 4 (user+system %),
# the STANAG 4285 transmitter (its section 3.2). The bars are an image and
# none of their values is in the text, so only the settings and the ratios it
# states are carried here.
S4285_SEED: dict[str, Any] = {
    "symbol_rates": [2395, 25600, 64000],  # the first is its audio card's 9.36 frames/s
    "frames_per_s_at_the_lowest_rate": 9.36,
    "configs": ["non-SCA", "2 components", "7 components", "11 components"],
    "measured_with": "sar -u 40 5, whole machine",
    "figure_values_in_text": False,
    "user_11_vs_2": 2.5,  # "roughly"
    "user_11_vs_plain_above": 2.5,  # "more than"
    "total_ratios_above_user": True,  # Fig. 4: the user+system difference is "even larger"
}

# The seed's figures: its Table 2 (cycles; B in floats), its context-switch
# estimates and its W11/FUNC (U+S) ratios (Fig. 6).
SEED: dict[str, Any] = {
    "cpu": "Pentium M 1.86 GHz, Linux 2.6.9, OSSIE 0.6, omniORB",
    "f_hz": 1.86e9,
    "table2": {
        "sar": {
            "user": {"src": 0, "snk": 0, "to_seq_b": 14.5, "from_seq_b": 10.6, "tr_a": 79200, "tr_b": 5.5},
            "system": {"src": 0, "snk": 0, "to_seq_b": 0, "from_seq_b": 0, "tr_a": 160000, "tr_b": 23.6},
        },
        "oprofile": {
            "user": {"src": 650, "snk": 200, "to_seq_b": 14.6, "from_seq_b": 10.6, "tr_a": 80700, "tr_b": 5.5},
            "system": {"src": 0, "snk": 0, "to_seq_b": 0, "from_seq_b": 0, "tr_a": 150000, "tr_b": 23.0},
        },
    },
    "csr": 1300,
    "cs_direct_cycles": 9300,
    "cs_indirect_c": 0.02,
    "w11_func_ratio": {20000: 1.94, 100000: 1.17},
    "s4285": S4285_SEED,
}
