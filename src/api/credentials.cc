#include "api/credentials.h"

#include <algorithm>

namespace corral::api {
namespace {

tl::unexpected<Error> Unauthenticated(std::string message) {
  return MakeError(ErrorCode::kUnauthenticated, std::move(message));
}

}  // namespace

std::string AgentSubject(std::string_view node) { return "agent:" + std::string(node); }

Credentials::Credentials(Keyring keyring, TokenPolicy policy)
    : keyring_(std::move(keyring)), policy_(std::move(policy)) {}

Status Credentials::CheckTtl(Duration ttl, Duration cap) const {
  if (ttl <= Duration::zero() || ttl > cap) {
    return InvalidArgument(
        "token lifetime of " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(ttl).count()) +
        " s is not between 1 s and the maximum of " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(cap).count()) + " s");
  }
  return {};
}

Result<std::string> Credentials::Mint(TokenClaims claims, Timestamp now, Timestamp exp) const {
  claims.issuer = policy_.cluster;
  claims.issued_at = now;
  claims.not_before = now;
  claims.expires_at = exp;
  return keyring_.Sign(claims);
}

Result<std::string> Credentials::MintUserToken(const Identity& user, Timestamp now,
                                               Duration ttl) const {
  if (user.user.empty()) return InvalidArgument("user token: no user name");
  CORRAL_RETURN_IF_ERROR(CheckTtl(ttl, policy_.max_lifetime));
  TokenClaims c;
  c.audience = kControllerAudience;
  c.subject = user.user;
  c.role = Role::kUser;
  c.uid = user.uid;
  c.gid = user.gid;
  return Mint(std::move(c), now, now + ttl);
}

Result<std::string> Credentials::MintNodeToken(std::string_view node, Timestamp now,
                                               Duration ttl) const {
  CORRAL_RETURN_IF_ERROR(CheckNodeName(node));
  CORRAL_RETURN_IF_ERROR(CheckTtl(ttl, policy_.max_lifetime));
  TokenClaims c;
  c.audience = kControllerAudience;
  c.subject = AgentSubject(node);
  c.role = Role::kAgent;
  c.node = node;
  return Mint(std::move(c), now, now + ttl);
}

Result<std::string> Credentials::MintControllerCall(std::string_view node, Timestamp now,
                                                    Duration ttl) const {
  CORRAL_RETURN_IF_ERROR(CheckNodeName(node));
  CORRAL_RETURN_IF_ERROR(CheckTtl(ttl, policy_.max_lifetime));
  TokenClaims c;
  c.audience = node;
  c.subject = kControllerAudience;
  c.role = Role::kController;
  c.node = node;
  return Mint(std::move(c), now, now + ttl);
}

Result<std::string> Credentials::MintJobCredential(const JobGrant& grant, Timestamp now,
                                                   Duration grace) const {
  if (grant.job.value == 0) return InvalidArgument("job credential: no job id");
  if (grant.user.empty()) return InvalidArgument("job credential: no user name");
  if (grace < Duration::zero()) return InvalidArgument("job credential: negative grace");
  Timestamp cap = now + policy_.max_job_lifetime;
  Timestamp exp = grant.ends_at >= cap - grace ? cap : grant.ends_at + grace;
  if (exp <= now) {
    return FailedPrecondition("job credential: job " + grant.job.ToString() +
                              " is past its time limit");
  }
  TokenClaims c;
  c.audience = kJobAudience;
  c.subject = grant.user;
  c.role = Role::kJob;
  c.uid = grant.uid;
  c.gid = grant.gid;
  c.job = grant.job;
  c.generation = grant.generation;
  return Mint(std::move(c), now, exp);
}

Result<Identity> Credentials::VerifyAtController(std::string_view token, Timestamp now,
                                                 const JobLiveness& job_alive) const {
  TokenCheck check{
      .issuer = policy_.cluster,
      .audiences = {{std::string(kControllerAudience), policy_.max_lifetime}},
      .clock_skew = policy_.clock_skew,
  };
  if (job_alive) check.audiences.push_back({std::string(kJobAudience), policy_.max_job_lifetime});
  CORRAL_ASSIGN_OR_RETURN(VerifiedToken v, keyring_.Verify(token, check, now));
  const TokenClaims& c = v.claims;
  bool for_jobs = c.audience == kJobAudience;
  if (for_jobs != (c.role == Role::kJob)) {
    return Unauthenticated("jwt: a " + std::string(RoleName(c.role)) + " token with aud \"" +
                           c.audience + "\"");
  }
  if (IsUserRole(c.role)) {
    // The role of a user is the configuration's (api/access.h), never the token's.
    return Identity{.user = c.subject, .uid = c.uid, .gid = c.gid, .role = Role::kUser};
  }
  switch (c.role) {
    case Role::kAgent:
      if (c.subject != AgentSubject(c.node)) {
        return Unauthenticated("jwt: agent token whose sub is not its node's");
      }
      return Identity{.user = c.subject,
                      .uid = kNoUnixId,
                      .gid = kNoUnixId,
                      .role = Role::kAgent,
                      .node = c.node};
    case Role::kJob:
      if (!job_alive(c.job, c.generation)) {
        return Unauthenticated("jwt: job credential for job " + c.job.ToString() + " (run " +
                               c.generation.ToString() + "): the job no longer runs");
      }
      return Identity{.user = c.subject,
                      .uid = c.uid,
                      .gid = c.gid,
                      .role = Role::kJob,
                      .job = c.job,
                      .generation = c.generation};
    default:
      return Unauthenticated("jwt: a " + std::string(RoleName(c.role)) +
                             " token is not accepted by the controller");
  }
}

Result<Identity> Credentials::VerifyAtAgent(std::string_view token, std::string_view node,
                                            Timestamp now) const {
  TokenCheck check{
      .issuer = policy_.cluster,
      .audiences = {{std::string(node), policy_.max_lifetime}},
      .clock_skew = policy_.clock_skew,
  };
  CORRAL_ASSIGN_OR_RETURN(VerifiedToken v, keyring_.Verify(token, check, now));
  const TokenClaims& c = v.claims;
  if (c.role != Role::kController) {
    return Unauthenticated("jwt: a " + std::string(RoleName(c.role)) +
                           " token is not accepted by an agent (only the controller's calls)");
  }
  if (c.node != node) {
    return Unauthenticated("jwt: controller token for node " + c.node + ", not " +
                           std::string(node));
  }
  return Identity{.user = c.subject,
                  .uid = kNoUnixId,
                  .gid = kNoUnixId,
                  .role = Role::kController,
                  .node = c.node};
}

}  // namespace corral::api
