#include "cli/client.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/stat.h>

#include "api/audit_codec.h"
#include "api/auth.h"
#include "api/governance_codec.h"  // coordinators (issue 16 item 2)
#include "api/http_status.h"
#include "api/json_codec.h"
#include "api/leader_client.h"
#include "api/report_codec.h"
#include "api/openssl_process.h"
#include "api/private_file.h"
#include "api/transport_policy.h"
#include "core/strings.h"
#include "cli/connection_holder.h"
#include "core/clock.h"
#include "core/strings.h"

namespace corral::cli {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             SystemClock::Get().Now().time_since_epoch())
      .count();
}

}  // namespace

std::string DevDiscoveryPath() {
  std::string home = Env("HOME");
  if (home.empty()) return "/tmp/corral-" + std::to_string(getuid()) + "/dev.json";
  return home + "/.corral/dev.json";
}

Result<DevCluster> ReadDevCluster(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("no running dev cluster (" + path + " does not exist)");
  std::ostringstream text;
  text << in.rdbuf();
  auto kv = api::DecodeStringMap(text.str());
  if (!kv) return InvalidArgument(path + ": " + kv.error().message);
  DevCluster c;
  for (const auto& [k, v] : *kv) {
    if (k == "url") c.url = v;
    if (k == "key_file") c.key_file = v;
    if (k == "state_dir") c.state_dir = v;
    if (k == "pid") c.pid = std::atoi(v.c_str());
    if (k == "ca_file") c.ca_file = v;
    if (k == "cluster") c.cluster = v;
  }
  if (c.url.empty()) return InvalidArgument(path + ": no url");
  return c;
}

Status WriteDevCluster(const std::string& path, const DevCluster& c) {
  std::string dir = path.substr(0, path.rfind('/'));
  mkdir(dir.c_str(), 0700);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << api::EncodeStringMap({{"url", c.url},
                                 {"key_file", c.key_file},
                                 {"state_dir", c.state_dir},
                                 {"pid", std::to_string(c.pid)},
                                 {"ca_file", c.ca_file},
                                 {"cluster", c.cluster}})
        << "\n";
    if (!out) return Internal("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Internal("cannot write " + path);
  return {};
}

Result<JobId> ParseJobIdArg(const std::string& text) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v == 0) {
    return InvalidArgument("\"" + text + "\" is not a job id");
  }
  return JobId(v);
}

Result<std::unique_ptr<Client>> Client::Connect(const std::string& controller_flag) {
  api::SkipOpenSslCleanupAtExit();  // before the first use of OpenSSL (the token's HMAC)
  std::unique_ptr<Client> c(new Client());
  std::optional<DevCluster> dev;
  if (auto d = ReadDevCluster(DevDiscoveryPath()); d) dev = *d;
  c->url_ = controller_flag;
  if (c->url_.empty()) c->url_ = Env("CORRAL_CONTROLLER");
  if (c->url_.empty() && dev) c->url_ = dev->url;
  if (c->url_.empty()) {
    return FailedPrecondition(
        "no controller: start one with `corral dev`, or give --controller URL or CORRAL_CONTROLLER");
  }
  // A comma-separated list names every controller (issue 11): calls go to the first and
  // follow the leader from there.
  for (std::string u : SplitNonEmpty(c->url_)) {
    while (!u.empty() && u.back() == '/') u.pop_back();
    CORRAL_RETURN_IF_ERROR(
        api::CheckUrlTransport(u, Env("CORRAL_ALLOW_PLAIN_HTTP") == "1", "controller"));
    c->urls_.push_back(std::move(u));
  }
  if (c->urls_.empty()) return FailedPrecondition("no controller in \"" + c->url_ + "\"");
  c->url_ = c->urls_.front();

  const bool dev_url = dev && dev->url == c->url_;
  api::HttpClientOptions options;
  options.ca_file = Env("CORRAL_CA_FILE");
  if (options.ca_file.empty() && dev_url) options.ca_file = dev->ca_file;
  c->direct_options_ = options;
  if (c->url_.rfind("https://", 0) == 0 && ConnectionHolderEnabled() && c->urls_.size() == 1) {
    c->OpenHolder(options.ca_file);
  }

  std::string token = Env("CORRAL_TOKEN");
  std::string job_credential = Env("CORRAL_JOB_CREDENTIAL");
  std::string key_file = Env("CORRAL_KEY_FILE");
  if (key_file.empty() && dev_url) key_file = dev->key_file;
  if (!token.empty()) {
    c->authorization_ = "Bearer " + token;
  } else if (!job_credential.empty()) {
    c->authorization_ = "Bearer " + job_credential;
  } else if (!key_file.empty()) {
    CORRAL_ASSIGN_OR_RETURN(api::Keyring keyring, api::Keyring::FromFile(key_file));
    std::string cluster = Env("CORRAL_CLUSTER");
    if (cluster.empty() && dev_url) cluster = dev->cluster;
    if (cluster.empty()) cluster = "corral";
    api::Credentials credentials(std::move(keyring), {.cluster = cluster});
    CORRAL_ASSIGN_OR_RETURN(std::string minted,
                            credentials.MintUserToken(api::CurrentProcessIdentity(),
                                                      SystemClock::Get().Now(), Seconds(600)));
    c->authorization_ = "Bearer " + minted;
  } else {
    c->munge_socket_ = Env("CORRAL_MUNGE_SOCKET");
    auto munge = api::MungeHeaderFor(api::kControllerAudience, c->munge_socket_);
    if (!munge) {
      return FailedPrecondition("no credentials for " + c->url_ +
                                ": set CORRAL_TOKEN or CORRAL_KEY_FILE, or run munged (" +
                                munge.error().message + ")");
    }
    c->munge_ = true;
  }
  if (c->holder_ == nullptr) CORRAL_RETURN_IF_ERROR(c->EnsureDirect());
  return c;
}

void Client::OpenHolder(const std::string& ca_file) {
  std::string ca_pem;
  if (!ca_file.empty()) {
    auto pem = api::ReadPublicFile(ca_file, "CA file");
    if (!pem) return;  // the direct client's own error names it
    ca_pem = std::move(*pem);
  }
  holder_dir_ = TlsSessionCacheDir();
  holder_ = std::make_unique<api::HolderChannel>(holder_dir_, api::HolderKey(url_, ca_pem));
}

Status Client::EnsureDirect() {
  if (http_ != nullptr) return {};
  if (url_.rfind("https://", 0) == 0) UseSessionCache(direct_options_);
  CORRAL_ASSIGN_OR_RETURN(http_, api::HttpClient::Create(url_, direct_options_));
  return {};
}

Result<std::string> Client::Authorization() const {
  if (!munge_) return authorization_;
  auto credential = api::MungeHeaderFor(api::kControllerAudience, munge_socket_);
  if (!credential) return Annotate(credential.error(), "MUNGE");
  return *credential;
}

std::string TlsSessionCacheDir() {
  std::string runtime = Env("XDG_RUNTIME_DIR");
  if (!runtime.empty()) return runtime + "/corral";
  const std::string record = DevDiscoveryPath();
  return record.substr(0, record.rfind('/'));
}

void Client::UseSessionCache(api::HttpClientOptions& options) {
  std::string ca_pem;
  if (!options.ca_file.empty()) {
    auto pem = api::ReadPublicFile(options.ca_file, "CA file");
    if (!pem) return;  // the client's own error names it
    ca_pem = std::move(*pem);
  }
  session_cache_ = std::make_unique<api::TlsSessionCache>(TlsSessionCacheDir());
  session_key_ = api::TlsSessionCache::Key(url_, ca_pem);
  auto loaded = session_cache_->Load(session_key_, UnixSeconds());
  if (!loaded) {
    // Someone else's file, or one others may read: never used (the next session replaces it).
    std::fprintf(stderr, "corral: warning: %s\n", loaded.error().message.c_str());
  } else if (loaded->has_value()) {
    options.resume_session = (*loaded)->der;
    cached_expiry_ = (*loaded)->expires_unix_s;
  }
  // A new session is written when the cached one was not resumed (none, or the controller
  // restarted) or has lived half its life; otherwise calls only read the file.
  options.on_new_session = [this](const api::TlsSessionTicket& ticket) {
    const int64_t now = UnixSeconds();
    const bool resumed = http_ != nullptr && http_->tls_stats().resumed > 0;
    if (resumed && cached_expiry_ - now > (ticket.expires_unix_s - now) / 2) return;
    if (session_cache_->Store(session_key_, ticket, now)) cached_expiry_ = ticket.expires_unix_s;
  };
}

// --- Several controllers (issue 11; docs/operations.md, "High availability") ---

Result<api::HttpResponse> Client::Call(std::string_view method, const std::string& path,
                                       std::string_view body, bool idempotent,
                                       std::chrono::milliseconds timeout,
                                       const std::map<std::string, std::string>& headers) {
  // With a list of controllers, a call that a controller did not carry out (it could not be
  // reached, or it stands by and names the leader) goes to the leader, else the next one.
  for (size_t tried = 1;; ++tried) {
    std::string leader;
    bool not_carried_out = false;
    auto r = CallOnce(method, path, body, idempotent, timeout, headers, &not_carried_out, &leader);
    if (r || urls_.size() < 2 || !not_carried_out || tried >= 2 * urls_.size()) return r;
    auto known = std::find(urls_.begin(), urls_.end(), leader);
    size_t next = known != urls_.end() ? static_cast<size_t>(known - urls_.begin())
                                       : (current_ + 1) % urls_.size();
    if (next == current_) next = (current_ + 1) % urls_.size();
    current_ = next;
    url_ = urls_[current_];
    http_.reset();
  }
}

Result<api::HttpResponse> Client::CallOnce(std::string_view method, const std::string& path,
                                           std::string_view body, bool idempotent,
                                           std::chrono::milliseconds timeout,
                                           const std::map<std::string, std::string>& headers,
                                           bool* not_carried_out, std::string* leader) {
  if (holder_ != nullptr) {
    CORRAL_ASSIGN_OR_RETURN(std::string authorization, Authorization());
    std::map<std::string, std::string> all = headers;
    all["authorization"] = std::move(authorization);
    api::HolderCall h = holder_->Send({.method = std::string(method),
                                       .path = path,
                                       .headers = std::move(all),
                                       .body = std::string(body),
                                       .idempotent = idempotent,
                                       .timeout = timeout});
    if (h.kind == api::HolderCall::Kind::kAnswered) {
      if (!h.response) return Annotate(h.response.error(), "controller " + url_);
      return api::CheckResponse(std::move(h.response));
    }
    if (h.kind == api::HolderCall::Kind::kLost && !idempotent) {
      return Unavailable("controller " + url_ + ": " + std::string(method) + " " + path +
                         ": the connection holder stopped before answering (" + h.why +
                         "); the request may have been carried out: check before repeating it");
    }
    // Not sent (or an idempotent request lost): this process goes on by itself; with no
    // holder listening, it starts one for the next calls, except inside a job (a process
    // started there would outlive the job's process group and count in its cgroup; the job
    // uses the user's holder when one runs).
    if (h.kind == api::HolderCall::Kind::kNotSent && h.no_holder &&
        Env("CORRAL_JOB_CREDENTIAL").empty()) {
      StartConnectionHolder(url_, direct_options_.ca_file, holder_dir_);
    }
    holder_.reset();
  }
  CORRAL_RETURN_IF_ERROR(EnsureDirect());
  CORRAL_ASSIGN_OR_RETURN(std::string authorization, Authorization());
  std::map<std::string, std::string> all = headers;
  all["authorization"] = std::move(authorization);
  bool sent = false;
  auto r = http_->Send(method, path, body, all, idempotent, timeout, &sent);
  if (!r) {
    *not_carried_out = !sent || (idempotent && r.error().code == ErrorCode::kUnavailable);
    return Annotate(r.error(), "controller " + url_);
  }
  if (api::IsStandbyAnswer(*r, leader)) *not_carried_out = true;
  return api::CheckResponse(std::move(r));
}

// --- Idempotent submission (issue 11; docs/operations.md) ---

namespace {

// 16 random bytes as hex: one logical submission's idempotency key.
Result<std::string> NewSubmitKey() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Internal("no randomness for the submission's idempotency key");
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key;
  for (unsigned char b : bytes) {
    key += kHex[b >> 4];
    key += kHex[b & 15];
  }
  return key;
}

// Whether a submission that failed with `e` may have met a controller that is restarting or
// failing over (refused, reset, timed out, 5xx): worth repeating under its key.
bool Retryable(const Error& e) {
  return e.code == ErrorCode::kUnavailable || e.code == ErrorCode::kDeadlineExceeded ||
         e.code == ErrorCode::kInternal;
}

}  // namespace

Result<api::SubmitResponse> Client::Submit(const JobSpec& spec) {
  CORRAL_ASSIGN_OR_RETURN(std::string key, NewSubmitKey());
  const std::string body = api::EncodeJobSpec(spec);
  int64_t retry_s = 60;
  if (std::string v = Env("CORRAL_SUBMIT_RETRY_S"); !v.empty()) {
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), retry_s);
    if (ec != std::errc() || p != v.data() + v.size() || retry_s < 0 || retry_s > 86400) {
      return InvalidArgument("CORRAL_SUBMIT_RETRY_S: expected 0 to 86400 seconds, got \"" + v +
                             "\"");
    }
  }
  const Clock& clock = SystemClock::Get();
  const MonoTime deadline = clock.MonotonicNow() + Duration(retry_s * 1'000'000);
  Duration backoff = std::chrono::milliseconds(100);
  bool told = false;
  while (true) {
    // With its key the request is idempotent: the connection layers may repeat it too.
    auto r = Call("POST", "/api/v1/jobs", body, true, {}, {{"Idempotency-Key", key}});
    if (r) return api::DecodeSubmitResponse(r->body);
    if (!Retryable(r.error()) || clock.MonotonicNow() + backoff > deadline) {
      return tl::unexpected<Error>(r.error());
    }
    if (!told) {
      std::fprintf(stderr, "corral: %s; retrying for up to %llds (CORRAL_SUBMIT_RETRY_S)\n",
                   r.error().message.c_str(), static_cast<long long>(retry_s));
      told = true;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min<Duration>(backoff * 2, std::chrono::milliseconds(2000));
  }
}

Result<std::vector<api::JobInfo>> Client::ListJobs(const JobListQuery& q) {
  std::string query;
  auto add = [&](const char* key, const std::vector<std::string>& values) {
    if (values.empty()) return;
    std::string joined;
    for (const auto& v : values) joined += (joined.empty() ? "" : ",") + v;
    query += (query.empty() ? "?" : "&") + std::string(key) + "=" + api::UrlEncode(joined);
  };
  add("user", q.users);
  add("state", q.states);
  add("partition", q.partitions);
  add("account", q.accounts);
  add("id", q.ids);
  if (q.all) query += query.empty() ? "?all=1" : "&all=1";
  if (q.expand_arrays) query += query.empty() ? "?arrays=1" : "&arrays=1";
  auto seconds = [](Timestamp t) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
  };
  if (q.active_from != Timestamp{}) query += (query.empty() ? "?start=" : "&start=") + seconds(q.active_from);
  if (q.active_until != Timestamp{}) query += (query.empty() ? "?end=" : "&end=") + seconds(q.active_until);
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/jobs" + query, "", true));
  return api::DecodeJobInfoList(r.body);
}

Result<api::JobInfo> Client::GetJob(JobId id) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/jobs/" + id.ToString(), "", true));
  return api::DecodeJobInfo(r.body);
}

Status Client::Cancel(JobId id) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/jobs/" + id.ToString() + "/cancel", "", true));
  return {};
}

Status Client::Requeue(JobId id, bool hold) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST",
                                       "/api/v1/jobs/" + id.ToString() + "/requeue" +
                                           (hold ? "?hold=true" : ""),
                                       "", false));
  return {};
}

Status Client::Hold(JobId id, bool hold) {
  CORRAL_ASSIGN_OR_RETURN(
      auto r, Call("POST", "/api/v1/jobs/" + id.ToString() + (hold ? "/hold" : "/release"), "", true));
  return {};
}

Status Client::Signal(JobId id, int signal) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/jobs/" + id.ToString() + "/signal",
                                       api::EncodeStringMap({{"signal", std::to_string(signal)}}), false));
  return {};
}

Status Client::UpdateTimeLimit(JobId id, const std::string& limit) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/jobs/" + id.ToString() + "/time_limit",
                                       api::EncodeStringMap({{"time_limit", limit}}), true));
  return {};
}

Result<api::JobInfo> Client::WaitJob(JobId id, int timeout_s) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/jobs/" + id.ToString() + "/wait?timeout=" +
                                                  std::to_string(timeout_s),
                                       "", true, std::chrono::milliseconds((timeout_s + 30) * 1000)));
  return api::DecodeJobInfo(r.body);
}

Result<std::vector<api::NodeInfo>> Client::ListNodes() {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/nodes", "", true));
  return api::DecodeNodeInfoList(r.body);
}

Result<api::NodeInfo> Client::GetNode(const std::string& name) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/nodes/" + api::UrlEncode(name), "", true));
  return api::DecodeNodeInfo(r.body);
}

Status Client::Drain(const std::string& node, const std::string& reason) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/nodes/" + api::UrlEncode(node) + "/drain",
                                       api::EncodeDrainRequest({reason}), true));
  return {};
}

Status Client::Resume(const std::string& node) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/nodes/" + api::UrlEncode(node) + "/resume", "", true));
  return {};
}

Status Client::ResumeGpu(const std::string& node, uint32_t gpu) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/nodes/" + api::UrlEncode(node) + "/gpus/" +
                                                   std::to_string(gpu) + "/resume", "", true));
  return {};
}

Status Client::Inject(const std::string& node, const api::InjectRequest& request) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/nodes/" + api::UrlEncode(node) + "/inject",
                                       api::EncodeInjectRequest(request), false));
  return {};
}

Result<api::StepInfo> Client::CreateStep(JobId id, const StepSpec& spec) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/jobs/" + id.ToString() + "/steps", api::EncodeStepSpec(spec), false));
  return api::DecodeStepInfo(r.body);
}

Result<api::StepInfo> Client::GetStep(JobId id, uint32_t step) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/jobs/" + id.ToString() + "/steps/" + std::to_string(step), "", true));
  return api::DecodeStepInfo(r.body);
}

Result<api::StepInfo> Client::WaitStep(JobId id, uint32_t step, int timeout_s) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/jobs/" + id.ToString() + "/steps/" + std::to_string(step) +
                                                  "/wait?timeout=" + std::to_string(timeout_s),
                                       "", true, std::chrono::milliseconds((timeout_s + 30) * 1000)));
  return api::DecodeStepInfo(r.body);
}

Status Client::CancelStep(JobId id, uint32_t step) {
  CORRAL_ASSIGN_OR_RETURN(
      auto r, Call("POST", "/api/v1/jobs/" + id.ToString() + "/steps/" + std::to_string(step) + "/cancel", "", true));
  return {};
}

Result<api::JobInfo> Client::CheckpointDone(JobId id) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/jobs/" + id.ToString() + "/checkpoint", "", false));
  return api::DecodeJobInfo(r.body);
}

Result<std::vector<api::PartitionInfo>> Client::ListPartitions() {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/partitions", "", true));
  return api::DecodePartitionInfoList(r.body);
}

Result<std::vector<api::PriorityInfo>> Client::Priorities(JobId job) {
  std::string path = "/api/v1/priorities";
  if (job.value != 0) path += "?job=" + job.ToString();
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", path, "", true));
  return api::DecodePriorityList(r.body);
}

Result<api::GpuStatsInfo> Client::GpuStats(JobId job) {
  CORRAL_ASSIGN_OR_RETURN(auto r,
                          Call("GET", "/api/v1/jobs/" + job.ToString() + "/gpustats", "", true));
  return api::DecodeGpuStatsInfo(r.body);
}

Result<api::JobTimeline> Client::Timeline(JobId job) {
  CORRAL_ASSIGN_OR_RETURN(auto r,
                          Call("GET", "/api/v1/jobs/" + job.ToString() + "/timeline", "", true));
  return api::DecodeJobTimeline(r.body);
}

Result<api::WasteReport> Client::WasteReport(Timestamp since) {
  std::string path = "/api/v1/reports/waste";
  if (since != Timestamp{}) {
    path += "?since=" +
            std::to_string(
                std::chrono::duration_cast<std::chrono::seconds>(since.time_since_epoch()).count());
  }
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", path, "", true));
  return api::DecodeWasteReport(r.body);
}

Result<api::WhyInfo> Client::Why(JobId job) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/jobs/" + job.ToString() + "/why", "", true));
  return api::DecodeWhyInfo(r.body);
}

Result<std::vector<AuditRecord>> Client::Audit(const std::string& query) {
  std::string path = "/api/v1/audit";
  if (!query.empty()) path += "?" + query;
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", path, "", true));
  return api::DecodeAuditRecordList(r.body);
}

Result<AuditVerdict> Client::VerifyAudit() {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/audit/verify", "", true));
  return api::DecodeAuditVerdict(r.body);
}

// --- Usage and fair-share reports ---

Result<api::UsageReport> Client::UsageReport(Timestamp start, Timestamp end, bool jobs) {
  auto secs = [](Timestamp t) {
    return std::to_string(
        std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
  };
  std::string path = "/api/v1/reports/usage?start=" + secs(start) + "&end=" + secs(end);
  if (jobs) path += "&jobs=1";
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", path, "", true));
  return api::DecodeUsageReport(r.body);
}

Result<api::ShareReport> Client::ShareReport() {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/fairshare", "", true));
  return api::DecodeShareReport(r.body);
}

Result<api::PriorityWeights> Client::PriorityWeights() {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/priorities/weights", "", true));
  return api::DecodePriorityWeights(r.body);
}

Result<std::string> Client::GovernanceGet(const std::string& kind, const std::string& name) {
  std::string path = "/api/v1/" + kind + (name.empty() ? "" : "/" + api::UrlEncode(name));
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", path, "", true));
  return std::move(r.body);
}

Result<std::string> Client::GovernancePut(const std::string& kind, const std::string& name,
                                          const std::string& body, bool create) {
  std::string path = "/api/v1/" + kind + (create ? "" : "/" + api::UrlEncode(name));
  // A create is not retried: a second try after a lost answer would find the record (409).
  CORRAL_ASSIGN_OR_RETURN(auto r, Call(create ? "POST" : "PUT", path, body, !create));
  return std::move(r.body);
}

Status Client::GovernanceDelete(const std::string& kind, const std::string& name) {
  CORRAL_ASSIGN_OR_RETURN(
      auto r, Call("DELETE", "/api/v1/" + kind + "/" + api::UrlEncode(name), "", false));
  return {};
}

// Account coordinators (issue 16 item 2).
Result<std::string> Client::AddCoordinators(const std::string& account,
                                            const std::vector<std::string>& users) {
  CORRAL_ASSIGN_OR_RETURN(
      auto r, Call("POST", "/api/v1/accounts/" + api::UrlEncode(account) + "/coordinators",
                   api::EncodeCoordinatorRequest({.users = users}), true));
  return std::move(r.body);
}

Result<std::string> Client::RemoveCoordinator(const std::string& account, const std::string& user) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("DELETE",
                                       "/api/v1/accounts/" + api::UrlEncode(account) +
                                           "/coordinators/" + api::UrlEncode(user),
                                       "", true));
  return std::move(r.body);
}

Result<api::DiagInfo> Client::Diag() {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/diag", "", true));
  return api::DecodeDiagInfo(r.body);
}

Result<api::JobStatsInfo> Client::JobStats(JobId id) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("GET", "/api/v1/jobs/" + id.ToString() + "/stats", "", true));
  return api::DecodeJobStatsInfo(r.body);
}

Result<uint32_t> Client::Bcast(JobId id, const api::BcastOptions& options,
                               const std::string& data) {
  // Not retried: a second try after a lost answer would find the file (409) without -f.
  CORRAL_ASSIGN_OR_RETURN(
      auto r, Call("POST", "/api/v1/jobs/" + id.ToString() + "/bcast?" +
                               api::EncodeBcastQuery(options),
                   data, options.force, std::chrono::milliseconds(60000)));
  auto kv = api::DecodeStringMap(r.body);
  if (!kv) return tl::unexpected<Error>(kv.error());
  std::optional<uint64_t> n;
  for (const auto& [k, v] : *kv) {
    if (k == "nodes") n = ParseUint(v);
  }
  return static_cast<uint32_t>(n.value_or(0));
}

Status Client::Top(JobId id) {
  CORRAL_ASSIGN_OR_RETURN(auto r, Call("POST", "/api/v1/jobs/" + id.ToString() + "/top", "", true));
  return {};
}

Status Client::Suspend(JobId id, bool suspend) {
  CORRAL_ASSIGN_OR_RETURN(
      auto r,
      Call("POST", "/api/v1/jobs/" + id.ToString() + (suspend ? "/suspend" : "/resume"), "", true));
  return {};
}

}  // namespace corral::cli
