// submit_load: submits N trivial jobs to a running controller through the HTTP API from T
// threads (keep-alive connections), then waits until all have ended, and prints
//   submitted N jobs in S s: X submissions/s
//   all N jobs ended Y s after the first submission: Z jobs/s end to end
//   submit-to-start: median A ms, p99 B ms
//   submit-to-end: median C ms, p99 D ms
// Used by bench/e2e_throughput.sh; not a test. --interval MS paces each thread (one submission
// every MS milliseconds): with one thread, the latency of a job on a cluster that is not
// saturated.
//
//   submit_load --controller URL --key-file KEYRING [--ca-file CA] [--cluster NAME] [--jobs N]
//               [--threads T] [--gpus G] [--interval MS]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "api/auth.h"
#include "api/http.h"
#include "api/http_status.h"
#include "api/json_codec.h"
#include "core/clock.h"

using namespace corral;

int main(int argc, char** argv) {
  std::string url, key_file, ca_file, cluster = "dev";
  int jobs = 1000, threads = 8, gpus = 0, interval_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--controller") url = argv[i + 1];
    else if (a == "--key-file") key_file = argv[i + 1];
    else if (a == "--ca-file")
      ca_file = argv[i + 1];
    else if (a == "--cluster")
      cluster = argv[i + 1];
    else if (a == "--jobs") jobs = std::atoi(argv[i + 1]);
    else if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else if (a == "--gpus") gpus = std::atoi(argv[i + 1]);
    else if (a == "--interval") interval_ms = std::atoi(argv[i + 1]);
  }
  if (url.empty() || key_file.empty()) {
    std::fprintf(
        stderr,
        "usage: submit_load --controller URL --key-file KEYRING [--ca-file CA] [--cluster NAME] "
        "[--jobs N] [--threads T] [--gpus G] [--interval MS]\n");
    return 2;
  }
  auto keyring = api::Keyring::FromFile(key_file);
  if (!keyring) {
    std::fprintf(stderr, "%s\n", keyring.error().message.c_str());
    return 1;
  }
  const Clock& clock = SystemClock::Get();
  api::Credentials credentials(std::move(*keyring), {.cluster = cluster});
  auto token = credentials.MintUserToken(api::CurrentProcessIdentity(), clock.Now(), Seconds(3600));
  if (!token) {
    std::fprintf(stderr, "%s\n", token.error().message.c_str());
    return 1;
  }
  std::string auth = "Bearer " + *token;
  api::HttpClientOptions options;
  options.ca_file = ca_file;
  JobSpec spec;
  spec.name = "trivial";
  spec.script = "#!/bin/sh\nexit 0\n";
  spec.working_dir = "/tmp";
  spec.stdout_path = "/dev/null";
  spec.resources.gpus_per_node = static_cast<uint32_t>(gpus);
  std::string body = api::EncodeJobSpec(spec);

  std::atomic<int> next{0}, failed{0};
  std::vector<std::vector<uint64_t>> ids(threads);
  MonoTime t0 = clock.MonotonicNow();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto client = api::HttpClient::Create(url, options);
      while (next.fetch_add(1) < jobs) {
        auto r = api::CheckResponse((*client)->Send("POST", "/api/v1/jobs", body, {{"authorization", auth}}));
        if (!r) {
          if (failed.fetch_add(1) < 3)
            std::fprintf(stderr, "submit: %s\n", r.error().message.c_str());
          continue;
        }
        ids[t].push_back(api::DecodeSubmitResponse(r->body)->job_id.value);
        if (interval_ms > 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));  // pacing
      }
    });
  }
  for (auto& th : pool) th.join();
  double submit_s = ToSecondsF(clock.MonotonicNow() - t0);
  std::printf("submitted %d jobs in %.2f s: %.0f submissions/s (%d failed)\n", jobs - failed.load(), submit_s,
              (jobs - failed.load()) / submit_s, failed.load());

  // Wait for every job to end, following the last one.
  uint64_t last = 0;
  for (auto& v : ids) {
    for (uint64_t id : v) last = std::max(last, id);
  }
  auto client = api::HttpClient::Create(url, options);
  std::vector<api::JobInfo> all;
  while (true) {
    auto r = api::CheckResponse((*client)->Send("GET", "/api/v1/jobs/" + std::to_string(last) + "/wait?timeout=30", "",
                                                {{"authorization", auth}}, true, std::chrono::milliseconds(60000)));
    if (!r) {
      std::fprintf(stderr, "wait: %s\n", r.error().message.c_str());
      return 1;
    }
    auto listed = api::CheckResponse((*client)->Send("GET", "/api/v1/jobs?state=PENDING,RUNNING", "",
                                                     {{"authorization", auth}}, true));
    if (listed && api::DecodeJobInfoList(listed->body)->empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  double total_s = ToSecondsF(clock.MonotonicNow() - t0);
  std::printf("all %d jobs ended %.2f s after the first submission: %.0f jobs/s end to end\n", jobs, total_s,
              jobs / total_s);
  auto listed = api::CheckResponse((*client)->Send("GET", "/api/v1/jobs?all=1", "", {{"authorization", auth}}, true));
  if (listed) {
    std::vector<double> waits, ends;
    int completed = 0;
    auto decoded = api::DecodeJobInfoList(listed->body);
    for (const auto& j : decoded ? *decoded : std::vector<api::JobInfo>{}) {
      if (j.job.spec.name != "trivial") continue;
      completed += j.job.state == JobState::kCompleted ? 1 : 0;
      if (j.job.start_time.time_since_epoch().count() != 0) {
        waits.push_back(ToSecondsF(j.job.start_time - j.job.submit_time) * 1000);
      }
      if (j.job.end_time.time_since_epoch().count() != 0) {
        ends.push_back(ToSecondsF(j.job.end_time - j.job.submit_time) * 1000);
      }
    }
    std::sort(waits.begin(), waits.end());
    if (!waits.empty()) {
      std::printf("submit-to-start: median %.1f ms, p99 %.1f ms; %d of them COMPLETED\n", waits[waits.size() / 2],
                  waits[std::min(waits.size() - 1, waits.size() * 99 / 100)], completed);
    }
    std::sort(ends.begin(), ends.end());
    if (!ends.empty()) {
      std::printf("submit-to-end: median %.1f ms, p99 %.1f ms\n", ends[ends.size() / 2],
                  ends[std::min(ends.size() - 1, ends.size() * 99 / 100)]);
    }
  }
  return 0;
}
