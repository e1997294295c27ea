// The credentials of each principal (api/identity.h), minted and verified over a `Keyring`.
//
//   principal    minted by                aud                  sub                  lifetime cap
//   user         the CLI (key holders),   "corral-controller"  the user             max_lifetime
//                an admin for REST use
//   node agent   the agent                "corral-controller"  "agent:NODE"         max_lifetime
//   controller   the controller, per call "NODE" (the agent's) "corral-controller"  max_lifetime
//   job          the controller at launch "corral-job"         the job's user max_job_lifetime
//
// Every token carries iss = the cluster's name. The controller accepts user, agent and job
// tokens (`VerifyAtController`); an agent accepts only the controller's calls for its own node
// (`VerifyAtAgent`). A job credential expires when the job's time limit plus a grace ends and is
// refused as soon as the job no longer runs with that generation (`JobLiveness`), so it ends
// with the job even when the job ends early.
//
// Thread-safe: `Credentials` is immutable.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "api/identity.h"
#include "api/token.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::api {

struct TokenPolicy {
  std::string cluster;                                // iss of every token
  Duration max_lifetime = Minutes(24 * 60);           // user, agent and controller tokens
  Duration max_job_lifetime = Minutes(30 * 24 * 60);  // job credentials
  Duration clock_skew = Seconds(60);
};

// True while job `job` runs with generation `generation` (the controller's state). Called for
// every request made with a job credential; must be thread-safe.
using JobLiveness = std::function<bool(JobId job, Generation generation)>;

// What the controller mints a job credential for.
struct JobGrant {
  JobId job{};
  Generation generation{};
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
  // When the job's time limit ends (start + limit); `Timestamp::max()` for no limit, in which
  // case the credential lasts `max_job_lifetime`.
  Timestamp ends_at = Timestamp::max();
};

class Credentials {
 public:
  Credentials(Keyring keyring, TokenPolicy policy);

  // A user token (role "user": the role is decided where it is verified). Returns
  // kInvalidArgument for an empty user or a `ttl` that is not positive or over
  // `max_lifetime`, and `Keyring::Sign`'s errors.
  Result<std::string> MintUserToken(const Identity& user, Timestamp now, Duration ttl) const;
  // Node `node`'s agent token. kInvalidArgument for a bad node name or ttl.
  Result<std::string> MintNodeToken(std::string_view node, Timestamp now, Duration ttl) const;
  // The controller's token for one call to node `node`'s agent (aud = `node`).
  Result<std::string> MintControllerCall(std::string_view node, Timestamp now, Duration ttl) const;
  // A job credential valid until `grant.ends_at + grace` (at most `max_job_lifetime` from
  // now). kInvalidArgument for a job 0, an empty user or a negative grace;
  // kFailedPrecondition when the job's end has passed already.
  Result<std::string> MintJobCredential(const JobGrant& grant, Timestamp now, Duration grace) const;

  // A token presented to the controller: a user's (`Identity::role` kUser, to be resolved by
  // `RoleResolver`), an agent's (kAgent bound to its node, uid/gid `kNoUnixId`) or a job
  // credential (kJob) whose job `job_alive` says still runs. Returns kUnauthenticated for a
  // token that fails any check of token.h, a controller token, an agent token whose sub is
  // not its node's, or a job credential when `job_alive` is empty or says the job ended.
  Result<Identity> VerifyAtController(std::string_view token, Timestamp now,
                                      const JobLiveness& job_alive) const;
  // A token presented to node `node`'s agent: the controller's call for that node only
  // (kController with `node` set). kUnauthenticated otherwise.
  Result<Identity> VerifyAtAgent(std::string_view token, std::string_view node,
                                 Timestamp now) const;

  const Keyring& keyring() const { return keyring_; }
  const TokenPolicy& policy() const { return policy_; }

 private:
  Result<std::string> Mint(TokenClaims claims, Timestamp now, Timestamp exp) const;
  Status CheckTtl(Duration ttl, Duration cap) const;

  Keyring keyring_;
  TokenPolicy policy_;
};

// The sub of node `node`'s agent tokens and the user of its principal: "agent:NODE" (a colon
// is never in a Unix user name, so it names no user).
std::string AgentSubject(std::string_view node);

}  // namespace corral::api
