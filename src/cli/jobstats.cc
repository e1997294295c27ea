#include "cli/jobstats.h"

#include <cstdio>
#include <cstring>

#include "api/json_codec.h"
#include "cli/internal/gpu_report.h"
#include "cli/internal/slurm_cli.h"
#include "cli/slurm/begin_time.h"
#include "core/clock.h"

namespace corral::cli {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "corral: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

int Jobstats(Client& client, const std::vector<std::string>& jobs, bool json) {
  if (jobs.empty()) {
    std::fprintf(stderr, "corral jobstats: give a job id (see `corral jobstats --help`)\n");
    return 2;
  }
  int status = 0;
  for (const std::string& arg : jobs) {
    auto id = ParseJobIdArg(arg);
    if (!id) {
      std::fprintf(stderr, "corral jobstats: %s\n", id.error().message.c_str());
      return 2;
    }
    auto info = client.GetJob(*id);
    if (!info) {
      status = Fail(info.error().message);
      continue;
    }
    auto stats = client.GpuStats(*id);
    if (!stats) {
      status = Fail(stats.error().message);
      continue;
    }
    if (json) {
      std::printf("%s\n", api::EncodeGpuStatsInfo(*stats).c_str());
    } else {
      std::fputs(internal::FormatJobstats(*info, *stats).c_str(), stdout);
    }
  }
  return status;
}

int Report(Client& client, const std::vector<std::string>& args, const std::string& since,
           bool json) {
  if (args.size() != 1 || args[0] != "waste") {
    std::fprintf(stderr,
                 "corral report: the reports are `corral report usage [--since T] [--until T] "
                 "[--jobs]` and `corral report waste [--since TIME]`\n");
    return 2;
  }
  Timestamp from{};
  if (!since.empty()) {
    auto t = slurm::ParsePastTime(since, SystemClock::Get().Now(), internal::LocalUtcOffset());
    if (!t) {
      std::fprintf(stderr, "corral report: --since %s: %s\n", since.c_str(),
                   t.error().message.c_str());
      return 2;
    }
    from = *t;
  }
  auto report = client.WasteReport(from);
  if (!report) return Fail(report.error().message);
  if (json) {
    std::printf("%s\n", api::EncodeWasteReport(*report).c_str());
  } else {
    std::fputs(internal::FormatWasteReport(*report).c_str(), stdout);
  }
  return 0;
}

namespace internal {

int RunSeff(int argc, char** argv) {
  const std::string prog = "seff";
  std::vector<std::string> ids;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf(
          "Usage: seff [Options] <Jobid>\n       Options:\n       -h    Help menu\n"
          "       -V    Version\n");
      return 0;
    }
    if (a == "-V" || a == "--version") {
      PrintVersion();
      return 0;
    }
    if (!a.empty() && a[0] == '-') {
      PrintError(prog, "unknown option " + a);
      return 2;
    }
    ids.push_back(a);
  }
  if (ids.size() != 1) {
    std::fprintf(stderr, "Usage: seff [Options] <Jobid>\n");
    return 2;
  }
  auto id = ParseJobIdArg(ids[0]);
  if (!id) {
    PrintError(prog, "Job not found.");
    return 2;
  }
  std::unique_ptr<Client> client = ConnectOrReport(prog);
  if (!client) return 1;
  auto info = client->GetJob(*id);
  if (!info) {
    PrintError(prog, info.error().message);
    return 1;
  }
  auto stats = client->GpuStats(*id);
  if (!stats) {
    PrintError(prog, stats.error().message);
    return 1;
  }
  std::string cluster = "corral";
  if (const char* c = std::getenv("SLURM_CLUSTER_NAME"); c != nullptr && *c != '\0') cluster = c;
  std::fputs(
      FormatSeff(*info, *stats, cluster, GroupName(info->job.spec.gid), SystemClock::Get().Now())
          .c_str(),
      stdout);
  return 0;
}

}  // namespace internal
}  // namespace corral::cli
