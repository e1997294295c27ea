// ServiceMetrics: what the controller's service measures outside the state: API requests by
// route pattern (never the raw path, so a job id does not make a series) and by principal
// (for `sdiag` only: not a /metrics series), and store commits.
// Handler threads and the state thread record; /metrics copies (`Snapshot`).
//
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "controller/metrics/histogram.h"
#include "core/time.h"

namespace corral::controller::metrics {

struct RouteFigures {
  std::map<int, uint64_t> by_status;  // HTTP status -> requests
  LatencyHistogram latency;
};

// The authenticated requests of one principal (`sdiag`'s "by user").
struct CallerFigures {
  uint32_t uid = 0;
  uint64_t count = 0;
  double seconds = 0;
};

struct ServiceFigures {
  // (method, route pattern) -> figures.
  std::map<std::pair<std::string, std::string>, RouteFigures> routes;
  LatencyHistogram commit;  // durable store writes of a non-empty batch
  uint64_t committed_changes = 0;
  std::map<std::string, CallerFigures> callers;  // principal's user name -> figures
};

class ServiceMetrics {
 public:
  void RecordRequest(const std::string& method, const std::string& route, int status,
                     Duration took) {
    std::lock_guard<std::mutex> lock(mu_);
    RouteFigures& r = figures_.routes[{method, route}];
    ++r.by_status[status];
    r.latency.Observe(ToSecondsF(took));
  }
  void RecordCaller(const std::string& user, uint32_t uid, Duration took) {
    std::lock_guard<std::mutex> lock(mu_);
    CallerFigures& c = figures_.callers[user];
    c.uid = uid;
    ++c.count;
    c.seconds += ToSecondsF(took);
  }
  void RecordCommit(size_t changes, Duration took) {
    std::lock_guard<std::mutex> lock(mu_);
    figures_.commit.Observe(ToSecondsF(took));
    figures_.committed_changes += changes;
  }
  ServiceFigures Snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return figures_;
  }

 private:
  mutable std::mutex mu_;
  ServiceFigures figures_;  // guarded by mu_
};

}  // namespace corral::controller::metrics
