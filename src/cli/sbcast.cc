// `sbcast [-f] [-p] [-C] [-t SECONDS] SOURCE DEST` inside a job: POST /api/v1/jobs/{id}/bcast
// with the file; each node's agent writes it as the job's user (docs/slurm.md, "sbcast").
// Options that choose how Slurm moves the data (-C compression, -F fanout, -s block size) are
// accepted: the file goes in one request through the controller either way. --send-libs and
// --exclude are refused by name.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/job_stats.h"
#include "cli/internal/query_common.h"
#include "core/strings.h"

namespace corral::cli::internal {
namespace {

struct SbcastArgs : QueryArgs {
  std::string job;  // -j/--jobid; else SLURM_JOB_ID
  bool force = false;
  bool preserve = false;
};
using A = SbcastArgs;
using slurm::ArgKind;

constexpr const char* kUsage =
    "Usage: sbcast [-CfpvV] [-t SECONDS] [-j JOBID] SOURCE DEST\n"
    "Corral's sbcast: docs/slurm.md\n";

Status SetJob(A& a, const std::string& v) {
  a.job = v;
  return {};
}
template <bool A::*kFlag>
Status Set(A& a, const std::string&) {
  a.*kFlag = true;
  return {};
}
Status CheckTimeout(A&, const std::string& v) {
  auto n = ParseUint(v);
  if (!n || *n == 0) return InvalidArgument("Invalid timeout: " + v);
  return {};
}
Status RefuseSendLibs(A&, const std::string&) {
  return MakeError(ErrorCode::kUnimplemented, "option --send-libs is not supported by Corral");
}
Status RefuseExclude(A&, const std::string&) {
  return MakeError(ErrorCode::kUnimplemented, "option --exclude is not supported by Corral");
}

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired, kOpt = ArgKind::kOptional;

constexpr slurm::CommandOption<A> kOptions[] = {
    {"compress", 'C', kOpt, slurm::Accept<A>, "[LIB]",
     "(accepted: the file travels in one request)"},
    {"force", 'f', kNone, Set<&A::force>, nullptr, "replace an existing file"},
    {"fanout", 'F', kReq, slurm::Accept<A>, "N", "(accepted: the controller asks every node)"},
    {"jobid", 'j', kReq, SetJob, "JOBID", "the job (default: SLURM_JOB_ID)"},
    {"preserve", 'p', kNone, Set<&A::preserve>, nullptr,
     "keep the source's access and modification times"},
    {"size", 's', kReq, slurm::Accept<A>, "BYTES", "(accepted: one request)"},
    {"timeout", 't', kReq, CheckTimeout, "SECONDS", "(accepted: the agents have 30 s)"},
    {"send-libs", 0, kOpt, RefuseSendLibs, "[yes|no]", "(refused)"},
    {"exclude", 0, kReq, RefuseExclude, "PATHS", "(refused)"},
    {"verbose", 'v', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    kHelpOption<A>,
    kUsageOption<A>,
    kVersionOption<A>,
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

}  // namespace

int RunSbcast(int argc, char** argv) {
  const std::string prog = "sbcast";
  A a;
  const std::span<const slurm::CommandOption<A>> table(kOptions);
  slurm::OptionScan scan = slurm::ScanWithTable(table, Words(argc, argv), "+", a);
  if (auto status = ReportScan(prog, scan, a, std::string(kUsage) + "\n", slurm::TableHelp(table))) {
    return *status;
  }
  if (scan.operands.size() != 2) {
    PrintError(prog, "Need two file names, have " + std::to_string(scan.operands.size()) +
                         " names");
    return 1;
  }
  std::string job_text = a.job.empty() ? Env("SLURM_JOB_ID") : a.job;
  job_text = job_text.substr(0, job_text.find('.'));  // JOBID[.STEP]: the step is not needed
  std::optional<uint64_t> job = ParseUint(job_text);
  if (job_text.empty()) {
    PrintError(prog, "Need a job id (run sbcast inside a job, or give --jobid)");
    return 1;
  }
  if (!job || *job == 0) {
    PrintError(prog, "Invalid job id: " + job_text);
    return 1;
  }
  const std::string& source = scan.operands[0];
  struct stat st {};
  if (stat(source.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    PrintError(prog, "Can't open `" + source + "`: " +
                         (S_ISDIR(st.st_mode) ? "Is a directory" : std::strerror(errno)));
    return 1;
  }
  if (static_cast<uint64_t>(st.st_size) > api::kMaxBcastBytes) {
    PrintError(prog, source + ": " + std::to_string(st.st_size) + " bytes, more than Corral's " +
                         std::to_string(api::kMaxBcastBytes) + " per file");
    return 1;
  }
  std::ifstream in(source, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  if (!in) {
    PrintError(prog, "Can't read `" + source + "`");
    return 1;
  }
  api::BcastOptions options{.path = scan.operands[1],
                            .mode = static_cast<uint32_t>(st.st_mode & 0777),
                            .force = a.force};
  if (options.path.empty() || options.path.front() != '/') {
    std::error_code ec;
    options.path = (std::filesystem::current_path(ec) / options.path).lexically_normal().string();
  }
  if (a.preserve) {
    options.atime = st.st_atime;
    options.mtime = st.st_mtime;
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  auto done = client->Bcast(JobId(*job), options, data.str());
  if (Failed(prog, done)) return 1;
  return 0;
}

}  // namespace corral::cli::internal
