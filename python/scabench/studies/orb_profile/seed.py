"""The ORB profiling paper ("Impact of the Use of Object Request Broker
Middleware for Inter-Component Communications in C6416 Digital Signal
Processor Based Software Communications Architecture Radio Systems"):
an embedded ORB on a 720 MHz TI C6416 DSP, client and server as two tasks of
one processor, empty servants, 1024-element arrays and sequences."""

TITLE = (
    "Impact of the Use of Object Request Broker Middleware for Inter-Component Communications "
    "in C6416 Digital Signal Processor Based Software Communications Architecture Radio Systems"
)
PLATFORM = "TI C6416 DSP at 720 MHz, DSP/BIOS, embedded ORB, client and server as two tasks"
CLOCK_HZ = 720_000_000
ELEMENTS = 1024
TYPES = ("octet", "short", "float", "double")

# Table 1: CPU clock cycles of a round trip carrying the argument.
TABLE1_CYCLES = {
    "basic": {"octet": 8427, "short": 8253, "float": 8075, "double": 7798},
    "array": {"octet": 24609, "short": 37566, "float": 67461, "double": 125708},
    "sequence": {"octet": 24940, "short": 40826, "float": 73456, "double": 121013},
}

# The null call (no arguments), as the text states it.
NULL_CALL_US = 10.4

# Table 2: establishing the transport on the first call, two builds of the ORB.
# (The paper's microseconds are printed as given; they are not exactly
# cycles / 720 MHz.)
TABLE2 = [
    {"configuration": "small (optimised for size)", "cycles": 9427, "us": 13.4},
    {"configuration": "fast (optimised for speed)", "cycles": 8625, "us": 11.2},
]

# Eq. 1 examples: (cycles, elements) -> bits per second, with 8 samples per
# symbol and 1 bit per symbol at 720 MHz.
EQ1_EXAMPLES = [
    {"cycles": 8075, "elements": 1, "bps": 11145},
    {"cycles": 67461, "elements": 1024, "bps": 1366122},
]

# The paper's padding rules, for the bytes table: its ORB pads the marshalled
# buffer to a multiple of 8 octets; it describes CDR as padding to 4.
PADDING_RULES = {"seed ORB (8-octet buffer)": 8, "CDR as the paper describes it (4 octets)": 4}
