// ControllerService: the running controller — the state thread that owns the `Controller`,
// group commit to the store, the HTTP API, and the transport to agents.
//
// Every request (HTTP handler threads) is posted to the state thread as a closure. The
// state thread runs a loop: take all posted closures, run them against the Controller, run
// Tick (node liveness, scheduling), write the resulting batch to the store in one durable
// transaction, and only then answer the requests of that iteration and release the commands
// for agents. One fsync thus covers every request that arrived during the previous commit.
//
// Thread-safety: thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/auth.h"
#include "api/http.h"
#include "controller/audit_log.h"
#include "controller/config.h"
#include "core/clock.h"
#include "core/partition.h"
#include "core/result.h"
#include "sched/config.h"
#include "sched/policy.h"
#include "store/store.h"

namespace corral::controller {

class Controller;
class AgentTransport;
class JobCredentials;

// Who the service is to its callers and to the agents (docs/security.md).
struct ServiceSecurity {
  // Authenticates every API request (api::MakeControllerAuthenticator).
  std::unique_ptr<api::Authenticator> authenticator;
  // Mints the controller's calls to agents (for one node each) and job credentials; tracks
  // which runs are live. Its `Liveness` is the authenticator's `job_alive`.
  std::shared_ptr<JobCredentials> jobs;
  // How the controller's client connections to agents verify them and present its own
  // certificate (https:// agents): `ca_file`, `certificate_file`, `key_file`.
  api::HttpClientOptions agent_client;
};

class ControllerService {
 public:
  ControllerService(ControllerConfig config, sched::SchedulerConfig sched_config,
                    std::unique_ptr<sched::Policy> policy, std::unique_ptr<store::Store> store,
                    ServiceSecurity security, const Clock& clock);
  ~ControllerService();  // stops
  ControllerService(const ControllerService&) = delete;
  ControllerService& operator=(const ControllerService&) = delete;

  // Recovers the state from the store, then starts the state thread, the agent transport and
  // the HTTP server. Returns the store's error, or kUnavailable if the port cannot be bound.
  Status Start();
  // Stops serving; waits for the threads to end.
  void Stop();
  uint16_t port() const;
  // Whether this controller leads: it holds the leader lease (always, on a store that is not
  // shared) and has loaded the state. Standbys and a leader that stepped down answer the API
  // with 503 naming the leader (docs/operations.md, "High availability").
  bool leading() const;
  // The leader's URL as the lease last named it ("" before any; this controller's own when
  // it leads).
  std::string leader_url() const;
  // Called (once, on the thread that noticed) when this controller stops leading: the lease
  // moved to another, or could not be renewed in time, or a write was fenced. The state in
  // memory is then stale: the process must start again from the store (as a standby) — main
  // re-executes itself. Set before `Start`.
  void OnStepDown(std::function<void()> fn);
  // "https://HOST:PORT" when the config has a TLS certificate, else "http://...".
  std::string url() const;

  // Runs `fn` on the state thread; returns its result once the changes it made are durable.
  // Returns kUnavailable when the service is stopping.
  template <typename T>
  Result<T> Call(std::function<Result<T>(Controller&)> fn);
  Status CallStatus(std::function<Status(Controller&)> fn);

  // Audit log (docs/governance.md). Writes the record of a request that changed nothing (a
  // refusal, or a change made elsewhere) in the next batch; returns once it is durable.
  void WriteAudit(AuditRecord entry);
  // The stored audit records matching `query`. Returns the store's error.
  Result<std::vector<AuditRecord>> QueryAudit(const AuditQuery& query);
  // Checks the stored chain against itself and against the head the controller wrote last.
  Result<AuditVerdict> VerifyAudit();

  // Waits until job `id` has ended (durably) or `timeout` passes. Returns whether it ended;
  // kNotFound for an unknown job.
  Result<bool> WaitForJob(JobId id, Duration timeout);
  // Waits until step `step` of job `id` has ended or `timeout` passes. Returns whether it
  // ended; kNotFound for an unknown job or step.
  Result<bool> WaitForStep(JobId id, uint32_t step, Duration timeout);

 private:
  struct Impl;
  // Posts `run` to the state thread; `done` runs after the iteration's batch is durable.
  void Post(std::function<void(Controller&)> run, std::function<void()> done);
  // As `Post`; when `audit` is this thread's pending record and `run` changes state or fails,
  // the record (with `run`'s outcome) goes into the same batch as the change.
  void PostAudited(std::function<AuditOutcome(Controller&)> run, PendingAudit* audit,
                   std::function<void()> done);
  // Whether the state thread's last batch was written (false: fenced). State thread only.
  bool LastCommitOk() const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corral::controller

#include "controller/service_inl.h"  // IWYU pragma: keep
