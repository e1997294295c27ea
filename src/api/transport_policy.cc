#include "api/transport_policy.h"

#include "api/internal/url.h"

namespace corral::api {

bool IsLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

Status CheckUrlTransport(const std::string& url, bool allow_plain_loopback, std::string_view what) {
  CORRAL_ASSIGN_OR_RETURN(internal::BaseUrl parsed, internal::ParseBaseUrl(url, true));
  if (parsed.tls) return {};
  if (!IsLoopbackHost(parsed.host)) {
    return InvalidArgument(std::string(what) + ": \"" + url +
                           "\": plain http:// is refused (use https://; plain HTTP is allowed "
                           "to loopback addresses only)");
  }
  if (!allow_plain_loopback) {
    return InvalidArgument(std::string(what) + ": \"" + url +
                           "\": plain http:// is refused (use https://, or allow plain HTTP on "
                           "loopback explicitly: allow_plain_loopback in the config, "
                           "CORRAL_ALLOW_PLAIN_HTTP=1 for the command line)");
  }
  return {};
}

Result<HttpTlsOptions::ClientCertificate> ParseClientCertificateMode(std::string_view mode,
                                                                     std::string_view what) {
  if (mode == "none") return HttpTlsOptions::ClientCertificate::kNone;
  if (mode == "optional") return HttpTlsOptions::ClientCertificate::kOptional;
  if (mode == "required") return HttpTlsOptions::ClientCertificate::kRequired;
  return InvalidArgument(std::string(what) + ": \"" + std::string(mode) +
                         "\" is not one of none, optional, required");
}

HttpTlsOptions ServerTls(const std::string& certificate, const std::string& key,
                         const std::string& ca, std::string_view mode) {
  HttpTlsOptions tls;
  if (certificate.empty()) return tls;
  tls.certificate_chain_file = certificate;
  tls.private_key_file = key;
  tls.client_certificate =
      ParseClientCertificateMode(mode, "").value_or(HttpTlsOptions::ClientCertificate::kOptional);
  if (tls.client_certificate != HttpTlsOptions::ClientCertificate::kNone) tls.client_ca_file = ca;
  return tls;
}

}  // namespace corral::api
