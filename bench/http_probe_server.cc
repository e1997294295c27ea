// A server for measuring client processes from outside: makes a throwaway CA and a
// certificate for localhost in DIR, serves GET /api/v1/health over plain HTTP and over TLS on
// two free loopback ports, writes "PLAIN_PORT TLS_PORT" to DIR/ports, and serves until
// SIGTERM or SIGINT.
//
//   http_probe_server DIR &
//   client_start_probe --get http://127.0.0.1:PLAIN_PORT/api/v1/health
//   client_start_probe --get https://localhost:TLS_PORT/api/v1/health DIR/ca.crt
#include <signal.h>

#include <cstdio>
#include <string>

#include "api/http.h"
#include "api/http_test_certs.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: http_probe_server DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  corral::api::http_testing::TestPki pki(dir);
  const auto& ca = pki.Ca("ca");
  const auto& cert = pki.Leaf("server", "localhost", {"localhost"}, {"127.0.0.1"}, ca);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before any server thread starts

  auto health = [](const corral::api::HttpRequest&) {
    corral::api::HttpResponse r;
    r.body = R"({"ok":"true"})";
    return r;
  };
  corral::api::HttpServer plain;
  plain.Route("GET", "/api/v1/health", health);
  corral::api::HttpServerOptions tls_options;
  tls_options.tls.certificate_chain_file = cert.cert_file;
  tls_options.tls.private_key_file = cert.key_file;
  corral::api::HttpServer tls(tls_options);
  tls.Route("GET", "/api/v1/health", health);
  auto a = plain.Start("127.0.0.1", 0);
  auto b = tls.Start("127.0.0.1", 0);
  if (!a.has_value() || !b.has_value()) {
    std::fprintf(stderr, "cannot start: %s\n",
                 (!a.has_value() ? a.error() : b.error()).message.c_str());
    return 1;
  }
  if (FILE* f = std::fopen((dir + "/ports").c_str(), "w")) {
    std::fprintf(f, "%u %u\n", plain.port(), tls.port());
    std::fclose(f);
  }
  int sig = 0;
  sigwait(&stop, &sig);
  return 0;
}
