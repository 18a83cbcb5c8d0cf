"""The verdict logic on synthetic results: each rule says reproduced when the
figures show the paper's effect, and something else when they do not."""

from dataclasses import replace as changed

from paper_world import FAST, PACED, entry, replace, run, world

from scabench.measure.campaign import RunFailure
from scabench.studies.paper.claims import CLAIMS, judge_claims

VERDICTS = {"reproduced", "not reproduced", "differs"}


def verdicts(entries):
    return {c.id: c.verdict for c in judge_claims(entries)}


def test_every_claim_reproduces_on_a_world_where_the_paper_holds():
    v = verdicts(world())
    # 2 cores for 3 stages: no spare core, so the paper's early finish cannot happen here.
    assert v.pop("multicore-spare-core") == "differs"
    assert set(v.values()) == {"reproduced"}, {k: x for k, x in v.items() if x != "reproduced"}


def test_claims_have_ids_texts_and_figures():
    claims = judge_claims(world())
    assert len(claims) == len(CLAIMS) and len({c.id for c in claims}) == len(claims)
    for c in claims:
        d = c.as_dict()
        assert set(d) == {"id", "claim", "verdict", "evidence"} and d["verdict"] in VERDICTS
        assert any(ch.isdigit() for ch in d["evidence"]), d


def test_a_reordering_two_way_run_breaks_the_order_claim():
    w = world()
    w = replace(w, "exp6@multicore", w["exp6@multicore"].runs[:2] + [run([7650, 7680, 7700], (0, 1, 1))])
    assert verdicts(w)["twoway-keeps-order"] == "not reproduced"


def test_one_way_in_order_everywhere_is_not_reproduced():
    w = world()
    for name in ("exp1@multicore", "exp1@singlecore"):
        w = replace(w, name, [run([7600, 7600, 7600], floor=w[name].summary.floor_ms, sends=PACED)])
    assert verdicts(w)["oneway-reorders"] == "not reproduced"
    w = replace(w, "exp1@singlecore", [run([15200] * 3, (5, 5, 5), floor=15000.0, sends=PACED)])
    assert verdicts(w)["oneway-reorders"] == "differs"


def test_one_way_worker_counterexample_rules():
    w = world()
    w = replace(w, "exp3@multicore", [run([7600, 7620, 7650], sends=FAST)])
    assert verdicts(w)["oneway-worker-no-guarantee"] == "differs"  # sync-none-worker still reorders
    assert verdicts(w)["worker-reorders-only-at-entry"] == "differs"  # nothing entered out of order
    w = replace(w, "sync-none-worker@multicore", [run([7660, 7690, 7710])])
    assert verdicts(w)["oneway-worker-no-guarantee"] == "not reproduced"


def test_reordering_that_grows_after_stage_1_contradicts_the_entry_claim():
    w = replace(world(), "exp3@multicore", [run([7600, 7620, 7650], (11, 20, 30), sends=FAST)])
    assert verdicts(w)["worker-reorders-only-at-entry"] == "not reproduced"


def test_empty_pipeline_needs_the_serial_time():
    w = replace(world(), "exp5@multicore", [run([9000, 9000, 9000], sends=[9000.0] * 1000)])
    assert verdicts(w)["empty-pipeline"] == "not reproduced"


def test_one_way_slower_than_two_way_within_five_percent_differs():
    w = replace(world(), "exp3@multicore", [run([7700, 7750, 7800], (11, 11, 11), (500, 500, 500), sends=FAST)])
    assert verdicts(w)["oneway-marginally-faster"] == "differs"
    w = replace(world(), "exp3@multicore", [run([6000, 6000, 6000], (11, 11, 11), (500, 500, 500), sends=FAST)])
    assert verdicts(w)["oneway-marginally-faster"] == "not reproduced"


def test_bounded_queue_back_pressure_differs_from_the_unbounded_paper():
    w = replace(world(), "exp6@multicore", [run([7650, 7680, 7700], sends=[40.0] * 64 + [7500.0] * 936)])
    assert verdicts(w)["twoway-worker-fast-sends"] == "differs"


def test_spare_core_rule_depends_on_the_core_count():
    w = world()
    cfg = w["exp1@multicore"].config
    four = dict(w)
    four["exp1@multicore"] = changed(w["exp1@multicore"], config=changed(cfg, cores=[0, 1, 2, 3]))
    assert verdicts(four)["multicore-spare-core"] == "not reproduced"  # ratio 1.013, not below the floor
    faster = replace(four, "exp1@multicore", [run([4400, 4450, 4500], (1, 2, 3), floor=5010.0, sends=PACED)])
    faster["exp1@multicore"].config.cores = [0, 1, 2, 3]
    assert verdicts(faster)["multicore-spare-core"] == "reproduced"


def test_a_configuration_that_did_not_run_leaves_its_claim_not_run_and_says_why():
    w = world()
    del w["exp1-collocated@multicore"]
    claim = next(c for c in judge_claims(w) if c.id == "collocated-oneway-is-twoway")
    assert claim.verdict == "not run"
    assert claim.evidence == "not measured: exp1-collocated@multicore was not in this campaign"
    failed = dict(world())
    failed["exp1-collocated@multicore"] = changed(
        failed["exp1-collocated@multicore"], runs=[], failures=[RunFailure("stage2 died", "stage2")]
    ).summarise()
    claim = next(c for c in judge_claims(failed) if c.id == "collocated-oneway-is-twoway")
    assert claim.verdict == "not run"
    assert claim.evidence == "not measured: exp1-collocated@multicore has no successful run (every run failed)"


def test_a_campaign_of_exp6_alone_judges_only_what_exp6_decides():
    # scabench paper --only exp6: the other claims were not measured, so
    # they are neither reproduced nor refuted.
    only = {k: v for k, v in world().items() if k.split("@")[0] == "exp6"}
    v = verdicts(only)
    assert v.pop("twoway-keeps-order") == v.pop("twoway-worker-fast-sends") == "reproduced"
    assert set(v.values()) == {"not run"} and len(v) == 17


def test_collocated_one_way_that_stays_parallel_is_not_two_way():
    w = replace(world(), "exp1-collocated@multicore", [run([7600, 7600, 7600])])
    assert verdicts(w)["collocated-oneway-is-twoway"] == "not reproduced"


def test_pinning_with_little_overhead_to_remove_differs():
    w = replace(world(), "exp5@multicore", [run([15100] * 3, sends=[15100.0] * 1000)])
    assert verdicts(w)["pinning-removes-overhead"] == "differs"


def test_later_stages_adding_a_little_reordering_differs():
    w = replace(world(), "exp3@multicore", [run([7600, 7620, 7650], (11, 13, 13), sends=FAST)])
    assert verdicts(w)["worker-reorders-only-at-entry"] == "differs"


def test_pacing_that_only_helps_at_the_matched_rate_differs():
    w = world()
    w = replace(w, "exp2@multicore", [run([7560, 7590, 7610], (5, 100, 950), floor=7500.0)])
    w = replace(w, "exp2@singlecore", [run([15110, 15160, 15210], (300, 350, 650), floor=15000.0)])
    assert verdicts(w)["pacing-reduces-reordering"] == "not reproduced"
    for name, cfg_id, setup, period in (
        ("exp2-matched@multicore", "exp2-matched", "multicore", 7500),
        ("exp2-matched-1core@singlecore", "exp2-matched-1core", "singlecore", 15000),
    ):
        w[name] = entry(cfg_id, setup, [run([7600] * 3, (0, 1, 2))])
        w[name].config.component = {"producer": {"period_us": period}}
    assert verdicts(w)["pacing-reduces-reordering"] == "differs"


def test_entry_reordering_explained_by_the_bounded_queue_differs():
    w = replace(world(), "exp3@multicore", [run([7600, 7620, 7650], (3, 30, 60), sends=FAST)])
    assert verdicts(w)["worker-reorders-only-at-entry"] == "not reproduced"
    w["exp3-deep-queue@multicore"] = entry("exp3-deep-queue", "multicore", [run([7600] * 3, (33, 37, 37))])
    assert verdicts(w)["worker-reorders-only-at-entry"] == "differs"


def test_pinning_that_hurts_on_fewer_cores_than_processes_differs():
    w = replace(world(), "exp5-pinned@multicore", [run([16000] * 3, sends=[15100.0] * 1000)])
    assert verdicts(w)["pinning-removes-overhead"] == "differs"  # 5 processes, 2 cores
    four = dict(w)
    four["exp5-pinned@multicore"] = changed(
        w["exp5-pinned@multicore"], config=changed(w["exp5-pinned@multicore"].config, cores=[0, 1, 2, 3, 4])
    )
    assert verdicts(four)["pinning-removes-overhead"] == "not reproduced"


def test_single_thread_poa_is_judged_per_connection_with_two_senders():
    w = world()
    assert verdicts(w)["single-thread-poa-no-guarantee"] == "reproduced"
    # Every connection's stream in order, with two senders and with one: not reproduced, and the
    # text gives the counts per connection and run, and why.
    w = replace(
        w,
        "exp1-single-thread-poa-two-senders@multicore",
        [run([15050, 15080, 15100], floor=15000.0, threads=(4, 1, 1), connections=[(0, 0), (0, 0)])] * 3,
    )
    w = replace(w, "exp1-single-thread-poa@multicore", [run([7550, 7580, 7600])] * 3)
    claim = next(c for c in judge_claims(w) if c.id == "single-thread-poa-no-guarantee")
    assert claim.verdict == "not reproduced"
    assert "2 producers one-way into single-thread POAs, 3 runs" in claim.evidence
    assert "producer2 0/0 of 1000, 0/0 of 1000, 0/0 of 1000" in claim.evidence
    assert "at most 4 ORB threads" in claim.evidence and "GIOP_S::ReceiveRequest" in claim.evidence
    # One connection's stream reordered in one run is enough.
    w = replace(
        w,
        "exp1-single-thread-poa-two-senders@multicore",
        [run([15050, 15080, 15100], floor=15000.0, connections=[(0, 0), (1, 2)])],
    )
    assert verdicts(w)["single-thread-poa-no-guarantee"] == "reproduced"
    # Runs without per-connection counts cannot say: not run, rather than a guess.
    w2 = replace(w, "exp1-single-thread-poa-two-senders@multicore", [run([15050, 15080, 15100], floor=15000.0)])
    claim = next(c for c in judge_claims(w2) if c.id == "single-thread-poa-no-guarantee")
    assert claim.verdict == "not run" and "without per-connection counts" in claim.evidence
    # Without the fan-in configuration it is judged on the one sender.
    del w["exp1-single-thread-poa-two-senders@multicore"]
    claim = next(c for c in judge_claims(w) if c.id == "single-thread-poa-no-guarantee")
    assert claim.verdict == "not reproduced" and claim.evidence.startswith("one producer: at most 0")
