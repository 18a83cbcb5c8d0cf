"""Bytes on the wire, measured: a relay between an ORB client and its server
that forwards every byte unchanged and cuts the stream it forwards into GIOP
messages, so each message's size is the number of bytes that actually went
through the socket, not a figure worked out from the CDR rules.

A GIOP message is a 12-byte header ("GIOP", version, flags, type, body size)
and the body. The relay also reads the GIOP 1.2 Request and Reply headers, to
tell the operation and to split each message into its envelope (GIOP header,
request or reply header, padding) and its CDR body (the arguments)."""

import builtins
import socket
import struct
import threading
from dataclasses import dataclass, field

MESSAGE_TYPES = {
    0: "Request",
    1: "Reply",
    2: "CancelRequest",
    3: "LocateRequest",
    4: "LocateReply",
    5: "CloseConnection",
    6: "MessageError",
    7: "Fragment",
}
GIOP_HEADER = 12
FRAGMENT_HEADER = GIOP_HEADER + 4  # GIOP 1.2 fragments repeat the request id
_HEAD_KEEP = 4096  # enough of each message to read its request or reply header


@dataclass
class WireMessage:
    direction: str  # "request" (client to server) or "reply"
    type: str
    version: tuple
    bytes: int = 0  # every byte of every frame, headers included
    frames: int = 0
    first_frame_bytes: int = 0
    head: builtins.bytes = b""  # builtins: `bytes` above names the count
    # Filled by parse_header() for GIOP 1.2 Requests and Replies.
    request_id: int | None = None
    operation: str | None = None
    body_offset: int | None = None
    body_bytes: int | None = None
    oneway: bool = False
    fields: dict = field(default_factory=dict)


class _Reader:
    """CDR reads with alignment relative to the start of the message."""

    def __init__(self, data, little_endian, pos=GIOP_HEADER):
        self.data, self.pos = data, pos
        self.order = "<" if little_endian else ">"

    def align(self, n):
        self.pos = (self.pos + n - 1) // n * n

    def _unpack(self, fmt, size):
        self.align(size)
        if self.pos + size > len(self.data):
            raise ValueError("header runs past the bytes kept")
        (value,) = struct.unpack_from(self.order + fmt, self.data, self.pos)
        self.pos += size
        return value

    def ulong(self):
        return self._unpack("I", 4)

    def ushort(self):
        return self._unpack("H", 2)

    def octets(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("header runs past the bytes kept")
        value = self.data[self.pos : self.pos + n]
        self.pos += n
        return value

    def octet_sequence(self):
        return self.octets(self.ulong())

    def string(self):
        return self.octet_sequence().rstrip(b"\0").decode("latin-1")

    def service_contexts(self):
        return [(self.ulong(), len(self.octet_sequence())) for _ in range(self.ulong())]


def parse_header(message):
    """Reads a GIOP 1.2 Request or Reply header; sets the operation (requests),
    the request id, where the body starts and how many body bytes there are."""
    if message.version != (1, 2) or message.type not in ("Request", "Reply"):
        return message
    little = bool(message.head[6] & 1)
    r = _Reader(message.head, little)
    message.request_id = r.ulong()
    if message.type == "Request":
        flags = r.octets(4)[0]  # response flags + 3 reserved octets
        message.oneway = flags == 0
        disposition = r.ushort()
        if disposition != 0:  # only KeyAddr is used between two omniORBs
            return message
        message.fields["object_key_bytes"] = len(r.octet_sequence())
        message.operation = r.string()
    else:
        message.fields["reply_status"] = r.ulong()
    message.fields["service_contexts"] = r.service_contexts()
    header_end = r.pos
    # GIOP 1.2 aligns a non-empty body on 8 octets from the message start.
    if message.first_frame_bytes > header_end:
        message.body_offset = (header_end + 7) // 8 * 8
        fragment_payload = (message.bytes - message.first_frame_bytes) - FRAGMENT_HEADER * (message.frames - 1)
        message.body_bytes = message.first_frame_bytes - message.body_offset + fragment_payload
    else:
        message.body_offset, message.body_bytes = header_end, 0
    message.fields["header_end"] = header_end
    return message


class GiopStreamParser:
    """Cuts one direction of a connection into GIOP messages as bytes pass."""

    def __init__(self, direction, sink):
        self.direction, self.sink = direction, sink
        self._header = b""
        self._remaining = 0  # bytes left in the current frame
        self._current = None
        self._in_first_frame = False
        self._fragment_continues = False

    def feed(self, data):
        view = memoryview(data)
        while view:
            if self._remaining == 0:
                need = GIOP_HEADER - len(self._header)
                self._header += bytes(view[:need])
                view = view[need:]
                if len(self._header) < GIOP_HEADER:
                    return
                self._start_frame(self._header)
                self._header = b""
                continue
            take = min(self._remaining, len(view))
            assert self._current is not None  # a frame's body follows its header
            if self._in_first_frame and len(self._current.head) < _HEAD_KEEP:
                self._current.head += bytes(view[: min(take, _HEAD_KEEP - len(self._current.head))])
            self._remaining -= take
            view = view[take:]
            if self._remaining == 0:
                self._frame_done()

    def _start_frame(self, header):
        if header[:4] != b"GIOP":
            raise ValueError(f"{self.direction}: not a GIOP message: {header[:4]!r}")
        version, flags, msg_type = (header[4], header[5]), header[6], header[7]
        size = struct.unpack_from("<I" if flags & 1 else ">I", header, 8)[0]
        type_name = MESSAGE_TYPES.get(msg_type, f"type {msg_type}")
        if type_name == "Fragment" and self._current is not None:
            self._current.frames += 1
            self._current.bytes += GIOP_HEADER + size
            self._fragment_continues = bool(flags & 2)
            self._in_first_frame = False
        else:
            self._current = WireMessage(
                self.direction,
                type_name,
                version,
                bytes=GIOP_HEADER + size,
                frames=1,
                first_frame_bytes=GIOP_HEADER + size,
                head=header,
            )
            self._fragment_continues = bool(flags & 2)
            self._in_first_frame = True
        self._remaining = size
        if size == 0:
            self._frame_done()

    def _frame_done(self):
        if not self._fragment_continues and self._current is not None:
            self.sink(parse_header(self._current))
            self._current = None


class GiopRelay:
    """Listens on `listen` and forwards each accepted connection to
    `upstream` (both socket addresses of `family`), recording every GIOP
    message in both directions in `messages`, in the order they completed."""

    def __init__(self, family, listen, upstream):
        self.family, self.listen_address, self.upstream = family, listen, upstream
        self.messages = []
        self.errors = []
        self._lock = threading.Lock()
        self._sockets = []
        self._server = socket.socket(family, socket.SOCK_STREAM)
        self._server.bind(listen)
        self._server.listen(4)
        self.address = self._server.getsockname()
        self._accepter = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self):
        self._accepter.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for s in [self._server] + self._sockets:
            try:
                s.close()
            except OSError:
                pass

    def _record(self, message):
        with self._lock:
            self.messages.append(message)

    def _accept(self):
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            server = socket.socket(self.family, socket.SOCK_STREAM)
            server.connect(self.upstream)
            self._sockets += [client, server]
            for src, dst, direction in ((client, server, "request"), (server, client, "reply")):
                threading.Thread(
                    target=self._pump, args=(src, dst, GiopStreamParser(direction, self._record)), daemon=True
                ).start()

    def _pump(self, src, dst, parser):
        try:
            while data := src.recv(1 << 20):
                # Record before forwarding: once the client has its reply,
                # every message of that exchange is in `messages`.
                parser.feed(data)
                dst.sendall(data)
        except (OSError, ValueError) as exc:
            self.errors.append(str(exc))
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def snapshot(self):
        with self._lock:
            return list(self.messages)


def exchanges(messages):
    """Pairs each Request with its Reply (by request id); oneways have none.
    Returns dicts in request order."""
    replies = {m.request_id: m for m in messages if m.type == "Reply" and m.request_id is not None}
    out = []
    for m in messages:
        if m.type != "Request":
            continue
        reply = replies.get(m.request_id)
        out.append({"operation": m.operation, "oneway": m.oneway, "request": m, "reply": reply})
    return out
