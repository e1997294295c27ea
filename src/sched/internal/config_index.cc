#include "sched/internal/config_index.h"

#include <algorithm>
#include <utility>

namespace corral::sched::internal {

ConfigIndex::ConfigIndex(const SchedulerConfig& c) : topology(c.switches) {
  for (const AccountConfig& a : c.accounts) {
    account_ids[a.name] = static_cast<int>(accounts.size());
    Account acc;
    acc.config = &a;
    acc.users.insert(a.users.begin(), a.users.end());
    accounts.push_back(std::move(acc));
    if (a.guaranteed_gpus > 0) any_guarantee = true;
  }
  for (Account& a : accounts) {
    if (!a.config->parent.empty()) a.parent = account_ids.at(a.config->parent);
  }
  for (size_t i = 0; i < accounts.size(); ++i) {
    for (int cur = static_cast<int>(i); cur >= 0; cur = accounts[cur].parent) {
      if (accounts[i].guarantee_holder < 0 && accounts[cur].config->guaranteed_gpus > 0) {
        accounts[i].guarantee_holder = cur;
      }
      if (accounts[i].allowed_qos == nullptr && !accounts[cur].config->allowed_qos.empty()) {
        accounts[i].allowed_qos = &accounts[cur].config->allowed_qos;
      }
    }
  }
  for (const UserConfig& u : c.users) users[u.name] = &u;
  for (const QosConfig& q : c.qos) {
    qos_ids[q.name] = static_cast<int>(qos.size());
    qos.push_back(Qos{.config = &q, .grace = q.grace_time.value_or(c.preemption.grace_time)});
    max_qos_priority = std::max(max_qos_priority, q.priority);
  }
  for (Qos& q : qos) {
    q.preempts.assign(qos.size(), false);
    for (const std::string& p : q.config->preempt) q.preempts[qos_ids.at(p)] = true;
  }
  default_qos = qos_ids.at(c.default_qos);
}

}  // namespace corral::sched::internal
