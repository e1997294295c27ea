// The transport of a step's I/O (`corral run` / `srun` inside a job): the agents on the
// step's nodes send the tasks' stdout and stderr to a small server that the `corral run`
// process runs for the step's life (agent/exec/step_output.h, cli/run.cc), and, for a
// terminal step (`srun --pty`), take task 0's input and window size from it
// (cli/step_pty.h).
//
// That server has no certificate: it is a user's process on a compute node. Both ends hold
// the step's I/O secret instead (`StepSpec::io_token`: 128 random bits that `corral run`
// makes and sends to the controller over TLS, which passes it to the agents over TLS, and
// which never appears on a command line or in what the API shows), and the connection is
// TLS 1.3 with an external pre-shared key derived from it (HMAC-SHA256 of the secret): the
// output is encrypted, with forward secrecy (a fresh ECDHE exchange each connection), and a
// peer without the secret cannot complete a handshake in either direction, so it can neither
// send output into the step nor receive it.
//
// A terminal's input: the agent asks `GET /pty?task=0&from=N` (a long poll) and gets the
// frames of the input stream from byte N on, N counting the stream's bytes since the step
// began (so an answer lost with its connection is asked for again, and nothing is lost or
// repeated). A frame is one type byte, a 4-byte big-endian length, and that many bytes:
//   'd'  bytes typed (at most kPtyMaxFrameData)
//   'w'  a window size: rows and columns, 2 bytes each, big-endian, each 1..kPtyMaxDimension
// The agent takes the server's bytes as hostile: a frame of another type or size ends the
// input (DecodePtyFrames).
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/http.h"
#include "core/result.h"

namespace corral::api {

// The server's TLS options for a step whose I/O secret is `secret`.
HttpTlsOptions StepIoServerTls(std::string_view secret);

// A client's options for the same step's server (`https://` URL).
HttpClientOptions StepIoClientOptions(std::string_view secret);

inline constexpr size_t kPtyMaxFrameData = 4096;
inline constexpr uint16_t kPtyMaxDimension = 4096;
// The most input one answer carries (whole frames; the agent refuses a larger body).
inline constexpr size_t kPtyMaxAnswer = 64 * 1024;

struct PtyFrame {
  enum class Kind { kData, kResize };
  Kind kind = Kind::kData;
  std::string data;   // kData
  uint16_t rows = 0;  // kResize
  uint16_t cols = 0;
  bool operator==(const PtyFrame&) const = default;
};

// The frame's bytes. Requires: data at most kPtyMaxFrameData; rows and cols valid for a
// resize (callers clamp them).
std::string EncodePtyFrame(const PtyFrame& frame);

// Appends the whole frames at the start of `bytes` to `out` and returns how many bytes they
// took (a partial frame at the end is left). Returns kInvalidArgument naming the problem for
// an unknown type, a data frame over kPtyMaxFrameData or empty, or a window size that is not
// 4 bytes of dimensions in 1..kPtyMaxDimension.
Result<size_t> DecodePtyFrames(std::string_view bytes, std::vector<PtyFrame>* out);

}  // namespace corral::api
