// How a short-lived process (a CLI command) uses OpenSSL.
//
// Thread-safe: call from main's thread before any other thread uses OpenSSL.
#pragma once

namespace corral::api {

// Tells OpenSSL not to free its tables at exit: a command-line call ends at once and the
// kernel takes its memory back, while OpenSSL's own clean-up walks every table it made
// (measured: about 5% of a `corral queue`'s CPU time). Has effect only when called before any
// other use of OpenSSL in the process; harmless otherwise.
void SkipOpenSslCleanupAtExit();

}  // namespace corral::api
