#include "cli/internal/slurm_cli.h"

#include <grp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <set>

#include <sys/resource.h>

#include "api/auth.h"
#include "core/clock.h"

extern char** environ;

namespace corral::cli::internal {

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

int64_t LocalUtcOffset() {
  time_t now = time(nullptr);
  struct tm local {};
  if (localtime_r(&now, &local) == nullptr) return 0;
  return local.tm_gmtoff;
}

slurm::SubmitContext ProcessContext() {
  slurm::SubmitContext ctx;
  ctx.environment = ProcessEnvironment();
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) != nullptr) ctx.cwd = cwd;
  api::Identity me = api::CurrentProcessIdentity();
  ctx.user = me.user;
  ctx.uid = me.uid;
  ctx.gid = me.gid;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  ctx.hostname = host;
  ctx.hostname = ctx.hostname.substr(0, ctx.hostname.find('.'));
  ctx.now = SystemClock::Get().Now();
  ctx.utc_offset_seconds = LocalUtcOffset();
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, 0);
  ctx.nice = errno == 0 ? nice : 0;
  return ctx;
}

std::string GroupName(uint32_t gid) {
  struct group g {};
  struct group* found = nullptr;
  char buf[4096];
  if (getgrgid_r(gid, &g, buf, sizeof buf, &found) != 0 || found == nullptr) return "";
  return found->gr_name;
}

void PrintError(const std::string& prog, const std::string& message) {
  if (message.rfind(prog + ":", 0) == 0) {
    std::fprintf(stderr, "%s\n", message.c_str());
  } else {
    std::fprintf(stderr, "%s: error: %s\n", prog.c_str(), message.c_str());
  }
}

void PrintVersion() { std::printf("slurm 22.05.8 (corral 0.1.0)\n"); }

std::unique_ptr<Client> ConnectOrReport(const std::string& prog) {
  auto client = Client::Connect("");
  if (!client) {
    PrintError(prog, client.error().message);
    return nullptr;
  }
  return std::move(*client);
}

Result<std::vector<api::JobInfo>> ResolveJobIds(Client& client,
                                                const std::vector<slurm::JobIdSpec>& specs,
                                                std::vector<std::string>* missing) {
  JobListQuery q;
  q.expand_arrays = true;
  for (const auto& s : specs) q.ids.push_back(std::to_string(s.job_id));
  CORRAL_ASSIGN_OR_RETURN(std::vector<api::JobInfo> jobs, client.ListJobs(q));
  std::vector<api::JobInfo> out;
  std::set<uint64_t> taken;
  for (const auto& s : specs) {
    bool found = false;
    for (const auto& info : jobs) {
      const Job& j = info.job;
      bool match = false;
      if (s.array_tasks.empty() && !s.all_tasks) {
        // "12": the job, or every task of the array whose job id is 12.
        match = j.id.value == s.job_id || j.array_job_id.value == s.job_id;
      } else if (j.array_job_id.value == s.job_id && j.array_task_id.has_value()) {
        match = s.all_tasks || std::find(s.array_tasks.begin(), s.array_tasks.end(),
                                         *j.array_task_id) != s.array_tasks.end();
      }
      if (!match) continue;
      found = true;
      if (taken.insert(j.id.value).second) out.push_back(info);
    }
    if (!found && missing != nullptr) {
      std::string text = std::to_string(s.job_id);
      if (s.all_tasks) text += "_*";
      if (s.array_tasks.size() == 1) text += "_" + std::to_string(s.array_tasks[0]);
      if (s.array_tasks.size() > 1) text += "_[...]";
      missing->push_back(text);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const api::JobInfo& a, const api::JobInfo& b) { return a.job.id < b.job.id; });
  return out;
}

int JobExitStatus(const Job& j) {
  if (j.state == JobState::kCompleted) return 0;
  if (j.exit_code != 0) return j.exit_code;
  if (j.exit_signal != 0) return 128 + j.exit_signal;
  return 1;
}

}  // namespace corral::cli::internal
