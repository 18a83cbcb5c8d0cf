// splitmix64: a 64-bit integer mixed into a pseudo-random one, fixed by its
// input, so that the same number always gives the same "data" (a stage's
// work jitter, the producer's seeded noise) and a user can compute it again
// (numpy with uint64 arithmetic, which wraps as this does).
#pragma once

#include <cstdint>

namespace scabench {

constexpr uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace scabench
