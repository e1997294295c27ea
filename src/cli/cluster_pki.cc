#include "cli/cluster_pki.h"

#include <unistd.h>

#include <sys/stat.h>

#include "api/pki.h"
#include "api/scrape_token.h"
#include "api/token.h"

namespace corral::cli {
namespace {

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return api::FileError(errno, "directory", path, "create");
  }
  return {};
}

// A kid for a new key of `scope` that `keyring` does not list yet: "SCOPE-1", "SCOPE-2", ...
std::string NewKid(const api::Keyring& keyring, const std::string& scope) {
  for (int i = 1;; ++i) {
    std::string kid = scope + "-" + std::to_string(i);
    bool taken = false;
    for (const auto& e : keyring.entries()) taken = taken || e.kid == kid;
    if (!taken) return kid;
  }
}

}  // namespace

std::string ClusterPki::node_certificate(const std::string& node) const {
  return dir + "/nodes/" + node + ".crt";
}
std::string ClusterPki::node_key(const std::string& node) const {
  return dir + "/nodes/" + node + ".key";
}
std::string ClusterPki::node_keyring(const std::string& node) const {
  return dir + "/nodes/" + node + ".keyring";
}

Status InitClusterPki(const ClusterPki& pki, const std::string& cluster, Timestamp now) {
  CORRAL_RETURN_IF_ERROR(MakeDir(pki.dir));
  if (!Exists(pki.ca_certificate())) {
    CORRAL_ASSIGN_OR_RETURN(api::CertificateAuthority ca,
                            api::CertificateAuthority::Create(cluster, now));
    CORRAL_RETURN_IF_ERROR(ca.Write(pki.ca_certificate(), pki.ca_key()));
  }
  if (!Exists(pki.keyring())) {
    CORRAL_RETURN_IF_ERROR(api::Keyring::CreateFile(pki.keyring(), "cluster-1"));
  }
  if (!Exists(pki.metrics_token())) {
    CORRAL_RETURN_IF_ERROR(api::ScrapeToken::CreateFile(pki.metrics_token()));
  }
  return {};
}

Status IssueControllerFiles(const ClusterPki& pki, const SubjectNames& names, Timestamp now,
                            bool replace) {
  if (!replace && Exists(pki.controller_certificate())) return {};
  CORRAL_ASSIGN_OR_RETURN(api::CertificateAuthority ca,
                          api::CertificateAuthority::Load(pki.ca_certificate(), pki.ca_key()));
  CORRAL_ASSIGN_OR_RETURN(api::CertifiedKey pair, ca.IssueController({names.dns, names.ips}, now));
  return api::WriteCertifiedKey(pair, pki.controller_certificate(), pki.controller_key(),
                                replace ? api::WriteMode::kReplace : api::WriteMode::kCreateNew);
}

Status IssueNodeFiles(const ClusterPki& pki, const std::string& node, const SubjectNames& extra,
                      Timestamp now, bool replace) {
  CORRAL_RETURN_IF_ERROR(api::CheckNodeName(node));
  CORRAL_RETURN_IF_ERROR(MakeDir(pki.dir + "/nodes"));
  const api::WriteMode mode = replace ? api::WriteMode::kReplace : api::WriteMode::kCreateNew;
  if (replace || !Exists(pki.node_certificate(node))) {
    CORRAL_ASSIGN_OR_RETURN(api::CertificateAuthority ca,
                            api::CertificateAuthority::Load(pki.ca_certificate(), pki.ca_key()));
    CORRAL_ASSIGN_OR_RETURN(
        api::CertifiedKey pair,
        ca.IssueNode(node, now, api::kDefaultCertValidity, {extra.dns, extra.ips}));
    CORRAL_RETURN_IF_ERROR(
        api::WriteCertifiedKey(pair, pki.node_certificate(node), pki.node_key(node), mode));
  }
  if (!replace && Exists(pki.node_keyring(node))) return {};
  // A new node key: in the node's keyring (alone) and in the controller's (beside the others).
  CORRAL_ASSIGN_OR_RETURN(api::Keyring controller, api::Keyring::FromFile(pki.keyring()));
  std::string kid = NewKid(controller, node);
  CORRAL_ASSIGN_OR_RETURN(std::string secret, api::Keyring::GenerateSecret());
  api::Keyring own;
  CORRAL_RETURN_IF_ERROR(own.Add(kid, secret, node));
  CORRAL_RETURN_IF_ERROR(own.SetSigning(kid));
  CORRAL_RETURN_IF_ERROR(controller.Add(kid, secret, node));
  CORRAL_RETURN_IF_ERROR(controller.SetSigning(kid));
  CORRAL_RETURN_IF_ERROR(controller.WriteFile(pki.keyring(), api::WriteMode::kReplace));
  return own.WriteFile(pki.node_keyring(node), mode);
}

}  // namespace corral::cli
