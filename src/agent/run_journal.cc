#include "agent/run_journal.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace corral::agent {

namespace fs = std::filesystem;

Status MemoryRunJournal::Put(const JournalEntry& entry) {
  entries_[entry.name] = entry;
  return {};
}

void MemoryRunJournal::Remove(const std::string& name) { entries_.erase(name); }

std::vector<JournalEntry> MemoryRunJournal::List() const {
  std::vector<JournalEntry> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) out.push_back(entry);
  return out;
}

Status FileRunJournal::Put(const JournalEntry& entry) {
  std::ofstream out(dir_ + "/" + entry.name, std::ios::trunc);
  out << entry.pid << " " << entry.start_time << "\n";
  out.flush();
  if (!out) return Internal("run journal: cannot write " + dir_ + "/" + entry.name);
  return {};
}

void FileRunJournal::Remove(const std::string& name) {
  std::error_code ec;
  fs::remove(dir_ + "/" + name, ec);
}

std::vector<JournalEntry> FileRunJournal::List() const {
  std::vector<JournalEntry> out;
  std::error_code ec;
  for (const auto& file : fs::directory_iterator(dir_, ec)) {
    JournalEntry entry;
    entry.name = file.path().filename().string();
    std::ifstream in(file.path());
    if (!(in >> entry.pid >> entry.start_time)) {
      entry.pid = 0;
      entry.start_time.clear();
    }
    out.push_back(std::move(entry));
  }
  std::sort(out.begin(), out.end(),
            [](const JournalEntry& a, const JournalEntry& b) { return a.name < b.name; });
  return out;
}

std::string ProcessStartTime(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return "";
  size_t close = line.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

}  // namespace corral::agent
