#include "controller/internal/step_tracker.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "api/json_codec.h"
#include "core/container_spec.h"
#include "core/credential_env.h"
#include "core/log.h"
#include "core/strings.h"

namespace corral::controller::internal {
namespace {

// How long a finished step stays readable (GET .../steps/{step}) after its job has ended.
constexpr Duration kKeepEndedSteps = Minutes(10);
constexpr const char* kStepsKeyPrefix = "steps/";

std::string StepName(JobId job, uint32_t step) {
  return "job " + job.ToString() + " step " + std::to_string(step);
}

// srun's rule for a step's exit code: the highest of its tasks', 128 + signal for a task a
// signal killed.
int32_t TaskExitStatus(const api::StepTaskInfo& t) {
  if (t.signal != 0) return 128 + t.signal;
  return t.exit_code;
}

}  // namespace

// pyxis' --container-name: a step that names a container without an image runs in the image
// of the job's latest step (of this run) that named it with one. The container's filesystem
// is not kept between steps: each task starts from the image (docs/slurm.md).
Status StepTracker::ResolveContainer(const Job& job, ContainerSpec* c) const {
  const std::string what = "job " + job.id.ToString() + ": --container-name=" + c->name;
  if (c->image.empty() && c->name.empty()) {
    *c = ContainerSpec();  // mounts or a workdir alone mean nothing (as with pyxis)
    return {};
  }
  if (!c->name.empty()) {
    size_t colon = c->name.find(':');
    if (colon != std::string::npos) {
      std::string flag = c->name.substr(colon + 1);
      if (flag != "auto") {
        return InvalidArgument(what + ": the flag \"" + flag +
                               "\" is not supported by Corral (only \"auto\")");
      }
      c->name.erase(colon);
    }
    if (c->name.empty())
      return InvalidArgument("job " + job.id.ToString() + ": --container-name: empty name");
  }
  if (!c->image.empty()) return {};
  auto first = steps_.lower_bound({job.id, 0});
  for (auto it = steps_.upper_bound({job.id, kAllSteps}); it != first;) {
    const api::StepInfo& info = (--it)->second.info;
    if (info.generation != job.allocation.generation) continue;
    if (info.container.name == c->name && !info.container.image.empty()) {
      c->image = info.container.image;
      return {};
    }
  }
  return InvalidArgument(what + ": no earlier step of this job made a container of that name; " +
                         "give --container-image with it the first time");
}

Result<api::StepInfo> StepTracker::Create(const JobEntry& e, StepSpec spec) {
  const JobId id = e.job.id;
  CORRAL_ASSIGN_OR_RETURN(StepLayout layout, PlanStep(e.job, spec));
  // A caller's credential never reaches the tasks, whatever client sent the step.
  EraseCredentialVariables(spec.environment);
  CORRAL_RETURN_IF_ERROR(ValidateContainerSpec(spec.container));
  CORRAL_RETURN_IF_ERROR(ResolveContainer(e.job, &spec.container));
  // Where output goes: the caller's node, which must be one of the job's.
  std::string io_url;
  if (spec.io_port != 0) {
    if (spec.io_port > 65535)
      return InvalidArgument("io_port: " + std::to_string(spec.io_port) + " is not a port");
    std::string io_node =
        spec.io_node.empty() ? e.job.allocation.nodes.front().node_name : spec.io_node;
    const NodeEntry* n = nodes_.Find(io_node);
    std::vector<std::string> names = e.job.allocation.NodeNames();
    if (n == nullptr || std::find(names.begin(), names.end(), io_node) == names.end()) {
      return InvalidArgument("io_node: \"" + io_node + "\" is not a node of job " + id.ToString());
    }
    // The caller's server speaks TLS with a key derived from the step's I/O secret
    // (api/step_io.h), which must be there and long enough not to be guessed.
    if (spec.io_token.size() < 32) {
      return InvalidArgument("io_token: the step's I/O secret must be at least 32 characters");
    }
    io_url = "https://" + RendezvousHost(n->node.inventory.address, io_node) + ":" +
             std::to_string(spec.io_port);
  }
  // srun --pty: task 0's terminal travels over the caller's I/O server, on the bare node.
  if (spec.pty && io_url.empty()) {
    return InvalidArgument(
        "pty: a terminal needs the step's output forwarded (io_port), "
        "not written to files");
  }
  if (spec.pty && !spec.container.image.empty()) {
    return InvalidArgument(
        "pty: a terminal in a container (--container-image) is not "
        "supported by Corral");
  }
  const NodeEntry* first = nodes_.Find(layout.nodes.front());
  if (first == nullptr) return Unavailable("node " + layout.nodes.front() + " is unknown");
  for (const auto& name : layout.nodes) {
    const NodeEntry* n = nodes_.Find(name);
    if (n == nullptr || !n->node.responding) {
      return Unavailable("job " + id.ToString() + ": node " + name + " is not responding");
    }
  }

  // Forget steps of jobs that ended a while ago.
  Timestamp now = clock_.Now();
  std::erase_if(steps_, [&](const auto& kv) {
    const StepEntry& s = kv.second;
    return s.info.state != JobState::kRunning && s.info.end_time + kKeepEndedSteps < now &&
           !jobs_.running().contains(kv.first.first);
  });

  uint32_t step_id = next_step_[id]++;
  StepEntry s;
  api::StepInfo& info = s.info;
  info.job = id;
  info.step = step_id;
  info.generation = e.job.allocation.generation;
  info.state = JobState::kRunning;
  info.argv = spec.argv;
  info.master_addr = RendezvousHost(first->node.inventory.address, first->node.inventory.name);
  info.master_port = spec.master_port != 0 ? spec.master_port
                     : e.master_port != 0
                         ? e.master_port
                         : MasterPortCandidate(id, kDefaultMasterPortMin, kDefaultMasterPortMax);
  info.nodes = layout.nodes;
  info.tasks_per_node = layout.tasks_per_node;
  info.cpus_per_task = layout.cpus_per_task;
  info.kill_on_bad_exit = spec.kill_on_bad_exit;
  info.container = spec.container;
  info.start_time = now;
  for (const StepTask& t : layout.tasks) info.tasks.push_back({.task = t});
  s.live_nodes.insert(layout.nodes.begin(), layout.nodes.end());

  api::StepLaunchRequest launch;
  launch.job = e.job;
  launch.step = step_id;
  launch.spec = std::move(spec);
  launch.layout = std::move(layout);
  launch.master_addr = info.master_addr;
  launch.master_port = info.master_port;
  launch.io_url = io_url;
  for (const auto& name : launch.layout.nodes) out_.Send(nodes_.Find(name)->node, launch);
  api::StepInfo out = info;
  steps_[{id, step_id}] = std::move(s);
  dirty_.insert(id);
  CORRAL_LOG(Debug) << StepName(id, step_id) << ": " << out.tasks.size() << " tasks on "
                    << out.nodes.size() << " nodes";
  return out;
}

const StepEntry* StepTracker::Find(JobId job, uint32_t step) const {
  auto it = steps_.find({job, step});
  return it == steps_.end() ? nullptr : &it->second;
}

std::vector<api::StepInfo> StepTracker::List(JobId job) const {
  std::vector<api::StepInfo> out;
  for (auto it = steps_.lower_bound({job, 0}); it != steps_.end() && it->first.first == job; ++it) {
    out.push_back(it->second.info);
  }
  return out;
}

Status StepTracker::Cancel(JobId job, uint32_t step) {
  auto it = steps_.find({job, step});
  if (it == steps_.end()) return NotFound(StepName(job, step) + ": no such step");
  StepEntry& s = it->second;
  if (s.info.state != JobState::kRunning) {
    return FailedPrecondition(StepName(job, step) + ": already " +
                              std::string(JobStateName(s.info.state)));
  }
  if (!s.cancel_requested) {
    s.cancel_requested = true;
    dirty_.insert(job);
    SignalStepNodes(s, 0);
  }
  return {};
}

bool StepTracker::IsTaskEvent(const api::JobEvent& ev) {
  return ev.type == api::JobEventType::kTaskExited ||
         ev.type == api::JobEventType::kTaskLaunchFailed;
}

bool StepTracker::ApplyTaskEvent(const std::string& node, const api::JobEvent& ev) {
  auto it = steps_.find({ev.job, ev.step});
  if (it == steps_.end()) return false;
  StepEntry& s = it->second;
  if (s.info.generation != ev.generation || s.info.state != JobState::kRunning ||
      ev.task >= s.info.tasks.size()) {
    return false;
  }
  api::StepTaskInfo& t = s.info.tasks[ev.task];
  if (t.task.node != node || t.ended) return false;
  if (ev.type == api::JobEventType::kTaskLaunchFailed) {
    t.exit_code = ev.exit_code != 0 ? ev.exit_code : 1;
    t.message = ev.message.empty() ? "could not start" : ev.message;
  } else {
    t.exit_code = std::max(ev.exit_code, 0);
    t.signal = ev.signal;
  }
  EndTask(s, t);
  return true;
}

void StepTracker::EndTask(StepEntry& s, api::StepTaskInfo& t) {
  dirty_.insert(s.info.job);
  t.ended = true;
  ++s.ended_tasks;
  // Once --kill-on-bad-exit has fired, the tasks it ends do not change the step's exit code:
  // it is the failing task's.
  if (!s.bad_exit) s.info.exit_code = std::max(s.info.exit_code, TaskExitStatus(t));
  bool node_done = std::none_of(
      s.info.tasks.begin(), s.info.tasks.end(),
      [&](const api::StepTaskInfo& o) { return o.task.node == t.task.node && !o.ended; });
  if (node_done) s.live_nodes.erase(t.task.node);
  bool failed = t.signal != 0 || t.exit_code != 0;
  if (failed && s.info.reason.empty()) {
    s.info.reason = "task " + std::to_string(t.task.rank) + " on " + t.task.node + ": " +
                    (!t.message.empty() ? t.message
                     : t.signal != 0    ? "killed by signal " + std::to_string(t.signal)
                                        : "exited with code " + std::to_string(t.exit_code));
  }
  if (failed && s.info.kill_on_bad_exit && !s.bad_exit && !s.cancel_requested) {
    s.bad_exit = true;  // the others are ended; the step is FAILED, not CANCELLED
    SignalStepNodes(s, 0);
  }
  if (s.ended_tasks == s.info.tasks.size()) FinishStep(s);
}

void StepTracker::FinishStep(StepEntry& s) {
  if (s.info.state != JobState::kRunning) return;
  bool failed =
      std::any_of(s.info.tasks.begin(), s.info.tasks.end(),
                  [](const api::StepTaskInfo& t) { return t.signal != 0 || t.exit_code != 0; });
  if (s.bad_exit || (failed && !s.cancel_requested)) {
    s.info.state = JobState::kFailed;
  } else if (s.cancel_requested) {
    s.info.state = JobState::kCancelled;
    if (s.info.reason.empty()) s.info.reason = "cancelled";
  } else {
    s.info.state = JobState::kCompleted;
  }
  s.info.end_time = clock_.Now();
  s.live_nodes.clear();
  finished_.push_back({s.info.job, s.info.step});
}

void StepTracker::EndStepsOfJob(JobId id, const std::string& reason) {
  for (auto it = steps_.lower_bound({id, 0}); it != steps_.end() && it->first.first == id; ++it) {
    StepEntry& s = it->second;
    if (s.info.state != JobState::kRunning) continue;
    SignalStepNodes(s, 0);  // what still runs there goes; reports that follow are stale
    for (auto& t : s.info.tasks) {
      if (t.ended) continue;
      t.ended = true;
      if (t.message.empty()) t.message = reason;
    }
    s.ended_tasks = s.info.tasks.size();
    s.info.state = s.bad_exit ? JobState::kFailed : JobState::kCancelled;
    if (s.info.reason.empty()) s.info.reason = reason;
    s.info.end_time = clock_.Now();
    s.live_nodes.clear();
    finished_.push_back({id, s.info.step});
  }
  // The job no longer runs: its stored steps go (PutDirty deletes the key), whether or not
  // some were still running.
  if (next_step_.erase(id) > 0) dirty_.insert(id);
}

void StepTracker::SignalStepNodes(const StepEntry& s, int signal) {
  for (const auto& name : s.live_nodes) {
    const NodeEntry* n = nodes_.Find(name);
    if (n == nullptr || !n->node.responding) continue;
    out_.Send(n->node, api::StepSignalRequest{s.info.job, s.info.generation, s.info.step, signal});
  }
}

std::set<std::string> StepTracker::LiveNodes(JobId job, Generation generation) const {
  std::set<std::string> nodes;
  for (auto it = steps_.lower_bound({job, 0}); it != steps_.end() && it->first.first == job; ++it) {
    if (it->second.info.generation != generation) continue;
    nodes.insert(it->second.live_nodes.begin(), it->second.live_nodes.end());
  }
  return nodes;
}

void StepTracker::OnLaunchFailed(JobId job, Generation generation, uint32_t step,
                                 const std::string& node, const Error& error) {
  auto it = steps_.find({job, step});
  if (it == steps_.end()) return;
  StepEntry& s = it->second;
  if (s.info.generation != generation || s.info.state != JobState::kRunning) return;
  CORRAL_LOG(Warn) << StepName(job, step) << ": launch on " << node << " failed: " << error.message;
  for (auto& t : s.info.tasks) {
    if (t.task.node != node || t.ended) continue;
    t.exit_code = 1;
    t.message = "launch on " + node + " failed: " + error.message;
    EndTask(s, t);
    if (s.info.state != JobState::kRunning) break;
  }
}

std::vector<std::pair<JobId, uint32_t>> StepTracker::TakeFinished() {
  std::vector<std::pair<JobId, uint32_t>> out = std::move(finished_);
  finished_.clear();
  return out;
}

void StepTracker::PutDirty() {
  if (dirty_.empty()) return;
  const Timestamp now = clock_.Now();
  for (JobId id : dirty_) {
    std::string value;
    if (jobs_.running().contains(id)) {
      auto next = next_step_.find(id);
      value = "next " + std::to_string(next == next_step_.end() ? 0 : next->second) + "\n";
      for (auto it = steps_.lower_bound({id, 0}); it != steps_.end() && it->first.first == id;
           ++it) {
        const StepEntry& s = it->second;
        if (s.info.state != JobState::kRunning && s.info.end_time + kKeepEndedSteps < now) continue;
        value += std::string(s.cancel_requested ? "1 " : "0 ") + (s.bad_exit ? "1 " : "0 ") +
                 api::EncodeStepInfo(s.info) + "\n";
      }
    }
    if (value.empty()) {
      out_.writes.DeleteMeta(kStepsKeyPrefix + id.ToString());
    } else {
      out_.writes.PutMeta(kStepsKeyPrefix + id.ToString(), std::move(value));
    }
  }
  dirty_.clear();
}

void StepTracker::Recover(const std::map<std::string, std::string>& meta) {
  size_t recovered = 0;
  for (auto it = meta.lower_bound(kStepsKeyPrefix);
       it != meta.end() && it->first.rfind(kStepsKeyPrefix, 0) == 0; ++it) {
    std::optional<uint64_t> value =
        ParseUint(std::string_view(it->first).substr(std::string_view(kStepsKeyPrefix).size()));
    if (!value) continue;
    const JobId id(*value);
    if (it->second.empty() || !jobs_.running().contains(id)) {
      out_.writes.DeleteMeta(it->first);  // left by an older controller: nothing to recover
      continue;
    }
    const Generation gen = jobs_.Find(id)->job.allocation.generation;
    std::istringstream in(it->second);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("next ", 0) == 0) {
        next_step_[id] = static_cast<uint32_t>(std::strtoul(line.c_str() + 5, nullptr, 10));
        continue;
      }
      if (line.size() < 4) continue;
      auto info = api::DecodeStepInfo(std::string_view(line).substr(4));
      if (!info || info->job != id || info->generation != gen) {
        CORRAL_LOG(Warn) << "job " << id.ToString() << ": a stored step cannot be read"
                         << (info ? "" : ": " + info.error().message);
        continue;
      }
      StepEntry s;
      s.cancel_requested = line[0] == '1';
      s.bad_exit = line[2] == '1';
      s.info = std::move(*info);
      for (const auto& t : s.info.tasks) {
        if (t.ended) {
          ++s.ended_tasks;
        } else {
          s.live_nodes.insert(t.task.node);
        }
      }
      uint32_t step = s.info.step;
      next_step_[id] = std::max(next_step_[id], step + 1);
      recovered += s.info.state == JobState::kRunning ? 1 : 0;
      steps_[{id, step}] = std::move(s);
    }
  }
  if (recovered > 0) CORRAL_LOG(Info) << "recovered " << recovered << " running steps";
}

}  // namespace corral::controller::internal
