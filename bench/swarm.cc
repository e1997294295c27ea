// swarm: thousands of simulated agents in one process, over real HTTPS, against a running
// controller (issue 11 item 5; bench/swarm.sh starts `corral dev` and runs it). Not a test.
//
// Each simulated node registers with its own agent token (minted from the cluster keyring, as
// a node key would sign it), heartbeats every --heartbeat-s seconds (the nodes spread evenly
// over the interval), and runs the jobs the controller launches on it for --job-ms
// milliseconds, reporting kStarted and kExited as an agent does. The nodes' API is one HTTPS
// server of this process (every node registers its address); the controller's calls to it are
// answered without checking their token (a bench harness, not an agent).
//
// Phases, each printed as it ends:
//   register  every node once;
//   idle      --seconds of heartbeats alone: the controller's CPU (share of one core) and RSS,
//             the heartbeat latency seen by the nodes (p50, p99), and the controller's own
//             time per heartbeat request (/api/v1/diag);
//   load      --jobs trivial jobs submitted through the API from 8 connections while the
//             heartbeats go on: the same figures, submit-to-start (the launch's arrival at the
//             node against the job's submit time: one clock, one machine) p50/p99, and the
//             scheduling passes (count, mean, max).
//
//   swarm --controller URL --key-file KEYRING --ca-file CA --cert CRT --key KEY --pid PID
//         [--nodes N] [--gpus G] [--heartbeat-s S] [--seconds T] [--jobs J] [--job-ms D]
//         [--threads K] [--cluster NAME]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <queue>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api/auth.h"
#include "api/credentials.h"
#include "api/diag.h"
#include "api/http.h"
#include "api/http_status.h"
#include "api/json_codec.h"
#include "core/clock.h"

using namespace corral;

namespace {

struct Options {
  std::string url, key_file, ca_file, cert, key, cluster = "dev";
  int pid = 0;
  int nodes = 1000, gpus = 8, heartbeat_s = 5, seconds = 30, jobs = 2000, job_ms = 1000,
      threads = 32;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// The controller's CPU seconds (user + system) and RSS in MiB, from /proc.
struct ProcSample {
  double cpu_s = 0;
  double rss_mb = 0;
};
ProcSample ReadProc(int pid) {
  ProcSample s;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close != std::string::npos) {
    std::istringstream in(text.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && in >> field; ++i) {
      if (i == 14) utime = std::atof(field.c_str());
      if (i == 15) stime = std::atof(field.c_str());
    }
    s.cpu_s = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_mb = std::atof(line.c_str() + 6) / 1024.0;
  }
  return s;
}

struct Node {
  std::string name;
  std::string auth;  // "Bearer <agent token>"
  std::mutex mu;
  std::vector<api::RunningJobRef> running;
};

class Swarm {
 public:
  explicit Swarm(Options o) : o_(std::move(o)) {}

  int Run() {
    auto keyring = api::Keyring::FromFile(o_.key_file);
    if (!keyring) return Fail("keyring: " + keyring.error().message);
    credentials_ = std::make_unique<api::Credentials>(std::move(*keyring),
                                                      api::TokenPolicy{.cluster = o_.cluster});
    const Timestamp now = clock_.Now();
    auto user = credentials_->MintUserToken(api::CurrentProcessIdentity(), now, Seconds(3600));
    if (!user) return Fail("user token: " + user.error().message);
    user_auth_ = "Bearer " + *user;
    nodes_.reserve(static_cast<size_t>(o_.nodes));
    for (int i = 0; i < o_.nodes; ++i) {
      auto n = std::make_unique<Node>();
      char name[32];
      std::snprintf(name, sizeof name, "swarm%05d", i + 1);
      n->name = name;
      auto token = credentials_->MintNodeToken(n->name, now, Seconds(3600));
      if (!token) return Fail("agent token: " + token.error().message);
      n->auth = "Bearer " + *token;
      index_[n->name] = n.get();
      nodes_.push_back(std::move(n));
    }
    if (Status s = StartServer(); !s) return Fail("server: " + s.error().message);
    client_options_.ca_file = o_.ca_file;
    client_options_.certificate_file = o_.cert;
    client_options_.key_file = o_.key;
    events_thread_ = std::thread([this] { EventLoop(); });

    if (!Register()) return 1;
    heartbeat_stop_ = false;
    std::vector<std::thread> beaters;
    const MonoTime start = clock_.MonotonicNow();
    for (int t = 0; t < o_.threads; ++t) beaters.emplace_back([this, t, start] { Beat(t, start); });

    Measure("idle", o_.seconds, [] {});
    Measure("load", 0, [this] { SubmitAll(); });

    heartbeat_stop_ = true;
    for (auto& b : beaters) b.join();
    {
      std::lock_guard<std::mutex> lock(events_mu_);
      events_stop_ = true;
    }
    events_cv_.notify_all();
    events_thread_.join();
    server_->Stop();
    return 0;
  }

 private:
  static int Fail(const std::string& why) {
    std::fprintf(stderr, "swarm: %s\n", why.c_str());
    return 1;
  }

  Status StartServer() {
    api::HttpTlsOptions tls;
    tls.certificate_chain_file = o_.cert;
    tls.private_key_file = o_.key;
    server_ = std::make_unique<api::HttpServer>(api::HttpServerOptions{.io_threads = 2, .tls = tls});
    auto ok = [](std::string body = "{}") { return api::HttpResponse{.status = 200, .body = std::move(body)}; };
    server_->Route("GET", "/api/v1/health", [ok](const api::HttpRequest&) { return ok(); });
    server_->Route("POST", "/api/v1/launch", [this, ok](const api::HttpRequest& req) {
      const Timestamp received = clock_.Now();
      auto launch = api::DecodeLaunchRequest(req.body);
      if (!launch) return api::ErrorResponse(launch.error());
      OnLaunch(launch->job, received);
      return ok();
    });
    server_->Route("POST", "/api/v1/cancel", [this, ok](const api::HttpRequest& req) {
      auto c = api::DecodeCancelRequest(req.body);
      if (!c) return api::ErrorResponse(c.error());
      Exit("", c->job, c->generation, /*cancelled=*/true);
      return ok();
    });
    for (const char* path : {"/api/v1/signal", "/api/v1/jobs/limit", "/api/v1/steps/launch",
                             "/api/v1/steps/signal"}) {
      server_->Route("POST", path, [ok](const api::HttpRequest&) { return ok(); });
    }
    if (Status s = server_->Start("127.0.0.1", 0); !s) return s;
    address_ = "https://127.0.0.1:" + std::to_string(server_->port());
    return {};
  }

  // --- Registration and heartbeats ---

  bool Register() {
    const MonoTime t0 = clock_.MonotonicNow();
    std::atomic<int> next{0}, failed{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < o_.threads; ++t) {
      pool.emplace_back([&] {
        auto client = api::HttpClient::Create(o_.url, client_options_);
        if (!client) return;
        for (int i; (i = next.fetch_add(1)) < o_.nodes;) {
          Node& n = *nodes_[static_cast<size_t>(i)];
          api::RegisterRequest req;
          req.inventory.name = n.name;
          req.inventory.address = address_;
          req.inventory.cpus = 64;
          req.inventory.memory_mb = 512 * 1024;
          req.inventory.gpu_backend = "simulated";
          for (int g = 0; g < o_.gpus; ++g) {
            req.inventory.gpus.push_back({.index = static_cast<uint32_t>(g),
                                          .uuid = "GPU-" + n.name + "-" + std::to_string(g),
                                          .model = "h100",
                                          .memory_mb = 81559});
          }
          auto r = api::CheckResponse((*client)->Send("POST", "/api/v1/agents/register",
                                                      api::EncodeRegisterRequest(req),
                                                      {{"authorization", n.auth}}, true));
          if (!r && failed.fetch_add(1) < 3) {
            std::fprintf(stderr, "register %s: %s\n", n.name.c_str(), r.error().message.c_str());
          }
        }
      });
    }
    for (auto& t : pool) t.join();
    const double s = ToSecondsF(clock_.MonotonicNow() - t0);
    std::printf("register: %d nodes x %d GPUs in %.2f s (%.0f/s), %d failed\n", o_.nodes, o_.gpus,
                s, o_.nodes / s, failed.load());
    std::fflush(stdout);
    return failed.load() == 0;
  }

  // Thread `t` heartbeats nodes t, t+K, ...; node i is due at start + i/N of the interval,
  // then every interval.
  void Beat(int t, MonoTime start) {
    auto client = api::HttpClient::Create(o_.url, client_options_);
    if (!client) return;
    const Duration interval = Seconds(o_.heartbeat_s);
    std::vector<double> mine;
    for (int64_t round = 0; !heartbeat_stop_; ++round) {
      for (int i = t; i < o_.nodes && !heartbeat_stop_; i += o_.threads) {
        const MonoTime due = start + interval * round + interval * i / o_.nodes;
        const MonoTime now = clock_.MonotonicNow();
        if (due > now) std::this_thread::sleep_for(due - now);  // pacing: the heartbeat's time
        Node& n = *nodes_[static_cast<size_t>(i)];
        api::HeartbeatRequest req;
        req.node = n.name;
        {
          std::lock_guard<std::mutex> lock(n.mu);
          req.running = n.running;
        }
        const MonoTime sent = clock_.MonotonicNow();
        auto r = api::CheckResponse((*client)->Send("POST", "/api/v1/agents/heartbeat",
                                                    api::EncodeHeartbeatRequest(req),
                                                    {{"authorization", n.auth}}, true));
        const double ms = ToSecondsF(clock_.MonotonicNow() - sent) * 1000;
        std::lock_guard<std::mutex> lock(stats_mu_);
        if (r) {
          latencies_.push_back(ms);
        } else {
          ++heartbeat_failures_;
        }
      }
    }
  }

  // --- Jobs ---

  void OnLaunch(const Job& job, Timestamp received) {
    const std::string host =
        job.allocation.nodes.empty() ? std::string() : job.allocation.nodes.front().node_name;
    auto it = index_.find(host);
    if (it == index_.end()) return;
    {
      std::lock_guard<std::mutex> lock(it->second->mu);
      it->second->running.push_back({job.id, job.allocation.generation});
    }
    api::JobEvent started{.type = api::JobEventType::kStarted,
                          .job = job.id,
                          .generation = job.allocation.generation,
                          .time = received};
    started.trace = {.launch_received = received, .cgroup_ready = received, .spawned = received,
                     .exec = received};
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      if (job.submit_time != Timestamp{}) {
        start_latencies_.push_back(ToSecondsF(received - job.submit_time) * 1000);
      }
    }
    std::lock_guard<std::mutex> lock(events_mu_);
    outbox_[host].push_back(std::move(started));
    exits_.push({clock_.MonotonicNow() + Millis(o_.job_ms), host, job.id, job.allocation.generation});
    events_cv_.notify_all();
  }

  // The run's end on `host` (empty: whichever node runs it).
  void Exit(const std::string& host, JobId job, Generation gen, bool cancelled) {
    for (auto& n : nodes_) {
      if (!host.empty() && n->name != host) continue;
      std::lock_guard<std::mutex> lock(n->mu);
      auto it = std::find(n->running.begin(), n->running.end(), api::RunningJobRef{job, gen});
      if (it == n->running.end()) continue;
      n->running.erase(it);
      api::JobEvent exited{.type = api::JobEventType::kExited,
                           .job = job,
                           .generation = gen,
                           .time = clock_.Now(),
                           .cancelled = cancelled};
      exited.trace.exited = exited.time;
      std::lock_guard<std::mutex> elock(events_mu_);
      outbox_[n->name].push_back(std::move(exited));
      events_cv_.notify_all();
      return;
    }
  }

  // Ends the runs whose time has come and sends every node's queued events.
  void EventLoop() {
    auto client = api::HttpClient::Create(o_.url, client_options_);
    if (!client) return;
    std::unique_lock<std::mutex> lock(events_mu_);
    while (!events_stop_) {
      const MonoTime now = clock_.MonotonicNow();
      std::vector<Due> due;
      while (!exits_.empty() && exits_.top().at <= now) {
        due.push_back(exits_.top());
        exits_.pop();
      }
      if (!due.empty()) {
        lock.unlock();
        for (const Due& d : due) Exit(d.node, d.job, d.gen, false);
        lock.lock();
        continue;
      }
      if (outbox_.empty()) {
        if (exits_.empty()) {
          events_cv_.wait(lock);
        } else {
          events_cv_.wait_for(lock, exits_.top().at - now);
        }
        continue;
      }
      auto batch = std::move(outbox_);
      outbox_.clear();
      lock.unlock();
      for (auto& [node, events] : batch) {
        api::JobEventsRequest req{.node = node, .events = std::move(events)};
        auto r = api::CheckResponse((*client)->Send("POST", "/api/v1/agents/events",
                                                    api::EncodeJobEventsRequest(req),
                                                    {{"authorization", index_.at(node)->auth}}, true));
        if (!r) std::fprintf(stderr, "events %s: %s\n", node.c_str(), r.error().message.c_str());
      }
      lock.lock();
    }
  }

  void SubmitAll() {
    JobSpec spec;
    spec.name = "swarm";
    spec.script = "#!/bin/sh\nexit 0\n";
    spec.working_dir = "/tmp";
    spec.stdout_path = "/dev/null";
    spec.resources.gpus_per_node = 1;
    const std::string body = api::EncodeJobSpec(spec);
    std::atomic<int> next{0}, failed{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < 8; ++t) {
      pool.emplace_back([&] {
        auto client = api::HttpClient::Create(o_.url, client_options_);
        if (!client) return;
        while (next.fetch_add(1) < o_.jobs) {
          auto r = api::CheckResponse(
              (*client)->Send("POST", "/api/v1/jobs", body, {{"authorization", user_auth_}}));
          if (!r) failed.fetch_add(1);
        }
      });
    }
    for (auto& t : pool) t.join();
    // Until every job has started and ended.
    auto client = api::HttpClient::Create(o_.url, client_options_);
    const MonoTime deadline = clock_.MonotonicNow() + Seconds(300);
    while (client && clock_.MonotonicNow() < deadline) {
      auto r = api::CheckResponse((*client)->Send("GET", "/api/v1/jobs?state=PENDING,RUNNING", "",
                                                  {{"authorization", user_auth_}}, true));
      if (r) {
        auto jobs = api::DecodeJobInfoList(r->body);
        if (jobs && jobs->empty()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // polling the queue
    }
    if (failed.load() > 0) std::printf("load: %d submissions failed\n", failed.load());
  }

  // --- Figures ---

  std::optional<api::DiagInfo> Diag() {
    auto client = api::HttpClient::Create(o_.url, client_options_);
    if (!client) return std::nullopt;
    auto r = api::CheckResponse(
        (*client)->Send("GET", "/api/v1/diag", "", {{"authorization", user_auth_}}, true));
    if (!r) return std::nullopt;
    auto d = api::DecodeDiagInfo(r->body);
    return d ? std::optional<api::DiagInfo>(*d) : std::nullopt;
  }

  static const api::DiagRoute* HeartbeatRoute(const api::DiagInfo& d) {
    for (const auto& r : d.routes) {
      if (r.route == "/api/v1/agents/heartbeat") return &r;
    }
    return nullptr;
  }

  // Runs `work` (or waits `seconds`) and prints the phase's figures.
  template <typename Work>
  void Measure(const char* phase, int seconds, Work work) {
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      latencies_.clear();
      start_latencies_.clear();
      heartbeat_failures_ = 0;
    }
    const auto diag0 = Diag();
    const ProcSample p0 = ReadProc(o_.pid);
    const MonoTime t0 = clock_.MonotonicNow();
    work();
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::seconds(seconds));  // the phase
    const double wall = ToSecondsF(clock_.MonotonicNow() - t0);
    const ProcSample p1 = ReadProc(o_.pid);
    const auto diag1 = Diag();
    std::lock_guard<std::mutex> lock(stats_mu_);
    std::printf("%s: %.1f s, %zu heartbeats (%.0f/s, %d failed): latency p50 %.2f ms, p99 %.2f ms; "
                "controller CPU %.1f%% of a core, RSS %.0f MiB",
                phase, wall, latencies_.size(), latencies_.size() / wall, heartbeat_failures_,
                Percentile(latencies_, 0.5), Percentile(latencies_, 0.99),
                100 * (p1.cpu_s - p0.cpu_s) / wall, p1.rss_mb);
    if (diag0 && diag1) {
      const api::DiagRoute *h0 = HeartbeatRoute(*diag0), *h1 = HeartbeatRoute(*diag1);
      if (h0 != nullptr && h1 != nullptr && h1->count > h0->count) {
        std::printf("; handler %.3f ms per heartbeat",
                    1000 * (h1->total_seconds - h0->total_seconds) /
                        static_cast<double>(h1->count - h0->count));
      }
      const uint64_t passes = diag1->cycles - diag0->cycles;
      if (passes > 0) {
        std::printf("; %llu scheduling passes, mean %.2f ms, max %.2f ms",
                    static_cast<unsigned long long>(passes),
                    1000 * (diag1->total_cycle_seconds - diag0->total_cycle_seconds) /
                        static_cast<double>(passes),
                    1000 * diag1->max_cycle_seconds);
      }
    }
    if (!start_latencies_.empty()) {
      std::printf("; %zu jobs, submit-to-start p50 %.1f ms, p99 %.1f ms", start_latencies_.size(),
                  Percentile(start_latencies_, 0.5), Percentile(start_latencies_, 0.99));
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  struct Due {
    MonoTime at;
    std::string node;
    JobId job;
    Generation gen;
    bool operator>(const Due& o) const { return at > o.at; }
  };

  Options o_;
  const Clock& clock_ = SystemClock::Get();
  std::unique_ptr<api::Credentials> credentials_;
  std::string user_auth_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::map<std::string, Node*> index_;  // fixed after start
  std::unique_ptr<api::HttpServer> server_;
  std::string address_;
  api::HttpClientOptions client_options_;
  std::atomic<bool> heartbeat_stop_{false};

  std::mutex stats_mu_;
  std::vector<double> latencies_, start_latencies_;
  int heartbeat_failures_ = 0;

  std::mutex events_mu_;
  std::condition_variable events_cv_;
  bool events_stop_ = false;
  std::map<std::string, std::vector<api::JobEvent>> outbox_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> exits_;
  std::thread events_thread_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--controller") o.url = v;
    else if (a == "--key-file") o.key_file = v;
    else if (a == "--ca-file") o.ca_file = v;
    else if (a == "--cert") o.cert = v;
    else if (a == "--key") o.key = v;
    else if (a == "--pid") o.pid = std::atoi(v.c_str());
    else if (a == "--cluster") o.cluster = v;
    else if (a == "--nodes") o.nodes = std::atoi(v.c_str());
    else if (a == "--gpus") o.gpus = std::atoi(v.c_str());
    else if (a == "--heartbeat-s") o.heartbeat_s = std::atoi(v.c_str());
    else if (a == "--seconds") o.seconds = std::atoi(v.c_str());
    else if (a == "--jobs") o.jobs = std::atoi(v.c_str());
    else if (a == "--job-ms") o.job_ms = std::atoi(v.c_str());
    else if (a == "--threads") o.threads = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "swarm: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (o.url.empty() || o.key_file.empty() || o.cert.empty() || o.key.empty() || o.pid <= 0 ||
      o.nodes <= 0 || o.threads <= 0 || o.heartbeat_s <= 0) {
    std::fprintf(stderr,
                 "usage: swarm --controller URL --key-file KEYRING --ca-file CA --cert CRT --key KEY "
                 "--pid PID [--nodes N] [--gpus G] [--heartbeat-s S] [--seconds T] [--jobs J] "
                 "[--job-ms D] [--threads K] [--cluster NAME]\n");
    return 2;
  }
  return Swarm(std::move(o)).Run();
}
