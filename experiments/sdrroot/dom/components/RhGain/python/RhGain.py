#!/usr/bin/env python3
"""RhGain: a gain stage written the way a REDHAWK component is, from outside
scabench's component runtime. It stands on omniORBpy and the project's IDL
stubs alone (scabench.components.idl.load(): CF, ExtendedCF, BULKIO,
CosNaming), so it shows what any REDHAWK-style program meets in a scabench
waveform (docs/how-to/redhawk-component.md).

    RhGain.py NAMING_CONTEXT_IOR <IOR> COMPONENT_IDENTIFIER <id> NAME_BINDING <name>
              [PROFILE_NAME <SPD>] [DEBUG_LEVEL 0-5] [SAMPLE_TYPE double] [KEY VALUE ...]
              [-ORBoption value ...]

As a REDHAWK component:
- it takes the SCA exec parameters, binds its CF::Resource under NAME_BINDING
  in the naming context NAMING_CONTEXT_IOR, and serves until releaseObject()
  (then it unbinds the name and exits 0); SIGTERM or SIGINT end it the same
  way (exit 128 + the signal). Other KEY VALUE pairs are passed over, as a
  REDHAWK component passes over exec parameters it has no property for.
- its provides port `dataDouble_in` is a BULKIO::dataDouble: pushSRI and
  pushPacket(data, T, EOS, streamID) from any sender, queued (depth
  QUEUE_DEPTH); a full queue is flushed, as BulkIO's is (each stream's queued
  packets collapse into its latest), unless an active stream's SRI asks for
  blocking, which holds the senders back instead.
- its service thread (process(), between start() and stop()) takes each
  packet from the queue, multiplies its samples by the `gain` property, and
  pushes it on its uses port `dataDouble_out` with T, EOS and streamID as
  they came, an SRI that changed before it.
- the uses port is a BULKIO::UsesPortStatisticsProvider (an
  ExtendedCF::QueryablePort): any number of connections, each a
  BULKIO::dataDouble that gets every stream's SRI before its first packet.
- both ports keep statistics in PortStatistics' words.

Bad exec parameters: one line on stderr, exit 2; a naming context that
cannot be reached or bound in: one line, exit 1.
"""

import os
import signal
import sys
import threading
import time
from collections import deque
from typing import Any

from omniORB import CORBA
from omniORB import any as corba_any

from scabench.components import idl

S = idl.load()
CF, ExtendedCF, BULKIO, CosNaming = S.CF, S.ExtendedCF, S.BULKIO, S.CosNaming
# The skeletons, generated at run time (typed Any: subclassed as they are).
_ResourceSkeleton: Any = S.CF__POA.Resource
_DoubleProvidesSkeleton: Any = S.BULKIO__POA.dataDouble
_UsesSkeleton: Any = S.BULKIO__POA.UsesPortStatisticsProvider

PROG = "RhGain"
REQUIRED = ("NAMING_CONTEXT_IOR", "COMPONENT_IDENTIFIER", "NAME_BINDING")
QUEUE_DEPTH = 100  # BulkIO's default for an in-port's queue
SERVICE_WAIT_S = 0.125  # how long process() waits for a packet before it looks again
LOG_RECORDS = 256  # the log events retrieve_records can give back, the latest kept
# DEBUG_LEVEL as REDHAWK reads it: 0 FATAL ... 5 TRACE.
DEBUG_LEVELS = {
    0: CF.LogLevels.FATAL,
    1: CF.LogLevels.ERROR,
    2: CF.LogLevels.WARN,
    3: CF.LogLevels.INFO,
    4: CF.LogLevels.DEBUG,
    5: CF.LogLevels.TRACE,
}
LEVEL_NAMES = {
    CF.LogLevels.FATAL: "FATAL",
    CF.LogLevels.ERROR: "ERROR",
    CF.LogLevels.WARN: "WARN",
    CF.LogLevels.INFO: "INFO",
    CF.LogLevels.DEBUG: "DEBUG",
    CF.LogLevels.TRACE: "TRACE",
}
BITS_PER_DOUBLE = 64
# Rates in PortStatistics are over the packets of the last RATE_WINDOW calls.
RATE_WINDOW = 20


class UsageError(ValueError):
    pass


# ---------------------------------------------------------------- the log


class Log:
    """The component's one logger: events at or above its level go to stderr
    and are kept (the latest LOG_RECORDS) for CF::LogEventConsumer."""

    def __init__(self, name, identifier, level):
        self.name, self.identifier, self.level = name, identifier, level
        self.records: deque[Any] = deque(maxlen=LOG_RECORDS)
        self._lock = threading.Lock()

    def write(self, level, text):
        if level < self.level:
            return
        event = CF.LogEvent(self.identifier, self.name, self.name, time.time_ns() // 1000, level, text)
        with self._lock:
            self.records.append(event)
        print(f"{LEVEL_NAMES.get(level, level)} {self.name}: {text}", file=sys.stderr, flush=True)

    def error(self, text):
        self.write(CF.LogLevels.ERROR, text)

    def info(self, text):
        self.write(CF.LogLevels.INFO, text)

    def debug(self, text):
        self.write(CF.LogLevels.DEBUG, text)

    def since(self, start, count):
        with self._lock:
            records = list(self.records)[start:]
        return records[:count]

    def by_time(self, keep, count, newest_first=False):
        with self._lock:
            records = [r for r in self.records if keep(r.timeStamp)]
        return records[-count:] if newest_first else records[:count]


# ---------------------------------------------------------------- statistics


class Traffic:
    """A port's traffic (one connection's, on a uses port), as PortStatistics
    reports it: rates over the last RATE_WINDOW calls, the streams not ended,
    the time since the last call."""

    def __init__(self, name):
        self.name = name
        self.calls: deque[tuple[float, int]] = deque(
            maxlen=RATE_WINDOW
        )  # (monotonic time, elements) of each pushPacket
        self.streams = []  # stream ids seen and not ended, in the order they began
        self.last_call = None
        self._lock = threading.Lock()

    def packet(self, elements, stream, eos):
        now = time.monotonic()
        with self._lock:
            self.calls.append((now, elements))
            self.last_call = now
            if eos:
                if stream in self.streams:
                    self.streams.remove(stream)
            elif stream not in self.streams:
                self.streams.append(stream)

    def statistics(self, queue_percent=0.0):
        with self._lock:
            calls, streams, last = list(self.calls), list(self.streams), self.last_call
        now = time.monotonic()
        span = calls[-1][0] - calls[0][0] if len(calls) > 1 else 0.0
        # Over n calls the span holds n - 1 intervals: the first call's elements came before it.
        elements = sum(n for _, n in calls[1:])
        per_second = (lambda x: float(x) / span) if span > 0 else (lambda x: 0.0)
        return BULKIO.PortStatistics(
            self.name,
            per_second(elements),
            per_second(elements * BITS_PER_DOUBLE),
            per_second(len(calls) - 1),
            streams,
            float(queue_percent),
            float(now - last) if last is not None else 0.0,
            [],
        )


# ---------------------------------------------------------------- ports


class Packet:
    __slots__ = ("EOS", "SRI", "T", "data", "sri_changed", "streamID")

    def __init__(self, data, T, EOS, streamID, SRI, sri_changed):
        self.data, self.T, self.EOS, self.streamID = data, T, EOS, streamID
        self.SRI, self.sri_changed = SRI, sri_changed


def default_sri(stream_id):
    """The SRI BulkIO assumes for a stream that was never given one."""
    return BULKIO.StreamSRI(1, 0.0, 1.0, 1, 0, 0.0, 0.0, 0, 0, stream_id, False, [])


class DoubleInPort(_DoubleProvidesSkeleton):
    """A BULKIO::dataDouble provides port: any sender may push; packets wait
    in a queue for the component's service thread (get_packet)."""

    def __init__(self, name, log):
        self.name, self.log = name, log
        self.traffic = Traffic(name)
        self.sris = {}  # streamID -> the StreamSRI it was given last
        self.changed = set()  # streams whose SRI changed since their last packet was queued
        self.queue: deque[Packet] = deque()
        self.flushed = 0  # packets dropped by a full queue's flush
        self._cond = threading.Condition()

    # BULKIO::updateSRI
    def _get_activeSRIs(self):
        with self._cond:
            return list(self.sris.values())

    def pushSRI(self, H):
        with self._cond:
            self.sris[H.streamID] = H
            self.changed.add(H.streamID)

    # BULKIO::ProvidesPortStatisticsProvider
    def _get_state(self):
        with self._cond:
            depth = len(self.queue)
        return BULKIO.IDLE if depth == 0 else BULKIO.BUSY if depth >= QUEUE_DEPTH else BULKIO.ACTIVE

    def _get_statistics(self):
        with self._cond:
            depth = len(self.queue)
        return self.traffic.statistics(100.0 * depth / QUEUE_DEPTH)

    def pushPacket(self, data, T, EOS, streamID):
        if not data and not EOS:
            return  # no samples and no end: nothing BulkIO keeps (T is the first sample's time)
        self.traffic.packet(len(data), streamID, EOS)
        with self._cond:
            sri = self.sris.get(streamID)
            if sri is None:  # a stream that was never given one: BulkIO's default, as if pushed
                self.log.info(f"{self.name}: stream {streamID!r} came without an SRI")
                sri = self.sris[streamID] = default_sri(streamID)
                self.changed.add(streamID)
            changed = streamID in self.changed
            self.changed.discard(streamID)
            packet = Packet(data, T, EOS, streamID, sri, changed)
            if len(self.queue) >= QUEUE_DEPTH:
                # BulkIO holds every sender back while any active stream asks for it; else it flushes.
                if any(s.blocking for s in self.sris.values()):
                    self._cond.wait_for(lambda: len(self.queue) < QUEUE_DEPTH)
                else:
                    self._flush(packet)
            self.queue.append(packet)
            if EOS:
                del self.sris[streamID]  # the stream is over: its SRI is no longer active
            self._cond.notify_all()

    def _flush(self, incoming):
        """A full queue's flush, as BulkIO's: each stream's packets up to its
        end collapse into the latest of them (an SRI change among them, or
        the end, carried onto it), and the incoming packet then takes the
        place of its stream's packet that carries no end."""
        before = len(self.queue)
        kept: list[Packet] = []
        for packet in self.queue:
            earlier = next((k for k in reversed(kept) if k.streamID == packet.streamID), None)
            if earlier is None or earlier.EOS:
                kept.append(packet)  # the stream's first, or one of a new stream after an end
                continue
            if packet.EOS and not packet.data:
                earlier.EOS = True  # an empty end: the end goes onto the packet before it
                continue
            packet.sri_changed = packet.sri_changed or earlier.sri_changed
            kept.remove(earlier)
            kept.append(packet)
        open_one = next((k for k in kept if k.streamID == incoming.streamID and not k.EOS), None)
        if open_one is not None:
            incoming.sri_changed = incoming.sri_changed or open_one.sri_changed
            kept.remove(open_one)
        self.queue = deque(kept)
        self.flushed += before - len(kept)
        self.log.info(f"{self.name}: queue full: flushed to {len(kept)} packets, {before - len(kept)} dropped")

    def get_packet(self, timeout):
        """The next packet, or None after `timeout` seconds without one."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.queue, timeout):
                return None
            packet = self.queue.popleft()
            self._cond.notify_all()  # a blocked sender may go on
            return packet


class Connection:
    def __init__(self, connection_id, port, ref):
        self.id, self.port, self.ref = connection_id, port, ref
        self.traffic = Traffic(port)
        self.sri_sent = {}  # streamID -> the SRI this connection was given last
        self.failed = False  # a call to it failed: said once


class DoubleOutPort(_UsesSkeleton):
    """A BulkIO uses port of doubles: a QueryablePort holding any number of
    connections, each a BULKIO::dataDouble; each packet goes to them one
    after another, each stream's SRI before its first packet."""

    def __init__(self, name, log):
        self.name, self.log = name, log
        self.sris = {}  # streamID -> the stream's SRI, while it is active
        self._connections = {}  # id -> Connection, in the order they came
        self._lock = threading.Lock()  # one push, connect or disconnect at a time

    # CF::Port
    def connectPort(self, connection, connectionId):
        try:
            ref = connection._narrow(BULKIO.dataDouble) if connection is not None else None
        except CORBA.Exception as exc:
            raise CF.Port.InvalidPort(1, f"the port to connect does not answer: {exc}") from None
        if ref is None:
            raise CF.Port.InvalidPort(1, "the port to connect is not a BULKIO::dataDouble")
        with self._lock:
            if connectionId in self._connections:
                raise CF.Port.OccupiedPort()
            self._connections[connectionId] = Connection(connectionId, self.name, ref)
        self.log.debug(f"{self.name}: connection {connectionId} made")

    def disconnectPort(self, connectionId):
        with self._lock:
            connection = self._connections.pop(connectionId, None)
            if connection is None:
                raise CF.Port.InvalidPort(2, f"no connection {connectionId!r}")
            # A stream under way ends for the port that goes, as BulkIO ends it.
            for stream in list(connection.sri_sent):
                self._call(connection, lambda c, s=stream: c.ref.pushPacket([], no_time(), True, s))
        self.log.debug(f"{self.name}: connection {connectionId} gone")

    # ExtendedCF::QueryablePort
    def _get_connections(self):
        with self._lock:
            return [ExtendedCF.UsesConnection(c.id, c.ref) for c in self._connections.values()]

    # BULKIO::UsesPortStatisticsProvider
    def _get_statistics(self):
        with self._lock:
            connections = list(self._connections.values())
        return [BULKIO.UsesPortStatistics(c.id, c.traffic.statistics()) for c in connections]

    # What the component calls
    def push_sri(self, sri):
        with self._lock:
            self.sris[sri.streamID] = sri
            for c in self._connections.values():
                self._send_sri(c, sri)

    def push_packet(self, data, T, EOS, streamID):
        with self._lock:
            sri = self.sris.setdefault(streamID, default_sri(streamID))  # one, so each connection gets it once
            for c in self._connections.values():
                if c.sri_sent.get(streamID) is not sri:
                    self._send_sri(c, sri)
                if self._call(c, lambda c: c.ref.pushPacket(data, T, EOS, streamID)):
                    c.traffic.packet(len(data), streamID, EOS)
                if EOS:
                    c.sri_sent.pop(streamID, None)
            if EOS:
                self.sris.pop(streamID, None)

    def disconnect_all(self):
        with self._lock:
            ids = list(self._connections)
        for connection_id in ids:
            try:
                self.disconnectPort(connection_id)
            except CF.Port.InvalidPort:
                pass  # gone meanwhile

    def _send_sri(self, connection, sri):
        if self._call(connection, lambda c: c.ref.pushSRI(sri)):
            connection.sri_sent[sri.streamID] = sri

    def _call(self, connection, call):
        """One call to a connection's port; a failure is logged once per
        connection, and the other connections still get the packet."""
        try:
            call(connection)
            return True
        except CORBA.Exception as exc:
            if not connection.failed:
                connection.failed = True
                self.log.error(f"{self.name}: connection {connection.id} failed: {exc}")
            return False


def no_time():
    """A PrecisionUTCTime that says it holds no time (an EOS sent for a port that goes)."""
    return BULKIO.PrecisionUTCTime(BULKIO.TCM_OFF, BULKIO.TCS_INVALID, 0.0, 0.0, 0.0)


# ---------------------------------------------------------------- the component


class RhGain(_ResourceSkeleton):
    """The CF::Resource: lifecycle, the `gain` property, two BulkIO ports and a service thread."""

    def __init__(self, identifier, name, profile, log, process):
        self.identifier, self.name, self.profile = identifier, name, profile
        self.log, self.process_services = log, process
        self.gain = 1.0  # the PRF's value, as REDHAWK's generated code carries it
        self.port_in = DoubleInPort("dataDouble_in", log)
        self.port_out = DoubleOutPort("dataDouble_out", log)
        self.port_refs = {}  # port name -> its object reference, made once the ports are activated
        self._started = False
        self._initialized = self._properties_initialized = False
        self._thread = None
        self._lifecycle = threading.Lock()

    # CF::Resource
    def _get_identifier(self):
        return self.identifier

    def _get_started(self):
        return self._started

    def _get_softwareProfile(self):
        return self.profile

    def start(self):
        with self._lifecycle:
            if self._started:
                return
            self._started = True
            self._thread = threading.Thread(target=self._serve, name="RhGain service", daemon=True)
            self._thread.start()

    def stop(self):
        with self._lifecycle:
            if not self._started:
                return
            self._started = False
            thread, self._thread = self._thread, None
        assert thread is not None  # started: its service thread runs
        thread.join(10 * SERVICE_WAIT_S + 5.0)
        if thread.is_alive():
            raise CF.Resource.StopError(CF.CF_ETIMEDOUT, "the service thread did not stop within its time")

    # The service thread: one packet at a time, as REDHAWK's process() takes them.
    def _serve(self):
        while self._started:
            packet = self.port_in.get_packet(SERVICE_WAIT_S)
            if packet is None:
                continue
            if packet.sri_changed:
                self.port_out.push_sri(packet.SRI)
            gain = self.gain
            self.port_out.push_packet([gain * x for x in packet.data], packet.T, packet.EOS, packet.streamID)

    # CF::LifeCycle
    def initialize(self):
        self._initialized = True

    def releaseObject(self):
        try:
            self.stop()
        except CF.Resource.StopError as exc:
            self.log.error(f"stop during release: {exc.msg}")
        self.port_out.disconnect_all()
        self.process_services.released()

    # CF::TestableObject
    def runTest(self, testid, testValues):
        raise CF.TestableObject.UnknownTest()

    # CF::PropertySet, as REDHAWK's: an unknown id or a value of the wrong
    # type is invalid; some invalid among valid ones is a partial configuration.
    def configure(self, configProperties):
        invalid = []
        for prop in configProperties:
            if prop.id != "gain" or not self._set_gain(prop.value):
                invalid.append(prop)
        if invalid and len(invalid) == len(configProperties):
            ids = ", ".join(p.id for p in invalid)
            raise CF.PropertySet.InvalidConfiguration(f"not properties of RhGain, or not numbers: {ids}", invalid)
        if invalid:
            raise CF.PropertySet.PartialConfiguration(invalid)

    def _set_gain(self, value):
        try:
            number = corba_any.from_any(value)
        except Exception:
            return False
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            return False
        self.gain = float(number)
        self.log.debug(f"gain = {self.gain}")
        return True

    def query(self, configProperties):
        if not configProperties:
            return [CF.DataType("gain", CORBA.Any(CORBA.TC_double, self.gain))]
        unknown = [p for p in configProperties if p.id != "gain"]
        if unknown:
            raise CF.UnknownProperties(unknown)
        return [CF.DataType("gain", CORBA.Any(CORBA.TC_double, self.gain)) for _ in configProperties]

    # CF::PropertyEmitter
    def initializeProperties(self, initialProperties):
        if self._properties_initialized or self._initialized:
            raise CF.PropertyEmitter.AlreadyInitialized()
        self._properties_initialized = True
        self.configure(initialProperties)

    def registerPropertyListener(self, obj, prop_ids, interval):
        # RhGain emits no property events: there is nothing to listen to.
        raise CORBA.NO_IMPLEMENT(0, CORBA.COMPLETED_NO)

    def unregisterPropertyListener(self, id):
        raise CF.InvalidIdentifier()

    # CF::PortSupplier, CF::PortSet
    def getPort(self, name):
        ref = self.port_refs.get(name)
        if ref is None:
            raise CF.PortSupplier.UnknownPort()
        return ref

    def getPortSet(self):
        return [
            CF.PortSet.PortInfoType(
                self.port_refs["dataDouble_in"],
                "dataDouble_in",
                "IDL:BULKIO/dataDouble:1.0",
                "doubles in",
                CF.PortSet.DIRECTION_PROVIDES,
            ),
            CF.PortSet.PortInfoType(
                self.port_refs["dataDouble_out"],
                "dataDouble_out",
                "IDL:BULKIO/dataDouble:1.0",
                "doubles out, times the gain",
                CF.PortSet.DIRECTION_USES,
            ),
        ]

    # CF::LogEventConsumer: (records, howMany) for the inout count
    def retrieve_records(self, howMany, startingRecord):
        records = self.log.since(startingRecord, howMany)
        return records, len(records)

    def retrieve_records_by_date(self, howMany, to_timeStamp):
        records = self.log.by_time(lambda t: t <= to_timeStamp, howMany, newest_first=True)
        return records, len(records)

    def retrieve_records_from_date(self, howMany, from_timeStamp):
        records = self.log.by_time(lambda t: t >= from_timeStamp, howMany)
        return records, len(records)

    # CF::LogConfiguration: one logger, the component's
    def _get_log_level(self):
        return self.log.level

    def _set_log_level(self, level):
        self.log.level = level

    def getLogLevel(self, logger_id):
        if logger_id != self.name:
            raise CF.UnknownIdentifier()
        return self.log.level

    def setLogLevel(self, logger_id, newLevel):
        if logger_id != self.name:
            raise CF.UnknownIdentifier()
        self.log.level = newLevel

    def getNamedLoggers(self):
        return [self.name]

    def resetLog(self):
        self.log.level = CF.LogLevels.INFO

    def getLogConfig(self):
        return ""

    def setLogConfig(self, config_contents):
        # It logs to stderr and keeps its records; it reads no log4j configuration.
        raise CORBA.NO_IMPLEMENT(0, CORBA.COMPLETED_NO)

    def setLogConfigURL(self, config_url):
        raise CORBA.NO_IMPLEMENT(0, CORBA.COMPLETED_NO)


# ---------------------------------------------------------------- the program


def parse(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """{KEY: VALUE} of the exec parameters and the -ORB options; UsageError
    says what is wrong, in one line."""
    pairs, orb_args, i = [], [], 0
    while i < len(args):
        if args[i].startswith("-ORB"):
            if i + 1 >= len(args):
                raise UsageError(f"ORB option {args[i]} has no value")
            orb_args += args[i : i + 2]
            i += 2
        else:
            pairs.append(args[i])
            i += 1
    if len(pairs) % 2:
        raise UsageError(f"exec parameter {pairs[-1]!r} has no value")
    params = dict(zip(pairs[::2], pairs[1::2]))
    missing = [key for key in REQUIRED if not params.get(key)]
    if missing:
        raise UsageError("missing " + ", ".join(missing))
    level = params.get("DEBUG_LEVEL", "3")
    if level not in [str(n) for n in DEBUG_LEVELS]:
        raise UsageError(f"DEBUG_LEVEL {level!r}: 0 (fatal) to 5 (trace)")
    # What a scabench run says its samples are: RhGain's ports carry doubles only.
    if params.get("SAMPLE_TYPE", "double") != "double":
        raise UsageError(f"SAMPLE_TYPE {params['SAMPLE_TYPE']!r}: RhGain's ports are BULKIO::dataDouble (double)")
    return params, orb_args


class Process:
    """The program around the servant: the ORB, the name it bound, its end."""

    def __init__(self, orb):
        self.orb = orb
        self.done = threading.Event()
        self.naming = self.binding = None

    def released(self):
        self.unbind()
        self.done.set()

    def unbind(self):
        naming, self.naming = self.naming, None
        if naming is not None:
            try:
                naming.unbind(self.binding)
            except (CosNaming.NamingContext.NotFound, CORBA.Exception):
                pass  # gone already, or the service is: nothing left to undo


class Terminated(BaseException):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def main(argv: list[str]) -> int:
    if "--help" in argv or "-h" in argv:
        print(__doc__)
        return 0
    try:
        params, orb_args = parse(argv)
    except UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2

    def terminate(signum, _frame):
        raise Terminated(signum)

    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, terminate)
    orb = CORBA.ORB_init([PROG, *orb_args], CORBA.ORB_ID)
    process = Process(orb)
    name = params["NAME_BINDING"]
    log = Log(name, params["COMPONENT_IDENTIFIER"], DEBUG_LEVELS[int(params.get("DEBUG_LEVEL", "3"))])
    component = RhGain(params["COMPONENT_IDENTIFIER"], name, params.get("PROFILE_NAME", ""), log, process)
    try:
        poa = orb.resolve_initial_references("RootPOA")
        poa._get_the_POAManager().activate()
        for port in (component.port_in, component.port_out):
            poa.activate_object(port)
            component.port_refs[port.name] = poa.servant_to_reference(port)
        poa.activate_object(component)
        resource = poa.servant_to_reference(component)
        try:
            naming = orb.string_to_object(params["NAMING_CONTEXT_IOR"])._narrow(CosNaming.NamingContext)
            if naming is None:
                raise ValueError("not a naming context")
            binding = [CosNaming.NameComponent(name, "")]
            naming.rebind(binding, resource)
        except (CORBA.Exception, ValueError) as exc:
            print(f"{PROG}: cannot bind {name!r} in NAMING_CONTEXT_IOR: {exc}", file=sys.stderr)
            return 1
        process.naming, process.binding = naming, binding
        log.debug(f"bound as {name!r} ({params['COMPONENT_IDENTIFIER']})")
        while not process.done.wait(0.2):  # the main thread stays where a signal can reach it
            pass
        return 0
    except Terminated as exc:
        try:
            component.releaseObject()
        except Exception as failure:  # ending all the same
            log.error(f"release on signal: {failure}")
        return 128 + exc.signum
    finally:
        process.unbind()
        try:
            orb.shutdown(True)
            orb.destroy()
        except CORBA.Exception:
            pass


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the ORB's threads are done with: nothing is left to wait for
