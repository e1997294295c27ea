#include "api/pki.h"

#include <algorithm>
#include <ctime>
#include <memory>

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "api/credentials.h"

namespace corral::api {
namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using NamePtr = std::unique_ptr<X509_NAME, Deleter<X509_NAME_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;

constexpr Duration kBackdate = Minutes(5);
constexpr size_t kMaxClusterName = 40;
constexpr size_t kMaxCertificateBytes = 64 * 1024;

// OpenSSL's most recent error as text, and the queue cleared.
std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

tl::unexpected<Error> OpenSslFailure(std::string_view what) {
  return Internal("openssl: " + std::string(what) + ": " + OpenSslError());
}

int64_t UnixSeconds(Timestamp t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

Status CheckClusterName(std::string_view cluster) {
  if (cluster.empty() || cluster.size() > kMaxClusterName ||
      !std::all_of(cluster.begin(), cluster.end(), NameChar)) {
    return InvalidArgument(
        "cluster name must be 1-40 characters of letters, digits, '.', '_' "
        "and '-'");
  }
  return {};
}

Status CheckDnsName(std::string_view name) {
  if (name.empty() || name.size() > 253 || !std::all_of(name.begin(), name.end(), NameChar)) {
    return InvalidArgument(
        "certificate DNS name must be 1-253 characters of letters, digits, "
        "'.', '_' and '-'");
  }
  return {};
}

// The canonical text of an IP literal, or kInvalidArgument.
Result<std::string> CanonicalIp(const std::string& ip) {
  unsigned char buf[16];
  char text[INET6_ADDRSTRLEN];
  for (int family : {AF_INET, AF_INET6}) {
    if (inet_pton(family, ip.c_str(), buf) == 1 && inet_ntop(family, buf, text, sizeof text)) {
      return std::string(text);
    }
  }
  return InvalidArgument("certificate IP address is not an IPv4 or IPv6 literal");
}

Result<X509Ptr> ParseCertificatePem(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return OpenSslFailure("BIO_new_mem_buf");
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    ERR_clear_error();
    return InvalidArgument("not a PEM certificate");
  }
  return cert;
}

Result<KeyPtr> ParseKeyPem(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return OpenSslFailure("BIO_new_mem_buf");
  // No passphrase callback: an encrypted key is refused rather than prompted for.
  KeyPtr key(PEM_read_bio_PrivateKey(
      bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr));
  if (!key) {
    ERR_clear_error();
    return InvalidArgument("not a PEM private key (or an encrypted one)");
  }
  return key;
}

Result<std::string> CertificateToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return OpenSslFailure("PEM_write_bio_X509");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<std::string> KeyToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslFailure("PEM_write_bio_PrivateKey");
  }
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  std::string out(data, static_cast<size_t>(n));
  OPENSSL_cleanse(data, static_cast<size_t>(n));
  return out;
}

Result<KeyPtr> NewP256Key() {
  KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return OpenSslFailure("P-256 key generation");
  return key;
}

Result<NamePtr> MakeName(std::string_view organization, std::string_view common_name) {
  NamePtr name(X509_NAME_new());
  if (!name) return OpenSslFailure("X509_NAME_new");
  for (auto [field, value] : {std::pair{"O", organization}, std::pair{"CN", common_name}}) {
    if (X509_NAME_add_entry_by_txt(name.get(), field, MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(value.data()),
                                   static_cast<int>(value.size()), -1, 0) != 1) {
      return OpenSslFailure("X509_NAME_add_entry_by_txt");
    }
  }
  return name;
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpenSslFailure(std::string("extension ") + OBJ_nid2sn(nid));
  }
  return {};
}

// A certificate for `key` named `subject`, signed by `issuer_key` (its certificate `issuer`;
// nullptr: self-signed) with the extensions given (nid, value) in order.
Result<X509Ptr> BuildCertificate(EVP_PKEY* key, X509_NAME* subject, X509* issuer,
                                 EVP_PKEY* issuer_key, Timestamp now, Duration validity,
                                 const std::vector<std::pair<int, std::string>>& extensions) {
  X509Ptr cert(X509_new());
  if (!cert) return OpenSslFailure("X509_new");
  if (X509_set_version(cert.get(), 2) != 1) return OpenSslFailure("X509_set_version");
  // A random positive 128-bit serial (RFC 5280: at most 20 octets; unpredictable).
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return OpenSslFailure("RAND_bytes");
  serial[0] &= 0x7f;
  serial[0] |= 0x40;  // never zero, never negative
  BnPtr bn(BN_bin2bn(serial, sizeof serial, nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get()))) {
    return OpenSslFailure("serial number");
  }
  time_t not_before = static_cast<time_t>(UnixSeconds(now - kBackdate));
  time_t not_after = static_cast<time_t>(UnixSeconds(now + validity));
  if (!ASN1_TIME_set(X509_getm_notBefore(cert.get()), not_before) ||
      !ASN1_TIME_set(X509_getm_notAfter(cert.get()), not_after)) {
    return OpenSslFailure("validity");
  }
  if (X509_set_subject_name(cert.get(), subject) != 1 ||
      X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : subject) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpenSslFailure("certificate names");
  }
  X509* issuer_cert = issuer ? issuer : cert.get();
  for (const auto& [nid, value] : extensions) {
    CORRAL_RETURN_IF_ERROR(AddExtension(cert.get(), issuer_cert, nid, value));
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) <= 0) return OpenSslFailure("X509_sign");
  return cert;
}

// The single entry `nid` of `name`: "" when absent, an error when repeated or holding NUL.
Result<std::string> SingleEntry(const X509_NAME* name, int nid, std::string_view what) {
  int index = X509_NAME_get_index_by_NID(name, nid, -1);
  if (index < 0) return std::string();
  if (X509_NAME_get_index_by_NID(name, nid, index) >= 0) {
    return InvalidArgument("certificate " + std::string(what) + " has more than one " +
                           OBJ_nid2sn(nid));
  }
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  unsigned char* utf8 = nullptr;
  int n = ASN1_STRING_to_UTF8(&utf8, data);
  if (n < 0) return InvalidArgument("certificate " + std::string(what) + " is not text");
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
  OPENSSL_free(utf8);
  if (out.find('\0') != std::string::npos) {
    return InvalidArgument("certificate " + std::string(what) + " holds a NUL byte");
  }
  return out;
}

Result<PeerCertificate> Describe(X509* cert) {
  PeerCertificate out;
  CORRAL_ASSIGN_OR_RETURN(out.subject_cn,
                          SingleEntry(X509_get_subject_name(cert), NID_commonName, "subject"));
  CORRAL_ASSIGN_OR_RETURN(
      out.subject_o, SingleEntry(X509_get_subject_name(cert), NID_organizationName, "subject"));
  CORRAL_ASSIGN_OR_RETURN(out.issuer_cn,
                          SingleEntry(X509_get_issuer_name(cert), NID_commonName, "issuer"));
  NamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(names.get(), i);
    if (g->type == GEN_DNS) {
      const ASN1_STRING* s = g->d.dNSName;
      std::string dns(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                      static_cast<size_t>(ASN1_STRING_length(s)));
      if (dns.find('\0') != std::string::npos) {
        return InvalidArgument("certificate DNS name holds a NUL byte");
      }
      out.dns_names.push_back(std::move(dns));
    } else if (g->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* s = g->d.iPAddress;
      int len = ASN1_STRING_length(s);
      char text[INET6_ADDRSTRLEN];
      int family = len == 4 ? AF_INET : len == 16 ? AF_INET6 : -1;
      if (family < 0 || !inet_ntop(family, ASN1_STRING_get0_data(s), text, sizeof text)) {
        return InvalidArgument("certificate IP address is neither IPv4 nor IPv6");
      }
      out.ip_addresses.push_back(text);
    }
  }
  BnPtr serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  if (!serial) return OpenSslFailure("serial number");
  char* hex = BN_bn2hex(serial.get());
  if (hex == nullptr) return OpenSslFailure("serial number");
  out.serial = hex;
  OPENSSL_free(hex);
  return out;
}

std::string SanList(std::string_view common_name_dns, const CertificateNames& names) {
  std::string san;
  auto add = [&san](const std::string& item) {
    if (!san.empty()) san += ',';
    san += item;
  };
  if (!common_name_dns.empty()) add("DNS:" + std::string(common_name_dns));
  for (const std::string& d : names.dns) {
    if (d != common_name_dns) add("DNS:" + d);
  }
  for (const std::string& ip : names.ips) add("IP:" + ip);
  return san;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// CertificateAuthority

Result<CertificateAuthority> CertificateAuthority::Create(std::string_view cluster, Timestamp now,
                                                          Duration validity) {
  CORRAL_RETURN_IF_ERROR(CheckClusterName(cluster));
  if (validity <= Duration::zero()) return InvalidArgument("CA validity must be positive");
  CORRAL_ASSIGN_OR_RETURN(KeyPtr key, NewP256Key());
  std::string cn = std::string(cluster) + " corral CA";
  CORRAL_ASSIGN_OR_RETURN(NamePtr name, MakeName(cluster, cn));
  CORRAL_ASSIGN_OR_RETURN(X509Ptr cert,
                          BuildCertificate(key.get(), name.get(), nullptr, key.get(), now, validity,
                                           {{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                            {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                            {NID_subject_key_identifier, "hash"}}));
  CORRAL_ASSIGN_OR_RETURN(std::string cert_pem, CertificateToPem(cert.get()));
  CORRAL_ASSIGN_OR_RETURN(std::string key_pem, KeyToPem(key.get()));
  return CertificateAuthority(std::move(cert_pem), std::move(key_pem), std::string(cluster));
}

Result<CertificateAuthority> CertificateAuthority::FromPem(std::string certificate_pem,
                                                           std::string key_pem) {
  Result<X509Ptr> cert = ParseCertificatePem(certificate_pem);
  if (!cert) return Annotate(cert.error(), "CA certificate");
  Result<KeyPtr> key = ParseKeyPem(key_pem);
  if (!key) return Annotate(key.error(), "CA key");
  if (X509_check_ca(cert->get()) != 1) {
    return InvalidArgument("CA certificate: not a CA (basicConstraints CA:TRUE missing)");
  }
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return InvalidArgument("CA key is not the CA certificate's");
  }
  CORRAL_ASSIGN_OR_RETURN(PeerCertificate names, Describe(cert->get()));
  if (CheckClusterName(names.subject_o).has_value() == false ||
      names.subject_cn != names.subject_o + " corral CA") {
    return InvalidArgument("CA certificate: subject is not \"O=CLUSTER, CN=CLUSTER corral CA\"");
  }
  return CertificateAuthority(std::move(certificate_pem), std::move(key_pem),
                              std::move(names.subject_o));
}

Result<CertificateAuthority> CertificateAuthority::Load(const std::string& certificate_path,
                                                        const std::string& key_path) {
  CORRAL_ASSIGN_OR_RETURN(std::string cert, ReadCertificateFile(certificate_path));
  CORRAL_ASSIGN_OR_RETURN(std::string key, ReadPrivateFile(key_path, "CA key file"));
  Result<CertificateAuthority> ca = FromPem(std::move(cert), std::move(key));
  if (!ca) return Annotate(ca.error(), certificate_path + ", " + key_path);
  return ca;
}

Status CertificateAuthority::Write(const std::string& certificate_path, const std::string& key_path,
                                   WriteMode mode) const {
  return WriteCertifiedKey(CertifiedKey{certificate_pem_, key_pem_}, certificate_path, key_path,
                           mode);
}

Result<CertifiedKey> CertificateAuthority::Issue(std::string_view common_name,
                                                 const CertificateNames& names, Timestamp now,
                                                 Duration validity) const {
  if (validity <= Duration::zero()) return InvalidArgument("certificate validity must be positive");
  CertificateNames checked;
  for (const std::string& d : names.dns) {
    CORRAL_RETURN_IF_ERROR(CheckDnsName(d));
    checked.dns.push_back(d);
  }
  for (const std::string& ip : names.ips) {
    CORRAL_ASSIGN_OR_RETURN(std::string canonical, CanonicalIp(ip));
    checked.ips.push_back(std::move(canonical));
  }
  CORRAL_ASSIGN_OR_RETURN(X509Ptr ca_cert, ParseCertificatePem(certificate_pem_));
  CORRAL_ASSIGN_OR_RETURN(KeyPtr ca_key, ParseKeyPem(key_pem_));
  CORRAL_ASSIGN_OR_RETURN(KeyPtr key, NewP256Key());
  CORRAL_ASSIGN_OR_RETURN(NamePtr subject, MakeName(cluster_, common_name));
  // A node's own name is a DNS SAN (so that TLS host checks work with it); the controller's
  // CN is a role, not a host name, and its SANs are the names given.
  bool is_node = common_name != kControllerCommonName;
  std::string san = SanList(is_node ? common_name : "", checked);
  std::vector<std::pair<int, std::string>> extensions = {
      {NID_basic_constraints, "critical,CA:FALSE"},   {NID_key_usage, "critical,digitalSignature"},
      {NID_ext_key_usage, "serverAuth,clientAuth"},   {NID_subject_key_identifier, "hash"},
      {NID_authority_key_identifier, "keyid:always"},
  };
  if (!san.empty()) extensions.emplace_back(NID_subject_alt_name, san);
  CORRAL_ASSIGN_OR_RETURN(X509Ptr cert, BuildCertificate(key.get(), subject.get(), ca_cert.get(),
                                                         ca_key.get(), now, validity, extensions));
  CertifiedKey out;
  CORRAL_ASSIGN_OR_RETURN(out.certificate, CertificateToPem(cert.get()));
  CORRAL_ASSIGN_OR_RETURN(out.private_key, KeyToPem(key.get()));
  return out;
}

Result<CertifiedKey> CertificateAuthority::IssueController(const CertificateNames& names,
                                                           Timestamp now, Duration validity) const {
  if (names.dns.empty() && names.ips.empty()) {
    return InvalidArgument("controller certificate: give at least one DNS name or IP address");
  }
  return Issue(kControllerCommonName, names, now, validity);
}

Result<CertifiedKey> CertificateAuthority::IssueNode(std::string_view node, Timestamp now,
                                                     Duration validity,
                                                     const CertificateNames& extra) const {
  CORRAL_RETURN_IF_ERROR(CheckNodeName(node));
  return Issue(node, extra, now, validity);
}

// ---------------------------------------------------------------------------------------------
// Files

Status WriteCertifiedKey(const CertifiedKey& pair, const std::string& certificate_path,
                         const std::string& key_path, WriteMode mode) {
  // The key first: a certificate without its key is useless, a key without its certificate
  // is harmless and is written again with it.
  CORRAL_RETURN_IF_ERROR(
      WriteFileAtomically(key_path, pair.private_key, mode, 0600, "certificate key file"));
  return WriteFileAtomically(certificate_path, pair.certificate, mode, 0644, "certificate file");
}

Result<std::string> ReadCertificateFile(const std::string& path) {
  return ReadPublicFile(path, "certificate file", kMaxCertificateBytes);
}

Result<std::string> ReadPrivateKeyFile(const std::string& path) {
  return ReadPrivateFile(path, "certificate key file");
}

// ---------------------------------------------------------------------------------------------
// Verification and mapping

Result<PeerCertificate> DescribeCertificate(std::string_view pem_or_der) {
  X509Ptr cert;
  if (pem_or_der.substr(0, 10) == "-----BEGIN") {
    CORRAL_ASSIGN_OR_RETURN(cert, ParseCertificatePem(pem_or_der));
  } else {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(pem_or_der.data());
    cert.reset(d2i_X509(nullptr, &p, static_cast<long>(pem_or_der.size())));
    if (!cert) {
      ERR_clear_error();
      return InvalidArgument("not a DER certificate");
    }
  }
  return Describe(cert.get());
}

Result<PeerCertificate> VerifyCertificate(std::string_view ca_pem, std::string_view certificate_pem,
                                          Timestamp now, CertificatePurpose purpose) {
  Result<X509Ptr> ca = ParseCertificatePem(ca_pem);
  if (!ca) return Annotate(ca.error(), "CA certificate");
  CORRAL_ASSIGN_OR_RETURN(X509Ptr cert, ParseCertificatePem(certificate_pem));
  StorePtr store(X509_STORE_new());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca->get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) {
    return OpenSslFailure("certificate store");
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(UnixSeconds(now)));
  X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_X509_STRICT);
  X509_STORE_CTX_set_purpose(ctx.get(), purpose == CertificatePurpose::kServer
                                            ? X509_PURPOSE_SSL_SERVER
                                            : X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(ctx.get()) != 1) {
    int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return MakeError(ErrorCode::kUnauthenticated,
                     std::string("certificate refused: ") + X509_verify_cert_error_string(err));
  }
  CORRAL_ASSIGN_OR_RETURN(PeerCertificate out, Describe(cert.get()));
  out.verified = true;
  return out;
}

Result<Identity> PrincipalFromPeer(const PeerCertificate& peer, const PeerMapping& mapping) {
  auto refuse = [](std::string why) {
    return MakeError(ErrorCode::kUnauthenticated, "peer certificate: " + why);
  };
  if (!mapping.issuer_cn.empty() && peer.issuer_cn != mapping.issuer_cn) {
    return refuse("issued by another CA (not \"" + mapping.issuer_cn + "\")");
  }
  if (std::find(mapping.revoked_serials.begin(), mapping.revoked_serials.end(), peer.serial) !=
      mapping.revoked_serials.end()) {
    return refuse("serial " + peer.serial + " is revoked");
  }
  if (peer.subject_cn == kControllerCommonName) {
    return Identity{.user = std::string(kControllerCommonName),
                    .uid = kNoUnixId,
                    .gid = kNoUnixId,
                    .role = Role::kController,
                    .node = mapping.local_node};
  }
  if (!CheckNodeName(peer.subject_cn).has_value()) return refuse("CN is not a node name");
  if (std::find(peer.dns_names.begin(), peer.dns_names.end(), peer.subject_cn) ==
      peer.dns_names.end()) {
    return refuse("node " + peer.subject_cn + "'s certificate has no DNS name " + peer.subject_cn);
  }
  return Identity{.user = AgentSubject(peer.subject_cn),
                  .uid = kNoUnixId,
                  .gid = kNoUnixId,
                  .role = Role::kAgent,
                  .node = peer.subject_cn};
}

}  // namespace corral::api
