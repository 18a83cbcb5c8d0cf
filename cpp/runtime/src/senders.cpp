#include "scabench/runtime/senders.hpp"

#include <stdexcept>

namespace scabench {

CallKind parseCallKind(const std::string& text) {
  if (text == "twoway") return CallKind::Twoway;
  if (text == "oneway") return CallKind::Oneway;
  throw std::invalid_argument("call '" + text + "' is not one of: twoway, oneway");
}

SyncScope parseSyncScope(const std::string& text) {
  if (text == "none") return SyncScope::None;
  if (text == "transport") return SyncScope::Transport;
  if (text == "server") return SyncScope::Server;
  if (text == "target") return SyncScope::Target;
  throw std::invalid_argument("sync '" + text + "' is not one of: none, transport, server, target");
}

}  // namespace scabench
