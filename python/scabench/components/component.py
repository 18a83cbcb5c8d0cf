"""The component API in Python, mirroring the C++ one
(cpp/runtime/include/scabench/runtime/component.hpp): derive from Component,
declare properties and ports in __init__, react to packets and to
start/stop. The base class is the whole CF::Resource servant (initialize,
configure, query, getPort, start, stop, releaseObject, runTest, identifier),
so an SCA launcher drives it as it drives a C++ component.

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

Lifecycle: packets are handled only between start() and stop(). Before
start() the C++ port refuses them too; after stop() it goes on taking them,
where this one keeps to SCA's stop (the end of processing): a stopped
component neither processes nor forwards. Either way a packet it does not
take is dropped and counted, as every refusal of the C++ port is (the
caller, two-way too, is not told), and the counts go out at release as
`stat` events (report()). configure() is refused while started, as in the
C++ runtime.
"""
import sys
import threading
from dataclasses import dataclass, field

from scabench.components import idl
from scabench.components.ports import InPort, OutPort
from scabench.components.properties import PropertyBag

_CF = idl.load().CF


@dataclass
class ComponentContext:
    """What a component is given. name: its name binding (how launchers and
    logs name it); identifier: CF::Resource::identifier (COMPONENT_IDENTIFIER);
    sample_type: of its ports unless a port names its own; services: the
    process that serves it (program.Process)."""
    name: str
    identifier: str = ""
    sample_type: str = "double"
    services: object = field(default=None, repr=False)


class Component(idl.load().CF__POA.Resource):
    def __init__(self, context):
        self.context = context
        self.properties = PropertyBag()
        self.in_ports, self.out_ports = [], []
        self._lock = threading.Lock()
        self._running = False
        self._processed = 0
        self._ports_ended = 0  # in-ports whose stream has ended, in the stream under way
        self._failed = False
        self._reported = False

    @property
    def name(self):
        return self.context.name

    @property
    def running(self):
        """Between start() and stop(): packets are handled only then."""
        return self._running

    @property
    def processed(self):
        """Packets handled (by any in-port) since start: what end of stream
        announces (the C++ runtime counts its records, made anew at start)."""
        return self._processed

    def add_in_port(self, name, handler, sample_type=None):
        """A provides port; handler(header, samples) runs on the ORB thread for each packet."""
        port = InPort(self, name, sample_type or self.context.sample_type, handler)
        self.in_ports.append(port)
        return port

    def add_out_port(self, name, sample_type=None):
        port = OutPort(self, name, sample_type or self.context.sample_type)
        self.out_ports.append(port)
        return port

    # Hooks for subclasses. on_start may raise ValueError (a property that
    # cannot work): start() turns it into CF::Resource::StartError.
    def on_start(self):
        pass

    def on_stop(self):
        pass

    def on_end_of_stream(self, header):
        """Called once every in-port has seen end of stream and handled every
        packet it announced. The default forwards end of stream, announcing
        the packets this component handled, as the C++ default does."""
        self.end_stream(header, self.processed)

    # CF::Resource
    def _get_identifier(self):
        return self.context.identifier

    def initialize(self):
        pass

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
        if self._running:
            raise _CF.PropertySet.InvalidConfiguration("cannot configure a started component", configProperties)
        self.properties.configure(configProperties)

    def query(self, configProperties):
        return self.properties.query(configProperties)

    def getPort(self, name):
        for port in self.in_ports + self.out_ports:
            if port.name == name:
                return port.reference()
        raise _CF.PortSupplier.UnknownPort()

    def start(self):
        with self._lock:
            if self._running:
                return
            try:
                self._processed = self._ports_ended = 0
                for port in self.in_ports:
                    port.prepare()
                self.on_start()
            except ValueError as exc:
                raise _CF.Resource.StartError(1, str(exc))
            self._running = True

    def stop(self):
        with self._lock:
            if not self._running:
                return
            self._running = False
            try:
                self.on_stop()
            except ValueError as exc:
                raise _CF.Resource.StopError(1, str(exc))

    # Called by the ports
    def packet_done(self):
        with self._lock:
            self._processed += 1

    def in_port_ended(self, port, header):
        # Per stream: once every in-port has ended one, the component's
        # stream ends, and the count starts again for the next.
        with self._lock:
            self._ports_ended += 1
            every = self._ports_ended == len(self.in_ports)
            if every:
                self._ports_ended = 0
        if every:
            self.on_end_of_stream(header)

    def end_stream(self, header, count):
        """Sends end of stream on every connected out-port, announcing `count`
        packets; a component with none connected reports "eos NAME COUNT"."""
        for port in self.out_ports:
            port.send_end_of_stream(header, count)
        if not any(p.connected for p in self.out_ports):
            self.notify(f"eos {self.name} {count}")

    def report(self):
        """What the in-ports refused, by reason, and the duplicates they
        dropped, as `stat NAME KEY VALUE` events (a C++ component's record
        file holds the same counts); nonzero ones only. Once, at the end."""
        with self._lock:
            if self._reported:
                return
            self._reported = True
        totals = {}
        for port in self.in_ports:
            for reason, n in port.refused.items():
                totals[f"refused.{reason}"] = totals.get(f"refused.{reason}", 0) + n
            totals["duplicates"] = totals.get("duplicates", 0) + port.duplicates
        for key, n in totals.items():
            if n:
                self.notify(f"stat {self.name} {key} {n}")

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
