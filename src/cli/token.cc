#include "cli/token.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/auth.h"
#include "api/token.h"
#include "cli/client.h"
#include "core/clock.h"
#include "core/duration.h"

namespace corral::cli {
namespace {

constexpr const char* kUsage =
    "usage: corral token --role metrics [--ttl TIME] [--key-file PATH]\n"
    "  prints a bearer token for Prometheus (its scrape config's authorization.credentials):\n"
    "  it reads /metrics and /metrics/targets of the controller and every agent, nothing else.\n"
    "  --ttl       how long it is valid, a Slurm time (default and most 24:00:00)\n"
    "  --key-file  the cluster's key (default: CORRAL_KEY_FILE, else the `corral dev` cluster's)\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "corral token: %s\n%s", message.c_str(), kUsage);
  return 2;
}

}  // namespace

int RunTokenCommand(int argc, char** argv) {
  std::string role, ttl_text, key_file;
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
    } else if (a == "--ttl") {
      ttl_text = value;
    } else if (a == "--key-file") {
      key_file = value;
    } else {
      return Usage("unknown option " + a);
    }
  }
  if (role != "metrics") {
    return Usage(role.empty() ? "--role is required" : "--role \"" + role + "\": only metrics");
  }
  Duration ttl = api::kLegacyMaxTokenLifetime;
  if (!ttl_text.empty()) {
    auto d = ParseSlurmDuration(ttl_text);
    if (!d || *d <= Duration(0) || *d > api::kLegacyMaxTokenLifetime) {
      return Usage("--ttl " + ttl_text + ": expected a time from 1 second to 24:00:00");
    }
    ttl = *d;
  }
  if (key_file.empty()) {
    if (const char* env = std::getenv("CORRAL_KEY_FILE"); env != nullptr) key_file = env;
  }
  if (key_file.empty()) {
    if (auto dev = ReadDevCluster(DevDiscoveryPath())) key_file = dev->key_file;
  }
  if (key_file.empty()) {
    return Usage("no key: give --key-file or CORRAL_KEY_FILE (or start `corral dev`)");
  }
  auto key = api::JwtKey::FromFile(key_file);
  if (!key) {
    std::fprintf(stderr, "corral: error: %s\n", key.error().message.c_str());
    return 1;
  }
  api::Identity who{
      .user = "metrics", .uid = api::kNoUnixId, .gid = api::kNoUnixId, .role = api::Role::kMetrics};
  std::printf("%s\n", key->Sign(who, SystemClock::Get().Now(), ttl).c_str());
  return 0;
}

}  // namespace corral::cli
