#include "api/pki.h"

#include <unistd.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include "api/access.h"
#include "api/http.h"  // with api/pki.h: one PeerCertificate (api/peer_certificate.h)
#include "store/testing/temp_dir.h"

namespace corral::api {
namespace {

using store::testing::TempDir;

const Timestamp kNow = FromMicros(int64_t{1'780'000'000} * 1'000'000);
constexpr Duration kDay = Minutes(24 * 60);

// One CA for the suite: P-256 key generation is cheap, but the tests read better with one.
const CertificateAuthority& Ca() {
  static const CertificateAuthority ca = *CertificateAuthority::Create("c1", kNow);
  return ca;
}

// The certificate parsed by OpenSSL directly, to check what was issued independently of
// `DescribeCertificate`.
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
std::unique_ptr<X509, X509Free> Parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return std::unique_ptr<X509, X509Free>(x);
}

std::string KeyCurve(const std::string& key_pem) {
  BIO* bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) return "";
  char name[64] = {};
  size_t len = 0;
  EVP_PKEY_get_group_name(key, name, sizeof name, &len);
  EVP_PKEY_free(key);
  return name;
}

int64_t DaysValid(X509* x) {
  int days = 0, seconds = 0;
  ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(x), X509_get0_notAfter(x));
  return days;
}

TEST(CertificateAuthorityTest, CreatesAP256SelfSignedCa) {
  const CertificateAuthority& ca = Ca();
  EXPECT_EQ(ca.cluster(), "c1");
  EXPECT_EQ(ca.common_name(), "c1 corral CA");
  auto x = Parse(ca.certificate_pem());
  ASSERT_TRUE(x);
  EXPECT_EQ(X509_check_ca(x.get()), 1);
  EXPECT_EQ(X509_check_issued(x.get(), x.get()), X509_V_OK);  // self-signed
  EXPECT_TRUE(X509_get_key_usage(x.get()) & KU_KEY_CERT_SIGN);
  EXPECT_GE(DaysValid(x.get()), 3650);
  Result<PeerCertificate> names = DescribeCertificate(ca.certificate_pem());
  ASSERT_TRUE(names.has_value()) << names.error().message;
  EXPECT_EQ(names->subject_cn, "c1 corral CA");
  EXPECT_FALSE(names->verified) << "described, not verified";
  EXPECT_EQ(names->subject_o, "c1");
  EXPECT_EQ(names->issuer_cn, "c1 corral CA");

  EXPECT_EQ(CertificateAuthority::Create("", kNow).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(CertificateAuthority::Create("a,CN=evil", kNow).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CertificateAuthority::Create("c1", kNow, -kDay).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(CertificateAuthorityTest, IssuesANodeCertificateForClientAndServerUse) {
  Result<CertifiedKey> node = Ca().IssueNode("node01", kNow);
  ASSERT_TRUE(node.has_value()) << node.error().message;
  EXPECT_EQ(KeyCurve(node->private_key), "prime256v1");
  auto x = Parse(node->certificate);
  ASSERT_TRUE(x);
  EXPECT_EQ(X509_check_ca(x.get()), 0);
  uint32_t eku = X509_get_extended_key_usage(x.get());
  EXPECT_TRUE(eku & XKU_SSL_SERVER);
  EXPECT_TRUE(eku & XKU_SSL_CLIENT);
  EXPECT_EQ(X509_check_host(x.get(), "node01", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(x.get(), "node02", 0, 0, nullptr), 0);
  EXPECT_GE(DaysValid(x.get()), 365);
  EXPECT_LE(DaysValid(x.get()), 366);

  for (CertificatePurpose purpose : {CertificatePurpose::kServer, CertificatePurpose::kClient}) {
    Result<PeerCertificate> peer =
        VerifyCertificate(Ca().certificate_pem(), node->certificate, kNow, purpose);
    ASSERT_TRUE(peer.has_value()) << peer.error().message;
    EXPECT_TRUE(peer->verified);
    EXPECT_EQ(peer->subject_cn, "node01");
    EXPECT_EQ(peer->subject_o, "c1");
    EXPECT_EQ(peer->dns_names, std::vector<std::string>{"node01"});
    EXPECT_EQ(peer->issuer_cn, "c1 corral CA");
    EXPECT_EQ(peer->serial.size(), 32u);  // 128 bits, top bits set
  }
  // Two certificates never share a serial.
  EXPECT_NE(DescribeCertificate(node->certificate)->serial,
            DescribeCertificate(Ca().IssueNode("node01", kNow)->certificate)->serial);

  // Extra names for a node reached by address.
  Result<CertifiedKey> extra =
      Ca().IssueNode("node02", kNow, kDay, CertificateNames{{"node02.example.org"}, {"10.0.0.2"}});
  ASSERT_TRUE(extra.has_value()) << extra.error().message;
  Result<PeerCertificate> names = DescribeCertificate(extra->certificate);
  EXPECT_EQ(names->dns_names, (std::vector<std::string>{"node02", "node02.example.org"}));
  EXPECT_EQ(names->ip_addresses, std::vector<std::string>{"10.0.0.2"});

  for (std::string_view bad : {"", "corral-controller", "node 01", "a,DNS:evil", "-x"}) {
    EXPECT_EQ(Ca().IssueNode(bad, kNow).error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(Ca().IssueNode("n", kNow, kDay, CertificateNames{{"a,IP:1.2.3.4"}, {}}).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(CertificateAuthorityTest, IssuesTheControllersCertificateWithItsNames) {
  Result<CertifiedKey> ctl = Ca().IssueController(
      CertificateNames{{"head.example.org", "localhost"}, {"127.0.0.1", "::1", "10.1.2.3"}}, kNow);
  ASSERT_TRUE(ctl.has_value()) << ctl.error().message;
  Result<PeerCertificate> peer = VerifyCertificate(Ca().certificate_pem(), ctl->certificate, kNow,
                                                   CertificatePurpose::kServer);
  ASSERT_TRUE(peer.has_value()) << peer.error().message;
  EXPECT_EQ(peer->subject_cn, "corral-controller");
  EXPECT_EQ(peer->dns_names, (std::vector<std::string>{"head.example.org", "localhost"}));
  EXPECT_EQ(peer->ip_addresses, (std::vector<std::string>{"127.0.0.1", "::1", "10.1.2.3"}));
  auto x = Parse(ctl->certificate);
  EXPECT_EQ(X509_check_ip_asc(x.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_host(x.get(), "head.example.org", 0, 0, nullptr), 1);
  // A client (of the agents) too.
  EXPECT_TRUE(VerifyCertificate(Ca().certificate_pem(), ctl->certificate, kNow,
                                CertificatePurpose::kClient));

  EXPECT_EQ(Ca().IssueController({}, kNow).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Ca().IssueController(CertificateNames{{}, {"10.0.0.300"}}, kNow).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(VerifyCertificateTest, RefusesAnotherCasCertificatesAndOutOfDateOnes) {
  CertificateAuthority other = *CertificateAuthority::Create("c1", kNow);  // same names
  CertifiedKey foreign = *other.IssueNode("node01", kNow);
  Result<PeerCertificate> r = VerifyCertificate(Ca().certificate_pem(), foreign.certificate, kNow,
                                                CertificatePurpose::kClient);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
  EXPECT_NE(r.error().message.find("certificate refused"), std::string::npos) << r.error().message;

  CertifiedKey node = *Ca().IssueNode("node01", kNow, kDay);
  r = VerifyCertificate(Ca().certificate_pem(), node.certificate, kNow + 2 * kDay,
                        CertificatePurpose::kClient);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("expired"), std::string::npos) << r.error().message;
  r = VerifyCertificate(Ca().certificate_pem(), node.certificate, kNow - kDay,
                        CertificatePurpose::kClient);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("not yet valid"), std::string::npos) << r.error().message;
  // Backdated 5 minutes for skew.
  EXPECT_TRUE(VerifyCertificate(Ca().certificate_pem(), node.certificate, kNow - Minutes(4),
                                CertificatePurpose::kClient));

  // A leaf is no CA: what it signs is refused (and it cannot be loaded as one).
  EXPECT_EQ(CertificateAuthority::FromPem(node.certificate, node.private_key).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(VerifyCertificate("garbage", node.certificate, kNow, CertificatePurpose::kClient)
                .error()
                .code,
            ErrorCode::kInvalidArgument);
}

TEST(CertificateFilesTest, WritesKeys0600AndLoadsTheCaBack) {
  TempDir dir;
  std::string ca_cert = dir.File("ca.pem"), ca_key = dir.File("ca.key");
  ASSERT_TRUE(Ca().Write(ca_cert, ca_key).has_value());
  struct stat st {};
  ASSERT_EQ(stat(ca_cert.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ASSERT_EQ(stat(ca_key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(Ca().Write(ca_cert, ca_key).error().code, ErrorCode::kAlreadyExists);

  Result<CertificateAuthority> loaded = CertificateAuthority::Load(ca_cert, ca_key);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->cluster(), "c1");
  EXPECT_EQ(loaded->certificate_pem(), Ca().certificate_pem());
  // What the loaded CA issues verifies against the original.
  CertifiedKey node = *loaded->IssueNode("node07", kNow);
  EXPECT_TRUE(VerifyCertificate(Ca().certificate_pem(), node.certificate, kNow,
                                CertificatePurpose::kClient));

  ASSERT_TRUE(WriteCertifiedKey(node, dir.File("node07.pem"), dir.File("node07.key")).has_value());
  ASSERT_EQ(stat(dir.File("node07.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(*ReadPrivateKeyFile(dir.File("node07.key")), node.private_key);
  EXPECT_EQ(*ReadCertificateFile(dir.File("node07.pem")), node.certificate);
  // Renewal replaces both.
  CertifiedKey renewed = *loaded->IssueNode("node07", kNow + kDay);
  ASSERT_TRUE(WriteCertifiedKey(renewed, dir.File("node07.pem"), dir.File("node07.key"),
                                WriteMode::kReplace)
                  .has_value());
  EXPECT_EQ(*ReadCertificateFile(dir.File("node07.pem")), renewed.certificate);

  // A key file readable by others is refused, naming it and its mode.
  chmod(ca_key.c_str(), 0644);
  Result<CertificateAuthority> loose = CertificateAuthority::Load(ca_cert, ca_key);
  ASSERT_FALSE(loose.has_value());
  EXPECT_EQ(loose.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(loose.error().message.find("CA key file " + ca_key + ": mode 0644"), std::string::npos)
      << loose.error().message;
  chmod(dir.File("node07.key").c_str(), 0640);
  EXPECT_EQ(ReadPrivateKeyFile(dir.File("node07.key")).error().code,
            ErrorCode::kFailedPrecondition);
  chmod(ca_key.c_str(), 0600);

  // Another CA's key with this certificate is refused.
  CertificateAuthority other = *CertificateAuthority::Create("c1", kNow);
  ASSERT_TRUE(other.Write(dir.File("o.pem"), dir.File("o.key")).has_value());
  Result<CertificateAuthority> mixed = CertificateAuthority::Load(ca_cert, dir.File("o.key"));
  ASSERT_FALSE(mixed.has_value());
  EXPECT_NE(mixed.error().message.find("not the CA certificate's"), std::string::npos)
      << mixed.error().message;
}

TEST(DescribeCertificateTest, ReadsDerAndRefusesGarbage) {
  CertifiedKey node = *Ca().IssueNode("node01", kNow);
  auto x = Parse(node.certificate);
  unsigned char* der = nullptr;
  int len = i2d_X509(x.get(), &der);
  ASSERT_GT(len, 0);
  std::string der_bytes(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_free(der);
  Result<PeerCertificate> from_der = DescribeCertificate(der_bytes);
  ASSERT_TRUE(from_der.has_value()) << from_der.error().message;
  EXPECT_EQ(*from_der, *DescribeCertificate(node.certificate));
  EXPECT_EQ(DescribeCertificate("nonsense").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(DescribeCertificate("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
                .error()
                .code,
            ErrorCode::kInvalidArgument);
}

TEST(PrincipalFromPeerTest, MapsNodesAndTheController) {
  PeerMapping at_controller{.issuer_cn = "c1 corral CA"};
  PeerCertificate node =
      *VerifyCertificate(Ca().certificate_pem(), Ca().IssueNode("node01", kNow)->certificate, kNow,
                         CertificatePurpose::kClient);
  Result<Identity> id = PrincipalFromPeer(node, at_controller);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(*id, (Identity{.user = "agent:node01",
                           .uid = kNoUnixId,
                           .gid = kNoUnixId,
                           .role = Role::kAgent,
                           .node = "node01"}));

  PeerCertificate ctl =
      *DescribeCertificate(Ca().IssueController(CertificateNames{{"head"}, {}}, kNow)->certificate);
  id = PrincipalFromPeer(ctl, PeerMapping{.issuer_cn = "c1 corral CA", .local_node = "node01"});
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(id->role, Role::kController);
  EXPECT_EQ(id->node, "node01");
  EXPECT_TRUE(Authorize(*id, Action::kAgentCall, Resource{.node = "node01"}));
  EXPECT_FALSE(Authorize(*id, Action::kAgentCall, Resource{.node = "node02"}));
}

TEST(PrincipalFromPeerTest, RefusesOtherIssuersRevokedSerialsAndStrangeNames) {
  PeerCertificate node = *DescribeCertificate(Ca().IssueNode("node01", kNow)->certificate);
  auto refused = [](const Result<Identity>& r, std::string_view what) {
    ASSERT_FALSE(r.has_value()) << what;
    EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
    EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
  };
  refused(PrincipalFromPeer(node, PeerMapping{.issuer_cn = "c2 corral CA"}), "another CA");
  refused(PrincipalFromPeer(node, PeerMapping{.revoked_serials = {"01", node.serial}}),
          "is revoked");
  PeerCertificate no_san = node;
  no_san.dns_names = {"node02"};
  refused(PrincipalFromPeer(no_san, PeerMapping{}), "has no DNS name node01");
  PeerCertificate user = node;
  user.subject_cn = "alice@example.org";
  refused(PrincipalFromPeer(user, PeerMapping{}), "CN is not a node name");
  PeerCertificate job = node;
  job.subject_cn = "corral-job";
  job.dns_names = {"corral-job"};
  refused(PrincipalFromPeer(job, PeerMapping{}), "CN is not a node name");
}

}  // namespace
}  // namespace corral::api
