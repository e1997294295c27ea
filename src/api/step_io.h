// The transport of a step's output (`corral run` / `srun` inside a job): the agents on the
// step's nodes send the tasks' stdout and stderr to a small server that the `corral run`
// process runs for the step's life (agent/exec/step_output.h, cli/run.cc).
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
// Thread-safe: pure functions.
#pragma once

#include <string_view>

#include "api/http.h"

namespace corral::api {

// The server's TLS options for a step whose I/O secret is `secret`.
HttpTlsOptions StepIoServerTls(std::string_view secret);

// A client's options for the same step's server (`https://` URL).
HttpClientOptions StepIoClientOptions(std::string_view secret);

}  // namespace corral::api
