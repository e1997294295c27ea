// A controller on loopback for the security tests: a real `ControllerService` (HTTP server,
// state thread, memory store) whose authenticator maps "Authorization: Test <name>" to the
// identities the tests name, so that every role can be tried without keys or certificates.
//
// Callers: "alice" (owns the jobs), "bob" (another user), "olga" (operator), "root" (admin),
// "agent:node01" / "agent:node02" (agents bound to their node), "job:<id>" (a job credential
// of job <id>, of alice, for its current run), "scrape" (the scrape token, `[metrics]
// token_file`, which the cluster makes in a temporary directory), "carol" (a user the account
// coordinator tests make a coordinator). No Authorization header: anonymous.
//
// Test-only; thread-safe as ControllerService.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "api/http.h"
#include "controller/config.h"
#include "controller/service.h"
#include "core/clock.h"
#include "core/job.h"
#include "store/store.h"

namespace corral::security {

class SecurityCluster {
 public:
  // Starts the controller (CHECKs that it started) with `config`'s privacy and limits, on
  // `store` (null = a memory store).
  explicit SecurityCluster(controller::ControllerConfig config = {},
                           std::unique_ptr<store::Store> store = nullptr);
  ~SecurityCluster();

  // Sends a request as `caller` ("" = anonymous). Returns the status and body; 0 when the
  // request could not be sent.
  api::HttpResponse Send(const std::string& caller, const std::string& method,
                         const std::string& path, const std::string& body = "");
  // Submits `spec` as `caller`; returns the job id (CHECKs the 201).
  JobId Submit(const std::string& caller, const JobSpec& spec);
  // Registers node `name` (`gpus` GPUs) as its own agent (CHECKs the 200).
  void RegisterNode(const std::string& name, uint32_t gpus);

  controller::ControllerService& service() { return *service_; }

 private:
  SystemClock clock_;
  std::string scratch_;       // holds the scrape token's file
  std::string scrape_token_;  // "Bearer <token>"

  controller::ControllerService* self_ = nullptr;
  std::unique_ptr<controller::ControllerService> service_;
  std::unique_ptr<api::HttpClient> client_;
};

// A well-formed body for the controller route `pattern` (authz_matrix_test.cc); "" when it
// takes none.
std::string BodyFor(const std::string& pattern);

// A batch job of one task on one node with `gpus` GPUs, held when `hold`.
JobSpec TestJob(uint32_t gpus = 0, bool hold = true);

}  // namespace corral::security
