"""Whether a spec's policies guarantee order at its outputs (model/order.py):
each knob's rule on small pipelines, fan-in, placement, the shared-memory
ring, and the paper's own specs."""

import pytest
from conftest import REPO, pipeline_toml

from scabench.model.load import load_spec
from scabench.model.order import guarantees_order, order_guarantees


def _spec(write_spec, policy="", **more):
    return load_spec(write_spec(pipeline_toml(packets=8, stages=2, policy=policy, **more)))


@pytest.mark.parametrize(
    "policy, guaranteed, says",
    [
        ('call = "twoway"\ndispatch = "pool"', True, "two-way"),
        ('call = "twoway"\nworker = true', True, "FIFO worker queue"),
        ('call = "twoway"\ndispatch = "single"', True, "two-way"),
        ('call = "oneway"\nsync = "target"', True, "sync = target"),
        ('call = "oneway"\nsync = "transport"\ndispatch = "pool"', False, "pool dispatch can reorder"),
        ('call = "oneway"\nsync = "transport"\ndispatch = "pool:4"', False, "pool:4 dispatch can reorder"),
        # A worker fed by overlapping upcalls is fed out of order: the "kept order by chance".
        ('call = "oneway"\nsync = "transport"\nworker = true', False, "pool dispatch can reorder"),
        ('call = "oneway"\nsync = "server"\ndispatch = "pool"', False, "pool dispatch can reorder"),
        ('call = "oneway"\nsync = "transport"\ndispatch = "single"', False, "single-thread POA"),
        ('call = "oneway"\nsync = "transport"\ndispatch = "serial"', True, "one sending thread"),
        ('call = "oneway"\nsync = "transport"\ndispatch = "pool:1"', True, "pool:1 dispatch"),
        ('call = "oneway"\nsync = "none"\ndispatch = "serial"', True, "port's one sending thread"),
        ('call = "oneway"\nsync = "transport"\nordering = "resequence"', True, "resequenced"),
        ('call = "oneway"\nsync = "transport"\nordering = "resequence"\nworker = true', True, "FIFO worker queue"),
    ],
)
def test_each_policy_guarantees_order_or_says_why_not(write_spec, policy, guaranteed, says):
    (only,) = order_guarantees(_spec(write_spec, policy))
    assert only.output == "stage2" and only.guaranteed is guaranteed and says in only.why, only


def test_one_hop_that_can_reorder_breaks_the_guarantee_downstream_and_is_named(write_spec):
    spec = _spec(write_spec, 'call = "twoway"')
    spec.connections[0].policy = _spec(write_spec, 'call = "oneway"\nsync = "transport"').connections[0].policy
    ok, why = guarantees_order(spec)
    assert not ok and why.startswith("producer.out->stage1.in: one-way with pool dispatch")


def test_resequencing_restores_only_the_order_its_sender_pushed(write_spec):
    """A reorder buffer puts packets back in its sender's order: behind a
    stage that pooled one-way calls reordered, that is not the source's."""
    spec = _spec(write_spec, 'call = "oneway"\nsync = "transport"')
    spec.connections[1].policy = _spec(write_spec, 'call = "oneway"\nordering = "resequence"').connections[1].policy
    assert not guarantees_order(spec)[0]
    spec.connections[0].policy = spec.connections[1].policy
    assert guarantees_order(spec)[0]


def test_collocated_calls_keep_order_even_one_way_into_a_pool(write_spec):
    spec = _spec(
        write_spec, 'call = "oneway"\nsync = "transport"', placement='hosts = [["producer", "stage1", "stage2"]]'
    )
    (only,) = order_guarantees(spec)
    assert only.guaranteed and "collocated" in only.why


@pytest.mark.parametrize("dispatch, guaranteed", [("serial", True), ("single", True), ("pool", False)])
def test_the_shared_memory_ring_keeps_order_with_one_thread_per_connection(write_spec, dispatch, guaranteed):
    spec = _spec(write_spec, f'call = "oneway"\nsync = "transport"\ndispatch = "{dispatch}"', transport="shm")
    (only,) = order_guarantees(spec)
    assert only.guaranteed is guaranteed, only


def test_one_way_serial_from_a_sender_that_pushes_from_several_threads_is_not_guaranteed(write_spec):
    """A stage fed by two connections runs its handler on two threads; its
    one-way calls can then take two ORB connections, each served apart."""
    text = (REPO / "experiments/paper/exp1-two-senders.toml").read_text()
    spec = load_spec(write_spec(text.replace('dispatch = "pool"', 'dispatch = "serial"')))
    (only,) = order_guarantees(spec)
    assert not only.guaranteed and "several threads" in only.why, only
    # With one sending thread per port (sync = none) each stream keeps one connection.
    spec = load_spec(
        write_spec(
            text.replace('dispatch = "pool"', 'dispatch = "serial"').replace('sync = "transport"', 'sync = "none"')
        )
    )
    assert order_guarantees(spec)[0].guaranteed


@pytest.mark.parametrize(
    "name, guaranteed",
    [
        ("exp1", False),
        ("exp2", False),
        ("exp3", False),
        ("exp4", False),
        ("exp5", True),
        ("exp6", True),
        ("exp1-two-senders", False),
    ],
)
def test_the_papers_experiments(name, guaranteed):
    """The paper: one-way into omniORB's pool (exp1-4, with or without a
    worker) cannot guarantee order; two-way (exp5, exp6) does."""
    ok, why = guarantees_order(load_spec(REPO / f"experiments/paper/{name}.toml"))
    assert ok is guaranteed, why
    assert ("can reorder" in why) is not guaranteed


def test_an_external_component_is_not_vouched_for():
    ok, why = guarantees_order(load_spec(REPO / "experiments/open/exec-host.toml"))
    assert not ok and "external component" in why
