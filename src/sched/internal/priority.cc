#include "sched/internal/priority.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "sched/fair_share.h"

namespace corral::sched::internal {

Prioritizer::Prioritizer(const SchedulerConfig& config, const SchedulerOptions& options,
                         const ConfigIndex& index, const ClusterSnapshot& snapshot,
                         const NodeCache& cache, Timestamp now)
    : config_(config),
      options_(options),
      index_(index),
      snap_(snapshot),
      cache_(cache),
      now_(now) {}

std::vector<double> Prioritizer::FairShare(const JobTable& jobs) const {
  std::vector<double> fairshare;  // by association
  if (config_.priority.weight_fairshare == 0 || options_.priority) return fairshare;
  fairshare.assign(jobs.associations().size(), 0.0);
  std::vector<std::pair<std::string, std::string>> extra;
  extra.reserve(jobs.associations().size());
  for (const auto& [account, user] : jobs.associations()) extra.emplace_back(account, user);
  std::sort(extra.begin(), extra.end());
  for (const FairShareEntry& e : ComputeFairTree(config_, snap_.usage, extra)) {
    const int a = jobs.FindAccount(e.account), u = jobs.FindUser(e.user);
    if (a < 0 || u < 0) continue;
    if (int32_t assoc = jobs.FindAssoc(a, u); assoc >= 0) fairshare[assoc] = e.factor;
  }
  return fairshare;
}

std::vector<PriorityFactors> Prioritizer::Compute(JobTable* jobs, bool report) const {
  const PriorityConfig& w = config_.priority;
  const std::vector<double> fairshare = FairShare(*jobs);
  std::vector<JobInfo>& pending = jobs->pending();
  std::vector<PriorityFactors> out;
  if (report) out.reserve(pending.size());
  const double max_age_s = ToSecondsF(w.max_age);
  PriorityFactors f;
  for (JobInfo& j : pending) {
    const PendingJobView& v = *j.view;
    f = PriorityFactors();
    if (report) {
      f.job = v.id;
      f.user = v.user;
      f.account = v.account;
      f.qos = j.qos >= 0 ? index_.qos[j.qos].config->name : v.qos;
    }
    f.nice = v.nice;
    f.priority_tier = j.tier;
    if (options_.priority) {
      f.priority = std::llround(options_.priority(v, now_));
    } else {
      Timestamp since = v.eligible_time != Timestamp{} ? v.eligible_time : v.submit_time;
      f.age = now_ > since ? std::min(1.0, ToSecondsF(now_ - since) / max_age_s) : 0.0;
      if (!fairshare.empty()) f.fairshare = fairshare[j.assoc];
      double size = 0;
      if (cache_.total_gpus > 0 && j.gpus > 0) {
        size = std::min(1.0, static_cast<double>(j.gpus) / static_cast<double>(cache_.total_gpus));
      } else if (cache_.total_cpus > 0) {
        PerNodeDemand pn = ComputePerNodeDemand(v.resources);
        size =
            std::min(1.0, static_cast<double>(pn.cpus) * std::max<uint32_t>(1, v.resources.nodes) /
                              static_cast<double>(cache_.total_cpus));
      }
      f.job_size = w.favor_small ? 1.0 - size : size;
      f.partition = static_cast<double>(j.tier) / cache_.max_tier;
      f.qos_factor =
          j.qos >= 0 && index_.max_qos_priority > 0
              ? static_cast<double>(index_.qos[j.qos].config->priority) / index_.max_qos_priority
              : 0.0;
      // Every term is non-negative: rounding half up is llround, without the libm call.
      auto round = [](double x) { return static_cast<int64_t>(x + 0.5); };
      f.age_points = round(w.weight_age * f.age);
      f.fairshare_points = round(w.weight_fairshare * f.fairshare);
      f.job_size_points = round(w.weight_job_size * f.job_size);
      f.partition_points = round(w.weight_partition * f.partition);
      f.qos_points = round(w.weight_qos * f.qos_factor);
      f.priority = f.age_points + f.fairshare_points + f.job_size_points + f.partition_points +
                   f.qos_points - v.nice;
    }
    j.priority = f.priority;
    if (report) out.push_back(std::move(f));
  }
  return out;
}

void Prioritizer::Order(std::vector<JobInfo>* pending) const {
  // `*pending` is in JobId order, so a job's rank in (submit time, JobId) order is its index
  // when submit times do not go backwards.
  const size_t n = (*pending).size();
  std::vector<uint32_t> rank(n);
  std::iota(rank.begin(), rank.end(), 0u);
  bool monotone = true;
  for (size_t i = 1; i < n && monotone; ++i)
    monotone = (*pending)[i - 1].view->submit_time <= (*pending)[i].view->submit_time;
  if (!monotone) {
    std::vector<uint32_t> by_submit(n);
    std::iota(by_submit.begin(), by_submit.end(), 0u);
    std::stable_sort(by_submit.begin(), by_submit.end(), [&](uint32_t a, uint32_t b) {
      return (*pending)[a].view->submit_time < (*pending)[b].view->submit_time;
    });
    for (size_t r = 0; r < n; ++r) rank[by_submit[r]] = static_cast<uint32_t>(r);
  }
  // Sort small keys: tier and priority (descending, as complemented unsigned integers; custom
  // priorities, doubles, are mapped to integers that order the same way), then the rank.
  struct Key {
    uint64_t tier;
    uint64_t priority;
    uint32_t rank;
    uint32_t index;
  };
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) {
    const JobInfo& j = (*pending)[i];
    uint64_t prio;
    if (options_.priority) {
      double d = options_.priority(*j.view, now_);
      uint64_t bits = std::bit_cast<uint64_t>(d == 0.0 ? 0.0 : d);    // -0 sorts as 0
      prio = (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);  // ascending as unsigned
    } else {
      prio = static_cast<uint64_t>(j.priority) ^ (uint64_t{1} << 63);  // ascending as unsigned
    }
    keys[rank[i]] = {~static_cast<uint64_t>(j.tier), ~prio, rank[i], static_cast<uint32_t>(i)};
  }
  // Keys start in rank order; a stable LSD radix sort by (tier, priority) keeps rank order among
  // equal keys. Bytes on which all keys agree are skipped (most of them, in practice). A few
  // keys are sorted by comparison instead, by (tier, priority, rank): the same order, as ranks
  // are distinct, without the radix sort's 16 passes over 256 counters.
  if (n <= 64) {
    std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
      return std::tie(a.tier, a.priority, a.rank) < std::tie(b.tier, b.priority, b.rank);
    });
  } else {
    std::vector<Key> tmp(n);
    auto radix_pass = [&](auto byte_of) {
      size_t count[257] = {};
      for (const Key& k : keys) ++count[byte_of(k) + 1];
      for (size_t b = 0; b < 256; ++b) {
        if (count[b + 1] == n) return;  // every key has this byte
      }
      for (size_t b = 0; b < 256; ++b) count[b + 1] += count[b];
      for (const Key& k : keys) tmp[count[byte_of(k)]++] = k;
      keys.swap(tmp);
    };
    for (int shift = 0; shift < 64; shift += 8) {
      radix_pass(
          [shift](const Key& k) { return static_cast<size_t>((k.priority >> shift) & 0xFF); });
    }
    for (int shift = 0; shift < 64; shift += 8) {
      radix_pass([shift](const Key& k) { return static_cast<size_t>((k.tier >> shift) & 0xFF); });
    }
  }
  // Visit in order from a sorted copy: sequential reads from here on.
  {
    std::vector<JobInfo> sorted;
    sorted.reserve((*pending).size());
    for (const Key& k : keys) sorted.push_back((*pending)[k.index]);
    (*pending).swap(sorted);
  }
}

}  // namespace corral::sched::internal
