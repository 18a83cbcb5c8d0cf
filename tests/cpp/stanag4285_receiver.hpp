// A STANAG 4285 receiver used only by the tests: it undoes the transmitter
// with no channel in between and known frame timing (the audio starts with
// the first frame's first sample). Carrier removal and matched filtering use
// liquid-dsp, the Viterbi decoder is libfec's.
#pragma once

#include <cstdint>
#include <vector>

#include "scabench/dsp/stanag4285.hpp"

namespace scabench::s4285::testing {

// Audio to on-air symbols: mix down from 1800 Hz, RRC matched filter, one
// sample per symbol at the known timing. Frame-aligned: symbol 256f+p is
// position p of frame f.
std::vector<cfloat> demodulate(const std::vector<int16_t>& audio);

// Symbols to user bytes: descramble, decide, depuncture, deinterleave,
// undo repetition, Viterbi-decode (coded modes), pack LSB first. The stream
// must end with enough zero bytes to flush the interleaver and the code
// (flushFrames gives how many frames); returns every byte it could decode.
std::vector<uint8_t> decode(const Mode& mode, const std::vector<cfloat>& symbols);

// Frames of zero bytes to send after the payload so that decode() returns it all.
int flushFrames(const Mode& mode);

}  // namespace scabench::s4285::testing
