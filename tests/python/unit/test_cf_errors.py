"""The CF error number a CF exception carries (components/cf_errors.py): the
enum of CF_E* values in the standard's order, each POSIX errno value named
as the CF names it, and a Python component's StartError and StopError with
the value chosen for what failed. In this process, without an ORB: the
servant's methods are called as the ORB would call them (over real CORBA:
system/test_cf_wire.py)."""

import errno

import pytest
from omniORB import CORBA

from scabench.components import idl
from scabench.components.cf_errors import cf_error, cf_error_of
from scabench.components.component import Component, ComponentContext

CF = idl.load().CF

# SCA 2.2.2's ErrorNumberType, in its order: the position is the value on the wire.
STANDARD_ORDER = [
    "CF_NOTSET",
    "CF_E2BIG",
    "CF_EACCES",
    "CF_EAGAIN",
    "CF_EBADF",
    "CF_EBADMSG",
    "CF_EBUSY",
    "CF_ECANCELED",
    "CF_ECHILD",
    "CF_EDEADLK",
    "CF_EDOM",
    "CF_EEXIST",
    "CF_EFAULT",
    "CF_EFBIG",
    "CF_EINPROGRESS",
    "CF_EINTR",
    "CF_EINVAL",
    "CF_EIO",
    "CF_EISDIR",
    "CF_EMFILE",
    "CF_EMLINK",
    "CF_EMSGSIZE",
    "CF_ENAMETOOLONG",
    "CF_ENFILE",
    "CF_ENODEV",
    "CF_ENOENT",
    "CF_ENOEXEC",
    "CF_ENOLCK",
    "CF_ENOMEM",
    "CF_ENOSPC",
    "CF_ENOSYS",
    "CF_ENOTDIR",
    "CF_ENOTEMPTY",
    "CF_ENOTSUP",
    "CF_ENOTTY",
    "CF_ENXIO",
    "CF_EPERM",
    "CF_EPIPE",
    "CF_ERANGE",
    "CF_EROFS",
    "CF_ESPIPE",
    "CF_ESRCH",
    "CF_ETIMEDOUT",
    "CF_EXDEV",
]


def test_the_error_number_is_the_standards_enum_in_its_order():
    assert [getattr(CF, name)._v for name in STANDARD_ORDER] == list(range(len(STANDARD_ORDER)))
    assert CF._tc_ErrorNumberType.kind() == CORBA.tk_enum


@pytest.mark.parametrize("name", STANDARD_ORDER[1:])
def test_each_posix_errno_is_named_as_the_cf_names_it(name):
    assert cf_error(getattr(errno, name[len("CF_") :])) == getattr(CF, name)


def test_what_has_no_cf_name_is_notset():
    assert cf_error(errno.ECONNREFUSED) == CF.CF_NOTSET and cf_error(None) == CF.CF_NOTSET
    assert cf_error_of(RuntimeError("x")) == CF.CF_NOTSET


def test_a_failure_is_read_for_what_happened():
    assert cf_error_of(FileNotFoundError(errno.ENOENT, "gone")) == CF.CF_ENOENT
    assert cf_error_of(OSError(errno.ENOEXEC, "Exec format error")) == CF.CF_ENOEXEC
    assert cf_error_of(ValueError("bad")) == CF.CF_EINVAL
    assert cf_error_of(MemoryError()) == CF.CF_ENOMEM
    assert cf_error_of(CORBA.TIMEOUT()) == CF.CF_ETIMEDOUT
    assert cf_error_of(CORBA.TRANSIENT()) == CF.CF_EPIPE


class Failing(Component):
    """on_start raises what `start_fails` holds; on_stop, `stop_fails`."""

    def __init__(self, context):
        super().__init__(context)
        self.properties.declare("level", 1, "a value to initialize")
        self.start_fails: Exception | None = None
        self.stop_fails: Exception | None = None

    def on_start(self):
        if self.start_fails:
            raise self.start_fails

    def on_stop(self):
        if self.stop_fails:
            raise self.stop_fails


@pytest.mark.parametrize(
    ("failure", "number"),
    [
        (FileNotFoundError(errno.ENOENT, "no such file"), "CF_ENOENT"),
        (ValueError("level must be even"), "CF_EINVAL"),
        (RuntimeError("not ready"), "CF_NOTSET"),
    ],
)
def test_a_python_components_start_error_carries_the_number_of_what_failed(failure, number):
    c = Failing(ComponentContext("f"))
    c.start_fails = failure
    with pytest.raises(CF.Resource.StartError) as failed:
        c.start()
    assert failed.value.errorNumber == getattr(CF, number) and not c._get_started()


def test_a_python_components_stop_error_carries_the_number():
    c = Failing(ComponentContext("f"))
    c.start()
    c.stop_fails = ValueError("cannot stop cleanly")
    with pytest.raises(CF.Resource.StopError) as failed:
        c.stop()
    assert failed.value.errorNumber == CF.CF_EINVAL and not c._get_started()


def test_initial_values_come_once_and_before_initialize():
    c = Failing(ComponentContext("f"))
    with pytest.raises(CF.PropertySet.InvalidConfiguration):
        c.initializeProperties([CF.DataType("level", CORBA.Any(CORBA.TC_string, "high"))])
    c.initializeProperties([CF.DataType("level", CORBA.Any(CORBA.TC_long, 7))])  # a refused call did not count
    assert c.properties["level"] == 7
    with pytest.raises(CF.PropertyEmitter.AlreadyInitialized):
        c.initializeProperties([])
    late = Failing(ComponentContext("g"))
    late.initialize()
    with pytest.raises(CF.PropertyEmitter.AlreadyInitialized):
        late.initializeProperties([])
