#include "scabench/runtime/flow.hpp"

#include <stdexcept>

namespace scabench {

FlowKind parseFlowKind(const std::string& text) {
  if (text == "none") return FlowKind::None;
  if (text == "watermarks") return FlowKind::Watermarks;
  if (text == "credits") return FlowKind::Credits;
  throw std::invalid_argument("flow '" + text + "' is not one of: none, watermarks, credits");
}

}  // namespace scabench
