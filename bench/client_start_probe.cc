// The start cost of a command-line client: creates an HTTP client and exits. It links
// corral_api and corral_core as the `corral` binary does, authentication (static libcrypto and
// libmunge) included, so `hyperfine -N` on it against a trivial program shows what our
// libraries add to every `sbatch` (DESIGN.md, "Process start cost").
//
//   hyperfine -N --warmup 50 'build/bench/client_start_probe'
#include <cstdio>
#include <ctime>

#include "api/auth.h"
#include "api/http.h"

int main(int argc, char** argv) {
  auto client = corral::api::HttpClient::Create("http://127.0.0.1:6817");
  if (!client.has_value()) return 1;
  if (argc > 1) {
    // Never taken in the measurement; keeps the authentication code (and libcrypto, libmunge)
    // in the binary as a real client has it.
    auto header = corral::api::MungeHeader(argv[1]);
    auto key = corral::api::JwtKey::FromFile(argv[1]);
    if (key.has_value()) {
      std::puts(corral::api::BearerHeader(*key, corral::api::CurrentProcessIdentity(),
                                          corral::Timestamp{})
                    .c_str());
    }
    return header.has_value() ? 0 : 2;
  }
  return 0;
}
