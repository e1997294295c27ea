// SVG plots of simulator runs, written by hand (no plotting library): one line per policy.
//
//   jct_cdf.svg      the CDF of job completion times (log-scaled time axis)
//   utilisation.svg  allocated GPUs / capacity over time (averaged per bin)
//   queue.svg        pending jobs over time (averaged per bin)
//
// Pure functions of their inputs: equal runs give byte-identical files. Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "sim/simulator.h"
#include "sim/workload.h"

namespace corral::sim {

struct PlotRun {
  std::string policy;
  const SimResult* result = nullptr;
};

// A line chart: `series` are (name, points); axes from the data (x optionally log10).
struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;
};
std::string RenderLineChart(const std::string& title, const std::string& x_label,
                            const std::string& y_label, const std::vector<LineSeries>& series,
                            bool log_x, double y_min, double y_max);

std::string JctCdfSvg(const std::vector<PlotRun>& runs, const std::string& title);
std::string UtilisationSvg(const std::vector<PlotRun>& runs, const std::string& title);
std::string QueueLengthSvg(const std::vector<PlotRun>& runs, const std::string& title);

// The step function of `timeline` averaged over `bins` equal bins of [start, end]; `value` picks
// the quantity of a sample. Returns (bin middle in days since start, average).
std::vector<std::pair<double, double>> BinTimeline(const std::vector<TimelineSample>& timeline,
                                                   Timestamp start, Timestamp end, size_t bins,
                                                   double (*value)(const TimelineSample&));

}  // namespace corral::sim
