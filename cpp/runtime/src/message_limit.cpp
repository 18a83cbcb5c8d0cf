#include "scabench/runtime/message_limit.hpp"

#include <omniORB4/CORBA.h>

namespace scabench {

std::size_t messageLimit() { return std::size_t(omniORB::giopMaxMsgSize()); }

void checkPacketFits(const std::string& port, std::size_t samples, std::size_t sampleBytes, const char* typeName) {
  const std::size_t limit = messageLimit();
  const std::size_t room = limit > kMessageHeaderRoom ? limit - kMessageHeaderRoom : 0;
  if (samples <= room / sampleBytes) return;
  throw PacketTooLarge("port " + port + ": a packet of " + std::to_string(samples) + " " + typeName + " samples (" +
                       std::to_string(samples * sampleBytes) + " bytes) does not fit in the ORB's message limit of " +
                       std::to_string(limit) + " bytes (giopMaxMsgSize, less " + std::to_string(kMessageHeaderRoom) +
                       " for the headers): at most " + std::to_string(room / sampleBytes) + " " + typeName +
                       " samples; refused before sending");
}

void checkRingFits(const std::string& port, std::size_t samples, std::size_t sampleBytes, const char* typeName,
                   std::size_t ringBytes) {
  if (samples <= ringBytes / sampleBytes) return;
  throw PacketTooLarge("port " + port + ": a packet of " + std::to_string(samples) + " " + typeName + " samples (" +
                       std::to_string(samples * sampleBytes) +
                       " bytes) does not fit in the connection's "
                       "shared-memory ring of " +
                       std::to_string(ringBytes) + " bytes (" + port + ".shm_bytes): at most " +
                       std::to_string(ringBytes / sampleBytes) + " " + typeName + " samples; refused before sending");
}

}  // namespace scabench
