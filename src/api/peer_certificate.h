// PeerCertificate: what a certificate names. One type for the two places that read one: the
// PKI (api/pki.h: `DescribeCertificate`, `VerifyCertificate`, `PrincipalFromPeer`) and the
// HTTP server, which gives each request on a TLS connection its peer's certificate
// (api/http.h, `HttpRequest::peer_certificate`), so that a file may include both.
//
// Thread-safe: a value type.
#pragma once

#include <string>
#include <vector>

namespace corral::api {

struct PeerCertificate {
  // Verified against the configured CA(s): by the TLS handshake (the HTTP server; nothing is
  // filled on plain connections or when verification failed), or by `VerifyCertificate`.
  bool verified = false;
  std::string subject_cn;                 // the subject's common name, "" if none
  std::string subject_o;                  // the subject's organization (the PKI only)
  std::vector<std::string> dns_names;     // subjectAltName DNS entries
  std::vector<std::string> ip_addresses;  // subjectAltName IP entries, textual (the PKI only)
  std::string issuer_cn;                  // (the PKI only)
  std::string serial;                     // upper-case hex, no leading zeros (the PKI only)
  bool operator==(const PeerCertificate&) const = default;
};

}  // namespace corral::api
