// The controller's /metrics (Prometheus text format) and /metrics/targets (Prometheus HTTP
// service discovery) from a `ClusterMetrics` snapshot and the service's figures. Runs on the
// scraping request's thread, never on the state thread. docs/metrics.md lists every family.
#pragma once

#include <string>

#include "controller/metrics/cluster_metrics.h"
#include "controller/metrics/service_metrics.h"

namespace corral::controller::metrics {

std::string RenderControllerMetrics(const ClusterMetrics& cluster, const ServiceFigures& service);

// [{"targets": ["HOST:PORT"], "labels": {"__scheme__": "http", "__metrics_path__": "/metrics",
// "node": NAME, "partitions": "a,b"}}, ...]: one entry per registered node with an agent
// address, by name.
std::string RenderTargets(const ClusterMetrics& cluster);

}  // namespace corral::controller::metrics
