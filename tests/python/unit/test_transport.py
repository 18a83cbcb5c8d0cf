"""model/transport.py: which hops cross a shared-memory ring, how large a
ring is, and what the rings add to the memory a run needs; worked out on
the spec and the plan, before any process starts."""

from conftest import pipeline_toml

from scabench.model.load import load_spec
from scabench.model.resources import memory_needed
from scabench.model.transport import ring_bytes, ring_declaration, ring_overhead_bytes
from scabench.run.plan import build_assembly


def test_the_runner_gives_a_ring_to_exactly_the_hops_the_result_says_are_shared_memory(write_spec, tmp_path):
    # producer and stage1 share a host: that hop is a direct call; the others cross a ring.
    spec = load_spec(
        write_spec(
            pipeline_toml(
                packets=5, transport="shm", placement='hosts = [["producer", "stage1"], ["stage2"], ["stage3"]]'
            )
        )
    )
    hops = {c["id"]: c["transport"] for c in spec.describe()["connections"]}
    assert hops == {
        "producer.out->stage1.in": "collocated",
        "stage1.out->stage2.in": "shm",
        "stage2.out->stage3.in": "shm",
    }
    props = {c["name"]: c["properties"] for h in build_assembly(spec, tmp_path, 60)["hosts"] for c in h["components"]}
    assert "out.transport" not in props["producer"]
    for name in ("stage1", "stage2"):
        assert props[name]["out.transport"] == "shm" and props[name]["out.shm_bytes"] == ring_bytes(spec)
    # The rings count in the memory a run needs.
    before, _ = memory_needed(spec)
    spec.transport = "unix"
    assert before - memory_needed(spec)[0] == 2 * (ring_bytes(spec) + ring_overhead_bytes())


def test_a_ring_holds_four_of_the_largest_packets_and_at_least_a_mebibyte(write_spec):
    small = load_spec(write_spec(pipeline_toml(packets=5, transport="shm")))
    assert ring_bytes(small) == 1 << 20
    # The runtime's figures, as it publishes them (shm_ring.hpp): its own
    # size for a ring is the floor, its smallest is far below it.
    assert (ring_declaration()["min"], ring_declaration()["default"]) == (64 << 10, 1 << 20)
    # A data area of whole pages: the control block and 1024 slots of 64 bytes, on whole pages.
    assert ring_overhead_bytes() == 68 << 10
    big = load_spec(write_spec(pipeline_toml(packets=5, transport="shm").replace("samples = 256", "samples = 100000")))
    assert ring_bytes(big) == 4 * 100000 * 8 // (64 << 10) * (64 << 10) + (64 << 10)
