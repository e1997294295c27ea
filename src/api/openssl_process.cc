#include "api/openssl_process.h"

#include <openssl/crypto.h>

namespace corral::api {

void SkipOpenSslCleanupAtExit() { OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr); }

}  // namespace corral::api
