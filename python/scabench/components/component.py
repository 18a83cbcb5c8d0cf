"""The component API in Python, mirroring the C++ one
(cpp/runtime/include/scabench/runtime/component.hpp): derive from Component,
declare properties and ports in __init__, react to packets and to
start/stop. The base class is the whole CF::Resource servant as REDHAWK 2.x
has it (initializeProperties, initialize, configure, query, getPort,
getPortSet, start, stop, started, softwareProfile, identifier, Logging,
releaseObject, runTest), so an SCA or REDHAWK launcher drives it as it drives
a C++ component (docs/reference/cf.md).

    class Doubler(Component):
        def __init__(self, context):
            super().__init__(context)
            self.properties.declare("gain", 2.0, "multiplies each sample")
            self.out = self.add_out_port("out")
            self.add_in_port("in", self.on_packet)

        def on_packet(self, header, samples):
            gain = self.properties["gain"]
            self.out.push(header, [gain * x for x in samples])

    if __name__ == "__main__":
        sys.exit(program.serve(Doubler, prog="doubler"))   # the SCA execute protocol

Lifecycle, as the C++ runtime's (docs/architecture.md, "Lifecycle"):
packets are handled only between start() and stop(). A start() that fails
(a port's settings, or on_start raising) leaves the component stopped and
raises CF::Resource::StartError: it can be configured, and the next start()
tries again. A stopped component neither processes nor forwards: a packet
that arrives before start() or after stop() is dropped and counted, as
every refusal of the C++ port is (the caller, two-way too, is not told), and
the counts go out at release as `stat` events (report()). configure() on a
started component takes only the properties declared while_started (the
stage's work); on_configure() then picks them up. initializeProperties()
gives the initial values, once and only before initialize(), as a REDHAWK
deployment does (AlreadyInitialized otherwise). The CF error number of a
StartError or StopError is chosen for what failed (cf_errors.py).
"""

import json
import os
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any

from scabench.components import idl
from scabench.components.cf_errors import cf_error_of
from scabench.components.ports import SAMPLE_TYPES, InPort, OutPort
from scabench.components.properties import TYPES, PropertyBag
from scabench.components.resource import ResourceAnswers

_CF = idl.load().CF


@dataclass
class ComponentContext:
    """What a component is given. name: its name binding (how launchers and
    logs name it); identifier: CF::Resource::identifier (COMPONENT_IDENTIFIER);
    sample_type: of its ports unless a port names its own; services: the
    process that serves it (program.Process); software_profile:
    CF::Resource::softwareProfile, the SPD it was deployed from (the exec
    parameter PROFILE_NAME), "" if none was given."""

    name: str
    identifier: str = ""
    sample_type: str = "double"
    services: object = field(default=None, repr=False)
    software_profile: str = ""


class Component(ResourceAnswers, idl.load().CF__POA.Resource):  # type: ignore[misc]  # omniORBpy's skeleton
    def __init__(self, context):
        self.context = context
        self.properties = PropertyBag()
        self.in_ports, self.out_ports = [], []
        self._lock = threading.Lock()
        # configure, start and stop come on any ORB thread: one at a time.
        self._lifecycle = threading.Lock()
        self._running = False
        self._processed = 0
        self._stream_began = 0  # _processed when the stream under way began (the last end of stream)
        self._in_stream = 0  # packets of the stream that ended last
        self._ports_ended = 0  # in-ports whose stream has ended, in the stream under way
        self._ports_ending = 0  # in-ports whose end the stream waits for: set at start
        self._connection_numbers = 0  # the next connection into a provides port gets this number
        self._failed = False
        self._reported = False
        self._initialized = self._properties_initialized = False
        self.logger_name = context.name  # its one logger (ResourceAnswers)

    @property
    def name(self):
        return self.context.name

    @property
    def running(self):
        """Between start() and stop(): packets are handled only then."""
        return self._running

    @property
    def processed(self):
        """Packets handled (by any in-port) since the component was made."""
        return self._processed

    @property
    def processed_in_stream(self):
        """In on_end_of_stream: the packets handled in the stream that ended
        (since the end of the one before), what end of stream announces; a
        second stream of 200 announces 200, not the component's total."""
        return self._in_stream

    def add_in_port(self, name, handler, sample_type=None, *, required=True, description=""):
        """A provides port; handler(header, samples) runs on the ORB thread for
        each packet. sample_type: the port's own element type (one of
        SAMPLE_TYPES); None follows the run's (context.sample_type).
        required=False: a spec may leave it unconnected, and the component's
        end of stream then waits only for the ports that have a sender."""
        port = InPort(
            self,
            name,
            sample_type or self.context.sample_type,
            handler,
            follows_run=sample_type is None,
            required=required,
            description=description,
        )
        self.in_ports.append(port)
        return port

    def add_out_port(self, name, sample_type=None, *, description=""):
        """A uses port; it takes any number of connections (its `fanout`
        says how they share a packet). sample_type as for add_in_port."""
        port = OutPort(
            self,
            name,
            sample_type or self.context.sample_type,
            follows_run=sample_type is None,
            description=description,
        )
        self.out_ports.append(port)
        return port

    # Hooks for subclasses. on_start may raise (a property that cannot work):
    # start() turns it into CF::Resource::StartError, and the component stays
    # stopped. on_stop may raise ValueError: StopError, the component stopped all the same.
    def on_start(self):
        pass

    def on_stop(self):
        pass

    def on_configure(self):
        """After configure() has changed properties while the component is
        started (only while_started ones can have changed): pick them up."""

    def on_end_of_stream(self, header):
        """Called once every in-port has seen end of stream and handled every
        packet it announced. The default forwards end of stream, announcing
        the packets this component handled in the stream, with the stream's
        id (the header's), as the C++ default does."""
        self.end_stream(header, self.processed_in_stream)

    # CF::Resource
    def _get_identifier(self):
        return self.context.identifier

    def _get_started(self):
        return self._running

    def _get_softwareProfile(self):
        return self.context.software_profile

    def initializeProperties(self, initialProperties):
        with self._lifecycle:
            # Initial values come once, before initialize(): later ones are configure's.
            if self._properties_initialized or self._initialized:
                raise _CF.PropertyEmitter.AlreadyInitialized()
            self.properties.configure(initialProperties, self._running)  # a tool may have started it first
            self._properties_initialized = True

    def initialize(self):
        with self._lifecycle:
            self._initialized = True

    def releaseObject(self):
        try:
            self.stop()
        except Exception as exc:  # released all the same: the caller wants it gone
            self.log(f"stop during release: {exc}")
        for port in self.out_ports:
            port.disconnect()  # lets a sync=none queue drain first
        self.report()
        if self.context.services is not None:
            self.context.services.released(self)

    def runTest(self, testid, testValues):
        raise _CF.TestableObject.UnknownTest()

    def configure(self, configProperties):
        with self._lifecycle:
            started = self._running
            self.properties.configure(configProperties, started)
            if started:
                self.on_configure()

    def query(self, configProperties):
        return self.properties.query(configProperties)

    def getPort(self, name):
        for port in self.in_ports + self.out_ports:
            if port.name == name:
                return port.reference()
        raise _CF.PortSupplier.UnknownPort()

    def getPortSet(self):
        return [
            _CF.PortSet.PortInfoType(
                port.reference(),
                port.name,
                port.repository_id,
                port.description,
                _CF.PortSet.DIRECTION_PROVIDES if port in self.in_ports else _CF.PortSet.DIRECTION_USES,
            )
            for port in self.in_ports + self.out_ports
        ]

    def start(self):
        with self._lifecycle:
            if self._running:
                return
            try:
                self._ports_ended = 0  # re-armed: each start's stream ends anew
                # An optional port nobody attached to never ends a stream: the stream does not wait for it.
                self._ports_ending = sum(1 for p in self.in_ports if p.required or p.attached)
                for port in self.in_ports:
                    port.prepare()
                self.on_start()
            except _CF.Resource.StartError:
                raise
            except Exception as exc:  # stopped still: nothing was taken, the next start tries again
                raise _CF.Resource.StartError(cf_error_of(exc), str(exc) or type(exc).__name__) from exc
            self._running = True  # the ports take packets from here on

    def stop(self):
        with self._lifecycle:
            if not self._running:
                return
            self._running = False
            try:
                self.on_stop()
            except ValueError as exc:
                raise _CF.Resource.StopError(cf_error_of(exc), str(exc)) from exc
            finally:
                self.write_connections()

    # Called by the ports
    def next_connection_number(self):
        with self._lock:
            number = self._connection_numbers
            self._connection_numbers += 1
            return number

    def packet_done(self):
        with self._lock:
            self._processed += 1

    def in_port_ended(self, port, header):
        # Per stream: once every in-port has ended one, the component's
        # stream ends, and the count starts again for the next.
        with self._lock:
            self._ports_ended += 1
            every = self._ports_ended == self._ports_ending
            if every:
                self._ports_ended = 0
                # Every packet before the marker is handled before it counts (the ports wait for them).
                self._in_stream, self._stream_began = self._processed - self._stream_began, self._processed
        if every:
            self.on_end_of_stream(header)

    def end_stream(self, header, count):
        """Sends end of stream on every connected out-port, announcing `count`
        packets; a component with none connected reports "eos NAME COUNT"."""
        for port in self.out_ports:
            port.send_end_of_stream(header, count)
        if not any(p.connected for p in self.out_ports):
            self.notify(f"eos {self.name} {count}")
        self.write_connections()

    def connections(self):
        """Per-connection counts, in the words of the C++ runtime's
        `<name>.connections.json`: each uses connection's fanout and counts
        (ports.OutPort), each provides connection's number (the component's
        numbering across its provides ports, in attach order)."""
        return {
            "uses": [c for port in self.out_ports for c in port.connection_counts()],
            "provides": sorted(
                ({"port": port.name, "number": n} for port in self.in_ports for n in port.connection_numbers()),
                key=lambda entry: entry["number"],
            ),
        }

    def write_connections(self):
        """connections() into `<record_dir>/<name>.connections.json` where the
        program was given a RECORD_DIR, atomically (a temp file, renamed):
        a reader never sees half of one."""
        record_dir = getattr(self.context.services, "record_dir", None)
        if record_dir is None:
            return
        path = os.path.join(record_dir, f"{self.name}.connections.json")
        try:
            with tempfile.NamedTemporaryFile("w", dir=record_dir, prefix=f".{self.name}.", delete=False) as f:
                json.dump(self.connections(), f)
            os.replace(f.name, path)
        except OSError as exc:
            self.log(f"cannot write {path}: {exc}")

    def report(self):
        """What the in-ports refused, by reason, and the duplicates they
        dropped, as `stat NAME KEY VALUE` events (a C++ component's record
        file holds the same counts), nonzero ones only; and
        `stat NAME connections JSON`, the per-connection counts
        (connections()). Once, at the end."""
        with self._lock:
            if self._reported:
                return
            self._reported = True
        totals: dict[str, Any] = {}
        for port in self.in_ports:
            for reason, n in port.refused.items():
                totals[f"refused.{reason}"] = totals.get(f"refused.{reason}", 0) + n
            totals["duplicates"] = totals.get("duplicates", 0) + port.duplicates
        for key, n in totals.items():
            if n:
                self.notify(f"stat {self.name} {key} {n}")
        # The per-connection counts as one figure, the sidecar's document on one line.
        self.notify(f"stat {self.name} connections {json.dumps(self.connections(), separators=(',', ':'))}")
        self.write_connections()

    def fail(self, message):
        """Reports a failure once ("error NAME MESSAGE"), as the C++ runtime tells its launcher."""
        with self._lock:
            if self._failed:
                return
            self._failed = True
        self.notify(f"error {self.name} {message}")

    def notify(self, line):
        """An event for whoever started the process: one line on its standard output."""
        if self.context.services is not None:
            self.context.services.notify(line)
        else:
            print(line, flush=True)

    def log(self, text):
        print(f"{self.name}: {text}", file=sys.stderr, flush=True)


def describe(factory, sample_type="double"):
    """A kind's ports and properties in the words of `scabench-host
    --describe` (the port names by side, and each port's direction, type,
    whether a spec must connect it and description; each property's default, type, CORBA type, integer range,
    whether it may change while started, description), from a component
    made but never served: what a spec checker reads."""
    comp = factory(ComponentContext("describe", sample_type=sample_type))
    kinds = {bool: "boolean", int: "integer", float: "real", str: "string"}
    properties = {}
    for pid, e in comp.properties.entries().items():
        if isinstance(e.type, dict) or e.type not in TYPES:  # a struct ({member: its type}) or "sequence<T>"
            structured = isinstance(e.type, dict)
            properties[pid] = {
                "corba_type": "struct" if structured else e.type,
                "default": e.default,
                "description": e.description,
                "type": "struct" if structured else "sequence",
                "while_started": e.while_started,
                **({"members": dict(e.type)} if structured else {}),
            }
            continue
        held, _, limits = TYPES[e.type]
        entry = {
            "corba_type": e.type,
            "default": e.default,
            "description": e.description,
            "type": kinds[held],
            "while_started": e.while_started,
        }
        # What configure enforces: the type's range narrowed by a range
        # check (at_least), and the names a choice takes (one_of).
        low, high = limits or (None, None)
        if hasattr(e.check, "low"):
            low = e.check.low if low is None else max(low, e.check.low)
            if e.check.high is not None:
                high = e.check.high if high is None else min(high, e.check.high)
        if low is not None:
            entry["min"] = low
        if high is not None:
            entry["max"] = high
        if hasattr(e.check, "values"):
            entry["values"] = e.check.values
        properties[pid] = entry
    return {
        "sample_types": list(SAMPLE_TYPES),
        "provides": [p.name for p in comp.in_ports],
        "uses": [p.name for p in comp.out_ports],
        "ports": {p.name: _port(p, "provides", p.required) for p in comp.in_ports}
        | {p.name: _port(p, "uses", False) for p in comp.out_ports},  # a uses port may stay unconnected
        "properties": properties,
    }


def _port(port, direction, required):
    """A port as `scabench-host --describe` gives it: its type is "sample"
    where it follows the run's sample type."""
    return {
        "direction": direction,
        "type": "sample" if port.follows_run else port.sample_type,
        "required": required,
        "description": port.description,
    }
