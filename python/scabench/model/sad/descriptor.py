"""Reading one SCA descriptor (SAD, SPD, PRF or SCD) with lxml: parsed with
nothing fetched or expanded from outside the file (no network, no external
DTD, no entity expansion), then checked against the element structure in
dtd/ (each file says what it covers). Every error is one line naming the
file and line, the element and what is wrong (errors.SpecError with the path
written `file:line`)."""

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from lxml import etree

from scabench.errors import SpecError
from scabench.files import FileRefused, read_regular

DTD_DIR = Path(__file__).parent / "dtd"
# The root element of each descriptor, its DTD and what people call it.
KINDS = {
    "softwareassembly": ("softwareassembly.dtd", "a SAD (software assembly descriptor)"),
    "softpkg": ("softpkg.dtd", "an SPD (software package descriptor)"),
    "properties": ("properties.dtd", "a PRF (properties descriptor)"),
    "softwarecomponent": ("softwarecomponent.dtd", "an SCD (software component descriptor)"),
}
# A descriptor is a few kB; anything near this is not one.
MAX_DESCRIPTOR_BYTES = 1 << 20
# Elements a descriptor may hold that scabench does not read, and what each
# is: refused by name before the structure check, whose words would be
# about their attributes (a REDHAWK simplesequence has a name and a type).
NOT_READ = {
    "properties": {
        "structsequence": "a sequence of structs",
        "test": "a test",
    },
}


# The environment variable naming the SDR root, as REDHAWK's tools read it.
SDRROOT_VARIABLE = "SDRROOT"


@dataclass
class Descriptor:
    path: Path
    root: etree._Element
    # The SDR root a /-rooted file name is read under (resolve_sdrroot).
    sdrroot: Path | None = None

    def error(self, element: Any, message: str, what: str | None = None) -> SpecError:
        """A SpecError at `element`'s line: "file:line: what: message"."""
        return SpecError(f"{self.path}:{element.sourceline}", what or element.tag, message)

    def file(self, element: Any) -> Path:
        """The file a <localfile name=...> names, relative to this descriptor's
        folder (as SCA resolves it), or, /-rooted, under the SDR root's dom/
        (as REDHAWK reads a domain's files: "/components/X/X.spd.xml" is
        $SDRROOT/dom/components/X/X.spd.xml), written without ./ and ../
        detours."""
        name = element.get("name")
        if not name.startswith("/"):
            return Path(os.path.normpath(self.path.parent / name))
        if self.sdrroot is None:
            raise self.error(
                element,
                f"{name!r} is /-rooted, a file of the SDR root's dom/: give the SDR root "
                f"(scabench --sdrroot DIR, or the {SDRROOT_VARIABLE} environment variable)",
                "localfile",
            )
        if not (self.sdrroot / "dom").is_dir():
            raise self.error(
                element,
                f"{name!r} is /-rooted, a file of the SDR root's dom/, and the SDR root {self.sdrroot} has no "
                "dom/ folder (dom/components/<Name>/<Name>.spd.xml)",
                "localfile",
            )
        return Path(os.path.normpath(str(self.sdrroot / "dom") + name))


def resolve_sdrroot(given: str | Path | None) -> Path | None:
    """The SDR root: the one given, else $SDRROOT, else None. It is checked
    (it must hold dom/, REDHAWK's layout: dom/components, dom/waveforms;
    dev/ holds the devices and nodes, which scabench does not read) where a
    /-rooted file is read under it: an SDRROOT set for other work does not
    stand in the way of a SAD that names none."""
    value = given if given is not None else os.environ.get(SDRROOT_VARIABLE) or None
    return Path(os.path.abspath(value)) if value is not None else None


def children(element: Any, tag: str | None = None) -> list[Any]:
    """The child elements (comments and processing instructions left out)."""
    return [c for c in element.iterchildren(tag if tag else etree.Element)]


def child(element: Any, tag: str) -> Any:
    return next(iter(element.iterchildren(tag)), None)


def text(element: Any) -> str:
    """An element's text without the blanks an indented file puts around it."""
    return (element.text or "").strip() if element is not None else ""


@cache
def _dtd(name):
    return etree.DTD(str(DTD_DIR / name))


def read_descriptor(path: str | Path, root_tag: str, sdrroot: Path | None = None) -> "Descriptor":
    """Parses `path` as the descriptor with root element `root_tag` and checks
    it against its DTD. Raises SpecError naming the file and line."""
    path = Path(os.path.normpath(path))
    data = _read_bytes(path, KINDS[root_tag][1])
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(data, parser, base_url=str(path))
    except etree.XMLSyntaxError as exc:
        message = re.sub(r", line \d+, column \d+$", "", exc.msg or str(exc))
        column = f" (column {exc.position[1]})" if exc.position and exc.position[1] else ""
        raise SpecError(f"{path}:{exc.lineno}", "", f"not well-formed XML: {message}{column}") from None
    # An entity reference is left unexpanded (nothing from the DTD is used),
    # so the text around it would be read short: refuse it instead.
    entity = next(root.iter(etree.Entity), None)
    if entity is not None:
        raise SpecError(
            f"{path}:{entity.sourceline}",
            entity.getparent().tag,
            f"entity reference {entity.text}: "
            "scabench reads descriptors without expanding entities; write the text itself",
        )
    if root.tag != root_tag:
        raise SpecError(
            f"{path}:{root.sourceline}",
            str(root.tag),
            f"is not {KINDS[root_tag][1]}, whose root element is <{root_tag}> (without a namespace)",
        )
    for element in children(root):
        what = NOT_READ.get(root_tag, {}).get(element.tag)
        if what is not None:
            raise SpecError(
                f"{path}:{element.sourceline}",
                f"{element.tag} {element.get('id')!r}",
                f"{what} is not supported: scabench reads simple, simplesequence and struct properties",
            )
    dtd_name = KINDS[root_tag][0]
    dtd = _dtd(dtd_name)
    if not dtd.validate(root):
        first = dtd.error_log.filter_from_errors()[0]
        raise SpecError(
            f"{path}:{first.line}", "", f"{first.message} (the structure in python/scabench/model/sad/dtd/{dtd_name})"
        )
    return Descriptor(path, root, sdrroot)


def _read_bytes(path, what):
    try:
        return read_regular(path, MAX_DESCRIPTOR_BYTES, what)
    except FileRefused as exc:
        raise SpecError(path, "", exc.reason) from None
