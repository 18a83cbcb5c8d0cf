"""Waveforms as SCA descriptors: a SAD (with its components' SPD, PRF and
SCD files, and a sidecar of run settings) loaded into a Spec (`load`), a
Spec written as one (`export`), what SCA's words are in scabench's
(`mapping`), and the files read and checked against their DTD
(`descriptor`, `dtd/`)."""
