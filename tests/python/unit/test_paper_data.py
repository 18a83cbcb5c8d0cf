"""The paper's and the slides' figures carried in published.toml.

The checks against the texts themselves read the seed texts in
../shared/seeds beside the checkout; a clone has no such folder, so those
checks skip without it. The checks of published.toml's own consistency
need nothing outside the repository and always run."""

import re
from pathlib import Path

import pytest

from scabench.studies.paper.published import published

REPO = Path(__file__).resolve().parents[3]
SEEDS = REPO.parent / "shared" / "seeds"
PAPER = SEEDS / "000_951612108a6b3ab0.txt"
SLIDES = SEEDS / "002_71973ff508360bbb.txt"


def _absent(path):
    if not SEEDS.is_dir():
        return "the seed texts (../shared/seeds) are not beside the checkout"
    return f"{path.name} is not in the seed texts (../shared/seeds)"


needs_paper = pytest.mark.skipif(not PAPER.is_file(), reason=_absent(PAPER))
needs_slides = pytest.mark.skipif(not SLIDES.is_file(), reason=_absent(SLIDES))

WORDS = {1: "one", 3: "three", 7: "seven"}
CAPTION = re.compile(r"^\**(Table|Figure) (\d+)[.:]")


def numbers(cells):
    return [float(c.replace(",", "").replace("ms", "")) for c in cells if re.fullmatch(r"[\d,.]+(ms)?", c)]


def paper_tables():
    """{table number: its rows, each a list of cells} from the text."""
    tables, block = {}, []
    for line in PAPER.read_text().splitlines():
        m = CAPTION.match(line)
        if m and m.group(1) == "Table":
            tables[int(m.group(2))] = block
        if m or not line.strip():
            block = [] if m else block
            continue
        if "\t" in line:
            block.append(line.split("\t"))
    return tables


def figure_paragraphs():
    """{figure number: the text since the previous caption}."""
    paragraphs, text = {}, []
    for line in PAPER.read_text().splitlines():
        m = CAPTION.match(line)
        if m:
            if m.group(1) == "Figure":
                paragraphs[int(m.group(2))] = " ".join(text)
            text = []
        else:
            text.append(line)
    return paragraphs


def row(block, label, variant=None):
    for cells in block:
        if cells[0].startswith(label) and (variant is None or variant in cells):
            return numbers(cells[1:])
    for i, cells in enumerate(block):  # a two-way row follows its one-way row with an empty label
        if variant and cells[0] == "" and variant in cells and block[i - 1][0].startswith(label):
            return numbers(cells[1:])
    raise AssertionError(f"no row {label!r} {variant or ''}")


@needs_paper
@pytest.mark.parametrize("number", range(2, 14))
def test_tables_2_to_13_match_the_paper(number):
    block = paper_tables()[number]
    data = published()["table"][str(number)]
    last = row(block, "Time of last Pkt")
    if number == 2:
        assert last[0] == data["producer_last_ms"]
        last = last[1:]
    assert last == data["last_packet_ms"]
    assert row(block, "with previous") == data["reordered_from_previous"]
    assert row(block, "with original") == data["reordered_from_original"]


@needs_paper
@pytest.mark.parametrize("number", (14, 15))
def test_tables_14_and_15_match_the_paper(number):
    block = paper_tables()[number]
    data = published()["table"][str(number)]
    for variant in ("one-way", "two-way"):
        prefix = variant.replace("-", "")
        assert row(block, "Time of last Pkt", variant) == data[f"{prefix}_last_packet_ms"]
        for kind, label in (("reordered_from_previous", "with previous"), ("reordered_from_original", "with original")):
            assert row(block, label, variant) == data[f"{prefix}_{kind}"]


@pytest.mark.parametrize("number,parts", [(14, (7, 13)), (15, (6, 12))])
def test_tables_14_and_15_reprint_their_parts(number, parts):
    """Table 14 (15) sets exp3 beside exp6 on one core (all cores): the rows of
    the two experiments' own tables for that set-up."""
    data = published()["table"][str(number)]
    experiments = published()["experiment"]
    assert tuple(experiments[e]["tables"][data["setup"]] for e in ("exp3", "exp6")) == parts
    one, two = (published()["table"][str(p)] for p in parts)
    for prefix, source in (("oneway", one), ("twoway", two)):
        for kind in ("last_packet_ms", "reordered_from_previous", "reordered_from_original"):
            assert data[f"{prefix}_{kind}"] == source[kind]


def test_each_of_tables_2_to_13_belongs_to_one_experiment_and_set_up():
    data = published()
    named = sorted(n for e in data["experiment"].values() for n in e["tables"].values())
    assert named == list(range(2, 14))
    for number in named:
        table = data["table"][str(number)]
        for kind in ("last_packet_ms", "reordered_from_previous", "reordered_from_original"):
            assert len(table[kind]) == 3, (number, kind)


@needs_paper
def test_table_1_lists_the_six_experiments():
    block = paper_tables()[1]
    rows = {int(cells[0]): cells[1:] for cells in block if cells[0].isdigit()}
    for n in range(1, 7):
        e = published()["experiment"][f"exp{n}"]
        call, wait, worker = rows[n]
        assert call == e["call"].replace("oneway", "one-way").replace("twoway", "two-way")
        assert numbers([wait.replace(" ", "")])[0] == e["producer_wait_ms"]
        assert (worker == "yes") == e["worker"]


def test_overheads_follow_from_tables_10_and_11_and_the_floor():
    data = published()
    assert data["table"]["10"]["last_packet_ms"][-1] - data["setup"]["singlecore"]["floor_ms"] == pytest.approx(
        data["overhead"]["exp5_multicore_ms"]
    )
    assert data["table"]["11"]["last_packet_ms"][-1] - data["setup"]["singlecore"]["floor_ms"] == pytest.approx(
        data["overhead"]["exp5_singlecore_ms"]
    )


@needs_paper
@pytest.mark.parametrize("number", range(9, 17))
def test_figure_statements_are_in_the_paper(number):
    paragraphs = figure_paragraphs()
    text = paragraphs[number].replace("\u00a0", " ")
    fig = published()["figure"][str(number)]
    values = [
        fig[k]
        for k in ("min_us", "mean_fastest_us", "mean_slowest_us", "mean_us", "fastest_pct", "sends_over_200000_us")
        if k in fig
    ]
    values += [v for pair in fig.get("share_under_us", {}).items() for v in (int(pair[0]), pair[1])]
    if "max_us" in fig and number != 15:  # Fig. 15's maximum is given as "66ms"
        values.append(fig["max_us"])
    for v in values:
        forms = {f"{v}", f"{v:,}"} | ({WORDS[v]} if v in WORDS else set())
        assert any(re.search(rf"(?<![\d.,]){re.escape(f)}(?![\d])", text) for f in forms), (number, v)


@needs_slides
def test_slides_match_the_slides():
    tests = re.split(r"❖ Test #(\d)", SLIDES.read_text())
    found = {}
    for n, body in zip(tests[1::2], tests[2::2]):
        for line in body.splitlines():
            cells = line.split("\t")
            if cells[0].startswith("Time of last Pkt arrival"):
                found.setdefault(n, {})["last"] = numbers(cells[1:])
            if cells[0].startswith("# of Pkt reordered"):
                found.setdefault(n, {})["reordered"] = numbers(cells[1:])
    assert len(found) == 4
    for n, got in found.items():
        data = published()["slides"][f"test{n}"]
        assert got["last"] == data["last_arrival_ms"]
        assert got["reordered"] == data["reordered"]
