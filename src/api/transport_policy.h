// Which URLs a Corral client may call (docs/security.md, "The network is not trusted"): every
// connection is TLS (https://), except plain http:// to a loopback address when the caller's
// configuration or environment allows it explicitly (tests, a single-host setup).
//
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "api/http.h"
#include "core/result.h"

namespace corral::api {

// True for "localhost", "127.x.y.z" and "::1" (with or without brackets).
bool IsLoopbackHost(std::string_view host);

// OK for an https:// URL, and for an http:// URL to a loopback host when
// `allow_plain_loopback`. Returns kInvalidArgument naming `what` (e.g. "[agent] controller"),
// the URL and the fix otherwise (also for a URL that does not parse).
Status CheckUrlTransport(const std::string& url, bool allow_plain_loopback, std::string_view what);

// A config's client-certificate mode: "none", "optional" or "required". Returns
// kInvalidArgument naming `what` (e.g. "corral.toml: [tls] client_certificate") otherwise.
Result<HttpTlsOptions::ClientCertificate> ParseClientCertificateMode(std::string_view mode,
                                                                     std::string_view what);

// A daemon's server TLS: off without `certificate`; else its certificate and key, and client
// certificates asked for and verified against `ca` as `mode` says (an unparsable mode counts
// as "optional").
HttpTlsOptions ServerTls(const std::string& certificate, const std::string& key,
                         const std::string& ca, std::string_view mode);

}  // namespace corral::api
