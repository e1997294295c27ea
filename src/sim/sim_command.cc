#include "sim/sim_command.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/duration.h"
#include "sched/config.h"
#include "sched/las_policy.h"
#include "sched/policy_factory.h"
#include "sim/cluster.h"
#include "sim/from_store.h"
#include "sim/metrics.h"
#include "sim/plots.h"
#include "sim/policy_options.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim/workload.h"

namespace corral::sim {
namespace {

constexpr const char* kUsage = R"(usage: corral sim --trace FILE.csv --cluster SPEC [options]
       corral sim --from-store URL [--cluster SPEC] [options]

Replays a job trace through the scheduler (the same code and configuration as the controller)
on a virtual clock, under one or more policies, and reports per-policy metrics.

Input:
  --trace FILE          trace CSV: job_id,submit_time_s,duration_s,num_gpus,user,queue
                        [,time_limit_s,num_nodes,gpu_type,account]
  --from-store URL      the finished jobs of a controller's store (sqlite:PATH, PATH,
                        postgresql://...) as the trace; the "recorded" row is what happened
  --since TIME          with --from-store: jobs submitted at or after (2024-05-01[T12:00:00])
  --until TIME          with --from-store: jobs submitted before
  --cluster SPEC        nodes=352,gpus_per_node=8,model=v100[,name=,cpus=,memory=,nvlink=]
                        (groups separated by ';'), or a cluster TOML file ([[nodes]] groups
                        plus corral.toml scheduling sections); default with --from-store:
                        the store's registered nodes
  --config FILE         corral.toml: partitions, accounts, QOS, priority weights, fair share,
                        backfill, preemption, topology (default: the cluster file's sections,
                        else built-in defaults; both with fair share on unless the file sets
                        [scheduler.priority])

Policies and model:
  --policy LIST         comma-separated: fifo, backfill, default, las, sjf (all five by
                        default), or any policy of the factory (first_fit)
  --limit-factor F      time limit of jobs without time_limit_s: duration x F, rounded up like
                        users round (15 min / 1 h / 1 day steps); 0 = unlimited (default 2)
  --no-limit-rounding   the exact product (with --limit-factor 1: oracle limits)
  --checkpoint-interval TIME
                        preempted jobs keep their work up to the last checkpoint every TIME of
                        run time (Slurm time: "30:00", "1:00:00"); default none: a preempted
                        job restarts from scratch
  --las-thresholds LIST las queue thresholds in GPU-hours (default 1,10)
  --periodic-pass TIME  also run the controller's periodic pass every TIME while jobs wait
                        (default: passes on events only)
  --no-skip             run every event-driven pass, even those that cannot change anything
  --no-window           hand every pass all pending jobs (see docs/simulator.md, windows)
  --verify-windows      run each windowed pass in full as well and stop if they differ
  --seed N              [scheduler] seed for policies that randomise (default 0)

Output:
  --csv FILE            one row per policy (header: policy,jobs,...,mean_jct_s,...)
  --jobs-csv FILE       one row per policy and job: submit, start, end, preemptions
  --svg-dir DIR         jct_cdf.svg, utilisation.svg, queue.svg
  --write-trace FILE    write the trace that was replayed (e.g. from --from-store) as CSV
  --threads N           policies simulated at once (default: the CPUs, at most one per
                        policy); results do not depend on it
  --quiet               no table, no progress bar
  --profile             per policy: passes, skipped passes, time in the scheduler
)";

struct Args {
  std::string trace, from_store, since, until, cluster, config;
  std::vector<std::string> policies = {"fifo", "backfill", "default", "las", "sjf"};
  double limit_factor = 2.0;
  bool round_limits = true;
  Duration checkpoint{0};
  Duration periodic{0};
  std::optional<std::vector<double>> las_thresholds;
  bool skip = true;
  bool window = true;
  bool verify_windows = false;
  uint64_t seed = 0;
  std::string csv, jobs_csv, svg_dir, write_trace;
  bool quiet = false;
  bool profile = false;
  uint32_t threads = 0;  // 0 = the CPUs
};

std::vector<std::string> SplitList(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

Result<double> ParseDouble(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size())
    return InvalidArgument(flag + ": not a number \"" + v + "\"");
  return d;
}

Result<Args> ParseArgs(int argc, char** argv) {
  Args a;
  std::vector<std::string> items;
  for (int i = 1; i < argc; ++i) items.push_back(argv[i]);
  for (size_t i = 0; i < items.size(); ++i) {
    std::string flag = items[i];
    std::string value;
    bool has_value = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> Result<std::string> {
      if (has_value) return value;
      if (i + 1 >= items.size()) return InvalidArgument(flag + ": missing value");
      return items[++i];
    };
    auto duration = [&]() -> Result<Duration> {
      CORRAL_ASSIGN_OR_RETURN(std::string v, take());
      auto d = ParseSlurmDuration(v);
      if (!d) return InvalidArgument(flag + ": " + d.error().message);
      return *d;
    };
    if (flag == "--trace") {
      CORRAL_ASSIGN_OR_RETURN(a.trace, take());
    } else if (flag == "--from-store") {
      CORRAL_ASSIGN_OR_RETURN(a.from_store, take());
    } else if (flag == "--since") {
      CORRAL_ASSIGN_OR_RETURN(a.since, take());
    } else if (flag == "--until") {
      CORRAL_ASSIGN_OR_RETURN(a.until, take());
    } else if (flag == "--cluster") {
      CORRAL_ASSIGN_OR_RETURN(a.cluster, take());
    } else if (flag == "--config") {
      CORRAL_ASSIGN_OR_RETURN(a.config, take());
    } else if (flag == "--policy" || flag == "--policies") {
      CORRAL_ASSIGN_OR_RETURN(std::string v, take());
      a.policies = SplitList(v, ',');
      if (a.policies.empty()) return InvalidArgument("--policy: empty list");
    } else if (flag == "--limit-factor") {
      CORRAL_ASSIGN_OR_RETURN(std::string v, take());
      CORRAL_ASSIGN_OR_RETURN(a.limit_factor, ParseDouble(flag, v));
      if (a.limit_factor != 0 && a.limit_factor < 1) {
        return InvalidArgument(
            "--limit-factor: must be 0 (no limits) or >= 1 (a limit below the run time kills every "
            "job)");
      }
    } else if (flag == "--no-limit-rounding") {
      a.round_limits = false;
    } else if (flag == "--checkpoint-interval") {
      CORRAL_ASSIGN_OR_RETURN(a.checkpoint, duration());
    } else if (flag == "--periodic-pass") {
      CORRAL_ASSIGN_OR_RETURN(a.periodic, duration());
    } else if (flag == "--las-thresholds") {
      CORRAL_ASSIGN_OR_RETURN(std::string v, take());
      std::vector<double> t;
      for (const std::string& x : SplitList(v, ',')) {
        CORRAL_ASSIGN_OR_RETURN(double h, ParseDouble(flag, x));
        t.push_back(h * 3600.0);
      }
      a.las_thresholds = t;
    } else if (flag == "--no-skip") {
      a.skip = false;
    } else if (flag == "--no-window") {
      a.window = false;
    } else if (flag == "--verify-windows") {
      a.verify_windows = true;
    } else if (flag == "--seed") {
      CORRAL_ASSIGN_OR_RETURN(std::string v, take());
      char* end = nullptr;
      a.seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || end != v.c_str() + v.size())
        return InvalidArgument("--seed: not an integer \"" + v + "\"");
    } else if (flag == "--csv") {
      CORRAL_ASSIGN_OR_RETURN(a.csv, take());
    } else if (flag == "--jobs-csv") {
      CORRAL_ASSIGN_OR_RETURN(a.jobs_csv, take());
    } else if (flag == "--svg-dir") {
      CORRAL_ASSIGN_OR_RETURN(a.svg_dir, take());
    } else if (flag == "--write-trace") {
      CORRAL_ASSIGN_OR_RETURN(a.write_trace, take());
    } else if (flag == "--threads") {
      CORRAL_ASSIGN_OR_RETURN(std::string v, take());
      char* end = nullptr;
      unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || end != v.c_str() + v.size() || n == 0 || n > 256)
        return InvalidArgument("--threads: not a number from 1 to 256: \"" + v + "\"");
      a.threads = static_cast<uint32_t>(n);
    } else if (flag == "--quiet" || flag == "-q") {
      a.quiet = true;
    } else if (flag == "--profile") {
      a.profile = true;
    } else {
      return InvalidArgument("unknown option \"" + items[i] + "\" (corral sim --help)");
    }
  }
  if (a.trace.empty() == a.from_store.empty())
    return InvalidArgument("give one of --trace FILE or --from-store URL");
  if (!a.trace.empty() && a.cluster.empty())
    return InvalidArgument("--cluster SPEC is required with --trace");
  return a;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Unavailable(path + ": read error");
  return ss.str();
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Unavailable(path + ": cannot create");
  out << text;
  out.close();
  if (!out) return Unavailable(path + ": write error");
  return {};
}

// "2024-05-01" or "2024-05-01T12:00:00" (UTC).
Result<Timestamp> ParseTime(const std::string& flag, const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail = 0;
  int n = std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d%c", &y, &mo, &d, &h, &mi, &s, &tail);
  if (!(n == 3 || n == 6))
    return InvalidArgument(flag + ": expected YYYY-MM-DD[THH:MM:SS], got \"" + text + "\"");
  std::chrono::year_month_day ymd{std::chrono::year(y),
                                  std::chrono::month(static_cast<unsigned>(mo)),
                                  std::chrono::day(static_cast<unsigned>(d))};
  if (!ymd.ok()) return InvalidArgument(flag + ": no such date \"" + text + "\"");
  return Timestamp(std::chrono::sys_days(ymd).time_since_epoch() + std::chrono::hours(h) +
                   std::chrono::minutes(mi) + std::chrono::seconds(s));
}

// One bar for all the policies being simulated (several at once with --threads): each
// reports its own fraction, the bar shows their mean. Thread-safe.
class ProgressBar {
 public:
  ProgressBar(bool enabled, size_t runs) : enabled_(enabled), fractions_(runs, 0.0) {}
  void Start(const std::string& label) {
    std::lock_guard<std::mutex> lock(mu_);
    label_ = label;
    last_ = -1;
    ShowLocked(0);
  }
  void Report(size_t run, double fraction) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    fractions_[run] = fraction;
    double sum = 0;
    for (double f : fractions_) sum += f;
    ShowLocked(sum / static_cast<double>(fractions_.size()));
  }
  void Done() {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    std::fprintf(stderr, "\r%70s\r", "");
    std::fflush(stderr);
  }

 private:
  void ShowLocked(double fraction) {
    if (!enabled_) return;
    int pct = static_cast<int>(fraction * 100);
    if (pct == last_) return;
    last_ = pct;
    constexpr int kWidth = 40;
    int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar += std::string(static_cast<size_t>(kWidth - filled), '-');
    std::fprintf(stderr, "\r  %-10s [%s] %3d%%", label_.c_str(), bar.c_str(), pct);
    std::fflush(stderr);
  }

  bool enabled_;
  std::mutex mu_;
  std::vector<double> fractions_;
  std::string label_;
  int last_ = -1;
};

std::string JobsCsvRows(const std::string& policy, const Workload& w, const SimResult& r) {
  std::string out;
  auto rel = [&](Timestamp t) {
    return t == Timestamp{} ? std::string() : FormatSeconds(t - r.start);
  };
  for (size_t i = 0; i < r.outcomes.size(); ++i) {
    const JobOutcome& o = r.outcomes[i];
    const SimJob& j = w.jobs[i];
    out += policy + ',' + std::to_string(j.trace_id) + ',' + std::to_string(j.gpus) + ',' +
           rel(o.submit) + ',' + rel(o.first_start) + ',' + rel(o.end) + ',' +
           std::string(JobEndName(o.end_kind)) + ',' + std::to_string(o.preemptions) + '\n';
  }
  return out;
}

int Fail(const std::string& message, int code = 2) {
  std::fprintf(stderr, "corral sim: %s\n", message.c_str());
  return code;
}

}  // namespace

int RunSimCommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::fputs(kUsage, stdout);
      std::string names;
      for (const auto& p : sched::RegisteredPolicies()) {
        names += "  " + std::string(p.name) +
                 std::string(p.name.size() < 10 ? 10 - p.name.size() : 1, ' ') +
                 std::string(p.description) + "\n";
      }
      std::printf("\nRegistered policies:\n%s", names.c_str());
      return 0;
    }
  }
  auto parsed = ParseArgs(argc, argv);
  if (!parsed)
    return Fail(parsed.error().message + "\n" +
                "usage: corral sim --trace FILE.csv --cluster SPEC [options] (--help)");
  const Args& args = *parsed;
  const Clock& clock = SystemClock::Get();

  // Trace and cluster.
  Trace trace;
  std::optional<StoreHistory> history;
  std::string trace_name;
  if (!args.trace.empty()) {
    auto text = ReadFile(args.trace);
    if (!text) return Fail(text.error().message);
    auto t = ParseTraceCsv(*text, args.trace);
    if (!t) return Fail(t.error().message);
    trace = std::move(*t);
    trace_name = std::filesystem::path(args.trace).filename().string();
  } else {
    StoreQuery q;
    if (!args.since.empty()) {
      auto t = ParseTime("--since", args.since);
      if (!t) return Fail(t.error().message);
      q.since = *t;
    }
    if (!args.until.empty()) {
      auto t = ParseTime("--until", args.until);
      if (!t) return Fail(t.error().message);
      q.until = *t;
    }
    auto h = LoadHistoryFromStore(args.from_store, q);
    if (!h) return Fail(h.error().message);
    history = std::move(*h);
    trace = history->trace;
    trace_name = args.from_store;
  }
  if (!args.write_trace.empty()) {
    if (auto s = WriteFile(args.write_trace, FormatTraceCsv(trace)); !s)
      return Fail(s.error().message);
  }
  ClusterSpec cluster;
  std::vector<sched::NodeView> nodes;
  if (!args.cluster.empty()) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(args.cluster, ec)) {
      auto text = ReadFile(args.cluster);
      if (!text) return Fail(text.error().message);
      auto c = ParseClusterToml(*text, args.cluster);
      if (!c) return Fail(c.error().message);
      cluster = std::move(*c);
    } else {
      auto c = ParseClusterShortForm(args.cluster);
      if (!c) return Fail(c.error().message);
      cluster = std::move(*c);
    }
    nodes = BuildNodes(cluster);
  } else {
    nodes = history->nodes;
    if (nodes.empty()) return Fail("the store has no registered node: give --cluster SPEC");
  }

  // Configuration.
  sched::SchedulerConfig config;
  std::string config_note;
  if (!args.config.empty()) {
    auto text = ReadFile(args.config);
    if (!text) return Fail(text.error().message);
    auto c = sched::ParseSchedulerConfig(*text, args.config);
    if (!c) return Fail(c.error().message);
    config = std::move(*c);
    config_note = args.config;
  } else {
    if (!cluster.toml_text.empty()) {
      auto c = sched::ParseSchedulerConfig(cluster.toml_text, cluster.source);
      if (!c) return Fail(c.error().message);
      config = std::move(*c);
      config_note = "the scheduling sections of " + cluster.source;
    } else {
      config = sched::DefaultSchedulerConfig();
      config_note = "built-in defaults";
    }
    if (!cluster.sets_priority) {
      config.priority.weight_fairshare = 10000;
      config_note += "; fair share on (weight_fairshare 10000, weight_age 1000, accounts = queues)";
    }
  }
  config.seed = args.seed;

  WorkloadOptions wopt{.limit_factor = args.limit_factor, .round_limits = args.round_limits};
  auto workload = BuildWorkload(trace, nodes, config, wopt);
  if (!workload) return Fail(workload.error().message);

  uint32_t capacity = 0;
  for (const auto& n : nodes) capacity += n.usable_gpus.size();
  const bool tty = isatty(STDERR_FILENO) == 1 && !args.quiet;
  if (!args.quiet) {
    std::printf("trace    %s: %zu jobs (%zu refused)\n", trace_name.c_str(), workload->jobs.size(),
                workload->refused);
    std::printf("cluster  %zu nodes, %u GPUs\n", nodes.size(), capacity);
    std::printf("config   %s\n", config_note.c_str());
    if (args.limit_factor > 0) {
      std::printf("limits   time_limit_s, else duration x %g%s\n", args.limit_factor,
                  args.round_limits ? ", rounded up" : "");
    } else {
      std::printf("limits   time_limit_s, else none\n");
    }
    std::printf(
        "preempt  %s\n\n",
        args.checkpoint.count() > 0
            ? ("work kept up to checkpoints every " + FormatSlurmDuration(args.checkpoint)).c_str()
            : "a preempted job restarts from scratch");
    std::fflush(stdout);
  }

  std::vector<PolicyMetrics> rows;
  std::vector<std::unique_ptr<SimResult>> results;
  std::vector<std::string> names;
  std::vector<std::string> profile_lines;
  std::string jobs_csv = "policy,job_id,gpus,submit_s,start_s,end_s,end,preemptions\n";
  if (history) {
    auto recorded = std::make_unique<SimResult>(RecordedRun(*workload, *history, capacity));
    rows.push_back(ComputeMetrics("recorded", *workload, *recorded));
    jobs_csv += JobsCsvRows("recorded", *workload, *recorded);
    names.push_back("recorded");
    results.push_back(std::move(recorded));
  }
  // The policies' objects first (a bad one is reported before anything runs), then their
  // runs, several at once: each run is independent (its own policy object, options and
  // results), and the results are gathered in the order of --policy, so the output does not
  // depend on the threads.
  std::vector<std::unique_ptr<sched::Policy>> policies;
  std::vector<SimOptions> options;
  for (const std::string& name : args.policies) {
    std::unique_ptr<sched::Policy> policy;
    if (name == "las") {
      sched::LasOptions lo;
      if (args.las_thresholds) lo.thresholds_gpu_seconds = *args.las_thresholds;
      auto p = sched::LasPolicy::Create(config, lo);
      if (!p) return Fail("policy las: " + p.error().message);
      policy = std::move(*p);
    } else {
      auto p = sched::MakePolicy(name, config);
      if (!p) return Fail("policy " + name + ": " + p.error().message);
      policy = std::move(*p);
    }
    SimOptions opt = OptionsForPolicy(name, *policy, config);
    opt.start = history ? history->origin : SimOptions().start;
    opt.checkpoint_interval = args.checkpoint;
    opt.periodic_pass = args.periodic;
    opt.skip_idle_passes = args.skip;
    opt.profile_clock = &clock;
    if (!args.window) opt.window.enabled = false;
    opt.verify_windows = args.verify_windows;
    policies.push_back(std::move(policy));
    options.push_back(std::move(opt));
  }
  const size_t n_runs = policies.size();
  size_t threads = args.threads != 0 ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, n_runs);
  ProgressBar bar(tty, n_runs);
  bar.Start(n_runs == 1 ? args.policies[0] : std::to_string(n_runs) + " policies");
  std::vector<std::optional<Result<SimResult>>> outcomes(n_runs);
  std::vector<double> walls(n_runs, 0.0);
  std::atomic<size_t> next_run{0};
  auto worker = [&] {
    for (size_t i = next_run++; i < n_runs; i = next_run++) {
      options[i].progress = [&bar, i](double f) { bar.Report(i, f); };
      MonoTime t0 = clock.MonotonicNow();
      outcomes[i] = Simulate(*workload, nodes, config, *policies[i], options[i]);
      walls[i] = ToSecondsF(clock.MonotonicNow() - t0);
      bar.Report(i, 1.0);
    }
  };
  const MonoTime all_start = clock.MonotonicNow();
  {
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
  }
  const double total_wall = ToSecondsF(clock.MonotonicNow() - all_start);
  bar.Done();
  for (size_t i = 0; i < n_runs; ++i) {
    const std::string& name = args.policies[i];
    Result<SimResult>& r = *outcomes[i];
    if (!r) return Fail("policy " + name + ": " + r.error().message, 1);
    rows.push_back(ComputeMetrics(name, *workload, *r));
    if (!args.jobs_csv.empty()) jobs_csv += JobsCsvRows(name, *workload, *r);
    char line[320];
    std::snprintf(
        line, sizeof line,
        "  %-10s %7.2f s wall, %llu events, %llu passes (%llu skipped), %.2f s in Decide, "
        "%.0f pending jobs per pass, %llu window retries",
        name.c_str(), walls[i], static_cast<unsigned long long>(r->stats.events),
        static_cast<unsigned long long>(r->stats.passes),
        static_cast<unsigned long long>(r->stats.skipped_passes), r->stats.decide_seconds,
        r->stats.passes ? static_cast<double>(r->stats.pending_seen) / r->stats.passes : 0.0,
        static_cast<unsigned long long>(r->stats.window_retries));
    profile_lines.push_back(line);
    names.push_back(name);
    results.push_back(std::make_unique<SimResult>(std::move(*r)));
  }

  if (!args.quiet) {
    std::fputs(FormatMetricsTable(rows).c_str(), stdout);
    std::printf("\n");
    if (args.profile) {
      for (const std::string& l : profile_lines) std::printf("%s\n", l.c_str());
      std::printf("  %zu policies on %zu threads in %.2f s wall\n", n_runs, threads, total_wall);
    } else {
      std::printf("simulated in %.2f s (--profile for details)\n", total_wall);
    }
  }
  if (!args.csv.empty()) {
    if (auto s = WriteFile(args.csv, FormatMetricsCsv(rows)); !s) return Fail(s.error().message);
  }
  if (!args.jobs_csv.empty()) {
    if (auto s = WriteFile(args.jobs_csv, jobs_csv); !s) return Fail(s.error().message);
  }
  if (!args.svg_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.svg_dir, ec);
    if (ec) return Fail(args.svg_dir + ": " + ec.message());
    std::vector<PlotRun> runs;
    for (size_t i = 0; i < results.size(); ++i) runs.push_back({names[i], results[i].get()});
    const std::string what = trace_name + " on " + std::to_string(capacity) + " GPUs";
    const std::filesystem::path dir(args.svg_dir);
    for (const auto& [file, svg] : std::vector<std::pair<std::string, std::string>>{
             {"jct_cdf.svg", JctCdfSvg(runs, "JCT CDF: " + what)},
             {"utilisation.svg", UtilisationSvg(runs, "GPU utilisation: " + what)},
             {"queue.svg", QueueLengthSvg(runs, "Queue length: " + what)}}) {
      if (auto s = WriteFile((dir / file).string(), svg); !s) return Fail(s.error().message);
    }
  }
  return 0;
}

}  // namespace corral::sim
