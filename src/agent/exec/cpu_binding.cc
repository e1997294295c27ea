#include "agent/exec/cpu_binding.h"

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <fstream>

namespace corral::agent {
namespace {

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

Result<std::vector<uint32_t>> ParseCpuList(const std::string& text) {
  std::vector<uint32_t> out;
  size_t i = 0;
  auto bad = [&] { return InvalidArgument("cpu list \"" + text + "\": not of the form 0-3,8"); };
  auto number = [&](uint32_t* v) {
    size_t start = i;
    uint64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + static_cast<uint64_t>(text[i] - '0');
      if (n > 1u << 20) return false;
      ++i;
    }
    *v = static_cast<uint32_t>(n);
    return i > start;
  };
  while (i < text.size() && text[i] != '\n') {
    uint32_t a = 0, b = 0;
    if (!number(&a)) return bad();
    b = a;
    if (i < text.size() && text[i] == '-') {
      ++i;
      if (!number(&b) || b < a) return bad();
    }
    for (uint32_t c = a; c <= b; ++c) out.push_back(c);
    if (i < text.size() && text[i] == ',') {
      ++i;
    } else if (i < text.size() && text[i] != '\n') {
      return bad();
    }
  }
  return out;
}

std::set<uint32_t> OwnCpuAffinity() {
  std::set<uint32_t> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (uint32_t c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.insert(c);
  }
  return out;
}

NumaTopology ReadNumaTopology(const std::string& sysfs_root, const std::set<uint32_t>& allowed) {
  NumaTopology t;
  std::string dir = sysfs_root + "/devices/system/node";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("node", 0) != 0 || n.size() == 4 ||
          n.find_first_not_of("0123456789", 4) != std::string::npos) {
        continue;
      }
      auto cpus = ParseCpuList(ReadLine(dir + "/" + n + "/cpulist"));
      if (!cpus) continue;
      std::vector<uint32_t> kept;
      for (uint32_t c : *cpus) {
        if (allowed.empty() || allowed.contains(c)) kept.push_back(c);
      }
      if (!kept.empty()) t.cpus_by_node[std::stoi(n.substr(4))] = kept;
    }
    closedir(d);
  }
  if (t.cpus_by_node.empty()) {
    if (!allowed.empty()) {
      t.cpus_by_node[0].assign(allowed.begin(), allowed.end());
    } else if (auto cpus = ParseCpuList(ReadLine(sysfs_root + "/devices/system/cpu/online"));
               cpus && !cpus->empty()) {
      t.cpus_by_node[0] = *cpus;
    }
  }
  return t;
}

std::vector<uint32_t> PickCpus(const NumaTopology& topology, uint32_t count,
                               const std::set<int32_t>& near_nodes,
                               const std::set<uint32_t>& busy) {
  std::vector<uint32_t> out;
  std::set<uint32_t> taken;
  auto take = [&](bool near, bool free) {
    for (const auto& [node, cpus] : topology.cpus_by_node) {
      if (near_nodes.contains(node) != near) continue;
      for (uint32_t c : cpus) {
        if (out.size() >= count) return;
        if (taken.contains(c) || busy.contains(c) != !free) continue;
        out.push_back(c);
        taken.insert(c);
      }
    }
  };
  take(true, true);
  take(false, true);
  take(true, false);
  take(false, false);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint32_t> NodesOf(const NumaTopology& topology, const std::vector<uint32_t>& cpus) {
  std::vector<uint32_t> nodes;
  for (const auto& [node, list] : topology.cpus_by_node) {
    for (uint32_t c : cpus) {
      if (node >= 0 && std::find(list.begin(), list.end(), c) != list.end()) {
        nodes.push_back(static_cast<uint32_t>(node));
        break;
      }
    }
  }
  return nodes;
}

}  // namespace corral::agent
