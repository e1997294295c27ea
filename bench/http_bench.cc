// Round trips of the API transport on loopback: one keep-alive connection, 8 concurrent
// clients each on its own connection, and a fresh connection per request (what one CLI call
// costs on top of its process start), each over plain HTTP and over TLS (a throwaway CA made
// at start; `*Tls`). The handler echoes a submit-sized JSON body, so the figures are the
// transport's own cost (no store, no JSON parsing).
//
//   http_bench --benchmark_min_time=2
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "api/http.h"
#include "api/http_test_certs.h"
#include "core/check.h"

namespace corral::api {
namespace {

// A submit-sized request body (a job spec as the CLI sends it).
const std::string kBody =
    R"({"name":"train-resnet","partition":"gpu","resources":{"nodes":1,"tasks":1,)"
    R"("cpus_per_task":8,"gpus":2,"memory_mb":65536},"time_limit":"4:00:00",)"
    R"("command":["/usr/bin/python3","train.py","--epochs","90"],"cwd":"/home/alice/resnet",)"
    R"("environment":{"PATH":"/usr/bin:/bin","HOME":"/home/alice"}})";

void AddRoutes(HttpServer& server) {
  server.Route("POST", "/api/v1/jobs", [](const HttpRequest& r) {
    HttpResponse resp;
    resp.status = 201;
    resp.body = R"({"job_id":)" + std::to_string(r.body.size()) + "}";
    return resp;
  });
}

// Adds the route and starts `server` on a free loopback port.
HttpServer& Started(HttpServer& server) {
  AddRoutes(server);
  Status s = server.Start("127.0.0.1", 0);
  CORRAL_CHECK(s.has_value()) << s.error().message;
  return server;
}

HttpServer& Server() {
  static HttpServer server;  // stopped (its threads joined) at exit
  static HttpServer& started = Started(server);
  return started;
}

// A CA and a server certificate for "localhost" in a temporary directory.
struct Pki {
  std::string dir;
  std::string ca_file;
  std::unique_ptr<http_testing::TestPki> pki;
  const http_testing::Issued* server = nullptr;
};

const Pki& ThePki() {
  static Pki p = [] {
    Pki out;
    char tmpl[] = "/tmp/corral-http-bench-XXXXXX";
    CORRAL_CHECK(mkdtemp(tmpl) != nullptr);
    out.dir = tmpl;
    out.pki = std::make_unique<http_testing::TestPki>(out.dir);
    const http_testing::Issued& ca = out.pki->Ca("ca");
    out.ca_file = ca.cert_file;
    out.server = &out.pki->Leaf("server", "localhost", {"localhost"}, {"127.0.0.1"}, ca);
    // Removed at exit; `dir` outlives the handler (made before it was registered).
    static std::string dir;
    dir = out.dir;
    std::atexit([] { std::filesystem::remove_all(dir); });
    return out;
  }();
  return p;
}

HttpServer& TlsServer() {
  static HttpServer server([] {
    HttpServerOptions o;
    o.tls.certificate_chain_file = ThePki().server->cert_file;
    o.tls.private_key_file = ThePki().server->key_file;
    return o;
  }());
  static HttpServer& started = Started(server);
  return started;
}

std::string TlsUrl() { return "https://localhost:" + std::to_string(TlsServer().port()); }

std::unique_ptr<HttpClient> NewClient(bool tls) {
  if (!tls)
    return std::move(*HttpClient::Create("http://127.0.0.1:" + std::to_string(Server().port())));
  HttpClientOptions o;
  o.ca_file = ThePki().ca_file;
  return std::move(*HttpClient::Create(TlsUrl(), o));
}

void Submit(benchmark::State& state, HttpClient& client) {
  Result<HttpResponse> r = client.Send("POST", "/api/v1/jobs", kBody);
  if (!r.has_value() || r->status != 201) state.SkipWithError("request failed");
}

void BM_KeepAliveRoundTrip(benchmark::State& state) {
  auto client = NewClient(state.range(0) != 0);
  for (auto _ : state) Submit(state, *client);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KeepAliveRoundTrip)->ArgName("tls")->Arg(0)->Arg(1)->UseRealTime();

// Each benchmark thread is one client with its own keep-alive connection.
void BM_ConcurrentClients(benchmark::State& state) {
  auto client = NewClient(state.range(0) != 0);  // the servers start once, before any sends
  for (auto _ : state) Submit(state, *client);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ConcurrentClients)->ArgName("tls")->Arg(0)->Arg(1)->Threads(8)->UseRealTime();

// A new client (so a new TCP connection, and a full TLS handshake) per request, as one
// `corral submit` does.
void BM_NewConnectionPerRequest(benchmark::State& state) {
  const bool tls = state.range(0) != 0;
  NewClient(tls);  // the server and the PKI exist before the timing starts
  for (auto _ : state) {
    auto client = NewClient(tls);
    Submit(state, *client);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NewConnectionPerRequest)->ArgName("tls")->Arg(0)->Arg(1)->UseRealTime();

}  // namespace
}  // namespace corral::api

BENCHMARK_MAIN();
