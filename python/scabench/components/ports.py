"""Data ports over omniORBpy: the provides (input) port, a servant of the
scabench data interface of its sample type, and the uses (output) port, a
CF::Port servant that sends on every connection made to it, as its fanout
says (sequential, parallel, drop). They mirror
cpp/runtime/include/scabench/runtime/{in_port,out_port,senders}.hpp for the
policies policy.py lists.

Samples cross the ports as omniORBpy maps the IDL sequences: bytes for
octet, a list of ints for short, a list of floats for float and double. A
stage forwards the object it received, so the data leave as they came.
"""

import collections
import os
import queue
import resource
import secrets
import threading
import time
from pathlib import Path

import omniORB
from omniORB import CORBA

from scabench import latency_bins
from scabench.components import idl, policy
from scabench.components.message_limit import check_fits
from scabench.components.window import AHEAD, BEHIND, INSIDE, LinkWindow

_S = idl.load()

SAMPLE_TYPES = {"octet": "dataOctet", "short": "dataShort", "float": "dataFloat", "double": "dataDouble"}
ELEMENT_BITS = {"octet": 8, "short": 16, "float": 32, "double": 64}


def describe(exc):
    """A CORBA exception as an operator can act on it: its name, and for a
    system exception omniORB's minor code text (COMM_FAILURE (SendFailed))."""
    name = type(exc).__name__
    if isinstance(exc, CORBA.SystemException):
        text = omniORB.minorCodeToString(exc)
        return f"{name} ({text})" if text else name
    return f"{name}: {exc}" if str(exc) else name


def _header(h, link, token, **changes):
    """A copy of `h` stamped for a connection: its link sequence and token."""
    fields = dict(
        stream_id=h.stream_id,
        sequence_number=h.sequence_number,
        send_time_ns=h.send_time_ns,
        end_of_stream=h.end_of_stream,
        link_sequence=link,
        connection_token=token,
    )
    fields.update(changes)
    return _S.data.PacketHeader(**fields)


# ------------------------------------------------------------------ provides

REFUSALS = ("sequence", "length", "eos", "threads", "sender")  # the C++ ports' reasons (no flow: no "credit")


def _servant_class(sample_type):
    """The servant of the data interface of `sample_type`; it hands every
    call to its InPort."""
    base = getattr(_S.data__POA, SAMPLE_TYPES[sample_type])

    class DataPortServant(base):  # type: ignore[valid-type, misc]  # omniORBpy's skeleton, looked up by name
        def __init__(self, port):
            self._port = port

        def pushPacket(self, header, data):
            self._port._upcall(header, data)

        def pushPacketOneway(self, header, data):
            self._port._upcall(header, data)

        # BULKIO::ProvidesPortStatisticsProvider, on every port (scabench.idl's DataPort), as the C++ ports.
        def _get_state(self):
            return _S.BULKIO.ACTIVE if self._port.owner.running else _S.BULKIO.IDLE

        def _get_statistics(self):
            return self._port.traffic.statistics(self._port.name, refused=sum(self._port.refused.values()))

        def syncMarker(self):
            pass  # its reply is the point: the ORB has read every earlier request on the connection

        def attachSender(self, token, flow):
            self._port._attach_sender(token, flow)

        def detachSender(self, token):
            self._port._detach_sender(token)

    DataPortServant.__name__ = f"{SAMPLE_TYPES[sample_type]}Servant"
    return DataPortServant


class Traffic:
    """A port's calls, counted as the C++ ports' PortTraffic counts them
    (cpp/runtime/include/scabench/runtime/port_traffic.hpp): rates over the
    traffic so far, from the first call to the last."""

    def __init__(self, bits_per_element):
        self.bits_per_element = bits_per_element
        self.calls = self.elements = 0
        self.first_ns = self.last_ns = 0
        self.latency = [0] * latency_bins.BINS  # send to arrival, latency_bins' bins
        self._lock = threading.Lock()

    def count(self, elements):
        """Counts a call; returns its arrival time (the one clock read)."""
        now = time.monotonic_ns()
        with self._lock:
            self.first_ns = self.first_ns or now
            self.last_ns = now
            self.calls += 1
            self.elements += elements
        return now

    def count_latency(self, header, arrived_ns):
        """A data packet the port took, into its latency so far (send to
        arrival), if it carries a send time (0 is none)."""
        if header.end_of_stream or not header.send_time_ns:
            return
        b = latency_bins.bin_of_ns(arrived_ns - header.send_time_ns)
        with self._lock:
            self.latency[b] += 1

    def latency_counts(self):
        """latency_count, and while it is above 0 the p50, p99 and max in ns
        (bin resolution: their bin's upper edge), as the C++ ports give them."""
        with self._lock:
            counts = list(self.latency)
        out = {"latency_count": sum(counts)}
        if out["latency_count"]:
            for key, q in (("latency_p50_ns", 0.5), ("latency_p99_ns", 0.99), ("latency_max_ns", 1.0)):
                out[key] = latency_bins.quantile_ns(counts, q) or 0
        return out

    def statistics(self, port_name, **counts):
        """BULKIO::PortStatistics, with the counts as keywords (calls, elements, and `counts`)."""
        with self._lock:
            calls, elements, first, last = self.calls, self.elements, self.first_ns, self.last_ns
        span_s = (last - first) / 1e9
        per_s = (calls - 1) / span_s if calls > 1 and span_s > 0 else 0.0
        elements_per_s = elements * per_s / calls if calls else 0.0
        since_s = (time.monotonic_ns() - last) / 1e9 if calls else 0.0
        keywords = [
            _S.CF.DataType(key, CORBA.Any(CORBA.TC_ulonglong, int(value)))
            for key, value in {
                "calls": calls,
                "elements": elements,
                **self.latency_counts(),
                **counts,
                **process_counts(),
            }.items()
        ]
        return _S.BULKIO.PortStatistics(
            port_name, elements_per_s, elements_per_s * self.bits_per_element, per_s, [], 0.0, since_s, keywords
        )


def process_counts() -> dict[str, int]:
    """The process's figures every port's statistics carry, as the C++
    runtime's (bulkio::processCounts): pid, CPU so far in µs, threads now."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out = {"pid": os.getpid(), "process_cpu_us": int((usage.ru_utime + usage.ru_stime) * 1e6)}
    try:  # num_threads: proc(5)'s field 20, the 18th after the command's closing parenthesis
        out["process_threads"] = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[17])
    except (OSError, IndexError, ValueError):
        pass
    return out


class _Link:
    """One connection into a port (the C++ port's InLink): its sender's
    token, its own link window, calls and end of stream."""

    def __init__(self, token, number, implicit=False):
        self.token, self.number, self.implicit = token, number, implicit
        self.window = None  # made at the first start after the attach
        self.detached = False
        self.calls = 0  # in the handler now
        self.pending = False  # an end of stream was taken for the stream under way
        self.eos_link = self.eos_header = None
        self.ended = 0  # streams ended on it since start


class InPort:
    """A provides port. The handler runs on the ORB thread that delivered the
    packet (no worker), as handler(header, samples).

    Connections, as in the C++ port (cpp/runtime/include/scabench/runtime/
    in_port.hpp): every sender that attaches (attachSender, while the
    component is stopped) is a connection of its own, with its own link
    window, calls in progress and end of stream (fan-in); detachSender, with
    the connection's token, ends it. A port nobody attached to takes token 0;
    an optional one (required=False) nobody attached to is left out of the
    component's end of stream (Component.start).

    What it takes, as the C++ port (cpp/runtime/src/in_port.cpp, "What a port
    takes"; docs/trust-model.md): only while the component runs, only packets
    with a connection's token, of `packet_length` samples if that is set,
    with a link sequence inside the connection's window (twice `max_calls`:
    all it can have in progress, and as much again for a sender's calls
    overtaking each other), at most `max_calls` at once per connection.
    Anything else is dropped and counted by reason (refused); a link sequence
    seen before is a duplicate, dropped and counted. End of stream is taken
    once per stream, from the connection's sender, and ends the connection's
    stream once every link sequence before it is finished: one-way packets
    may overtake it. Once every connection's stream has ended, the owner's
    end of stream runs; then the next stream may end, and start() re-arms
    the port."""

    def __init__(self, owner, name, sample_type, handler, follows_run=False, required=True, description=""):
        if sample_type not in SAMPLE_TYPES:
            raise ValueError(f"port {name}: sample type {sample_type!r} is not one of {', '.join(SAMPLE_TYPES)}")
        self.owner, self.name, self.sample_type, self.handler = owner, name, sample_type, handler
        self.follows_run, self.required, self.description = follows_run, required, description
        policy.declare(owner.properties, name, policy.PROVIDES)
        self._ref = None
        self._lock = threading.Lock()
        self._links = []  # the connections; changed only while the component is stopped
        self._rounds = 0  # the port's ends of stream since start
        self._length = self._max_calls = 0
        self.refused = dict.fromkeys(REFUSALS, 0)
        self.duplicates = 0
        self.traffic = Traffic(ELEMENT_BITS[sample_type])

    @property
    def repository_id(self):
        """The repository id of the data interface it provides (CF::PortSet's repid)."""
        return getattr(_S.data, SAMPLE_TYPES[self.sample_type])._NP_RepositoryId

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

    def prepare(self):
        """At start: the checks' settings; a link window for each connection
        attached since the last start (a connection keeps its own over a
        restart: its sender goes on numbering); end of stream re-armed."""
        props = self.owner.properties
        self._length, self._max_calls = props[f"{self.name}.packet_length"], props[f"{self.name}.max_calls"]
        used_up = []
        with self._lock:
            self._links = [link for link in self._links if not link.detached]
            if not self._links:
                self._links.append(_Link(0, 0, implicit=True))
            for link in self._links:
                if link.window is None:
                    link.window = LinkWindow(2 * self._max_calls)
                if link.eos_link is not None:  # came through, but did not end its stream: its number is used up
                    used_up.append((link.window, link.eos_link))
                link.pending, link.eos_link, link.eos_header, link.ended = False, None, None, 0
            self._rounds = 0
        for window, n in used_up:
            window.finish(n)

    @property
    def attached(self):
        """Some sender has attached and not detached."""
        with self._lock:
            return any(not link.implicit and not link.detached for link in self._links)

    def connection_numbers(self):
        """The numbers of the connections attached now, in attach order."""
        with self._lock:
            return [link.number for link in self._links if not link.implicit and not link.detached]

    def _link_of(self, token):
        with self._lock:
            return next((link for link in self._links if link.token == token and not link.detached), None)

    def _stranger_place(self, n):
        """A stranger's number is out of sequence beyond every connection's window."""
        with self._lock:
            windows = [link.window for link in self._links if link.window is not None]
        return INSIDE if any(w.place(n) != AHEAD for w in windows) else AHEAD

    def _refuse(self, reason, header):
        with self._lock:
            self.refused[reason] += 1
            first = self.refused[reason] == 1
        if first:  # the counts go out at the end (Component.report); the first of each kind says what
            self.owner.log(
                f"port {self.name}: refused ({reason}): packet {header.sequence_number}, link "
                f"{header.link_sequence}" + ("" if self.owner.running else ": the component is not started")
            )

    def _attach_sender(self, token, flow):
        # Once started, the launcher has connected everything: a new
        # connection now could only be a stranger's, whose stream would never
        # end and so would hold back the port's end of stream.
        if self.owner.running:
            self._refuse("sender", _S.data.PacketHeader(0, 0, 0, False, 0, token))
            raise _S.CF.Port.OccupiedPort()
        if flow is not None:
            # A sender with flow control; this port has none (policy.py): the two ends disagree.
            raise CORBA.NO_IMPLEMENT(0, CORBA.COMPLETED_NO)
        with self._lock:
            # A token attached again replaces its connection; the implicit one goes once someone attaches.
            self._links = [link for link in self._links if link.token != token and not link.implicit]
            # Numbered per component, across its provides ports, in attach order (the C++ runtime's).
            self._links.append(_Link(token, self.owner.next_connection_number()))

    def _detach_sender(self, token):
        link = self._link_of(token)
        if link is None or link.implicit:
            return self._refuse("sender", _S.data.PacketHeader(0, 0, 0, False, 0, token))
        link.detached = True
        if self.owner.running:
            self._check_round(None)

    def _upcall(self, header, data):
        # Refused calls return at once, to a two-way caller too, as in the C++ port;
        # a call while stopped counts as refused only, not as a call.
        if not self.owner.running:
            return self._refuse("sender", header)
        arrived_ns = self.traffic.count(len(data))
        link = self._link_of(header.connection_token)
        if header.end_of_stream:
            return self._end_of_stream(link, header)
        place = link.window.place(header.link_sequence) if link else self._stranger_place(header.link_sequence)
        if self._length and len(data) != self._length:
            self._refuse("length", header)
            if link and place == INSIDE:  # the sender's number is used up: end of stream must not wait for it
                self._finish(link, header.link_sequence)
            return
        if place == AHEAD:
            return self._refuse("sequence", header)
        if link is None:
            return self._refuse("sender", header)
        if place == BEHIND:
            with self._lock:
                self.duplicates += 1
            return
        with self._lock:
            full = link.calls >= self._max_calls
            link.calls += not full
        if full:
            self._refuse("threads", header)
            return self._finish(link, header.link_sequence)
        self.traffic.count_latency(header, arrived_ns)
        try:
            self.handler(header, data)
        except CORBA.Exception as exc:  # forwarding failed: the peer downstream is gone or refused it
            self.owner.fail(f"port {self.name}: forwarding failed: {describe(exc)}")
        except Exception as exc:  # a bug in the handler; reported, as the C++ port does
            self.owner.fail(f"port {self.name}: {type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                link.calls -= 1
        self.owner.packet_done()
        self._finish(link, header.link_sequence)

    def _end_of_stream(self, link, header):
        place = link.window.place(header.link_sequence) if link else AHEAD
        with self._lock:
            taken = link is not None and place == INSIDE and not link.pending
            if taken:
                link.pending, link.eos_link, link.eos_header = True, header.link_sequence, header
        if not taken:
            return self._refuse("eos", header)
        self._check_end(link, link.window.prefix)

    def _finish(self, link, n):
        self._check_end(link, link.window.finish(n))

    def _check_end(self, link, prefix):
        with self._lock:
            if link.eos_link is None or prefix < link.eos_link:
                return
            marker, header = link.eos_link, link.eos_header
            link.eos_link = link.eos_header = None
            link.ended += 1
            link.pending = False
        # The marker's own number is finished too: the next stream's packets come after it.
        link.window.finish(marker)
        self._check_round(header)

    def _check_round(self, header):
        """The port's stream ends once every live connection has ended one
        stream more than the rounds before."""
        while True:
            with self._lock:
                live = [link for link in self._links if not link.detached]
                if not live or any(link.ended <= self._rounds for link in live):
                    return
                self._rounds += 1
            try:
                self.owner.in_port_ended(self, header)
            except CORBA.Exception as exc:
                self.owner.fail(f"port {self.name}: forwarding end of stream failed: {describe(exc)}")


# ---------------------------------------------------------------------- uses


class _QueuedOneway:
    """sync = none: the caller only queues the packet; one sender thread
    issues the oneways in queue order, so the client never reorders."""

    def __init__(self, ref, depth, on_error):
        self._ref, self._on_error = ref, on_error
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
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


class _Connection:
    """One connection of a uses port: its peer, its token, its own link
    numbering, how it sends (the port's call and sync), and under fanout
    parallel or drop its own queue of `fanout_depth` packets and sender
    thread. Its counts are what `<name>.connections.json` reports: sent
    (delivered to the peer's ORB; under sync none, to its sender thread),
    dropped (fanout drop: its queue was full), unsent (taken but never
    delivered: the peer failed, or the connection was closed, which gives
    up its queue as the C++ port does), queue_peak (the most packets its fan-out
    queue held; at most fanout_depth, an end of stream over it not counted),
    blocked_ns (time a pushing thread waited on it: the call itself under
    sequential, a full queue under parallel)."""

    def __init__(self, port, connection_id, peer, token, settings):
        self.port, self.id, self.peer, self.token = port, connection_id, peer, token
        self.call, self.sync, self.fanout = settings["call"], settings["sync"], settings["fanout"]
        self.depth = settings["fanout_depth"]
        # The link stamp, in send order (sync none) or queue order; and the fan-out queue's state.
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # the queue gained or lost a packet, or the sender went idle
        self.count_lock = threading.Lock()
        self.next_link = 0
        self.sent = self.dropped = self.unsent = self.queue_peak = self.blocked_ns = 0
        self.dropped_in_stream = 0  # since its last end of stream: what its end of stream leaves out
        self.failed = False
        self.queued = None
        if self.call == "oneway" and self.sync == "none":
            self.queued = _QueuedOneway(peer, settings["sync_none_depth"], self._failed)
        self.fanned = self.fanout != "sequential"
        self.pending: collections.deque = collections.deque()  # the fan-out queue
        self.sending = self.closing = False
        if self.fanned:
            threading.Thread(target=self._drain, name=f"fanout-{self.id}", daemon=True).start()

    def take(self, header, samples):
        """Sends (sequential) or queues one packet; returns the CORBA
        exception a sequential send met, if any. A closed connection (a push
        that took it before disconnectPort removed it) counts it unsent."""
        if not self.fanned:
            t0 = time.monotonic_ns()
            with self.lock:
                if self.closing:
                    self._add(unsent=1)
                    return None
                h = _header(header, self.next_link, self.token)
                self.next_link += 1
                if self.queued is not None:  # sync none: stamped in its queue's order
                    return self._deliver(h, samples)
            return self._deliver(h, samples, since=t0)
        with self.lock:
            if self.closing:
                self._add(unsent=1)
                return None
            if len(self.pending) >= self.depth:
                if self.fanout == "drop":
                    # No link number taken: the receiver waits for none that never comes.
                    self._add(dropped=1)
                    self.dropped_in_stream += 1
                    return None
                t0 = time.monotonic_ns()  # parallel: wait for room; the other connections have theirs
                self.changed.wait_for(lambda: len(self.pending) < self.depth or self.closing)
                self._add(blocked_ns=time.monotonic_ns() - t0)
                if self.closing:
                    self._add(unsent=1)
                    return None
            self._enqueue(_header(header, self.next_link, self.token), samples)
            self.queue_peak = max(self.queue_peak, len(self.pending))
        return None

    def _enqueue(self, h, samples):
        """Under the lock: onto the fan-out queue, numbered."""
        self.pending.append((h, samples))
        self.next_link += 1
        self.changed.notify_all()

    def end_stream(self, header, count):
        """End of stream after every packet queued before it, announcing the
        packets this connection carried in the stream (count, less what it
        dropped). Under fanout parallel or drop it is only queued, even onto
        a full queue (it never waits for room, so a slow connection holds
        back no other's end), and never dropped: flush() waits for it."""
        with self.lock:
            if self.closing:
                return None  # disconnected: the receiver forgot it and waits for no end
            carried = max(0, count - self.dropped_in_stream)
            self.dropped_in_stream = 0
            eos = _header(header, self.next_link, self.token, end_of_stream=True, sequence_number=carried)
            if self.fanned:
                return self._enqueue(eos, self.port.empty_samples())
            self.next_link += 1
            if self.queued is not None:
                return self._deliver(eos, self.port.empty_samples())
        exc = self._deliver(eos, self.port.empty_samples())
        if exc is not None:
            self._failed(exc)

    def flush(self):
        """Returns once every packet taken has left this process."""
        with self.lock:
            self.changed.wait_for(lambda: not self.pending and not self.sending)
        if self.queued is not None:
            self.queued.flush()

    def close(self):
        """Gives up what is still queued, counted unsent (a slow peer holds
        back no disconnect), and ends the sender threads; a packet already
        in its call is counted as that call ends."""
        with self.lock:
            self.closing = True
            self._add(unsent=sum(1 for h, _ in self.pending if not h.end_of_stream))
            self.pending.clear()
            self.changed.notify_all()
        if self.queued is not None:
            self.queued.close()

    def _deliver(self, h, samples, since=None):
        """One packet to the peer as the port's call and sync say; the
        CORBA exception if it did not go. since: when the caller began to
        wait on this connection (sequential), for blocked_ns."""
        counted = 0 if h.end_of_stream else 1
        if self.failed:
            self._add(unsent=counted)
            return None
        try:
            if self.queued is not None:
                self.queued.send(h, samples)
            elif self.call == "twoway" or self.sync == "target":
                self.peer.pushPacket(h, samples)
            else:
                self.peer.pushPacketOneway(h, samples)
                if self.sync == "server":
                    self.peer.syncMarker()
        except CORBA.Exception as exc:
            self._add(unsent=counted, **self._waited(since))
            return exc
        self._add(sent=counted, **self._waited(since))
        return None

    @staticmethod
    def _waited(since):
        return {} if since is None else {"blocked_ns": time.monotonic_ns() - since}

    def _drain(self):
        """fanout parallel or drop: this connection's sender thread."""
        while True:
            with self.lock:
                self.changed.wait_for(lambda: self.pending or self.closing)
                if not self.pending:
                    return
                item = self.pending.popleft()
                self.sending = True
                self.changed.notify_all()
            try:
                exc = self._deliver(*item)
                if exc is not None:
                    self._failed(exc)
            finally:
                with self.lock:
                    self.sending = False
                    self.changed.notify_all()

    def _add(self, **counts):
        with self.count_lock:
            for key, n in counts.items():
                setattr(self, key, getattr(self, key) + n)

    def _failed(self, exc):
        """The peer is gone or refused: reported once; what comes after is unsent."""
        if not self.failed:
            self.failed = True
            self.port.owner.fail(f"port {self.port.name}: forwarding failed on {self.id}: {describe(exc)}")

    def counts(self):
        with self.count_lock:
            return {
                "port": self.port.name,
                "connection_id": self.id,
                "fanout": self.fanout,
                "sent": self.sent,
                "dropped": self.dropped,
                "unsent": self.unsent,
                "queue_peak": self.queue_peak,
                "blocked_ns": self.blocked_ns,
            }


class OutPort(_S.ExtendedCF__POA.QueryablePort):  # type: ignore[name-defined]  # omniORBpy's skeleton, generated
    """A uses port, a REDHAWK QueryablePort: `connections` answers the live
    ones in connect order (id and the port each sends to); CF::Port's connectPort/disconnectPort, any number of
    connections (an id already connected: OccupiedPort; disconnectPort of
    an unknown id: InvalidPort), and push(header, samples), which gives the
    packet to every connection, each stamping its own next link sequence
    (0, 1, 2, ...) and token (drawn at connect and handed to the receiving
    port with attachSender), and sending with the port's call and sync.
    How the connections share a packet is the port's `fanout`:
    sequential (one after another in connect order, the caller waiting for
    each), parallel (a sender thread and a queue of `fanout_depth` per
    connection; push returns once every queue took the packet) or drop (as
    parallel, but a full queue drops the packet for its connection only,
    counted).
    Without a connection a packet goes nowhere: that is how a last stage ends
    a pipeline."""

    def __init__(self, owner, name, sample_type, follows_run=False, description=""):
        if sample_type not in SAMPLE_TYPES:
            raise ValueError(f"port {name}: sample type {sample_type!r} is not one of {', '.join(SAMPLE_TYPES)}")
        self.owner, self.name, self.sample_type = owner, name, sample_type
        self.follows_run, self.description = follows_run, description
        policy.declare(owner.properties, name, policy.USES)
        self._interface = getattr(_S.data, SAMPLE_TYPES[sample_type])
        self._ref = None
        self._lock = threading.Lock()  # the connection list
        self._connections: list[_Connection] = []
        self._gone: list[_Connection] = []  # disconnected ones, whose counts still go in the sidecar

    def reference(self):
        if self._ref is None:
            poa = self.owner.context.services.port_poa(False)
            poa.activate_object(self)
            self._ref = poa.servant_to_reference(self)
        return self._ref

    @property
    def repository_id(self):
        """The repository id of the data interface it uses (CF::PortSet's repid)."""
        return self._interface._NP_RepositoryId

    @property
    def connected(self):
        return bool(self._connections)

    # ExtendedCF::QueryablePort
    def _get_connections(self):
        with self._lock:
            return [_S.ExtendedCF.UsesConnection(c.id, c.peer) for c in self._connections]

    def empty_samples(self):
        return b"" if self.sample_type == "octet" else []

    # CF::Port
    def connectPort(self, connection, connectionId):
        with self._lock:
            if any(c.id == connectionId for c in self._connections):
                raise _S.CF.Port.OccupiedPort()
            if connection is None:
                raise _S.CF.Port.InvalidPort(1, "nil connection")
            try:
                peer = connection._narrow(self._interface)
            except CORBA.Exception as exc:
                raise _S.CF.Port.InvalidPort(1, f"cannot reach the object to connect: {describe(exc)}") from exc
            if peer is None:
                raise _S.CF.Port.InvalidPort(1, f"not a {SAMPLE_TYPES[self.sample_type]} data port")
            # A fresh token for the connection, from the kernel's entropy, never 0 (a receiving port
            # with no sender has 0): the receiver takes only packets that carry it.
            token = secrets.randbits(64) or 1
            try:
                peer.attachSender(token, None)  # no flow control: no signals to send back
            except CORBA.Exception as exc:
                if isinstance(exc, _S.CF.Port.OccupiedPort):
                    raise  # the receiver has started: it takes no new sender
                raise _S.CF.Port.InvalidPort(2, f"the receiving port did not take the sender: {describe(exc)}") from exc
            # One port, one setting: every connection takes the port's keys as they are now.
            props = self.owner.properties
            settings = {key: props[f"{self.name}.{key}"] for key in policy.CONNECTION_SETTINGS}
            self._connections.append(_Connection(self, connectionId, peer, token, settings))

    def disconnectPort(self, connectionId):
        with self._lock:
            conn = next((c for c in self._connections if c.id == connectionId), None)
            if conn is None:
                raise _S.CF.Port.InvalidPort(3, f"no connection '{connectionId}' on port {self.name}")
            self._connections.remove(conn)
            self._gone.append(conn)
        conn.close()
        try:
            # The receiver forgets the connection, so that it does not wait for its end of stream.
            conn.peer.detachSender(conn.token)
        except CORBA.Exception:
            pass  # a receiver that is gone (or knows no such call) has nothing to forget

    def disconnect(self):
        """Drops every connection (releaseObject)."""
        for conn in list(self._connections):
            try:
                self.disconnectPort(conn.id)
            except _S.CF.Port.InvalidPort:
                pass  # disconnected meanwhile

    # Sending
    def push(self, header, samples):
        """Gives one packet to every connection as the port's fanout says;
        raises the first CORBA exception a sequential send met, once every
        connection has had the packet (the in-port reports it), and
        PacketTooLarge (unsent) if it does not fit in a message
        (message_limit.py)."""
        connections = list(self._connections)  # as they are now, even if one is dropped meanwhile
        if not connections:
            return
        check_fits(self.name, len(samples), self.sample_type, self.owner.context.services.message_limit)
        failure = None
        for conn in connections:
            exc = conn.take(header, samples)
            failure = failure or exc
        if failure is not None:
            raise failure

    def send_end_of_stream(self, header, count):
        """Sends end of stream on every connection, after its queued packets,
        announcing the `count` packets of the stream less what that
        connection dropped (header: the one that came in, for its stream id
        and send time), then waits until every packet has left this process."""
        connections = list(self._connections)
        for conn in connections:
            conn.end_stream(header, count)
        for conn in connections:  # each has its end of stream queued already: a slow one holds back none
            conn.flush()

    def connection_counts(self):
        """Every connection's counts, the disconnected ones' too, in connect order."""
        with self._lock:
            return [c.counts() for c in self._gone + self._connections]
