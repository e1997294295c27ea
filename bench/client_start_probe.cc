// The start cost of a command-line client: creates an HTTP client and exits. It links
// corral_api and corral_core as the `corral` binary does, authentication (static libcrypto and
// libmunge) and TLS (static libssl) included, so `hyperfine -N` on it against a trivial
// program shows what our libraries add to every `sbatch` (DESIGN.md, "Process start cost").
//
//   hyperfine -N --warmup 50 'build/bench/client_start_probe'
//
// With `--get URL [CA_FILE]` it also sends one GET and exits 0 on a 2xx: a CLI call's whole
// client cost, over plain HTTP or HTTPS (a fresh process, so a full TLS handshake each time);
// bench/http_probe_server.cc serves both.
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "api/auth.h"
#include "api/http.h"

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--get") == 0) {
    std::string url = argv[2];
    size_t path = url.find('/', url.find("//") + 2);
    corral::api::HttpClientOptions options;
    if (argc >= 4) options.ca_file = argv[3];
    auto c = corral::api::HttpClient::Create(url.substr(0, path), options);
    if (!c.has_value()) return 1;
    auto r = (*c)->Send("GET", path == std::string::npos ? "/" : url.substr(path), "");
    if (!r.has_value()) std::fprintf(stderr, "%s\n", r.error().message.c_str());
    return r.has_value() && r->status / 100 == 2 ? 0 : 3;
  }
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
