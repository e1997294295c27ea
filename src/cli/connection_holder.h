// The CLI's connection holder (api/connection_holder.h; docs/operations.md, "The connection
// holder"): the process that the first `corral`/Slurm-link call of a user starts for an
// https:// controller, and the hidden command it runs.
//
// Started as `/proc/self/exe __connection-holder URL CA_FILE DIR IDLE_SECONDS` in a session
// of its own, with stdio on /dev/null, no other descriptor and an environment of only the
// OpenSSL variables (SSL_CERT_FILE, SSL_CERT_DIR, OPENSSL_CONF): it holds no credential of
// its own. It exits when no client has been connected for IDLE_SECONDS, when its socket is
// removed or replaced, or at once when another holder runs for the same key.
//
// Environment: CORRAL_CONNECTION_HOLDER=0 turns it off (every call then connects itself);
// CORRAL_CONNECTION_HOLDER_IDLE_S sets the idle time of the holders it starts (default 60).
//
// Thread-safety: call from the main thread.
#pragma once

#include <string>

namespace corral::cli {

// Whether calls go through a holder (CORRAL_CONNECTION_HOLDER is not "0").
bool ConnectionHolderEnabled();

// Starts a holder for `url` verified against `ca_file` ("" = the system's CAs), listening in
// `dir`, and returns without waiting for it. Best effort: a failure only means that later
// calls connect themselves.
void StartConnectionHolder(const std::string& url, const std::string& ca_file,
                           const std::string& dir);

// `corral __connection-holder URL CA_FILE DIR IDLE_SECONDS` (argv[0] is the command's name).
int RunConnectionHolderCommand(int argc, char** argv);

}  // namespace corral::cli
