#include "scabench/runtime/cf_errors.hpp"

#include <cerrno>
#include <new>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace scabench {

CF::ErrorNumberType cfErrorNumber(int posixErrno) {
  static constexpr std::pair<int, CF::ErrorNumberType> kTable[] = {
      {E2BIG, CF::CF_E2BIG},
      {EACCES, CF::CF_EACCES},
      {EAGAIN, CF::CF_EAGAIN},
      {EBADF, CF::CF_EBADF},
      {EBADMSG, CF::CF_EBADMSG},
      {EBUSY, CF::CF_EBUSY},
      {ECANCELED, CF::CF_ECANCELED},
      {ECHILD, CF::CF_ECHILD},
      {EDEADLK, CF::CF_EDEADLK},
      {EDOM, CF::CF_EDOM},
      {EEXIST, CF::CF_EEXIST},
      {EFAULT, CF::CF_EFAULT},
      {EFBIG, CF::CF_EFBIG},
      {EINPROGRESS, CF::CF_EINPROGRESS},
      {EINTR, CF::CF_EINTR},
      {EINVAL, CF::CF_EINVAL},
      {EIO, CF::CF_EIO},
      {EISDIR, CF::CF_EISDIR},
      {EMFILE, CF::CF_EMFILE},
      {EMLINK, CF::CF_EMLINK},
      {EMSGSIZE, CF::CF_EMSGSIZE},
      {ENAMETOOLONG, CF::CF_ENAMETOOLONG},
      {ENFILE, CF::CF_ENFILE},
      {ENODEV, CF::CF_ENODEV},
      {ENOENT, CF::CF_ENOENT},
      {ENOEXEC, CF::CF_ENOEXEC},
      {ENOLCK, CF::CF_ENOLCK},
      {ENOMEM, CF::CF_ENOMEM},
      {ENOSPC, CF::CF_ENOSPC},
      {ENOSYS, CF::CF_ENOSYS},
      {ENOTDIR, CF::CF_ENOTDIR},
      {ENOTEMPTY, CF::CF_ENOTEMPTY},
      {ENOTSUP, CF::CF_ENOTSUP},
      {ENOTTY, CF::CF_ENOTTY},
      {ENXIO, CF::CF_ENXIO},
      {EPERM, CF::CF_EPERM},
      {EPIPE, CF::CF_EPIPE},
      {ERANGE, CF::CF_ERANGE},
      {EROFS, CF::CF_EROFS},
      {ESPIPE, CF::CF_ESPIPE},
      {ESRCH, CF::CF_ESRCH},
      {ETIMEDOUT, CF::CF_ETIMEDOUT},
      {EXDEV, CF::CF_EXDEV},
  };
  for (const auto& [posix, cf] : kTable)
    if (posix == posixErrno) return cf;
  return CF::CF_NOTSET;
}

CF::ErrorNumberType cfErrorNumber(const std::exception& ex) {
  if (auto* sys = dynamic_cast<const std::system_error*>(&ex)) {
    if (sys->code().category() == std::generic_category() || sys->code().category() == std::system_category())
      return cfErrorNumber(sys->code().value());
    return CF::CF_NOTSET;
  }
  if (dynamic_cast<const std::invalid_argument*>(&ex) || dynamic_cast<const std::domain_error*>(&ex))
    return CF::CF_EINVAL;
  if (dynamic_cast<const std::out_of_range*>(&ex)) return CF::CF_ERANGE;
  if (dynamic_cast<const std::bad_alloc*>(&ex)) return CF::CF_ENOMEM;
  return CF::CF_NOTSET;
}

CF::ErrorNumberType cfErrorNumber(const CORBA::Exception& ex) {
  if (CORBA::TIMEOUT::_downcast(&ex)) return CF::CF_ETIMEDOUT;
  if (CORBA::NO_MEMORY::_downcast(&ex)) return CF::CF_ENOMEM;
  if (CORBA::BAD_PARAM::_downcast(&ex)) return CF::CF_EINVAL;
  if (CORBA::COMM_FAILURE::_downcast(&ex) || CORBA::TRANSIENT::_downcast(&ex) ||
      CORBA::OBJECT_NOT_EXIST::_downcast(&ex))
    return CF::CF_EPIPE;
  return CF::CF_NOTSET;
}

}  // namespace scabench
