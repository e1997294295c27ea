// Client: how every command talks to the controller — where it is, who the caller is, and the
// typed calls of the API.
//
// The controller is found through (first match) `--controller URL`, the CORRAL_CONTROLLER
// environment variable (either may list several controllers, comma-separated: calls follow
// the leader, docs/operations.md "High availability"), or the running dev cluster's discovery file
// ($HOME/.corral/dev.json, written by `corral dev`). Credentials (first match): CORRAL_TOKEN
// (a ready JWT), CORRAL_JOB_CREDENTIAL (inside a job: the job's own credential), a keyring
// (CORRAL_KEY_FILE, or the dev cluster's) to mint a token for the calling user (iss: the
// CORRAL_CLUSTER variable, the dev cluster's name, or "corral"), else a MUNGE credential from
// the local munged (CORRAL_MUNGE_SOCKET names another socket).
//
// Transport (docs/security.md): https:// verified against the CA of CORRAL_CA_FILE or the dev
// cluster's (the system's CAs without one). Plain http:// is refused, except to a loopback
// address with CORRAL_ALLOW_PLAIN_HTTP=1. The TLS session is shared by the user's commands
// through a private file (`TlsSessionCacheDir()`), so that most calls skip the full handshake.
// Over https:// calls go through the user's connection holder when one runs for this
// controller and CA (cli/connection_holder.h; the first call starts it): the process then
// sets up no TLS at all. Without a holder, or when it fails before the request left it, a
// call connects itself; a non-idempotent request whose answer the holder lost is not repeated
// but answered with an error (kUnavailable) that says it may have been carried out.
// Every call goes through the holder, long polls (`wait`) included; `corral run`'s output
// stream is a separate connection of its own.
//
// Thread-safety: not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/connection_holder.h"
#include "api/diag.h"
#include "api/job_stats.h"
#include "api/http.h"
#include "api/messages.h"
#include "api/report_messages.h"
#include "api/tls_session_cache.h"
#include "core/audit.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::cli {

// What `corral dev` writes so that clients find it.
struct DevCluster {
  std::string url;
  std::string key_file;  // the cluster keyring (mode 0600: only its user can read it)
  std::string state_dir;
  int pid = 0;
  std::string ca_file;  // the dev CA's certificate (readable by every local user)
  std::string cluster;  // the cluster's name (the iss of its tokens)
};

// $HOME/.corral/dev.json (or /tmp/corral-UID/dev.json without HOME).
std::string DevDiscoveryPath();
// Where the CLI keeps the user's TLS session (api/tls_session_cache.h): $XDG_RUNTIME_DIR/corral
// when XDG_RUNTIME_DIR is set, else the directory of `DevDiscoveryPath()`.
std::string TlsSessionCacheDir();
Result<DevCluster> ReadDevCluster(const std::string& path);
Status WriteDevCluster(const std::string& path, const DevCluster& cluster);

struct JobListQuery {
  std::vector<std::string> users;
  std::vector<std::string> states;
  std::vector<std::string> partitions;
  std::vector<std::string> accounts;
  std::vector<std::string> ids;
  bool expand_arrays = false;  // an array's job id in `ids` selects all its tasks
  bool all = false;
  // Jobs active at some time in [active_from, active_until] (sacct -S/-E); epoch = no bound.
  Timestamp active_from{};
  Timestamp active_until{};
};

class Client {
 public:
  // Finds the controller and credentials (see the file comment). `controller_flag` is the
  // value of --controller ("" = none). Returns kFailedPrecondition saying how to point the
  // command at a controller when none is found, or the error of reading the key file.
  static Result<std::unique_ptr<Client>> Connect(const std::string& controller_flag);

  // Submits `spec` under a fresh idempotency key (docs/operations.md, "Idempotent
  // submission"): while the controller cannot be reached or answers 5xx (a restart, a
  // failover), the same request is sent again with the same key, with a backoff from 100 ms to
  // 2 s, until CORRAL_SUBMIT_RETRY_S seconds (default 60; 0: no retry) have passed. A repeat
  // the controller already carried out is answered with the original job.
  Result<api::SubmitResponse> Submit(const JobSpec& spec);
  Result<std::vector<api::JobInfo>> ListJobs(const JobListQuery& query);
  Result<api::JobInfo> GetJob(JobId id);
  Status Cancel(JobId id);
  Status Requeue(JobId id, bool hold = false);  // hold: back in the queue held
  Status Hold(JobId id, bool hold);
  Status Signal(JobId id, int signal);
  // Sets a pending job's time limit (`limit`: a Slurm time or "UNLIMITED").
  Status UpdateTimeLimit(JobId id, const std::string& limit);
  // Long-polls until the job ends or `timeout_s` passes; returns the job's record then.
  Result<api::JobInfo> WaitJob(JobId id, int timeout_s);
  Result<std::vector<api::NodeInfo>> ListNodes();
  Result<api::NodeInfo> GetNode(const std::string& name);
  Status Drain(const std::string& node, const std::string& reason);
  Status Resume(const std::string& node);
  // GPU health (admins): return failed GPU `gpu` of `node` to service; inject a fault into a
  // node's simulated GPUs.
  Status ResumeGpu(const std::string& node, uint32_t gpu);
  Status Inject(const std::string& node, const api::InjectRequest& request);
  Result<std::vector<api::PartitionInfo>> ListPartitions();
  // `job` = 0: every pending job.
  Result<std::vector<api::PriorityInfo>> Priorities(JobId job);
  Result<api::WhyInfo> Why(JobId job);
  // Per-job GPU statistics; the GPU-waste report since `since` (the epoch: the server's
  // default period).
  Result<api::GpuStatsInfo> GpuStats(JobId job);
  // GET /api/v1/jobs/{id}/timeline.
  Result<api::JobTimeline> Timeline(JobId job);
  Result<api::WasteReport> WasteReport(Timestamp since);
  // Steps (`corral run`) and checkpoints.
  Result<api::StepInfo> CreateStep(JobId id, const StepSpec& spec);
  Result<api::StepInfo> GetStep(JobId id, uint32_t step);
  // Long-polls until the step ends or `timeout_s` passes; returns the step then.
  Result<api::StepInfo> WaitStep(JobId id, uint32_t step, int timeout_s);
  Status CancelStep(JobId id, uint32_t step);
  Result<api::JobInfo> CheckpointDone(JobId id);
  // The audit log (admins and operators): `query` is the URL query ("user=alice&limit=10").
  Result<std::vector<AuditRecord>> Audit(const std::string& query);
  Result<AuditVerdict> VerifyAudit();
  // Usage and fair-share reports (docs/governance.md): usage over [start, end) with per-job
  // rows when `jobs`; the fair-share tree (sshare); the priority weights (sprio -w).
  Result<api::UsageReport> UsageReport(Timestamp start, Timestamp end, bool jobs);
  Result<api::ShareReport> ShareReport();
  Result<api::PriorityWeights> PriorityWeights();

  // Accounts, users and QOS (docs/governance.md; api/governance_codec.h gives the JSON):
  // `kind` is "accounts", "users" or "qos". Get returns one record, or the list when `name`
  // is ""; Put creates (`create`: POST) or replaces (PUT) one and returns it as stored.
  Result<std::string> GovernanceGet(const std::string& kind, const std::string& name);
  Result<std::string> GovernancePut(const std::string& kind, const std::string& name,
                                    const std::string& body, bool create);
  Status GovernanceDelete(const std::string& kind, const std::string& name);
  // Account coordinators (issue 16 item 2): add `users` to account `account`'s coordinators,
  // or remove `user`. Return the account as stored (JSON).
  Result<std::string> AddCoordinators(const std::string& account,
                                      const std::vector<std::string>& users);
  Result<std::string> RemoveCoordinator(const std::string& account, const std::string& user);
  // `scontrol suspend|resume` (operators and admins).
  Status Suspend(JobId id, bool suspend);
  // `scontrol top` (operators and admins).
  Status Top(JobId id);
  // `sdiag`'s figures (operators and admins).
  Result<api::DiagInfo> Diag();
  // `sstat`: the live usage of running job `id` on each of its nodes (its user, operators,
  // admins). `sbcast`: `data` written at `options.path` on each node of running job `id`, as
  // the job's user; returns how many nodes wrote it.
  Result<api::JobStatsInfo> JobStats(JobId id);
  Result<uint32_t> Bcast(JobId id, const api::BcastOptions& options, const std::string& data);

  const std::string& url() const { return url_; }

 private:
  Client() = default;
  // Offers the session of the user's cache (`TlsSessionCacheDir`) for this controller and CA,
  // and keeps the new one there.
  void UseSessionCache(api::HttpClientOptions& options);
  Result<api::HttpResponse> Call(std::string_view method, const std::string& path, std::string_view body,
                                 bool idempotent, std::chrono::milliseconds timeout = {},
                                 const std::map<std::string, std::string>& headers = {});
  // One call to the current controller. `not_carried_out`: it cannot have been carried out
  // there (not sent, or a standby's 503), so another controller may take it; `leader`: the
  // leader a standby named.
  Result<api::HttpResponse> CallOnce(std::string_view method, const std::string& path,
                                     std::string_view body, bool idempotent,
                                     std::chrono::milliseconds timeout,
                                     const std::map<std::string, std::string>& headers,
                                     bool* not_carried_out, std::string* leader);
  std::vector<std::string> urls_;  // every controller (issue 11); url_ is urls_[current_]
  size_t current_ = 0;
  std::string url_;
  std::string authorization_;  // a token valid for the whole command
  bool munge_ = false;         // else a fresh MUNGE credential per request (each is single-use)
  std::string munge_socket_;   // CORRAL_MUNGE_SOCKET ("" = munged's default socket)
  std::unique_ptr<api::TlsSessionCache> session_cache_;  // https:// only
  std::string session_key_;
  int64_t cached_expiry_ = 0;  // of the session offered from the cache (0: none)
  std::unique_ptr<api::HttpClient> http_;

  // The connection holder (https:// only, when on): set by `Connect` when the CA can be read,
  // dropped at the first call it cannot carry.
  void OpenHolder(const std::string& ca_file);
  // Creates the direct client (`http_`) unless made already: the only place that sets up TLS.
  Status EnsureDirect();
  // The Authorization header of one request (a fresh MUNGE credential each time).
  Result<std::string> Authorization() const;
  api::HttpClientOptions direct_options_;
  std::unique_ptr<api::HolderChannel> holder_;
  std::string holder_dir_;
};

// Parses a job id ("42"); kInvalidArgument naming the text otherwise.
Result<JobId> ParseJobIdArg(const std::string& text);

}  // namespace corral::cli
