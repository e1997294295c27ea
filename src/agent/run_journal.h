// RunJournal: the processes the agent runs, kept across its restarts. One entry per process
// it started (a run's batch step or a step task) names the process's pid and its start time,
// so that an agent restarted after a crash can kill what its previous run left behind (those
// jobs were lost with it) and never a process that merely reuses the pid.
//
// `FileRunJournal` keeps one small file per entry in a directory (the agent's
// `<state_dir>/running`); `MemoryRunJournal` keeps them in memory (tests, and the shape the
// agent's core is tested against).
//
// Thread-safety: not thread-safe; the agent's core calls it under the service's lock.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/result.h"

namespace corral::agent {

struct JournalEntry {
  // "42.7": the batch step of job 42's run of generation 7; "42.7.0.3": task 3 of its step 0.
  std::string name;
  int pid = 0;             // 0 when the entry could not be read
  std::string start_time;  // /proc/PID/stat field 22 (`ProcessStartTime`)
  bool operator==(const JournalEntry&) const = default;
};

class RunJournal {
 public:
  virtual ~RunJournal() = default;
  // Records `entry`, replacing one of the same name. Returns kInternal naming the entry when it
  // cannot be written.
  virtual Status Put(const JournalEntry& entry) = 0;
  // Forgets entry `name`; an unknown name is no error.
  virtual void Remove(const std::string& name) = 0;
  // Every entry, by name.
  virtual std::vector<JournalEntry> List() const = 0;
};

class MemoryRunJournal final : public RunJournal {
 public:
  Status Put(const JournalEntry& entry) override;
  void Remove(const std::string& name) override;
  std::vector<JournalEntry> List() const override;

 private:
  std::map<std::string, JournalEntry> entries_;
};

// One file per entry in `dir` (which the caller creates), holding "PID START_TIME\n".
class FileRunJournal final : public RunJournal {
 public:
  explicit FileRunJournal(std::string dir) : dir_(std::move(dir)) {}
  Status Put(const JournalEntry& entry) override;
  void Remove(const std::string& name) override;
  std::vector<JournalEntry> List() const override;

 private:
  std::string dir_;
};

// Field 22 of /proc/PID/stat, the process's start time since boot (what tells a process from
// a later one with the same pid); "" when the process does not exist.
std::string ProcessStartTime(int pid);

}  // namespace corral::agent
