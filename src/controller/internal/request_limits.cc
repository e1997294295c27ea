#include "controller/internal/request_limits.h"

#include <string>
#include <utility>
#include <vector>

namespace corral::controller::internal {
namespace {

tl::unexpected<Error> TooLong(const std::string& field, size_t size, size_t limit) {
  return InvalidArgument(field + ": " + std::to_string(size) + " bytes is over the limit of " +
                         std::to_string(limit));
}

Status Short(const char* field, const std::string& value, size_t limit = kMaxShortField) {
  if (value.size() > limit) return TooLong(field, value.size(), limit);
  return {};
}

Status Path(const std::string& field, const std::string& value) {
  if (value.size() > kMaxPath) return TooLong(field, value.size(), kMaxPath);
  if (value.find('\0') != std::string::npos)
    return InvalidArgument(field + ": contains a NUL byte");
  return {};
}

// The sum of the sizes of `env`'s entries, or the first error.
Result<size_t> Environment(const char* field, const std::map<std::string, std::string>& env) {
  if (env.size() > kMaxEnvVars) {
    return InvalidArgument(std::string(field) + ": " + std::to_string(env.size()) +
                           " variables is over the limit of " + std::to_string(kMaxEnvVars));
  }
  size_t total = 0;
  for (const auto& [k, v] : env) {
    size_t entry = k.size() + 1 + v.size();
    if (entry > kMaxEnvEntry) {
      return TooLong(std::string(field) + "." + k.substr(0, 64), entry, kMaxEnvEntry);
    }
    total += entry;
  }
  if (total > kMaxEnvTotal) return TooLong(field, total, kMaxEnvTotal);
  return total;
}

Result<size_t> Arguments(const char* field, const std::vector<std::string>& args) {
  if (args.size() > kMaxArgs) {
    return InvalidArgument(std::string(field) + ": " + std::to_string(args.size()) +
                           " arguments is over the limit of " + std::to_string(kMaxArgs));
  }
  size_t total = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].size() > kMaxArg) {
      return TooLong(std::string(field) + "[" + std::to_string(i) + "]", args[i].size(), kMaxArg);
    }
    total += args[i].size();
  }
  if (total > kMaxArgsTotal) return TooLong(field, total, kMaxArgsTotal);
  return total;
}

Result<size_t> Container(const char* prefix, const ContainerSpec& c) {
  std::string p(prefix);
  CORRAL_RETURN_IF_ERROR(Path(p + ".image", c.image));
  CORRAL_RETURN_IF_ERROR(Path(p + ".workdir", c.workdir));
  if (c.name.size() > kMaxShortField) return TooLong(p + ".name", c.name.size(), kMaxShortField);
  if (c.mounts.size() > kMaxMounts) {
    return InvalidArgument(p + ".mounts: " + std::to_string(c.mounts.size()) +
                           " mounts is over the limit of " + std::to_string(kMaxMounts));
  }
  size_t total = c.image.size() + c.workdir.size() + c.name.size();
  for (const auto& m : c.mounts) {
    CORRAL_RETURN_IF_ERROR(Path(p + ".mounts", m));
    total += m.size();
  }
  if (c.env.size() > kMaxContainerEnv) {
    return InvalidArgument(p + ".env: " + std::to_string(c.env.size()) +
                           " names is over the limit of " + std::to_string(kMaxContainerEnv));
  }
  for (const auto& e : c.env) {
    if (e.size() > kMaxShortField) return TooLong(p + ".env", e.size(), kMaxShortField);
    total += e.size();
  }
  return total;
}

}  // namespace

Result<JobSizes> CheckJobSizes(const JobSpec& spec) {
  const std::pair<const char*, const std::string*> short_fields[] = {
      {"name", &spec.name},
      {"account", &spec.account},
      {"qos", &spec.qos},
      {"reservation", &spec.reservation},
      {"mail_type", &spec.mail_type},
      {"mail_user", &spec.mail_user},
      {"submit_host", &spec.submit_host},
      {"array", &spec.array},
      {"user", &spec.user}};
  for (auto [field, value] : short_fields) {
    CORRAL_RETURN_IF_ERROR(Short(field, *value));
  }
  CORRAL_RETURN_IF_ERROR(Short("comment", spec.comment, kMaxComment));
  size_t total = spec.script.size() + spec.comment.size() + spec.name.size() + spec.account.size() +
                 spec.qos.size() + spec.reservation.size() + spec.mail_type.size() +
                 spec.mail_user.size() + spec.submit_host.size() + spec.array.size() +
                 spec.user.size();
  const std::pair<const char*, const std::string*> paths[] = {
      {"working_dir", &spec.working_dir}, {"stdout_path", &spec.stdout_path},
      {"stderr_path", &spec.stderr_path}, {"stdin_path", &spec.stdin_path},
      {"command", &spec.command},         {"submit_dir", &spec.submit_dir}};
  for (auto [field, value] : paths) {
    CORRAL_RETURN_IF_ERROR(Path(field, *value));
    total += value->size();
  }
  CORRAL_ASSIGN_OR_RETURN(size_t env, Environment("environment", spec.environment));
  CORRAL_ASSIGN_OR_RETURN(size_t args, Arguments("script_args", spec.script_args));
  CORRAL_ASSIGN_OR_RETURN(size_t container, Container("container", spec.container));
  total += env + args + container;
  size_t deps = 0;
  for (const auto& d : spec.dependencies) deps += d.jobs.size() + 1;
  if (deps > kMaxDependencies) {
    return InvalidArgument("dependencies: " + std::to_string(deps) +
                           " job ids is over the limit of " + std::to_string(kMaxDependencies));
  }
  total += deps * sizeof(JobId);
  if (spec.partitions.size() > kMaxPartitions) {
    return InvalidArgument("partition: " + std::to_string(spec.partitions.size()) +
                           " partitions is over the limit of " + std::to_string(kMaxPartitions));
  }
  for (const auto& p : spec.partitions) {
    CORRAL_RETURN_IF_ERROR(Short("partition", p));
    total += p.size();
  }
  if (total > kMaxJobBytes) return TooLong("job", total, kMaxJobBytes);
  return JobSizes{.total = total, .shared = spec.script.size() + env + args};
}

Status CheckArraySize(size_t tasks, const JobSizes& sizes) {
  const size_t own = sizes.total - sizes.shared;  // what each task holds a copy of
  if (tasks * own + sizes.shared <= kMaxArrayBytes) return {};
  return InvalidArgument("array: " + std::to_string(tasks) + " tasks of " + std::to_string(own) +
                         " bytes each (besides the script, environment and arguments they "
                         "share) are over the limit of " +
                         std::to_string(kMaxArrayBytes) +
                         " bytes for an array (fewer tasks, or smaller paths, comment, "
                         "dependencies or container)");
}

Status CheckStepSizes(const StepSpec& spec) {
  CORRAL_RETURN_IF_ERROR(Arguments("argv", spec.argv));
  CORRAL_RETURN_IF_ERROR(Environment("environment", spec.environment));
  const std::pair<const char*, const std::string*> paths[] = {{"working_dir", &spec.working_dir},
                                                              {"stdout_path", &spec.stdout_path},
                                                              {"stderr_path", &spec.stderr_path}};
  for (auto [field, value] : paths) {
    CORRAL_RETURN_IF_ERROR(Path(field, *value));
  }
  CORRAL_RETURN_IF_ERROR(Short("io_node", spec.io_node));
  CORRAL_RETURN_IF_ERROR(Short("io_token", spec.io_token));
  CORRAL_RETURN_IF_ERROR(Container("container", spec.container));
  return {};
}

}  // namespace corral::controller::internal
