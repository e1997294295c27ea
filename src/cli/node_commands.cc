#include "cli/node_commands.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/json_codec.h"
#include "cli/client.h"

namespace corral::cli {
namespace {

constexpr const char* kUsage =
    "usage: corral node resume-gpu NODE GPU [--controller URL] [--json]\n"
    "       corral node inject NODE --gpu N [--xid X] [--ecc COUNT] [--temperature C] [--power W]\n"
    "                   [--util PERCENT] [--memory-used MB] [--row-remap-failure] [--vanish]\n"
    "                   [--back] [--clear] [--controller URL] [--json]\n"
    "  resume-gpu  returns a GPU taken out of service by a health check (admins); refused while\n"
    "              the GPU still fails a check\n"
    "  inject      injects a fault or reading into a node's simulated GPU (admins): an XID\n"
    "              event, uncorrectable ECC errors, temperature, power, utilisation, memory\n"
    "              used, a row-remap failure, a GPU that vanishes (--vanish) or comes back\n"
    "              (--back); --clear first returns the GPU to healthy readings\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "corral node: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "corral: error: %s\n", message.c_str());
  return 1;
}

bool ParseNumber(const std::string& text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && end != nullptr && *end == '\0' && *out >= 0;
}

bool ParseIndex(const std::string& text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 12) return false;
  *out = std::stoull(text);
  return *out <= max;
}

}  // namespace

int RunNodeCommand(int argc, char** argv) {
  std::vector<std::string> positional;
  std::string controller;
  bool json = false;
  api::InjectRequest inject;
  bool have_gpu = false, have_fault = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    bool has_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    auto need = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    double d = 0;
    uint64_t n = 0;
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--controller") {
      if (!need()) return Usage("--controller needs a value");
      controller = value;
    } else if (a == "--gpu") {
      if (!need() || !ParseIndex(value, 63, &n)) return Usage("--gpu: expected a GPU index");
      inject.gpu = static_cast<uint32_t>(n);
      have_gpu = true;
    } else if (a == "--xid") {
      if (!need() || !ParseIndex(value, 100000, &n) || n == 0) return Usage("--xid: expected an XID number");
      inject.xid = static_cast<uint32_t>(n);
      have_fault = true;
    } else if (a == "--ecc") {
      if (!need() || !ParseIndex(value, uint64_t{1} << 40, &n)) return Usage("--ecc: expected a count");
      inject.ecc_uncorrectable = n;
      have_fault = true;
    } else if (a == "--memory-used") {
      if (!need() || !ParseIndex(value, uint64_t{1} << 40, &n)) return Usage("--memory-used: expected MB");
      inject.memory_used_mb = n;
      have_fault = true;
    } else if (a == "--temperature" || a == "--power" || a == "--util") {
      if (!need() || !ParseNumber(value, &d)) return Usage(a + ": expected a number");
      (a == "--temperature" ? inject.temperature_c : a == "--power" ? inject.power_watts : inject.utilization) = d;
      have_fault = true;
    } else if (a == "--row-remap-failure") {
      inject.row_remap_failure = true;
      have_fault = true;
    } else if (a == "--vanish" || a == "--back") {
      inject.vanished = a == "--vanish";
      have_fault = true;
    } else if (a == "--clear") {
      inject.clear = true;
      have_fault = true;
    } else if (a.rfind("--", 0) == 0) {
      return Usage("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.empty()) return Usage("give a subcommand: resume-gpu or inject");
  std::string sub = positional[0];
  if (sub == "resume-gpu") {
    uint64_t gpu = 0;
    if (positional.size() != 3 || !ParseIndex(positional[2], 63, &gpu)) return Usage("resume-gpu takes NODE GPU");
    auto client = Client::Connect(controller);
    if (!client) return Fail(client.error().message);
    if (Status s = (*client)->ResumeGpu(positional[1], static_cast<uint32_t>(gpu)); !s) return Fail(s.error().message);
    if (json) {
      std::printf("%s\n", api::EncodeStringMap({{"status", "ok"}}).c_str());
    } else {
      std::printf("node %s gpu %llu back in service\n", positional[1].c_str(), static_cast<unsigned long long>(gpu));
    }
    return 0;
  }
  if (sub == "inject") {
    if (positional.size() != 2) return Usage("inject takes one NODE");
    if (!have_gpu) return Usage("inject needs --gpu N");
    if (!have_fault) return Usage("inject needs a fault (--xid, --ecc, --temperature, ...)");
    auto client = Client::Connect(controller);
    if (!client) return Fail(client.error().message);
    if (Status s = (*client)->Inject(positional[1], inject); !s) return Fail(s.error().message);
    if (json) {
      std::printf("%s\n", api::EncodeStringMap({{"status", "ok"}}).c_str());
    } else {
      std::printf("injected into node %s gpu %u\n", positional[1].c_str(), inject.gpu);
    }
    return 0;
  }
  return Usage("unknown subcommand \"" + sub + "\"");
}

}  // namespace corral::cli
