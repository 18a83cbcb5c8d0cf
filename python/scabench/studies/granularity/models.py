"""The seed's two workload models, rebuilt (docs/architecture.md,
"Granularity"), as plain arithmetic on measured parameters.

All costs are per packet, in nanoseconds of CPU (the seed counts processor
cycles: cycles = ns * f_CPU / 1e9, and the ratio cycles / f_CPU is what both
models use, so f_CPU drops out of every prediction). A workload is a % of the
cores the run is on.

Model (1), the lower bound, for M components (source and sink included) and
`filters` FIR loads, at PR packets per second:

  WL_i = 100 * PR / f * [ filters * C_CL + C_SRC + C_SNK
                          + (M-1) * (k_to * C_toSeq + C_tr)
                          + (M-2) * k_from * C_fromSeq ]

with C_tr = a + b*B. (M-1) packets leave a component and (M-2) arrive in one
that converts them (the sink converts nothing). k_to and k_from count the
conversions to and from the sequence type per hop: 1 in the seed's OSSIE
components, 0 in scabench's ports, which lend the component's buffer to the
ORB and hand the ORB's buffer to the component, so that a hop's copies are
all inside the ORB's marshalling and so in C_tr.

Model (2) adds the context switches:

  WL_CS = WL_i + 100 * CSR * (C_CSd + C_CSi) / f

with CSR the measured rate of context switches, C_CSd the direct cost of one
(measured) and C_CSi the indirect cost, which the seed estimates as a fraction
c of the cycles to write one B-float buffer to memory and read two of them
and 10 kB of code back, when the buffers and code of all M components do not
fit in the L2 cache, and 0 when they do.
"""

from dataclasses import dataclass

FLOAT_BYTES = 4
CODE_BYTES = 10 * 1024  # the seed's "10 kBytes of instructions" per component


@dataclass(frozen=True)
class Linear:
    """a + b * B."""

    a: float
    b: float

    def __call__(self, samples):
        return self.a + self.b * samples

    def cost(self, samples):
        """As a cost: a fit through noisy points may dip below zero, a cost cannot."""
        return max(0.0, self(samples))

    def as_dict(self):
        return {"a": self.a, "b": self.b}


def fit_linear(xs, ys):
    """Least-squares a + b*x (a constant for one point)."""
    n = len(xs)
    if n == 0:
        return Linear(0.0, 0.0)
    if n == 1:
        return Linear(float(ys[0]), 0.0)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return Linear(my - b * mx, b)


def pct(ns_per_packet, pr, cores=1):
    """A per-packet cost as a workload: % of `cores` cores at PR packets/s."""
    return 100.0 * pr * ns_per_packet * 1e-9 / cores


def model1_ns(components, filters, c_cl, c_src, c_snk, c_tr, c_to=0.0, c_from=0.0, k_to=0, k_from=0):
    """Model (1)'s CPU per packet (ns). components: M (1 for FUNC, which has
    no transfer); the rest are per-packet costs at the packet size in hand."""
    hops = max(0, components - 1)
    receivers = max(0, components - 2)
    return filters * c_cl + c_src + c_snk + hops * (k_to * c_to + c_tr) + receivers * k_from * c_from


def indirect_cs_ns(components, samples, l2_bytes, read_bytes_per_s, write_bytes_per_s, c=0.02):
    """The seed's estimate of the indirect cost of one context switch (ns)."""
    working_set = components * (3 * FLOAT_BYTES * samples + CODE_BYTES)
    if working_set <= l2_bytes:
        return 0.0
    write_s = FLOAT_BYTES * samples / write_bytes_per_s
    read_s = (2 * FLOAT_BYTES * samples + CODE_BYTES) / read_bytes_per_s
    return c * (write_s + read_s) * 1e9


def model2_pct(model1_pct, csr, direct_ns, indirect_ns, cores=1):
    """Model (2): model (1) plus CSR context switches per second, each
    costing its direct and indirect cost."""
    return model1_pct + 100.0 * csr * (direct_ns + indirect_ns) * 1e-9 / cores


def cycles(ns, f_hz):
    return ns * f_hz / 1e9
