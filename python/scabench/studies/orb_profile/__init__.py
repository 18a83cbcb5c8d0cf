"""Figures published by the seed documents, carried as data so that reports
can print them beside ours. Nothing here is ever used as a measurement."""
