"""Data ports over omniORBpy: the provides (input) port, a servant of the
scabench data interface of its sample type, and the uses (output) port, a
CF::Port servant that sends on the one connection made to it. They mirror
cpp/runtime/include/scabench/runtime/{in_port,out_port,senders}.hpp for the
policies policy.py lists.

Samples cross the ports as omniORBpy maps the IDL sequences: bytes for
octet, a list of ints for short, a list of floats for float and double. A
stage forwards the object it received, so the data leave as they came.
"""
import itertools
import queue
import threading

import omniORB
from omniORB import CORBA

from scabench.components import idl, policy

_S = idl.load()

SAMPLE_TYPES = {"octet": "dataOctet", "short": "dataShort", "float": "dataFloat", "double": "dataDouble"}


def describe(exc):
    """A CORBA exception as an operator can act on it: its name, and for a
    system exception omniORB's minor code text (COMM_FAILURE (SendFailed))."""
    name = type(exc).__name__
    if isinstance(exc, CORBA.SystemException):
        text = omniORB.minorCodeToString(exc)
        return f"{name} ({text})" if text else name
    return f"{name}: {exc}" if str(exc) else name


def _header(h, link, **changes):
    """A copy of `h` with this connection's link sequence (and other fields changed)."""
    fields = dict(stream_id=h.stream_id, sequence_number=h.sequence_number, send_time_ns=h.send_time_ns,
                  end_of_stream=h.end_of_stream, link_sequence=link)
    fields.update(changes)
    return _S.data.PacketHeader(**fields)


# ------------------------------------------------------------------ provides

def _servant_class(sample_type):
    """The servant of the data interface of `sample_type`; it hands every
    call to its InPort."""
    base = getattr(_S.data__POA, SAMPLE_TYPES[sample_type])

    class DataPortServant(base):
        def __init__(self, port):
            self._port = port

        def pushPacket(self, header, data):
            self._port._upcall(header, data, twoway=True)

        def pushPacketOneway(self, header, data):
            self._port._upcall(header, data, twoway=False)

        def syncMarker(self):
            pass  # its reply is the point: the ORB has read every earlier request on the connection

        def attachFlowControl(self, sender):
            # Only a sender with flow control calls it, and the Python ports have none (policy.py):
            # the connection's two ends disagree, which must not pass silently.
            raise CORBA.NO_IMPLEMENT(0, CORBA.COMPLETED_NO)

    DataPortServant.__name__ = f"{SAMPLE_TYPES[sample_type]}Servant"
    return DataPortServant


class InPort:
    """A provides port. The handler runs on the ORB thread that delivered the
    packet (no worker), as handler(header, samples). End of stream, whose
    sequence_number is the count of packets sent before it, counts only once
    that many packets have been handled here: one-way packets may overtake
    it. Then the owner's end of stream runs, once."""

    def __init__(self, owner, name, sample_type, handler):
        if sample_type not in SAMPLE_TYPES:
            raise ValueError(f"port {name}: sample type {sample_type!r} is not one of {', '.join(SAMPLE_TYPES)}")
        self.owner, self.name, self.sample_type, self.handler = owner, name, sample_type, handler
        policy.declare(owner.properties, name, policy.PROVIDES)
        self._ref = None
        self._lock = threading.Lock()
        self._announced = None   # the count end of stream announced, once it came
        self._eos_header = None
        self._handled = 0        # packets whose handler has returned
        self._ended = False
        self._refused = 0        # packets that came while the component was not started

    def reference(self):
        """The port's object reference; its servant is activated on first use,
        in the POA its dispatch asks for."""
        if self._ref is None:
            single = self.owner.properties[f"{self.name}.dispatch"].replace(" ", "") == "single"
            poa = self.owner.context.services.port_poa(single)
            servant = _servant_class(self.sample_type)(self)
            poa.activate_object(servant)
            self._ref = poa.servant_to_reference(servant)
        return self._ref

    @property
    def refused(self):
        return self._refused

    def _upcall(self, header, data, twoway):
        if not self.owner.running:
            # Not started, or stopped: nothing is processed or forwarded. A two-way caller is told
            # (as the C++ port refuses data before start); a one-way packet is dropped and counted.
            with self._lock:
                self._refused += 1
                first = self._refused == 1
            if first:
                self.owner.log(f"port {self.name}: packet {header.sequence_number} refused: the component is not "
                               "started")
            if twoway:
                raise CORBA.BAD_INV_ORDER(0, CORBA.COMPLETED_NO)
            return
        if header.end_of_stream:
            with self._lock:
                self._announced, self._eos_header = header.sequence_number, header
            self._check_end()
            return
        try:
            self.handler(header, data)
        except CORBA.Exception as exc:  # forwarding failed: the peer downstream is gone or refused it
            self.owner.fail(f"port {self.name}: forwarding failed: {describe(exc)}")
        except Exception as exc:  # a bug in the handler; reported, as the C++ port does
            self.owner.fail(f"port {self.name}: {type(exc).__name__}: {exc}")
        self.owner.packet_done()
        with self._lock:
            self._handled += 1
        self._check_end()

    def _check_end(self):
        with self._lock:
            if self._ended or self._announced is None or self._handled < self._announced:
                return
            self._ended = True
        try:
            self.owner.in_port_ended(self, self._eos_header)
        except CORBA.Exception as exc:
            self.owner.fail(f"port {self.name}: forwarding end of stream failed: {describe(exc)}")


# ---------------------------------------------------------------------- uses

class _QueuedOneway:
    """sync = none: the caller only queues the packet; one sender thread
    issues the oneways in queue order, so the client never reorders."""

    def __init__(self, ref, depth, on_error):
        self._ref, self._on_error = ref, on_error
        self._queue = queue.Queue(maxsize=depth)
        self._thread = threading.Thread(target=self._drain, name="sync-none-sender", daemon=True)
        self._thread.start()

    def send(self, header, data):
        self._queue.put((header, data))

    def flush(self):
        self._queue.join()

    def close(self):
        self._queue.put(None)

    def _drain(self):
        failed = False
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                if not failed:
                    self._ref.pushPacketOneway(*item)
            except CORBA.Exception as exc:
                failed = True  # the peer is gone: report once, drop what is left
                self._on_error(exc)
            finally:
                self._queue.task_done()


class OutPort(_S.CF__POA.Port):
    """A uses port: CF::Port's connectPort/disconnectPort, one connection at a
    time, and push(header, samples), which stamps the connection's next link
    sequence (0, 1, 2, ...) and sends with the connection's call and sync.
    Without a connection a packet goes nowhere: that is how a last stage ends
    a pipeline."""

    def __init__(self, owner, name, sample_type):
        if sample_type not in SAMPLE_TYPES:
            raise ValueError(f"port {name}: sample type {sample_type!r} is not one of {', '.join(SAMPLE_TYPES)}")
        self.owner, self.name, self.sample_type = owner, name, sample_type
        policy.declare(owner.properties, name, policy.USES)
        self._interface = getattr(_S.data, SAMPLE_TYPES[sample_type])
        self._ref = None
        self._lock = threading.Lock()  # the connection, and the link stamp with the queue's order
        self._peer = self._queued = self._connection_id = None
        self._links = itertools.count()
        self._call = self._sync = None

    def reference(self):
        if self._ref is None:
            poa = self.owner.context.services.port_poa(False)
            poa.activate_object(self)
            self._ref = poa.servant_to_reference(self)
        return self._ref

    @property
    def connected(self):
        return self._peer is not None

    # CF::Port
    def connectPort(self, connection, connectionId):
        with self._lock:
            if self._peer is not None:
                raise _S.CF.Port.OccupiedPort()
            if connection is None:
                raise _S.CF.Port.InvalidPort(1, "nil connection")
            try:
                peer = connection._narrow(self._interface)
            except CORBA.Exception as exc:
                raise _S.CF.Port.InvalidPort(1, f"cannot reach the object to connect: {describe(exc)}")
            if peer is None:
                raise _S.CF.Port.InvalidPort(1, f"not a {SAMPLE_TYPES[self.sample_type]} data port")
            props = self.owner.properties
            self._call, self._sync = props[f"{self.name}.call"], props[f"{self.name}.sync"]
            if self._call == "oneway" and self._sync == "none":
                self._queued = _QueuedOneway(peer, props[f"{self.name}.sync_none_depth"], self._queue_failed)
            self._peer, self._connection_id = peer, connectionId
            self._links = itertools.count()

    def disconnectPort(self, connectionId):
        with self._lock:
            if self._peer is None or connectionId != self._connection_id:
                raise _S.CF.Port.InvalidPort(3, f"no connection '{connectionId}' on port {self.name}")
            queued, self._queued, self._peer, self._connection_id = self._queued, None, None, None
        if queued is not None:
            queued.flush()
            queued.close()

    def disconnect(self):
        """Drops the connection, if any (releaseObject)."""
        with self._lock:
            connection_id = self._connection_id
        if connection_id is not None:
            try:
                self.disconnectPort(connection_id)
            except _S.CF.Port.InvalidPort:
                pass  # disconnected meanwhile

    # Sending
    def push(self, header, samples):
        """Sends one packet; raises the CORBA exception if the peer cannot be
        reached (the in-port reports it)."""
        peer, queued = self._peer, self._queued  # one connection's, even if it is dropped meanwhile
        if peer is None:
            return
        if queued is not None:
            with self._lock:  # stamped in queue order
                queued.send(_header(header, next(self._links)), samples)
            return
        h = _header(header, next(self._links))
        if self._call == "twoway" or self._sync == "target":
            peer.pushPacket(h, samples)
        else:
            peer.pushPacketOneway(h, samples)
            if self._sync == "server":
                peer.syncMarker()

    def send_end_of_stream(self, header, count):
        """Sends end of stream announcing `count` packets (header: the one that
        came in, for its stream id and send time), then waits until every
        packet has left this process."""
        queued = self._queued
        if self._peer is None:
            return
        self.push(_header(header, 0, end_of_stream=True, sequence_number=count), b"" if self.sample_type == "octet"
                  else [])
        if queued is not None:
            queued.flush()

    def _queue_failed(self, exc):
        self.owner.fail(f"port {self.name}: forwarding failed: {describe(exc)}")
