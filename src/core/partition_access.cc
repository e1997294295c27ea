#include "core/partition_access.h"

#include <algorithm>

namespace corral {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

std::string PartitionAccountDenial(const Partition& p, const std::string& account) {
  if (!p.allowed_accounts.empty()) {
    if (Has(p.allowed_accounts, account)) return "";
    return "Job's account not permitted to use this partition (" + p.name + " allows " +
           Joined(p.allowed_accounts) + " not " + account + ")";
  }
  if (Has(p.deny_accounts, account)) {
    return "Job's account not permitted to use this partition (" + p.name + " denies " +
           Joined(p.deny_accounts) + " including " + account + ")";
  }
  return "";
}

std::string PartitionQosDenial(const Partition& p, const std::string& qos) {
  if (p.allowed_qos.empty() || Has(p.allowed_qos, qos)) return "";
  return "Job's QOS not permitted to use this partition (" + p.name + " allows " +
         Joined(p.allowed_qos) + " not " + qos + ")";
}

bool PartitionGroupsAllow(const Partition& p, const std::vector<std::string>& groups) {
  if (p.allowed_groups.empty()) return true;
  return std::any_of(groups.begin(), groups.end(),
                     [&p](const std::string& g) { return Has(p.allowed_groups, g); });
}

}  // namespace corral
