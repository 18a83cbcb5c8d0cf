"""The study rows write the result files' objects exactly: a campaign's
entries (measure/campaign.py) and the link-delay study's, and the
granularity lab's rows (studies/granularity/rows.py). Files written from real
runs before the rows were typed (data/README.md) are read back through the
types and written again byte for byte, with the summaries, models, claims
and reports computed again from them by today's code."""

import json
from pathlib import Path

import pytest
from paper_world import run

from scabench.measure.campaign import CampaignEntry, Config, ConfigSummary, RunFailure, entries_from_json
from scabench.report.markdown import with_contents
from scabench.report.results_file import write_json
from scabench.run.results import RunResult
from scabench.studies.granularity.analysis import apply_models
from scabench.studies.granularity.analysis import summarise as summarise_fir
from scabench.studies.granularity.analysis_s4285 import summarise as summarise_s4285
from scabench.studies.granularity.render import render as render_granularity
from scabench.studies.granularity.rows import FirRow, S4285Row, read_result
from scabench.studies.link_delay.analysis import LinkDelayEntry, headline
from scabench.studies.link_delay.render import render as render_link_delay
from scabench.studies.paper.claims import judge_claims
from scabench.studies.paper.figures import draw_figures
from scabench.studies.paper.render import render as render_paper

DATA = Path(__file__).parents[1] / "data"


def kept(name):
    """A kept result file: its bytes and its document."""
    raw = (DATA / name).read_bytes()
    return raw, json.loads(raw)


def written(doc, tmp_path):
    return write_json(doc, tmp_path / "again.json").read_bytes()


# ------------------------------------------------------------------ campaigns


def test_a_paper_campaign_reads_back_and_writes_the_same_bytes(tmp_path):
    raw, doc = kept("paper-results.json")
    entries = doc["configs"] = entries_from_json(doc["configs"])
    assert all(
        type(e) is CampaignEntry and isinstance(e.summary, (ConfigSummary, type(None))) for e in entries.values()
    )
    assert written(doc, tmp_path) == raw
    # Summarised again from their runs, and judged again: what the file holds.
    for e in entries.values():
        e.summarise()
    assert written(doc, tmp_path) == raw
    # The claims judged again: what the file holds, except that a claim whose
    # configuration was not measured, "not reproduced" when the file was
    # written, is now "not run", naming the same configuration.
    for now, was in zip([c.as_dict() for c in judge_claims(entries)], doc["claims"], strict=True):
        if was["evidence"].startswith("not measured: "):
            assert was["verdict"] == "not reproduced" and now["verdict"] == "not run"
            assert now["evidence"].split()[2] == was["evidence"].split()[2], now
        else:
            assert now == was
    report = with_contents(render_paper(entries, judge_claims(entries), doc["meta"], draw_figures(tmp_path, entries)))
    assert report == (DATA / "paper-report.md").read_text()

    same, failed, ok = entries["sync-transport@multicore"], entries["too-slow@multicore"], entries["exp6@singlecore"]
    assert same.same_as == "exp1@multicore" and same.runs == entries["exp1@multicore"].runs
    assert same.config.policy == {"sync": "transport"} and same.config.name == "sync-transport@multicore"
    assert failed.summarised and failed.summary is None and failed.runs == []
    assert failed.failures[0].error.startswith("timed out") and failed.failures[0].partial is None
    assert ok.summary.runs == len(ok.runs) == 1
    assert ok.summary.stages[-1].last_packet_ms.median == ok.runs[0].stages[-1].last_packet_ms


def test_an_interrupted_campaign_reads_back_and_writes_the_same_bytes(tmp_path):
    raw, doc = kept("paper-interrupted.json")
    assert doc["status"] == "interrupted"
    entries = doc["configs"] = entries_from_json(doc["configs"])
    assert written(doc, tmp_path) == raw
    done, cut = entries["exp1@two"], entries["exp6@two"]
    assert not done.summarised and done.interrupted is None and len(done.runs) == 2
    assert cut.interrupted is True and not cut.summarised
    assert cut.failures[-1].error == "interrupted by SIGTERM" and cut.failures[-1].component == ""
    assert isinstance(cut.failures[-1].partial, RunResult) and cut.failures[-1].partial.status == "interrupted"


def test_link_delay_entries_read_back_with_their_models(tmp_path):
    raw, doc = kept("link-delay-results.json")
    entries = doc["configs"] = entries_from_json(doc["configs"], LinkDelayEntry)
    assert written(doc, tmp_path) == raw
    for e in entries.values():
        e.summarise()
    assert written(doc, tmp_path) == raw
    assert all(0 < e.model_ms[0] <= e.model_ms[1] and e.cpu_bound_ms > 0 for e in entries.values())
    rows = headline(doc)
    assert [r.delay_ms for r in rows] == [None, 10]
    assert rows[0].credits.ratio_with_emulator is None and rows[1].credits.ratio_with_emulator.n == 1
    assert rows[1].twoway_over_credits == rows[1].twoway_worker.last_ms / rows[1].credits.last_ms
    assert render_link_delay(doc, "link-delay.png") == (DATA / "link-delay-report.md").read_text()


def config(config_id="exp1", setup="multicore"):
    return Config(config_id, "table1", Path(f"{config_id}.toml"), setup, "2 cores", [0, 1], title="one-way")


def round_trips(entry, entry_type=CampaignEntry):
    doc = json.loads(json.dumps(entry.as_dict()))
    again = entry_type.from_dict(doc)
    assert again == entry and again.as_dict() == doc
    return doc


def test_an_entry_has_a_summary_only_once_summarised():
    runs = [run([7550, 7580, 7600]), run([7560, 7590, 7610])]
    entry = CampaignEntry(config(), runs, [RunFailure("launcher died", "stage2")])
    assert list(round_trips(entry)) == ["config", "runs", "failures"]
    shown = entry.shown_as(config("sync-transport"))
    assert list(round_trips(shown)) == ["config", "runs", "failures", "same_as"] and shown.runs is entry.runs
    doc = round_trips(entry.summarise())
    assert list(doc) == ["config", "runs", "failures", "summary"]
    assert list(doc["summary"]) == [
        "runs",
        "floor_ms",
        "overhead_ratio",
        "foreign_cpu_pct",
        "producer_last_sent_ms",
        "send_us",
        "send_share_under_us",
        "stages",
        "cpu_s",
        "emulator_cpu_s",
        "median_run",
    ]
    assert list(doc["summary"]["overhead_ratio"]) == ["median", "min", "max", "n"]
    assert list(round_trips(shown.summarise())) == ["config", "runs", "failures", "same_as", "summary"]
    # Summarised without a run, the summary is there, and null.
    assert round_trips(CampaignEntry(config(), [], []).summarise())["summary"] is None


def test_an_interrupted_entry_and_a_link_delay_entry_keep_their_keys_in_place():
    cut = CampaignEntry(
        config(),
        [run([7550, 7580, 7600])],
        [RunFailure("interrupted by SIGINT", "", partial=run([10, 20, 30]))],
        interrupted=True,
    )
    doc = round_trips(cut)
    assert list(doc) == ["config", "runs", "failures", "interrupted"]
    assert list(doc["failures"][0]) == ["error", "component", "partial"]
    entry = LinkDelayEntry.of(CampaignEntry(config(), [run([7550, 7580, 7600])], []).summarise())
    assert list(round_trips(entry, LinkDelayEntry)) == ["config", "runs", "failures", "summary"]
    entry.model_ms, entry.cpu_bound_ms = [7000.0, 7100.0], 7500.0
    assert list(round_trips(entry, LinkDelayEntry)) == [
        "config",
        "runs",
        "failures",
        "summary",
        "model_ms",
        "cpu_bound_ms",
    ]


def test_a_configuration_reads_back_only_as_written():
    doc = config().as_dict()
    assert list(doc) == list(Config.JSON_KEYS) and doc["name"] == "exp1@multicore" and doc["spec"] == "exp1.toml"
    assert Config.from_dict(doc) == config()
    with pytest.raises(ValueError, match="Config: unknown key.*'colour'"):
        Config.from_dict({**doc, "colour": "blue"})
    with pytest.raises(ValueError, match="Config: missing key.*'scheduler'"):
        Config.from_dict({k: v for k, v in doc.items() if k != "scheduler"})
    with pytest.raises(ValueError, match="Config: name 'exp2@multicore' is not id@setup"):
        Config.from_dict({**doc, "name": "exp2@multicore"})
    entry = CampaignEntry(config(), [], []).as_dict()
    with pytest.raises(ValueError, match="CampaignEntry: unknown key.*'summarised'"):
        CampaignEntry.from_dict({**entry, "summarised": True})


# ------------------------------------------------------------------ granularity

MODELLED = (
    "model1_cold_total_pct",
    "N",
    "B",
    "PR",
    "model1_user_pct",
    "model1_total_pct",
    "cs_indirect_ns",
    "model2_user_pct",
    "model2_total_pct",
    "implied_cs_ns",
)


@pytest.mark.parametrize("name", ["granularity.json", "granularity-cold.json"])
def test_a_granularity_result_reads_back_and_writes_the_same_bytes(tmp_path, name):
    raw, doc = kept(name)
    result = read_result(doc)
    assert all(type(r) is FirRow and r.analysed for r in result["configurations"])
    assert written(result, tmp_path) == raw
    # The models put again on rows read without them, and the summaries made
    # again from the rows: what the lab wrote.
    plain = [{k: v for k, v in r.items() if k not in MODELLED} for r in doc["configurations"]]
    result["configurations"] = [FirRow.from_dict(r) for r in plain]
    assert not any(r.analysed for r in result["configurations"])
    for row in result["configurations"]:
        apply_models(row, result["parameters"], result["plan"]["cores"])
    result["summary"] = summarise_fir(result)
    if result.get("stanag4285"):
        result["stanag4285"]["summary"] = summarise_s4285(result["stanag4285"]["configurations"])
        assert all(type(r) is S4285Row for r in result["stanag4285"]["configurations"])
    assert written(result, tmp_path) == raw
    render_granularity(result, tmp_path / "report")
    assert (tmp_path / "report" / "report.md").read_text() == (DATA / name.replace(".json", "-report.md")).read_text()


def test_a_cold_test_application_puts_its_model_before_the_others():
    _, doc = kept("granularity-cold.json")
    row = read_result(doc)["configurations"][1]
    keys = list(row.as_dict())
    assert row.model1_cold_total_pct is not None
    assert keys[keys.index("output_matches_func") + 1 :] == list(MODELLED)


def test_rows_of_an_interrupted_lab_have_no_models(tmp_path):
    raw, doc = kept("granularity-interrupted.json")
    result = read_result(doc)
    rows = result["configurations"]
    assert doc["status"] == "interrupted" and [r.config for r in rows] == ["FUNC", "W3", "W3"]
    assert not any(r.analysed for r in rows) and rows[0].work_ns_per_packet > 0 and rows[1].work_ns_per_packet is None
    assert list(rows[1].as_dict())[-2:] == ["checksum", "output_matches_func"]
    assert list(rows[0].as_dict())[-2:] == ["work_ns_per_packet", "sink_ns_per_packet"]
    assert written(result, tmp_path) == raw
    with pytest.raises(ValueError, match="FirRow: unknown key.*'colour'"):
        FirRow.from_dict({**doc["configurations"][0], "colour": "blue"})
    with pytest.raises(KeyError):
        read_result({"summary": {}})
