// Round trips of the API transport on loopback: one keep-alive connection, 8 concurrent
// clients each on its own connection, and a fresh connection per request (what one CLI call
// costs on top of its process start). The handler echoes a submit-sized JSON body, so the
// figures are the transport's own cost (no store, no JSON parsing).
//
//   http_bench --benchmark_min_time=2
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "api/http.h"
#include "core/check.h"

namespace corral::api {
namespace {

// A submit-sized request body (a job spec as the CLI sends it).
const std::string kBody =
    R"({"name":"train-resnet","partition":"gpu","resources":{"nodes":1,"tasks":1,)"
    R"("cpus_per_task":8,"gpus":2,"memory_mb":65536},"time_limit":"4:00:00",)"
    R"("command":["/usr/bin/python3","train.py","--epochs","90"],"cwd":"/home/alice/resnet",)"
    R"("environment":{"PATH":"/usr/bin:/bin","HOME":"/home/alice"}})";

HttpServer& Server() {
  static HttpServer server;  // stopped (its threads joined) at exit
  static const bool started = [] {
    server.Route("POST", "/api/v1/jobs", [](const HttpRequest& r) {
      HttpResponse resp;
      resp.status = 201;
      resp.body = R"({"job_id":)" + std::to_string(r.body.size()) + "}";
      return resp;
    });
    Status s = server.Start("127.0.0.1", 0);
    CORRAL_CHECK(s.has_value()) << s.error().message;
    return true;
  }();
  (void)started;
  return server;
}

std::string Url() { return "http://127.0.0.1:" + std::to_string(Server().port()); }

void Submit(benchmark::State& state, HttpClient& client) {
  Result<HttpResponse> r = client.Send("POST", "/api/v1/jobs", kBody);
  if (!r.has_value() || r->status != 201) state.SkipWithError("request failed");
}

void BM_KeepAliveRoundTrip(benchmark::State& state) {
  auto client = std::move(*HttpClient::Create(Url()));
  for (auto _ : state) Submit(state, *client);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KeepAliveRoundTrip)->UseRealTime();

// Each benchmark thread is one client with its own keep-alive connection.
void BM_ConcurrentClients(benchmark::State& state) {
  std::string url = Url();  // the server starts once, before any thread sends
  auto client = std::move(*HttpClient::Create(url));
  for (auto _ : state) Submit(state, *client);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ConcurrentClients)->Threads(8)->UseRealTime();

// A new client (so a new TCP connection) per request, as one `corral submit` does.
void BM_NewConnectionPerRequest(benchmark::State& state) {
  std::string url = Url();
  for (auto _ : state) {
    auto client = std::move(*HttpClient::Create(url));
    Submit(state, *client);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NewConnectionPerRequest)->UseRealTime();

}  // namespace
}  // namespace corral::api

BENCHMARK_MAIN();
