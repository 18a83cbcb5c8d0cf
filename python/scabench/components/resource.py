"""What every CF::Resource of scabench written in Python answers the same way,
as the C++ Component does (cpp/runtime/src/component.cpp): the parts of
REDHAWK 2.x's Resource that a scabench resource has no machinery for, each
answered for what it is (docs/reference/cf.md).

- Logging: one logger, named as the resource (`logger_name`), at INFO: it
  writes its events and errors and nothing else, and keeps no log records. So
  the records asked for are none, INFO is the only level it can be set to
  (another: NO_IMPLEMENT), and it takes no logging configuration (NO_IMPLEMENT).
- Property listeners: a scabench resource sends no property events, so
  registering one is NO_IMPLEMENT and none is ever there to unregister
  (InvalidIdentifier)."""

from omniORB import CORBA

from scabench.components import idl

_CF = idl.load().CF
INFO = _CF.LogLevels.INFO


def _refused():
    return CORBA.NO_IMPLEMENT(0, CORBA.COMPLETED_NO)


class ResourceAnswers:
    """Mixed into a CF::Resource servant, which sets `logger_name`."""

    logger_name: str

    # CF::PropertyEmitter's listeners
    def registerPropertyListener(self, obj, prop_ids, interval):
        raise _refused()

    def unregisterPropertyListener(self, id):
        raise _CF.InvalidIdentifier()

    # CF::LogEventConsumer: (records, howMany) for the inout count
    def retrieve_records(self, howMany, startingRecord):
        return [], 0

    def retrieve_records_by_date(self, howMany, to_timeStamp):
        return [], 0

    def retrieve_records_from_date(self, howMany, from_timeStamp):
        return [], 0

    # CF::LogConfiguration
    def _get_log_level(self):
        return INFO

    def _set_log_level(self, level):
        if level != INFO:
            raise _refused()

    def getLogLevel(self, logger_id):
        if logger_id != self.logger_name:
            raise _CF.UnknownIdentifier()
        return INFO

    def setLogLevel(self, logger_id, newLevel):
        if logger_id != self.logger_name:
            raise _CF.UnknownIdentifier()
        self._set_log_level(newLevel)

    def getNamedLoggers(self):
        return [self.logger_name]

    def resetLog(self):
        pass  # at its only level already

    def getLogConfig(self):
        return ""

    def setLogConfig(self, config_contents):
        raise _refused()

    def setLogConfigURL(self, config_url):
        raise _refused()
