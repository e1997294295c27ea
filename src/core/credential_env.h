// The environment variables that hold a caller's credential (docs/security.md, "Job
// credentials"). They never travel into a job or a step: the CLI leaves them out of what it
// exports, the controller drops them from every submitted job and step (whatever client sent
// it), and the agent removes them before it sets the job's own CORRAL_JOB_CREDENTIAL.
//
// Thread-safe: constants and a pure function.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>

namespace corral {

inline constexpr std::array<std::string_view, 3> kCredentialVariables = {
    "CORRAL_TOKEN", "CORRAL_KEY_FILE", "CORRAL_JOB_CREDENTIAL"};

inline bool IsCredentialVariable(std::string_view name) {
  for (std::string_view v : kCredentialVariables) {
    if (name == v) return true;
  }
  return false;
}

// Removes every credential variable from `env`.
inline void EraseCredentialVariables(std::map<std::string, std::string>& env) {
  for (std::string_view v : kCredentialVariables) env.erase(std::string(v));
}

}  // namespace corral
