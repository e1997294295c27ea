// A throwaway PKI for the TLS tests and benchmarks of the HTTP transport: CAs and
// certificates (P-256 keys) made with OpenSSL's C API and written as PEM files into a
// directory.
#pragma once

#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace corral::api::http_testing {

// A key and its certificate, and where their PEM files are.
struct Issued {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  std::string cert_file;
  std::string key_file;
};

class TestPki {
 public:
  explicit TestPki(std::string dir) : dir_(std::move(dir)) {}
  ~TestPki() {
    for (Issued& i : issued_) {
      X509_free(i.cert);
      EVP_PKEY_free(i.key);
    }
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  // A self-signed CA named `name`; its certificate goes to DIR/NAME.crt.
  const Issued& Ca(const std::string& name) { return Make(name, name, {}, {}, nullptr, true); }

  // A certificate for `cn` with the given subjectAltName entries, signed by `issuer`.
  const Issued& Leaf(const std::string& file, const std::string& cn,
                     const std::vector<std::string>& dns, const std::vector<std::string>& ips,
                     const Issued& issuer) {
    return Make(file, cn, dns, ips, &issuer, false);
  }

 private:
  const Issued& Make(const std::string& file, const std::string& cn,
                     const std::vector<std::string>& dns, const std::vector<std::string>& ips,
                     const Issued* issuer, bool ca) {
    Issued out;
    out.key = EVP_EC_gen("P-256");
    out.cert = X509_new();
    X509_set_version(out.cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(out.cert), static_cast<long>(++serial_));
    X509_gmtime_adj(X509_getm_notBefore(out.cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(out.cert), 86400);
    X509_set_pubkey(out.cert, out.key);
    X509_NAME* name = X509_get_subject_name(out.cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509_set_issuer_name(out.cert, issuer ? X509_get_subject_name(issuer->cert) : name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer ? issuer->cert : out.cert, out.cert, nullptr, nullptr, 0);
    auto add = [&](int nid, const std::string& value) {
      X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
      X509_add_ext(out.cert, ext, -1);
      X509_EXTENSION_free(ext);
    };
    if (ca) {
      add(NID_basic_constraints, "critical,CA:TRUE");
      add(NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
      add(NID_basic_constraints, "CA:FALSE");
      std::string san;
      for (const std::string& d : dns) san += (san.empty() ? "DNS:" : ",DNS:") + d;
      for (const std::string& ip : ips) san += (san.empty() ? "IP:" : ",IP:") + ip;
      if (!san.empty()) add(NID_subject_alt_name, san);
      add(NID_ext_key_usage, "serverAuth,clientAuth");
    }
    X509_sign(out.cert, issuer ? issuer->key : out.key, EVP_sha256());
    out.cert_file = dir_ + "/" + file + ".crt";
    out.key_file = dir_ + "/" + file + ".key";
    if (FILE* f = std::fopen(out.cert_file.c_str(), "w")) {
      PEM_write_X509(f, out.cert);
      std::fclose(f);
    }
    if (FILE* f = std::fopen(out.key_file.c_str(), "w")) {
      PEM_write_PrivateKey(f, out.key, nullptr, nullptr, 0, nullptr, nullptr);
      std::fclose(f);
    }
    issued_.push_back(out);
    return issued_.back();
  }

  std::string dir_;
  long serial_ = 0;
  std::deque<Issued> issued_;  // a deque: the references handed out stay valid
};

}  // namespace corral::api::http_testing
