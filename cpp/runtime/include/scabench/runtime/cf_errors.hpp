// The CF error number (CF::ErrorNumberType, an enum of CF_E* values) that a
// CF exception carries: chosen here, in one place, for what happened, so that
// a tool compiled from the standard's IDL reads a meaning it knows. The
// CF_E* values are named after the POSIX errno values; one that has no
// CF_E* counterpart, and a failure that is no system error, is CF_NOTSET.
#pragma once

#include <exception>

#include "cf.hh"

namespace scabench {

// A POSIX errno value as the CF names it (ENOENT: CF_ENOENT).
CF::ErrorNumberType cfErrorNumber(int posixErrno);
// A failure thrown in the runtime or a component: a std::system_error by its
// errno, a bad value (std::invalid_argument, std::domain_error) CF_EINVAL,
// std::out_of_range CF_ERANGE, std::bad_alloc CF_ENOMEM.
CF::ErrorNumberType cfErrorNumber(const std::exception& ex);
// A CORBA exception met while starting or stopping (a peer's): TIMEOUT
// CF_ETIMEDOUT, NO_MEMORY CF_ENOMEM, BAD_PARAM CF_EINVAL, the peer gone
// (COMM_FAILURE, TRANSIENT, OBJECT_NOT_EXIST) CF_EPIPE.
CF::ErrorNumberType cfErrorNumber(const CORBA::Exception& ex);

}  // namespace scabench
