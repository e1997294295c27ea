// The cluster's PKI (DESIGN.md, "Trust"): a cluster CA that issues the controller's and every
// node agent's TLS certificate, the files they live in, their verification, and the principal
// a verified peer certificate stands for. Backs `corral ca init`, `corral ca issue-node NAME`
// and the CA `corral dev` makes for itself.
//
// What is issued (all keys ECDSA P-256, signatures ECDSA-SHA256, random 128-bit serials,
// validity starting 5 minutes before `now` to absorb clock skew):
//  - the CA: subject "O=CLUSTER, CN=CLUSTER corral CA", self-signed, basicConstraints
//    critical CA:TRUE pathlen:0, keyUsage critical keyCertSign cRLSign; 10 years by default;
//  - the controller: "O=CLUSTER, CN=corral-controller", SANs the DNS names and IP addresses
//    given;
//  - node NAME: "O=CLUSTER, CN=NAME", SAN DNS:NAME (and any extra names given);
// both leaves with basicConstraints critical CA:FALSE, keyUsage critical digitalSignature,
// extendedKeyUsage serverAuth and clientAuth (each is a server to some and a client to
// others), subject and authority key identifiers; 1 year by default.
//
// Files: certificates are written 0644 (every local user may read the CA certificate to
// verify the servers), private keys 0600 (api/private_file.h), atomically, never overwriting
// unless asked. A private key is read only from a private file.
//
// Mapping a peer (`PrincipalFromPeer`): the TLS layer verifies the peer's chain against the
// cluster CA (or `VerifyCertificate` does) and hands over what the certificate names
// (`PeerCertificate`). CN "corral-controller" is the controller; any other CN that is a node
// name (api/identity.h, which reserves "corral-controller") and is also a DNS SAN is that
// node's agent. A serial on the revoked list is refused.
//
// Thread-safe: values and functions; OpenSSL objects never leave pki.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/identity.h"
#include "api/peer_certificate.h"
#include "api/private_file.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::api {

inline constexpr Duration kDefaultCaValidity = Minutes(int64_t{3653} * 24 * 60);   // 10 years
inline constexpr Duration kDefaultCertValidity = Minutes(int64_t{365} * 24 * 60);  // 1 year
// The CN of the controller's certificate.
inline constexpr std::string_view kControllerCommonName = "corral-controller";

// A certificate and its private key, as PEM text.
struct CertifiedKey {
  std::string certificate;
  std::string private_key;
};

// Extra subject alternative names.
struct CertificateNames {
  std::vector<std::string> dns;  // letters, digits, '.', '-', '_' (no wildcards)
  std::vector<std::string> ips;  // IPv4 or IPv6 literals
};

class CertificateAuthority {
 public:
  // A new CA for `cluster` (1-40 characters of letters, digits, '.', '_', '-').
  // Returns kInvalidArgument for a bad cluster name or validity, kInternal when OpenSSL fails.
  static Result<CertificateAuthority> Create(std::string_view cluster, Timestamp now,
                                             Duration validity = kDefaultCaValidity);
  // From PEM text. Returns kInvalidArgument when either does not parse, the certificate is
  // not a CA of this format, or the key is not the certificate's.
  static Result<CertificateAuthority> FromPem(std::string certificate_pem, std::string key_pem);
  // From files; the key file must be private. Errors as `ReadPrivateFile` and `FromPem`.
  static Result<CertificateAuthority> Load(const std::string& certificate_path,
                                           const std::string& key_path);

  // Writes the certificate (0644) and the key (0600); `mode` as `WriteFileAtomically`.
  Status Write(const std::string& certificate_path, const std::string& key_path,
               WriteMode mode = WriteMode::kCreateNew) const;

  // The controller's certificate. Returns kInvalidArgument for a bad name or address or a
  // validity that is not positive, kInternal when OpenSSL fails.
  Result<CertifiedKey> IssueController(const CertificateNames& names, Timestamp now,
                                       Duration validity = kDefaultCertValidity) const;
  // Node `node`'s certificate. kInvalidArgument for a bad node name (api/identity.h), extra
  // name or validity; kInternal when OpenSSL fails.
  Result<CertifiedKey> IssueNode(std::string_view node, Timestamp now,
                                 Duration validity = kDefaultCertValidity,
                                 const CertificateNames& extra = {}) const;

  const std::string& certificate_pem() const { return certificate_pem_; }
  const std::string& cluster() const { return cluster_; }
  // "CLUSTER corral CA": the issuer CN of everything it issues.
  std::string common_name() const { return cluster_ + " corral CA"; }

 private:
  CertificateAuthority(std::string certificate_pem, std::string key_pem, std::string cluster)
      : certificate_pem_(std::move(certificate_pem)),
        key_pem_(std::move(key_pem)),
        cluster_(std::move(cluster)) {}

  Result<CertifiedKey> Issue(std::string_view common_name, const CertificateNames& names,
                             Timestamp now, Duration validity) const;

  std::string certificate_pem_;
  std::string key_pem_;
  std::string cluster_;
};

// Writes a certificate (0644) and its key (0600). Errors as `WriteFileAtomically`.
Status WriteCertifiedKey(const CertifiedKey& pair, const std::string& certificate_path,
                         const std::string& key_path, WriteMode mode = WriteMode::kCreateNew);
// Reads a certificate file (any mode; at most 64 KiB) and a private key file (private).
Result<std::string> ReadCertificateFile(const std::string& path);
Result<std::string> ReadPrivateKeyFile(const std::string& path);

// The names of a certificate in PEM or DER form, without verifying it (for a TLS layer that
// verified it already). Returns kInvalidArgument when it does not parse, or when its subject
// or issuer has more than one CN or O, or a name holds a NUL byte.
Result<PeerCertificate> DescribeCertificate(std::string_view pem_or_der);

enum class CertificatePurpose { kServer, kClient };

// Verifies `certificate_pem` against the CA certificate `ca_pem` at `now`: the signature
// chain, the validity period and the extended key usage for `purpose`. Returns what it names,
// or kUnauthenticated saying why it is refused (OpenSSL's reason), or kInvalidArgument when
// either does not parse.
Result<PeerCertificate> VerifyCertificate(std::string_view ca_pem, std::string_view certificate_pem,
                                          Timestamp now, CertificatePurpose purpose);

struct PeerMapping {
  // The issuer CN required ("" leaves the issuer to the TLS layer's verification, e.g. with a
  // site CA).
  std::string issuer_cn;
  // At an agent: the node whose calls the controller's certificate makes (the agent's own).
  std::string local_node;
  // Serials (upper-case hex) of certificates that are refused although valid.
  std::vector<std::string> revoked_serials;
};

// The principal of a verified peer certificate: the controller (kController, `node` =
// `mapping.local_node`) or node CN's agent (kAgent). uid and gid are `kNoUnixId`. Returns
// kUnauthenticated for another issuer, a revoked serial, or a certificate that is neither.
Result<Identity> PrincipalFromPeer(const PeerCertificate& peer, const PeerMapping& mapping);

}  // namespace corral::api
