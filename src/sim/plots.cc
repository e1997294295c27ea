#include "sim/plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace corral::sim {
namespace {

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr double kWidth = 900, kHeight = 520;
constexpr double kLeft = 80, kRight = 170, kTop = 50, kBottom = 60;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A "nice" tick step for a span: 1, 2 or 5 times a power of ten, about `n` ticks.
double NiceStep(double span, int n) {
  if (span <= 0) return 1;
  double raw = span / n;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

std::string TickLabel(double v, bool log_x) {
  char buf[32];
  if (log_x) {
    // v is log10(seconds): label in s/m/h/d.
    double s = std::pow(10.0, v);
    if (s < 60) {
      std::snprintf(buf, sizeof buf, "%gs", s);
    } else if (s < 3600) {
      std::snprintf(buf, sizeof buf, "%.3gm", s / 60);
    } else if (s < 86400) {
      std::snprintf(buf, sizeof buf, "%.3gh", s / 3600);
    } else {
      std::snprintf(buf, sizeof buf, "%.3gd", s / 86400);
    }
  } else {
    std::snprintf(buf, sizeof buf, "%g", v);
  }
  return buf;
}

}  // namespace

std::string RenderLineChart(const std::string& title, const std::string& x_label,
                            const std::string& y_label, const std::vector<LineSeries>& series,
                            bool log_x, double y_min, double y_max) {
  double x_min = INFINITY, x_max = -INFINITY;
  for (const LineSeries& s : series) {
    for (auto [x, y] : s.points) {
      double xv = log_x ? std::log10(std::max(x, 1.0)) : x;
      x_min = std::min(x_min, xv);
      x_max = std::max(x_max, xv);
      if (y_max <= y_min) y_max = std::max(y_max, y);
    }
  }
  if (!std::isfinite(x_min)) x_min = 0, x_max = 1;
  if (log_x) {
    x_min = std::floor(x_min);
    x_max = std::max(x_min + 1, std::ceil(x_max));
  }
  if (x_max <= x_min) x_max = x_min + 1;
  if (y_max <= y_min) y_max = y_min + 1;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (x - x_min) / (x_max - x_min) * pw; };
  auto py = [&](double y) { return kTop + ph - (y - y_min) / (y_max - y_min) * ph; };

  std::string out;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(kWidth) + "\" height=\"" +
         Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"" + Num(kWidth / 2) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">" +
         Escape(title) + "</text>\n";
  // Grid and ticks.
  double xs = log_x ? 1.0 : NiceStep(x_max - x_min, 8);
  for (double x = std::ceil(x_min / xs) * xs; x <= x_max + 1e-9; x += xs) {
    out += "<line x1=\"" + Num(px(x)) + "\" y1=\"" + Num(kTop) + "\" x2=\"" + Num(px(x)) +
           "\" y2=\"" + Num(kTop + ph) + "\" stroke=\"#ddd\"/>\n";
    out += "<text x=\"" + Num(px(x)) + "\" y=\"" + Num(kTop + ph + 18) +
           "\" text-anchor=\"middle\">" + TickLabel(x, log_x) + "</text>\n";
  }
  double ys = NiceStep(y_max - y_min, 6);
  for (double y = std::ceil(y_min / ys) * ys; y <= y_max + 1e-9; y += ys) {
    out += "<line x1=\"" + Num(kLeft) + "\" y1=\"" + Num(py(y)) + "\" x2=\"" + Num(kLeft + pw) +
           "\" y2=\"" + Num(py(y)) + "\" stroke=\"#ddd\"/>\n";
    out += "<text x=\"" + Num(kLeft - 8) + "\" y=\"" + Num(py(y) + 4) + "\" text-anchor=\"end\">" +
           TickLabel(y, false) + "</text>\n";
  }
  out += "<rect x=\"" + Num(kLeft) + "\" y=\"" + Num(kTop) + "\" width=\"" + Num(pw) +
         "\" height=\"" + Num(ph) + "\" fill=\"none\" stroke=\"black\"/>\n";
  out += "<text x=\"" + Num(kLeft + pw / 2) + "\" y=\"" + Num(kHeight - 16) +
         "\" text-anchor=\"middle\">" + Escape(x_label) + "</text>\n";
  out += "<text x=\"18\" y=\"" + Num(kTop + ph / 2) +
         "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " + Num(kTop + ph / 2) + ")\">" +
         Escape(y_label) + "</text>\n";
  // Lines and legend.
  for (size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % (sizeof kColours / sizeof kColours[0])];
    std::string pts;
    for (auto [x, y] : series[i].points) {
      double xv = log_x ? std::log10(std::max(x, 1.0)) : x;
      if (!pts.empty()) pts += ' ';
      pts += Num(px(xv)) + "," + Num(py(std::clamp(y, y_min, y_max)));
    }
    out += "<polyline fill=\"none\" stroke=\"" + std::string(colour) +
           "\" stroke-width=\"1.6\" points=\"" + pts + "\"/>\n";
    double ly = kTop + 14 + 20 * static_cast<double>(i);
    out += "<line x1=\"" + Num(kLeft + pw + 14) + "\" y1=\"" + Num(ly) + "\" x2=\"" +
           Num(kLeft + pw + 38) + "\" y2=\"" + Num(ly) + "\" stroke=\"" + colour +
           "\" stroke-width=\"3\"/>\n";
    out += "<text x=\"" + Num(kLeft + pw + 44) + "\" y=\"" + Num(ly + 4) + "\">" +
           Escape(series[i].name) + "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

std::vector<std::pair<double, double>> BinTimeline(const std::vector<TimelineSample>& timeline,
                                                   Timestamp start, Timestamp end, size_t bins,
                                                   double (*value)(const TimelineSample&)) {
  std::vector<std::pair<double, double>> out;
  if (bins == 0 || end <= start) return out;
  const double span = ToSecondsF(end - start);
  const double width = span / static_cast<double>(bins);
  std::vector<double> area(bins, 0.0);
  for (size_t i = 0; i < timeline.size(); ++i) {
    double a = ToSecondsF(timeline[i].t - start);
    double b = i + 1 < timeline.size() ? ToSecondsF(timeline[i + 1].t - start) : span;
    a = std::clamp(a, 0.0, span);
    b = std::clamp(b, 0.0, span);
    double v = value(timeline[i]);
    while (a < b) {
      size_t bin = std::min(bins - 1, static_cast<size_t>(a / width));
      double bin_end = std::min(b, (static_cast<double>(bin) + 1) * width);
      if (bin_end <= a) bin_end = b;  // rounding at the last bin
      area[bin] += v * (bin_end - a);
      a = bin_end;
    }
  }
  for (size_t k = 0; k < bins; ++k) {
    out.push_back({(static_cast<double>(k) + 0.5) * width / 86400.0, area[k] / width});
  }
  return out;
}

std::string JctCdfSvg(const std::vector<PlotRun>& runs, const std::string& title) {
  std::vector<LineSeries> series;
  for (const PlotRun& r : runs) {
    std::vector<double> jct;
    for (const JobOutcome& o : r.result->outcomes) {
      if (o.end_kind == JobEnd::kCompleted || o.end_kind == JobEnd::kTimeout) {
        jct.push_back(ToSecondsF(o.end - o.submit));
      }
    }
    std::sort(jct.begin(), jct.end());
    LineSeries s{r.policy, {}};
    const size_t n = jct.size();
    const size_t points = std::min<size_t>(n, 600);
    for (size_t k = 0; k < points; ++k) {
      size_t i = points == 1 ? n - 1 : k * (n - 1) / (points - 1);
      s.points.push_back({jct[i], static_cast<double>(i + 1) / static_cast<double>(n)});
    }
    series.push_back(std::move(s));
  }
  return RenderLineChart(title, "job completion time (log scale)", "fraction of jobs", series, true,
                         0, 1);
}

namespace {

std::vector<LineSeries> TimeSeries(const std::vector<PlotRun>& runs,
                                   double (*value)(const TimelineSample&), bool per_capacity) {
  Timestamp start = Timestamp::max(), end{};
  for (const PlotRun& r : runs) {
    start = std::min(start, r.result->start);
    end = std::max(end, r.result->end);
  }
  std::vector<LineSeries> series;
  for (const PlotRun& r : runs) {
    LineSeries s{r.policy, BinTimeline(r.result->timeline, start, end, 400, value)};
    if (per_capacity && r.result->capacity_gpus > 0) {
      for (auto& p : s.points) p.second = 100.0 * p.second / r.result->capacity_gpus;
    }
    series.push_back(std::move(s));
  }
  return series;
}

}  // namespace

std::string UtilisationSvg(const std::vector<PlotRun>& runs, const std::string& title) {
  auto series = TimeSeries(
      runs, [](const TimelineSample& s) { return static_cast<double>(s.allocated_gpus); }, true);
  return RenderLineChart(title, "days since the start of the trace",
                         "allocated GPUs (% of capacity)", series, false, 0, 100);
}

std::string QueueLengthSvg(const std::vector<PlotRun>& runs, const std::string& title) {
  auto series = TimeSeries(
      runs, [](const TimelineSample& s) { return static_cast<double>(s.pending_jobs); }, false);
  return RenderLineChart(title, "days since the start of the trace",
                         "pending jobs (average per bin)", series, false, 0, 0);
}

}  // namespace corral::sim
