#include "agent/gpu_jobs.h"

#include <filesystem>

#include "api/private_file.h"
#include "core/log.h"

namespace corral::agent {

namespace fs = std::filesystem;

namespace {

// "3" or "3.1": a GPU's or a MIG slice's file.
bool IsMappingFileName(std::string_view name) {
  size_t dot = name.find('.');
  auto digits = [](std::string_view s) {
    if (s.empty() || s.size() > 10) return false;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  if (dot == std::string_view::npos) return digits(name);
  return digits(name.substr(0, dot)) && digits(name.substr(dot + 1));
}

}  // namespace

GpuJobs::GpuJobs(std::string mapping_dir, std::map<uint32_t, std::string> file_names)
    : dir_(std::move(mapping_dir)), file_names_(std::move(file_names)) {}

void GpuJobs::Hold(JobRun run, GpuHolder holder, GpuSet gpus) {
  std::lock_guard<std::mutex> lock(mu_);
  Held next{std::move(holder), gpus};
  auto it = runs_.find(run);
  if (it != runs_.end() && it->second.holder == next.holder &&
      it->second.gpus.bits() == gpus.bits()) {
    return;
  }
  runs_[run] = std::move(next);
  Status s = WriteLocked();
  if (!s) CORRAL_LOG(Warn) << "job-mapping directory: " << s.error().message;
}

void GpuJobs::Release(JobRun run) {
  std::lock_guard<std::mutex> lock(mu_);
  if (runs_.erase(run) == 0) return;
  Status s = WriteLocked();
  if (!s) CORRAL_LOG(Warn) << "job-mapping directory: " << s.error().message;
}

void GpuJobs::Retain(const std::vector<JobRun>& live) {
  std::set<JobRun> keep(live.begin(), live.end());
  std::lock_guard<std::mutex> lock(mu_);
  bool changed = false;
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (keep.contains(it->first)) {
      ++it;
    } else {
      it = runs_.erase(it);
      changed = true;
    }
  }
  if (!changed) return;
  Status s = WriteLocked();
  if (!s) CORRAL_LOG(Warn) << "job-mapping directory: " << s.error().message;
}

std::map<uint32_t, GpuHolder> GpuJobs::Holders() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<uint32_t, GpuHolder> out;
  for (const auto& [run, held] : runs_) {  // by job id: the lowest wins
    for (uint32_t i = 0; i < 64; ++i) {
      if (held.gpus.contains(i)) out.try_emplace(i, held.holder);
    }
  }
  return out;
}

std::map<uint32_t, std::string> JobMappingFileNames(GpuBackend& backend) {
  std::map<uint32_t, std::string> names;
  auto readings = backend.Read();
  if (!readings) return names;
  for (const GpuReading& r : *readings) {
    if (r.mig_parent && r.gpu_instance_id) {
      names[r.index] = std::to_string(*r.mig_parent) + "." + std::to_string(*r.gpu_instance_id);
    }
  }
  return names;
}

Status GpuJobs::WriteMappingDir() {
  std::lock_guard<std::mutex> lock(mu_);
  return WriteLocked();
}

Status GpuJobs::WriteLocked() {
  if (dir_.empty()) return {};
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return MakeError(ErrorCode::kUnavailable, dir_ + ": " + ec.message());
  if (!scanned_) {  // files an earlier agent run left: ours to replace or remove
    scanned_ = true;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      std::string name = entry.path().filename().string();
      if (IsMappingFileName(name)) written_.insert(name);
    }
  }
  std::map<std::string, std::set<uint64_t>> files;  // file -> job ids
  for (const auto& [run, held] : runs_) {
    for (uint32_t i = 0; i < 64; ++i) {
      if (!held.gpus.contains(i)) continue;
      auto name = file_names_.find(i);
      files[name != file_names_.end() ? name->second : std::to_string(i)].insert(run.job.value);
    }
  }
  Status first;
  for (const auto& [name, jobs] : files) {
    std::string text;
    for (uint64_t id : jobs) text += std::to_string(id) + "\n";
    Status s = api::WriteFileAtomically(dir_ + "/" + name, text, api::WriteMode::kReplace, 0644,
                                        "job-mapping file");
    if (!s && first) first = s;
    written_.insert(name);
  }
  for (auto it = written_.begin(); it != written_.end();) {
    if (files.contains(*it)) {
      ++it;
      continue;
    }
    fs::remove(dir_ + "/" + *it, ec);
    if (ec && first)
      first = MakeError(ErrorCode::kUnavailable, dir_ + "/" + *it + ": " + ec.message());
    it = written_.erase(it);
  }
  return first;
}

}  // namespace corral::agent
