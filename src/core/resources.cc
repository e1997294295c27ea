#include "core/resources.h"

#include <cctype>
#include <charconv>
#include <algorithm>
#include <limits>
#include <string_view>

namespace corral {

Status ValidateResourceRequest(const ResourceRequest& r) {
  if (r.nodes == 0) return InvalidArgument("nodes: must be at least 1");
  if (r.nodes > 100000) return InvalidArgument("nodes: " + std::to_string(r.nodes) + " is too many");
  if (r.nodes_max != 0 && r.nodes_max < r.nodes) {
    return InvalidArgument("nodes: maximum " + std::to_string(r.nodes_max) + " is below minimum " +
                           std::to_string(r.nodes));
  }
  if (r.ntasks == 0) return InvalidArgument("ntasks: must be at least 1");
  if (r.cpus_per_task == 0) return InvalidArgument("cpus_per_task: must be at least 1");
  if (r.ntasks > 10'000'000 || r.cpus_per_task > 1'000'000) {
    return InvalidArgument("ntasks: request is too large");
  }
  if (r.gpus > 0 && r.gpus_per_node > 0 && r.gpus != r.gpus_per_node * r.nodes) {
    return InvalidArgument("gpus: " + std::to_string(r.gpus) + " total does not match " +
                           std::to_string(r.gpus_per_node) + " per node on " +
                           std::to_string(r.nodes) + " nodes");
  }
  if (r.gpus > 0 && r.gpus_per_node == 0 && r.gpus % r.nodes != 0) {
    return InvalidArgument("gpus: " + std::to_string(r.gpus) + " GPUs cannot be spread evenly over " +
                           std::to_string(r.nodes) + " nodes");
  }
  if (r.gpus > 1'000'000 || r.gpus_per_node > 64 || r.gpus_per_task > 64) {
    return InvalidArgument("gpus: request is too large");
  }
  if (r.mem_per_node_mb > 0 && r.mem_per_cpu_mb > 0) {
    return InvalidArgument("mem: --mem and --mem-per-cpu are mutually exclusive");
  }
  for (char c : r.gpu_type) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) {
      return InvalidArgument("gpu_type: \"" + r.gpu_type + "\" has an invalid character");
    }
  }
  return {};
}

PerNodeDemand ComputePerNodeDemand(const ResourceRequest& r, uint64_t def_mem_per_cpu_mb) {
  PerNodeDemand d;
  uint32_t nodes = r.nodes == 0 ? 1 : r.nodes;
  d.tasks = r.ntasks_per_node != 0 ? r.ntasks_per_node : (r.ntasks + nodes - 1) / nodes;
  if (d.tasks == 0) d.tasks = 1;
  d.cpus = d.tasks * r.cpus_per_task;
  if (r.gpus_per_node > 0) {
    d.gpus = r.gpus_per_node;
  } else if (r.gpus > 0) {
    d.gpus = r.gpus / nodes;
  } else if (r.gpus_per_task > 0) {
    d.gpus = r.gpus_per_task * d.tasks;
  }
  if (r.cpus_per_gpu > 0 && d.gpus > 0) d.cpus = std::max(d.cpus, r.cpus_per_gpu * d.gpus);
  if (r.mem_per_node_mb > 0) {
    d.mem_mb = r.mem_per_node_mb;
  } else if (r.mem_per_cpu_mb > 0) {
    d.mem_mb = r.mem_per_cpu_mb * d.cpus;
  } else if (r.mem_per_gpu_mb > 0) {
    d.mem_mb = r.mem_per_gpu_mb * d.gpus;
  } else {
    d.mem_mb = def_mem_per_cpu_mb * d.cpus;
  }
  d.gpu_type = r.gpu_type;
  d.exclusive = r.exclusive;
  return d;
}

uint32_t TotalGpus(const ResourceRequest& r) {
  return ComputePerNodeDemand(r).gpus * (r.nodes == 0 ? 1 : r.nodes);
}

Result<uint64_t> ParseMemoryMb(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("invalid memory size \"" + std::string(text) +
                           "\": expected a number with an optional K, M, G or T suffix");
  };
  std::string_view s = text;
  if (s.empty()) return bad();
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0 || digits > 15) return bad();
  uint64_t n = 0;
  std::from_chars(s.data(), s.data() + digits, n);
  std::string_view suffix = s.substr(digits);
  if (!suffix.empty() && (suffix.back() == 'b' || suffix.back() == 'B') && suffix.size() == 2) {
    suffix.remove_suffix(1);
  }
  if (suffix.size() > 1) return bad();
  char u = suffix.empty() ? 'M' : static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0])));
  switch (u) {
    case 'K': return (n + 1023) / 1024;
    case 'M': return n;
    case 'G': return n * 1024;
    case 'T': return n * 1024 * 1024;
    default: return bad();
  }
}

std::string FormatMemoryMb(uint64_t mb) {
  if (mb == 0) return "0";
  if (mb % (1024 * 1024) == 0) return std::to_string(mb / (1024 * 1024)) + "T";
  if (mb % 1024 == 0) return std::to_string(mb / 1024) + "G";
  return std::to_string(mb) + "M";
}

}  // namespace corral
