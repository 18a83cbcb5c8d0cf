"""The ORB's message limit, applied by a sending port before it sends, as
the C++ runtime does (cpp/runtime/include/scabench/runtime/message_limit.hpp,
which says what omniORB itself does on either side; docs/architecture.md,
"Message limit").

A port judges every packet against its own process's giopMaxMsgSize,
wherever the peer is, and refuses one that would not fit with PacketTooLarge,
naming the limit: it is not sent, its link number not used. omniORBpy does
not say which limit its ORB took, so the program that made the ORB says:
the last -ORBgiopMaxMsgSize among its options (message_limit()).
"""

OMNIORB_DEFAULT = 2 << 20  # giopMaxMsgSize when no option sets it
# Room left in a message for everything but the samples (the GIOP request
# header, the packet header): the C++ runtime's kMessageHeaderRoom.
HEADER_ROOM = 4096
SAMPLE_BYTES = {"octet": 1, "short": 2, "float": 4, "double": 8}


class PacketTooLarge(ValueError):
    pass


def message_limit(orb_args):
    """The giopMaxMsgSize that ORB_init takes from these options: the last one given."""
    limit = OMNIORB_DEFAULT
    for option, value in zip(orb_args, orb_args[1:]):
        if option == "-ORBgiopMaxMsgSize":
            limit = int(value)
    return limit


def check_fits(port, samples, sample_type, limit):
    """Raises PacketTooLarge if `samples` samples of `sample_type` leave less
    than HEADER_ROOM of `limit`."""
    size = SAMPLE_BYTES[sample_type]
    most = max(0, limit - HEADER_ROOM) // size
    if samples > most:
        raise PacketTooLarge(
            f"port {port}: a packet of {samples} {sample_type} samples ({samples * size} bytes) "
            f"does not fit in the ORB's message limit of {limit} bytes (giopMaxMsgSize, less "
            f"{HEADER_ROOM} for the headers): at most {most} {sample_type} samples; refused before "
            "sending"
        )
