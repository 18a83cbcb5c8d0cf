"""The data-rate bound of the ORB profiling paper's Eq. 1.

If a call that carries N_p elements costs D_t seconds of middleware time,
and a symbol needs S_s samples and carries n bits, then the middleware alone
takes T_m = D_t * S_s / (N_p * n) seconds per bit, and no waveform built on
it can go faster than 1 / T_m bits per second."""

import math
from fractions import Fraction

SEED_SAMPLES_PER_SYMBOL = 8
SEED_BITS_PER_SYMBOL = 1


def middleware_time_per_bit(
    transfer_s, elements, samples_per_symbol=SEED_SAMPLES_PER_SYMBOL, bits_per_symbol=SEED_BITS_PER_SYMBOL
):
    """T_m in seconds per bit, from the transfer delay D_t of one call carrying
    `elements` samples."""
    if transfer_s <= 0 or elements < 1 or samples_per_symbol < 1 or bits_per_symbol < 1:
        raise ValueError("transfer time must be > 0; elements, samples per symbol and bits per symbol >= 1")
    return Fraction(transfer_s) * samples_per_symbol / (elements * bits_per_symbol)


def max_data_rate(
    cycles, clock_hz, elements, samples_per_symbol=SEED_SAMPLES_PER_SYMBOL, bits_per_symbol=SEED_BITS_PER_SYMBOL
):
    """1 / T_m in bits per second, for a call of `cycles` at `clock_hz`. Exact
    (a Fraction), so that the bound can be floored without rounding error."""
    if cycles <= 0 or clock_hz <= 0:
        raise ValueError("cycles and clock must be > 0")
    transfer_s = Fraction(cycles) / Fraction(clock_hz)
    return 1 / middleware_time_per_bit(transfer_s, elements, samples_per_symbol, bits_per_symbol)


def max_data_rate_bps(
    cycles, clock_hz, elements, samples_per_symbol=SEED_SAMPLES_PER_SYMBOL, bits_per_symbol=SEED_BITS_PER_SYMBOL
):
    """The bound in whole bits per second, rounded down as a bound must be
    (this is how the paper states its two examples)."""
    return math.floor(max_data_rate(cycles, clock_hz, elements, samples_per_symbol, bits_per_symbol))
