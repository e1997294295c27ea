// The files of a cluster's PKI and keys in one directory (docs/security.md, "Certificates"),
// made by `corral ca` for a real cluster and by `corral dev` for its own:
//
//   DIR/ca.crt, DIR/ca.key                   the cluster CA (api/pki.h)
//   DIR/keyring                              the controller's keyring: a cluster key and every
//                                            node's key (api/token.h)
//   DIR/controller.crt, DIR/controller.key   the controller's certificate
//   DIR/nodes/NAME.crt, NAME.key             node NAME's certificate
//   DIR/nodes/NAME.keyring                   node NAME's keyring: its own key only
//
// Certificates are written 0644, keys and keyrings 0600. Every function keeps what exists
// (so that `corral dev` restarts with the same CA and keys) unless told to replace it.
//
// Not thread-safe (files).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace corral::cli {

// Extra subject alternative names of a certificate (api::CertificateNames; api/pki.h is not
// included here: its PeerCertificate clashes with api/http.h's).
struct SubjectNames {
  std::vector<std::string> dns;
  std::vector<std::string> ips;
};

struct ClusterPki {
  std::string dir;
  std::string ca_certificate() const { return dir + "/ca.crt"; }
  std::string ca_key() const { return dir + "/ca.key"; }
  std::string keyring() const { return dir + "/keyring"; }
  // The scrape token (api/scrape_token.h): reads /metrics of the controller and the agents.
  std::string metrics_token() const { return dir + "/metrics.token"; }
  std::string controller_certificate() const { return dir + "/controller.crt"; }
  std::string controller_key() const { return dir + "/controller.key"; }
  std::string node_certificate(const std::string& node) const;
  std::string node_key(const std::string& node) const;
  std::string node_keyring(const std::string& node) const;
};

// Creates the CA of cluster `cluster` and the controller's keyring (a new cluster key) when
// they do not exist. Returns the errors of api/pki.h and api/token.h.
Status InitClusterPki(const ClusterPki& pki, const std::string& cluster, Timestamp now);
// Issues the controller's certificate for `names` (replacing one there when `replace`).
Status IssueControllerFiles(const ClusterPki& pki, const SubjectNames& names, Timestamp now,
                            bool replace);
// Issues node `node`'s certificate (with `extra` names) and gives it a key of its own: a new
// node key signing for that node, written to its keyring and added to the controller's
// (`replace`: a new certificate and key even when they exist; the old node key keeps
// verifying in the controller's keyring until removed).
Status IssueNodeFiles(const ClusterPki& pki, const std::string& node, const SubjectNames& extra,
                      Timestamp now, bool replace);

}  // namespace corral::cli
