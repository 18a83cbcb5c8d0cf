"""The CF error number (CF::ErrorNumberType, an enum of CF_E* values) that a
CF exception carries: chosen here, in one place, for what happened, so that a
tool compiled from the standard's IDL reads a meaning it knows. The CF_E*
values are named after the POSIX errno values, so the table is the IDL's own
enum matched with the errno module by name; an errno value without a CF_E*
counterpart, and a failure that is no system error, is CF_NOTSET. The C++
runtime's counterpart is cpp/runtime/include/scabench/runtime/cf_errors.hpp.
"""

import errno
from typing import Any

from omniORB import CORBA

from scabench.components import idl

_CF = idl.load().CF

# POSIX errno value -> CF_E*, for every CF_E* name that errno knows (all of them on Linux).
_BY_ERRNO = {
    getattr(errno, name[len("CF_") :]): getattr(_CF, name)
    for name in dir(_CF)
    if name.startswith("CF_E") and hasattr(errno, name[len("CF_") :])
}


def cf_error(posix_errno: int | None) -> Any:
    """A POSIX errno value as the CF names it (errno.ENOENT: CF_ENOENT);
    CF_NOTSET for None, or for one the CF has no name for."""
    return _BY_ERRNO.get(posix_errno, _CF.CF_NOTSET) if posix_errno is not None else _CF.CF_NOTSET


def cf_error_of(exc: BaseException) -> Any:
    """The CF error number of a failure met in a component or the node: an
    OSError by its errno, a bad value (ValueError, TypeError) CF_EINVAL,
    MemoryError CF_ENOMEM, TimeoutError CF_ETIMEDOUT; a CORBA exception from a
    peer as the C++ runtime reads it (TIMEOUT CF_ETIMEDOUT, NO_MEMORY CF_ENOMEM,
    BAD_PARAM CF_EINVAL, the peer gone CF_EPIPE); anything else CF_NOTSET."""
    if isinstance(exc, OSError):
        if exc.errno is None and isinstance(exc, TimeoutError):
            return _CF.CF_ETIMEDOUT
        return cf_error(exc.errno)
    if isinstance(exc, (ValueError, TypeError)):
        return _CF.CF_EINVAL
    if isinstance(exc, MemoryError):
        return _CF.CF_ENOMEM
    if isinstance(exc, CORBA.TIMEOUT):
        return _CF.CF_ETIMEDOUT
    if isinstance(exc, CORBA.NO_MEMORY):
        return _CF.CF_ENOMEM
    if isinstance(exc, CORBA.BAD_PARAM):
        return _CF.CF_EINVAL
    if isinstance(exc, (CORBA.COMM_FAILURE, CORBA.TRANSIENT, CORBA.OBJECT_NOT_EXIST)):
        return _CF.CF_EPIPE
    return _CF.CF_NOTSET
