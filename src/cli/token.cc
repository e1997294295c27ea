#include "cli/token.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/scrape_token.h"
#include "cli/client.h"

namespace corral::cli {
namespace {

constexpr const char* kUsage =
    "usage: corral token --role metrics [--token-file PATH]\n"
    "  prints the cluster's scrape token, for Prometheus (its scrape config's\n"
    "  authorization.credentials_file): it reads /metrics and /metrics/targets of the\n"
    "  controller and /metrics of every agent, nothing else (docs/metrics.md).\n"
    "  --token-file  the token file ([metrics] token_file; default: CORRAL_METRICS_TOKEN_FILE,\n"
    "                else metrics.token beside CORRAL_KEY_FILE or the `corral dev` cluster's CA)\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "corral token: %s\n%s", message.c_str(), kUsage);
  return 2;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// The file's folder with "/metrics.token", or "" for "".
std::string Beside(const std::string& file) {
  if (file.empty()) return "";
  size_t slash = file.rfind('/');
  return (slash == std::string::npos ? std::string(".") : file.substr(0, slash)) + "/metrics.token";
}

}  // namespace

int RunTokenCommand(int argc, char** argv) {
  std::string role, token_file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::string value;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (a.rfind("--", 0) == 0 && i + 1 < argc) {
      value = argv[++i];
    } else {
      return Usage("unexpected argument \"" + a + "\"");
    }
    if (a == "--role") {
      role = value;
    } else if (a == "--token-file") {
      token_file = value;
    } else {
      return Usage("unknown option " + a);
    }
  }
  if (role != "metrics") {
    return Usage(role.empty() ? "--role is required" : "--role \"" + role + "\": only metrics");
  }
  if (token_file.empty()) token_file = Env("CORRAL_METRICS_TOKEN_FILE");
  if (token_file.empty()) token_file = Beside(Env("CORRAL_KEY_FILE"));
  if (token_file.empty()) {
    if (auto dev = ReadDevCluster(DevDiscoveryPath())) token_file = Beside(dev->ca_file);
  }
  if (token_file.empty()) {
    return Usage(
        "no token file: give --token-file or CORRAL_METRICS_TOKEN_FILE (or start "
        "`corral dev`)");
  }
  auto token = api::ScrapeToken::FromFile(token_file);
  if (!token) {
    std::fprintf(stderr, "corral: error: %s\n", token.error().message.c_str());
    return 1;
  }
  std::printf("%s\n", token->value().c_str());
  return 0;
}

}  // namespace corral::cli
