"""mkdocs hooks (mkdocs.yml, `hooks:`): the reference pages that come from the
code, written at build time so that none is ever committed stale.

- reference/cli.md: every command of `scabench.cli.main`, its help as
  `scabench COMMAND --help` prints it;
- reference/policy-keys.md: the connection policy's keys, from the runtime's
  own table (`scabench-host --describe`, read through `model.catalog`);
- reference/components.md: every built-in component kind with its ports and
  properties, from `scabench-host --describe` (what `scabench components
  KIND` prints);
- reference/python-api.md: each name of `scabench.__all__`, rendered by
  mkdocstrings from its docstrings.

The build needs the C++ programs (`make test` builds them first) and the
package importable (`PYTHONPATH=python`, or the venv's editable install)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
# The checkout's package, whichever interpreter runs mkdocs.
sys.path.insert(0, str(ROOT / "python"))

GENERATED_NOTE = "<!-- Generated at build time by scripts/docs_hooks.py; edit the code, not this page. -->\n\n"


def _command_help(command: click.Command, path: list[str]) -> str:
    """The text `scabench ... --help` prints for one command, fenced, and its
    subcommands' after it."""
    parent = None
    for name in path[:-1]:
        parent = click.Context(click.Group(name), info_name=name, parent=parent)
    ctx = click.Context(command, info_name=path[-1], parent=parent, terminal_width=100, max_content_width=100)
    level = "#" * min(len(path) + 1, 4)
    text = f"{level} `{' '.join(path)}`\n\n```text\n{command.get_help(ctx)}\n```\n\n"
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            text += _command_help(command.get_command(ctx, name), [*path, name])
    return text


def cli_page() -> str:
    from scabench.cli import main

    return (
        "# Command line\n\n"
        + GENERATED_NOTE
        + "Every command of `scabench`, with the help it prints (`scabench COMMAND --help`).\n\n"
        + _command_help(main, ["scabench"])
    )


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def policy_keys_page() -> str:
    from scabench.model.catalog import policy_schema

    schema = policy_schema()
    lines = [
        "# Policy keys",
        "",
        GENERATED_NOTE.rstrip("\n"),
        "",
        "The keys of a connection's policy (`[policy]`, `[[connection]]`, `--policy KEY=VALUE`), "
        "as the runtime declares them (`scabench-host --describe`, `scabench components`). "
        "What each knob does and how they compose: [Messaging policy](policy.md).",
        "",
        "| key | side | values | default | only with, needs | what it sets |",
        "|---|---|---|---|---|---|",
    ]
    for key, entry in schema.items():
        if "values" in entry:
            values = ", ".join(f"`{v}`" for v in entry["values"])
            if "below" in entry:  # a named value, or a number from min up to below the other key's value
                values += f", or a number from {entry.get('min', 0)} to below `{entry['below']}`"
        elif "forms" in entry:
            values = ", ".join(f"`{v}`" for v in entry["forms"])
            args = entry.get("args", {})
            if args:
                values += "; " + ", ".join(f"{a} from {r.get('min')} to {r.get('max')}" for a, r in args.items())
        elif "min" in entry or "max" in entry:
            values = f"{entry.get('min')} to {entry.get('max')}"
            if "true" in entry:
                values += f"; `false`, `true` ({entry['true']})"
        else:
            values = entry.get("type", "")
        only = ", ".join(f"{k}={v}" for k, v in entry.get("only_with", {}).items())
        # What a value asks of the other keys (protocol = bulkio).
        needs = "; ".join(
            f"{value} needs " + ", ".join(f"{k}={v}" for k, v in need["keys"].items())
            for value, need in entry.get("needs", {}).items()
        )
        only = "; ".join(part for part in (only, needs) if part)
        lines.append(
            f"| `{key}` | {_cell(entry.get('side', ''))} | {_cell(values)} | "
            f"`{_cell(entry.get('default', ''))}` | {_cell(only)} | {_cell(entry.get('description', ''))} |"
        )
    return "\n".join(lines) + "\n"


def components_page() -> str:
    from scabench.model.catalog import declared_kinds
    from scabench.report.catalogue import default_text, own_properties, property_range

    lines = [
        "# Component kinds",
        "",
        GENERATED_NOTE.rstrip("\n"),
        "",
        "Every built-in kind, as the runtime declares it (`scabench-host --describe`; "
        "`scabench components KIND` prints the same). A kind's ports also take the "
        "[policy keys](policy-keys.md) of the connections they make; `record_capacity`, "
        "which the runner sets, is left out. What the kinds do: [Components](../explanation/components.md) "
        '(the graph kinds tee, merge and duplex, and how each ends its stream: "Graph kinds").',
        "",
    ]
    for name, kind in declared_kinds().items():
        lines += [
            f"## `{name}`",
            "",
            f"sample types: {', '.join(kind['sample_types'])}",
            "",
            "| port | direction | type | required | what it carries |",
            "|---|---|---|---|---|",
        ]
        # A kind that declares only its port names (a Python kind) has the rest unsaid: "–".
        blank = {"type": "–", "required": None, "description": "–"}
        ports = kind.get("ports") or {
            **{p: {**blank, "direction": "provides"} for p in kind["provides"]},
            **{p: {**blank, "direction": "uses"} for p in kind["uses"]},
        }
        for port, decl in ports.items():
            required = {True: "yes", False: "no", None: "–"}[decl["required"]]
            lines.append(
                f"| `{port}` | {decl['direction']} | {decl['type']} | {required} | {_cell(decl['description'])} |"
            )
        lines += [
            "",
            "| property | type | default | takes | while started | what it sets |",
            "|---|---|---|---|---|---|",
        ]
        for key, prop in sorted(own_properties(kind).items()):
            lines.append(
                f"| `{key}` | {_cell(prop['type'])} | `{_cell(default_text(prop['default']))}` | "
                f"{_cell(property_range(prop))} | {'yes' if prop.get('while_started') else 'no'} | "
                f"{_cell(prop['description'])} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def python_api_page() -> str:
    import scabench

    lines = [
        "# Python API",
        "",
        GENERATED_NOTE.rstrip("\n"),
        "",
        "Each name of `scabench.__all__`, from its docstring. How to use them: "
        "[scabench as a Python library](../api.md).",
        "",
    ]
    for name in scabench.__all__:
        module = scabench._EXPORTS.get(name)
        if module is None:
            continue
        lines += [
            f"## `{name}`",
            "",
            f"::: {module}.{name}",
            "    options:",
            "      show_root_heading: false",
            "      show_root_toc_entry: false",
            "",
        ]
    return "\n".join(lines) + "\n"


PAGES = {
    "reference/cli.md": cli_page,
    "reference/policy-keys.md": policy_keys_page,
    "reference/components.md": components_page,
    "reference/python-api.md": python_api_page,
}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for uri, page in PAGES.items():
        files.append(File.generated(config, uri, content=page()))
    return files
