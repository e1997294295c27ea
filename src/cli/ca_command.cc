// `corral ca`: the cluster's CA, certificates and keys for a real cluster (docs/security.md,
// "Certificates"; the files are cli/cluster_pki.h's).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cluster_pki.h"
#include "cli/commands.h"
#include "core/clock.h"

namespace corral::cli {
namespace {

void CaUsage() {
  std::printf(
      "usage: corral ca init [--dir DIR] [--cluster NAME]\n"
      "       corral ca issue-controller [--dir DIR] [--dns NAME]... [--ip ADDR]... [--replace]\n"
      "       corral ca issue-node NODE [--dir DIR] [--dns NAME]... [--ip ADDR]... [--replace]\n"
      "  init makes the cluster CA (DIR/ca.crt, ca.key) and the controller's keyring\n"
      "  (DIR/keyring); issue-controller the controller's certificate (DIR/controller.crt,\n"
      "  .key) for the names and addresses agents and clients reach it by; issue-node a\n"
      "  node's certificate (DIR/nodes/NODE.crt, .key) and its own key (DIR/nodes/NODE.keyring,\n"
      "  also added to DIR/keyring). DIR defaults to /etc/corral/pki. Existing files are kept\n"
      "  unless --replace. Copy each node's three files to that node only (docs/security.md).\n");
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "corral ca: %s\n", message.c_str());
  return 1;
}

}  // namespace

int RunCaCommand(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    CaUsage();
    return argc < 2 ? 2 : 0;
  }
  std::string verb = argv[1];
  ClusterPki pki{"/etc/corral/pki"};
  std::string cluster = "corral";
  std::string node;
  SubjectNames names;
  bool replace = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    std::string v;
    if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (a == "--dir" || a == "--cluster" || a == "--dns" || a == "--ip") {
      if (i + 1 >= argc) return Fail(a + " needs a value");
      v = argv[++i];
    }
    if (a == "--dir") {
      pki.dir = v;
    } else if (a == "--cluster") {
      cluster = v;
    } else if (a == "--dns") {
      names.dns.push_back(v);
    } else if (a == "--ip") {
      names.ips.push_back(v);
    } else if (a == "--replace") {
      replace = true;
    } else if (a.rfind("-", 0) != 0 && verb == "issue-node" && node.empty()) {
      node = a;
    } else {
      CaUsage();
      return Fail("unknown argument \"" + a + "\"");
    }
  }
  Timestamp now = SystemClock::Get().Now();
  Status s;
  if (verb == "init") {
    s = InitClusterPki(pki, cluster, now);
    if (s) std::printf("CA and keyring in %s\n", pki.dir.c_str());
  } else if (verb == "issue-controller") {
    if (names.dns.empty() && names.ips.empty()) return Fail("issue-controller: give --dns or --ip");
    s = IssueControllerFiles(pki, names, now, replace);
    if (s) std::printf("%s\n", pki.controller_certificate().c_str());
  } else if (verb == "issue-node") {
    if (node.empty()) return Fail("issue-node: name the node");
    s = IssueNodeFiles(pki, node, names, now, replace);
    if (s) {
      std::printf("%s\n%s\n%s\n", pki.node_certificate(node).c_str(), pki.node_key(node).c_str(),
                  pki.node_keyring(node).c_str());
    }
  } else {
    CaUsage();
    return Fail("unknown command \"" + verb + "\"");
  }
  if (!s) return Fail(s.error().message);
  return 0;
}

}  // namespace corral::cli
