// What the sbatch tests share (submit_test, directives_test, option_values_test): the
// submitting context, scripts, and table-driven cases run through ParseSbatch. Test-only.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/slurm/submit.h"

namespace corral::slurm::testing {

using Env = std::map<std::string, std::string>;

inline SubmitContext Context(Env env = {}) {
  SubmitContext ctx;
  ctx.environment = std::move(env);
  ctx.cwd = "/home/alice/proj";
  ctx.user = "alice";
  ctx.uid = 1000;
  ctx.gid = 1000;
  ctx.hostname = "login1";
  ctx.now =
      Timestamp(std::chrono::sys_days(std::chrono::year(2026) / 11 / 29) + std::chrono::hours(17));
  return ctx;
}

inline std::string Script(std::vector<std::string> lines) {
  std::string s = "#!/bin/bash\n";
  for (auto& l : lines) s += l + "\n";
  return s;
}

inline Duration Min(int64_t m) {
  return std::chrono::duration_cast<Duration>(std::chrono::minutes(m));
}

struct Case {
  std::string name;
  std::vector<std::string> script;  // directive/command lines after the shebang
  std::vector<std::string> args;    // sbatch's arguments; "job.sh" is appended unless --wrap
  Env env;
  std::function<void(const SubmitRequest&)> check;
};

inline Result<SubmitRequest> RunCase(const Case& c) {
  std::vector<std::string> args = c.args;
  bool wrap = false;
  for (auto& a : args) wrap = wrap || a.rfind("--wrap", 0) == 0;
  if (!wrap) args.push_back("job.sh");
  return ParseSbatch(args, Script(c.script), Context(c.env));
}

// Runs `cases`: each must parse, then pass its check.
inline void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = RunCase(c);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    c.check(*r);
  }
}

}  // namespace corral::slurm::testing
