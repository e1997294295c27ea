#include "sched/internal/explain.h"

#include <algorithm>

namespace corral::sched::internal {

std::string DemandUnit(const JobInfo& j, const Demand& d) {
  if (d.exclusive) return "a whole node";
  if (d.gpus == 0) return std::to_string(d.cpus) + (d.cpus == 1 ? " CPU" : " CPUs");
  std::string unit = std::to_string(d.gpus) + (d.gpus == 1 ? " GPU" : " GPUs");
  if (!j.view->resources.gpu_type.empty()) unit += " of type " + j.view->resources.gpu_type;
  return unit;
}

std::string DescribeDemand(const JobInfo& j, const Partition& partition, const Demand& d) {
  uint32_t n = std::max<uint32_t>(1, j.view->resources.nodes);
  std::string what = n == 1 ? DemandUnit(j, d)
                     : d.exclusive
                         ? std::to_string(n) + " whole nodes"
                         : std::to_string(n) + " nodes with " + DemandUnit(j, d) + " each";
  return "waiting for " + what + " in partition " + partition.name;
}

}  // namespace corral::sched::internal
