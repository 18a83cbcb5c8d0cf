"""Reading one SCA descriptor (SAD, SPD, PRF or SCD) with lxml: parsed with
nothing fetched or expanded from outside the file (no network, no external
DTD, no entity expansion), then checked against the element structure in
dtd/ (each file says what it covers). Every error is one line naming the
file and line, the element and what is wrong (errors.SpecError with the path
written `file:line`)."""
import os
import re
import stat
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lxml import etree

from scabench.errors import SpecError

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
    "properties": {"simplesequence": "a sequence property", "struct": "a struct property",
                   "structsequence": "a sequence of structs", "test": "a test"},
}


@dataclass
class Descriptor:
    path: Path
    root: etree._Element

    def error(self, element, message, what=None):
        """A SpecError at `element`'s line: "file:line: what: message"."""
        return SpecError(f"{self.path}:{element.sourceline}", what or element.tag, message)

    def file(self, element):
        """The file a <localfile name=...> names, relative to this descriptor's
        folder (as SCA resolves it), written without ./ and ../ detours."""
        return Path(os.path.normpath(self.path.parent / element.get("name")))


def children(element, tag=None):
    """The child elements (comments and processing instructions left out)."""
    return [c for c in element.iterchildren(tag if tag else etree.Element)]


def child(element, tag):
    return next(iter(element.iterchildren(tag)), None)


def text(element):
    """An element's text without the blanks an indented file puts around it."""
    return (element.text or "").strip() if element is not None else ""


@cache
def _dtd(name):
    return etree.DTD(str(DTD_DIR / name))


def read_descriptor(path, root_tag):
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
        raise SpecError(f"{path}:{entity.sourceline}", entity.getparent().tag, f"entity reference {entity.text}: "
                        "scabench reads descriptors without expanding entities; write the text itself")
    if root.tag != root_tag:
        raise SpecError(f"{path}:{root.sourceline}", str(root.tag), f"is not {KINDS[root_tag][1]}, whose root element "
                        f"is <{root_tag}> (without a namespace)")
    for element in children(root):
        what = NOT_READ.get(root_tag, {}).get(element.tag)
        if what is not None:
            raise SpecError(f"{path}:{element.sourceline}", f"{element.tag} {element.get('id')!r}", f"{what} is not "
                            "supported: a scabench component's properties are <simple> ones")
    dtd_name = KINDS[root_tag][0]
    dtd = _dtd(dtd_name)
    if not dtd.validate(root):
        first = dtd.error_log.filter_from_errors()[0]
        raise SpecError(f"{path}:{first.line}", "", f"{first.message} (the structure in "
                        f"python/scabench/model/sad/dtd/{dtd_name})")
    return Descriptor(path, root)


def not_a_file(path: Path) -> str | None:
    """Why `path` cannot be read as a file ("no such file", "is a
    directory", "is not a regular file (a FIFO)", ...); None if it is a
    regular file. The one test of every file a descriptor names, so that
    each says what it found."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISDIR(mode):
        return "is a directory"
    if not stat.S_ISREG(mode):
        found = ("a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                 else "a socket" if stat.S_ISSOCK(mode) else "not a file")
        return f"is not a regular file ({found})"
    return None


def _read_bytes(path, what):
    problem = not_a_file(path)
    if problem is not None:
        raise SpecError(path, "", f"{problem}; give the path of {what}")
    try:
        size = os.stat(path).st_size
        if size > MAX_DESCRIPTOR_BYTES:
            raise SpecError(path, "", f"{size} bytes; {what} is an XML file of at most {MAX_DESCRIPTOR_BYTES}")
        with open(path, "rb") as f:
            return f.read(MAX_DESCRIPTOR_BYTES + 1)
    except OSError as exc:
        raise SpecError(path, "", f"cannot be read: {exc.strerror or exc}") from None
