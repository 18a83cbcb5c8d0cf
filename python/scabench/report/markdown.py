"""Reports: one Markdown text, written as report.md beside its PNGs, and as a
self-contained report.html with the same figures embedded (data URIs), so the
HTML can be mailed or archived on its own.

Every command that writes a report (paper, profile, granularity) goes through
here, so they look alike and the HTML conversion lives in one place."""

import base64
import html
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import markdown
from markdown.extensions.toc import TocExtension

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       color: #1d2433; line-height: 1.45; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 1px solid #d6dae3; padding-bottom: .2rem; margin-top: 2.2rem; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .9rem; display: block; max-width: 100%;
        overflow-x: auto; }  /* a wide table scrolls inside the page rather than spilling out of it */
th, td { border: 1px solid #d6dae3; padding: .25rem .55rem; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
thead th { background: #eef1f6; }
tbody tr:nth-child(even) { background: #f8f9fb; }
code, pre { background: #f3f4f7; border-radius: 3px; }
pre { padding: .6rem; overflow-x: auto; }
img { max-width: 100%; border: 1px solid #e3e6ec; margin: .4rem 0; }
.verdict-reproduced { color: #17663a; font-weight: 600; }
.verdict-differs { color: #9a5b00; font-weight: 600; }
.verdict-not-reproduced { color: #a4161a; font-weight: 600; }
.verdict-not-run { color: #6b7280; font-weight: 600; }
"""

# The media type of an embedded figure, by its file's suffix (the plots are
# PNG; a run's waveform drawing is SVG).
_IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml"}

# A cell that holds only figures: numbers, ranges, ratios, units.
_NUMERIC_CELL = re.compile(r"<td>(?=[^<]*\d)([-+–\d.,/ ()%×]|µs|ms|ns|s)+</td>")
_VERDICT = re.compile(r"<strong>(reproduced|not reproduced|differs|not run)</strong>")

# A long report puts this line where its table of contents goes (after the
# answer, before the evidence); write_report replaces it by links to the
# report's ## sections after it. An HTML comment, so a report without it, or
# its Markdown read raw, shows nothing.
CONTENTS = "<!-- contents -->"


def slug(heading: str) -> str:
    """A heading's anchor as Markdown viewers make it (lower case, spaces to
    hyphens, punctuation dropped): the same in report.md and report.html."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def with_contents(text: str) -> str:
    """text with its CONTENTS line replaced by a list of links to the ##
    headings that follow it; unchanged without the line."""
    lines = text.split("\n")
    if CONTENTS not in lines:
        return text
    at = lines.index(CONTENTS)
    fence, entries = False, []
    for line in lines[at + 1 :]:
        fence ^= line.startswith("```")
        if not fence and line.startswith("## "):
            title = line[3:].strip()
            entries.append(f"- [{title}](#{slug(title)})")
    return "\n".join(lines[:at] + ["**Contents**", ""] + entries + lines[at + 1 :])


def md_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table. Cells are str()-ed; None shows as an en dash."""

    def cell(v: Any) -> str:
        return "–" if v is None else str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def environment_section(environment: dict[str, Any]) -> list[str]:
    """A study report's "Environment" section: what the study recorded of the
    machine and the software (measure.environment), as it was saved."""
    return ["## Environment", "", "```", json.dumps(environment, indent=1), "```", ""]


def markdown_to_html(text: str, title: str, image_dir: str | os.PathLike) -> str:
    """Converts the report's Markdown to one HTML page; images referenced by a
    relative path are read from image_dir and embedded."""
    body = markdown.markdown(
        text,
        extensions=["tables", "fenced_code", "sane_lists", TocExtension(slugify=lambda value, _separator: slug(value))],
    )

    def embed(match: re.Match) -> str:
        src = match.group(1)
        path = Path(image_dir) / src
        if src.startswith(("data:", "http:", "https:")) or not path.is_file():
            return match.group(0)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'src="data:{_IMAGE_TYPES.get(path.suffix, "image/png")};base64,{data}"'

    body = re.sub(r'src="([^"]+)"', embed, body)
    body = _NUMERIC_CELL.sub(lambda m: m.group(0).replace("<td>", '<td class="num">', 1), body)
    body = _VERDICT.sub(lambda m: f'<span class="verdict-{m.group(1).replace(" ", "-")}">{m.group(1)}</span>', body)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def write_report(out_dir: str | os.PathLike, title: str, text: str) -> tuple[Path, Path]:
    """Writes report.md and report.html into out_dir (the PNGs must already
    be there) and returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out / "report.md", out / "report.html"
    text = with_contents(text)
    md_path.write_text(text)
    html_path.write_text(markdown_to_html(text, title, out))
    return md_path, html_path
