#include "sim/simulator.h"

#include <algorithm>
#include <atomic>
#include <queue>
#include <tuple>

#include "core/check.h"
#include "sched/usage.h"

namespace corral::sim {

std::string_view JobEndName(JobEnd e) {
  switch (e) {
    case JobEnd::kCompleted:
      return "completed";
    case JobEnd::kTimeout:
      return "timeout";
    case JobEnd::kCancelled:
      return "cancelled";
    case JobEnd::kRefused:
      return "refused";
    case JobEnd::kNeverStarted:
      return "never_started";
  }
  return "?";
}

namespace {

// At one timestamp, ends come before kills: a job whose run ends exactly at its preemption
// deadline completes.
enum class EventKind : uint8_t { kEnd = 0, kKill = 1, kWake = 2, kPeriodic = 3 };

struct Event {
  Timestamp t;
  EventKind kind;
  uint32_t job;         // index into the workload (id - 1); 0 for wake-ups
  uint64_t generation;  // the run it belongs to (or the wake-up's generation): older = stale
  bool operator>(const Event& o) const {
    return std::tie(t, kind, job, generation) > std::tie(o.t, o.kind, o.job, o.generation);
  }
};

enum class State : uint8_t { kFuture, kPending, kRunning, kDone };

struct JobRun {
  State state = State::kFuture;
  Duration remaining{0};  // work left
  Timestamp run_start{};
  uint64_t generation = 0;  // of the current (or last) run
  uint32_t restarts = 0;
  Duration attained{0};    // GPU-time received in earlier runs (GPU-microseconds)
  bool times_out = false;  // the current run ends at its time limit, not its duration
};

// "Can any pending job start?" in O(shapes): per (partition, GPU type) a histogram of nodes by
// free GPUs of that type. Only a necessary condition (CPUs, memory and reservations ignored),
// which is what makes skipping a pass on its answer exact.
struct Pool {
  std::vector<uint32_t> hist;  // hist[k]: schedulable nodes with exactly k free GPUs of the type
  uint32_t AtLeast(uint32_t k) const {
    uint32_t c = 0;
    for (size_t i = k; i < hist.size(); ++i) c += hist[i];
    return c;
  }
};
struct PoolMember {
  uint32_t pool;
  GpuSet mask;  // GPUs of the pool's type on this node
};

class Sim {
 public:
  Sim(const Workload& w, const std::vector<sched::NodeView>& nodes,
      const sched::SchedulerConfig& config, sched::Policy& policy, const SimOptions& options)
      : w_(w), config_(config), policy_(policy), opt_(options) {
    snap_.nodes = nodes;
    std::sort(snap_.nodes.begin(), snap_.nodes.end(),
              [](const sched::NodeView& a, const sched::NodeView& b) { return a.id < b.id; });
    snap_.partitions = config.partitions;
    // The nodes' static fields and the partitions never change during a run: one epoch for the
    // run, distinct from every other run's, as the same policy object may be given other runs.
    static std::atomic<uint64_t> epochs{0};
    snap_.node_epoch = ++epochs;
    runs_.resize(w.jobs.size());
    kill_mode_.resize(w.jobs.size(), sched::PreemptMode::kRequeue);
    result_.outcomes.resize(w.jobs.size());
    for (size_t i = 0; i < w.jobs.size(); ++i) {
      result_.outcomes[i].id = w.jobs[i].id;
      result_.outcomes[i].submit = opt_.start + w.jobs[i].submit;
    }
    for (const sched::NodeView& n : snap_.nodes) {
      if (n.schedulable) result_.capacity_gpus += n.usable_gpus.size();
    }
    result_.start = opt_.start;
    window_ = opt_.window.enabled && config.reservations.empty();
    tier_.assign(w.jobs.size(), 0);
    for (size_t i = 0; i < w.jobs.size(); ++i) {
      for (const std::string& name : w.jobs[i].view.partitions) {
        for (const Partition& p : config.partitions) {
          if (p.name == name) tier_[i] = std::max(tier_[i], p.priority_tier);
        }
      }
    }
    class_jobs_.resize(w.classes);
    views_.resize(w.jobs.size());
    stamp_of_.assign(w.jobs.size(), 0);
    static_priority_.assign(w.jobs.size(), 0.0);
    use_ledger_ = options.track_usage;
    BuildPools();
  }

  Result<SimResult> Run() {
    Timestamp last = opt_.start;
    bool first = true;
    while (next_arrival_ < w_.jobs.size() || !events_.empty()) {
      Timestamp t = Timestamp::max();
      if (next_arrival_ < w_.jobs.size()) t = opt_.start + w_.jobs[next_arrival_].submit;
      if (!events_.empty()) t = std::min(t, events_.top().t);
      if (!first) result_.allocated_gpu_seconds += allocated_gpus_ * ToSecondsF(t - last);
      first = false;
      last = t;
      bool dirty = false;
      int rounds = 0;
      while (true) {
        dirty |= ProcessEventsAt(t);
        if (!dirty) break;
        dirty = false;
        if (++rounds > 10'000) {
          return Internal("policy did not settle at " + FormatTimestamp(t) +
                          ": 10000 passes at one time");
        }
        CORRAL_RETURN_IF_ERROR(MaybePass(t));
        // Passes may have queued events at `t` (zero grace time): handle them before moving on.
        if (events_.empty() || events_.top().t != t) break;
      }
      Sample(t);
      ReportProgress();
    }
    result_.end = last;
    for (size_t i = 0; i < runs_.size(); ++i) {
      if (runs_[i].state == State::kPending) result_.outcomes[i].end_kind = JobEnd::kNeverStarted;
    }
    if (opt_.progress) opt_.progress(1.0);
    return std::move(result_);
  }

 private:
  void BuildPools() {
    node_pools_.resize(snap_.nodes.size());
    std::vector<std::pair<std::string, std::string>> keys;  // (partition, type) per pool
    shape_pools_.resize(w_.shapes.size());
    for (size_t s = 0; s < w_.shapes.size(); ++s) {
      const JobShape& shape = w_.shapes[s];
      for (const std::string& pname : shape.partitions) {
        const Partition* part = nullptr;
        for (const Partition& p : snap_.partitions) {
          if (p.name == pname) part = &p;
        }
        if (part == nullptr) continue;
        auto key = std::make_pair(pname, shape.gpu_type);
        auto it = std::find(keys.begin(), keys.end(), key);
        uint32_t pool = static_cast<uint32_t>(it - keys.begin());
        if (it == keys.end()) {
          keys.push_back(key);
          pools_.push_back(Pool{std::vector<uint32_t>(kMaxGpusPerNode + 1, 0)});
          for (uint32_t n = 0; n < snap_.nodes.size(); ++n) {
            const sched::NodeView& v = snap_.nodes[n];
            if (!part->nodes.empty() &&
                std::find(part->nodes.begin(), part->nodes.end(), v.name) == part->nodes.end()) {
              continue;
            }
            GpuSet mask;
            for (const GpuInfo& g : v.gpus) {
              if (shape.gpu_type.empty() || g.model == shape.gpu_type) mask.insert(g.index);
            }
            mask = mask & v.usable_gpus;
            if (!v.schedulable || mask.empty()) continue;
            node_pools_[n].push_back({pool, mask});
            pools_[pool].hist[((v.usable_gpus - v.used_gpus) & mask).size()] += 1;
          }
        }
        shape_pools_[s].push_back(pool);
      }
    }
    pending_by_shape_.assign(w_.shapes.size(), 0);
  }

  // Node `n`'s used GPUs change from `before` to its current set: move it between buckets.
  void NodeChanged(uint32_t n, GpuSet before) {
    const sched::NodeView& v = snap_.nodes[n];
    for (const PoolMember& m : node_pools_[n]) {
      pools_[m.pool].hist[((v.usable_gpus - before) & m.mask).size()] -= 1;
      pools_[m.pool].hist[((v.usable_gpus - v.used_gpus) & m.mask).size()] += 1;
    }
  }

  bool SomeShapeFits() const {
    for (size_t s = 0; s < w_.shapes.size(); ++s) {
      if (pending_by_shape_[s] == 0) continue;
      const JobShape& shape = w_.shapes[s];
      for (uint32_t pool : shape_pools_[s]) {
        if (pools_[pool].AtLeast(shape.gpus_per_node) >= shape.nodes) return true;
      }
    }
    return false;
  }

  uint32_t NodeIndex(NodeId id) const {
    auto it = std::lower_bound(snap_.nodes.begin(), snap_.nodes.end(), id,
                               [](const sched::NodeView& n, NodeId x) { return n.id < x; });
    if (it == snap_.nodes.end() || it->id != id) return UINT32_MAX;
    return static_cast<uint32_t>(it - snap_.nodes.begin());
  }

  // Handles the arrivals and events at `t`. Returns whether anything changed.
  bool ProcessEventsAt(Timestamp t) {
    bool changed = false;
    while (!events_.empty() && events_.top().t == t) {
      Event e = events_.top();
      events_.pop();
      ++result_.stats.events;
      JobRun& r = runs_[e.job];
      switch (e.kind) {
        case EventKind::kEnd:
          if (r.state != State::kRunning || r.generation != e.generation) break;
          End(e.job, t, r.times_out ? JobEnd::kTimeout : JobEnd::kCompleted);
          changed = true;
          break;
        case EventKind::kKill:
          if (r.state != State::kRunning || r.generation != e.generation) break;
          Kill(e.job, t);
          changed = true;
          break;
        case EventKind::kWake:
          if (e.generation == wake_generation_) {
            wake_at_ = Timestamp::max();
            changed = true;
          }
          break;
        case EventKind::kPeriodic:
          if (e.generation == periodic_generation_) changed = true;
          break;
      }
    }
    while (next_arrival_ < w_.jobs.size() && opt_.start + w_.jobs[next_arrival_].submit == t) {
      Arrive(static_cast<uint32_t>(next_arrival_), t);
      ++next_arrival_;
      ++result_.stats.events;
      changed = true;
    }
    return changed;
  }

  void Arrive(uint32_t i, Timestamp t) {
    const SimJob& j = w_.jobs[i];
    if (!j.refused.empty()) {
      runs_[i].state = State::kDone;
      result_.outcomes[i].end_kind = JobEnd::kRefused;
      ++done_;
      return;
    }
    runs_[i].remaining = j.duration;
    Enqueue(i, t);
  }

  void Enqueue(uint32_t i, Timestamp) {
    const SimJob& j = w_.jobs[i];
    JobRun& r = runs_[i];
    r.state = State::kPending;
    sched::PendingJobView& v = views_[i];
    v = j.view;
    v.submit_time = opt_.start + j.submit;
    v.eligible_time = v.submit_time;  // the controller's `Job::eligible_time` (no --begin)
    v.restart_count = r.restarts;
    v.attained_service = r.attained;
    v.known_duration = r.remaining;
    static_priority_[i] =
        opt_.static_priority ? opt_.static_priority(v) : -static_cast<double>(v.nice);
    pending_ids_.insert(std::lower_bound(pending_ids_.begin(), pending_ids_.end(), i), i);
    ++pending_by_shape_[j.shape];
    std::vector<uint32_t>& members = class_jobs_[j.klass];
    members.insert(std::upper_bound(members.begin(), members.end(), i, ClassOrder{this}), i);
    if (opt_.window.static_order) {
      ordered_.insert(std::upper_bound(ordered_.begin(), ordered_.end(), i,
                                       [this](uint32_t a, uint32_t b) { return StaticLess(a, b); }),
                      i);
    }
  }

  // The order in which the policy visits the jobs of one class (see the header).
  struct ClassOrder {
    const Sim* sim;
    bool operator()(uint32_t a, uint32_t b) const {
      if (sim->static_priority_[a] != sim->static_priority_[b])
        return sim->static_priority_[a] > sim->static_priority_[b];
      if (sim->w_.jobs[a].submit != sim->w_.jobs[b].submit)
        return sim->w_.jobs[a].submit < sim->w_.jobs[b].submit;
      return a < b;
    }
  };

  // The engine's order for a static-order policy: tier desc, priority desc, submit, JobId.
  bool StaticLess(uint32_t a, uint32_t b) const {
    if (tier_[a] != tier_[b]) return tier_[a] > tier_[b];
    if (static_priority_[a] != static_priority_[b])
      return static_priority_[a] > static_priority_[b];
    if (w_.jobs[a].submit != w_.jobs[b].submit) return w_.jobs[a].submit < w_.jobs[b].submit;
    return a < b;
  }

  // Puts the pending jobs with indices `ids` (sorted) in the snapshot.
  void FillPending(const std::vector<uint32_t>& ids) {
    // Copy-assign into the views already there: their strings and vectors keep their buffers,
    // which saves most of the allocations of a pass.
    if (snap_.pending.size() > ids.size()) snap_.pending.resize(ids.size());
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k < snap_.pending.size()) {
        snap_.pending[k] = views_[ids[k]];
      } else {
        snap_.pending.push_back(views_[ids[k]]);
      }
    }
  }

  // The snapshot the hooks see (SimOptions::may_preempt): per class, the first pending jobs up
  // to the first one no victim is being preempted for.
  const sched::ClusterSnapshot& HookView() {
    std::vector<JobId> inflight;
    for (const sched::RunningJobView& r : snap_.running) {
      if (r.preempted_for.value != 0) inflight.push_back(r.preempted_for);
    }
    std::sort(inflight.begin(), inflight.end());
    std::vector<uint32_t> ids;
    for (const std::vector<uint32_t>& members : class_jobs_) {
      for (uint32_t i : members) {
        ids.push_back(i);
        if (!std::binary_search(inflight.begin(), inflight.end(), w_.jobs[i].id)) break;
      }
    }
    std::sort(ids.begin(), ids.end());
    FillPending(ids);
    return snap_;
  }

  // Asks the policy for a plan, on a window of the pending jobs when allowed (see the header).
  Result<sched::Plan> Decide(Timestamp t) {
    const uint32_t bound = config_.max_jobs_per_pass;
    const bool capped = bound > 0 && pending_ids_.size() > bound;
    if (!window_ || (capped && !opt_.window.static_order)) {
      FillPending(pending_ids_);
      return CallPolicy(t);
    }
    if (opt_.window.strict && opt_.window.static_order)
      return DecideStrictPrefix(t, capped ? bound : 0);
    // The jobs the policy would examine: per class, a prefix (all of it when not capped).
    class_limit_.resize(class_jobs_.size());
    for (size_t c = 0; c < class_jobs_.size(); ++c) class_limit_[c] = class_jobs_[c].size();
    if (capped) {
      const uint32_t last = ordered_[bound - 1];
      for (size_t c = 0; c < class_jobs_.size(); ++c) {
        const std::vector<uint32_t>& members = class_jobs_[c];
        class_limit_[c] = static_cast<size_t>(
            std::partition_point(members.begin(), members.end(),
                                 [&](uint32_t i) { return i == last || StaticLess(i, last); }) -
            members.begin());
      }
    }
    ++stamp_;
    std::vector<uint32_t> picked;
    const uint32_t k = std::max<uint32_t>(1, opt_.window.initial);
    for (size_t c = 0; c < class_jobs_.size(); ++c) {
      const std::vector<uint32_t>& members = class_jobs_[c];
      for (size_t m = 0; m < class_limit_[c] && m < k; ++m) {
        stamp_of_[members[m]] = stamp_;
        picked.push_back(members[m]);
      }
    }
    if (capped) {
      // Jobs victims are being preempted for are examined whatever their rank.
      for (const sched::RunningJobView& r : snap_.running) {
        if (r.preempted_for.value == 0) continue;
        const uint32_t i = static_cast<uint32_t>(r.preempted_for.value - 1);
        if (i < runs_.size() && runs_[i].state == State::kPending && stamp_of_[i] != stamp_) {
          stamp_of_[i] = stamp_;
          picked.push_back(i);
        }
      }
    }
    while (true) {
      if (picked.size() == pending_ids_.size()) {
        FillPending(pending_ids_);
        return CallPolicy(t);
      }
      std::sort(picked.begin(), picked.end());
      FillPending(picked);
      sched::Plan plan = CallPolicy(t);
      std::vector<uint32_t> more = Unproven(plan);
      if (more.empty()) return Verified(std::move(plan), picked.size(), t);
      ++result_.stats.window_retries;
      for (uint32_t i : more) {
        stamp_of_[i] = stamp_;
        picked.push_back(i);
      }
    }
  }

  // With `verify_windows`, compares a windowed plan with the full pass's.
  Result<sched::Plan> Verified(sched::Plan plan, size_t window, Timestamp t) {
    if (!opt_.verify_windows) return plan;
    FillPending(pending_ids_);
    sched::Plan full = CallPolicy(t);
    if (full.starts != plan.starts || full.preemptions != plan.preemptions ||
        full.preemption_orders != plan.preemption_orders ||
        full.reservations != plan.reservations) {
      return Internal("at " + FormatTimestamp(t) + ": the windowed pass (" +
                      std::to_string(window) + " of " + std::to_string(pending_ids_.size()) +
                      " pending jobs) decided differently from the full pass: " +
                      std::to_string(plan.starts.size()) + " vs " +
                      std::to_string(full.starts.size()) + " starts, " +
                      std::to_string(plan.reservations.size()) + " vs " +
                      std::to_string(full.reservations.size()) + " reservations, " +
                      std::to_string(plan.preemptions.size()) + " vs " +
                      std::to_string(full.preemptions.size()) + " preemptions");
    }
    return plan;
  }

  // Strict order (fifo): the window is a prefix of the policy's order. A job after it cannot
  // start once every partition it may use is blocked, i.e. holds a job of the window that waits
  // for resources (reason `Resources`); then it only gets `Priority`. `bound`: the policy's
  // `max_jobs_per_pass` when more jobs wait (jobs beyond it are not examined), else 0.
  Result<sched::Plan> DecideStrictPrefix(Timestamp t, size_t bound) {
    for (const sched::RunningJobView& r : snap_.running) {
      if (r.preempted_for.value != 0) {  // examined whatever their rank: not a prefix any more
        FillPending(pending_ids_);
        return CallPolicy(t);
      }
    }
    const size_t limit = bound > 0 ? bound : ordered_.size();
    size_t n =
        std::min(limit, static_cast<size_t>(16 * std::max<uint32_t>(1, opt_.window.initial)));
    std::vector<uint32_t> picked;
    std::vector<uint32_t> in_window(w_.shapes.size());
    while (true) {
      if (n >= limit && bound == 0) {
        FillPending(pending_ids_);
        return CallPolicy(t);
      }
      picked.assign(ordered_.begin(), ordered_.begin() + static_cast<std::ptrdiff_t>(n));
      std::sort(picked.begin(), picked.end());
      FillPending(picked);
      sched::Plan plan = CallPolicy(t);
      if (n >= limit)
        return Verified(std::move(plan), picked.size(), t);  // exactly what is examined
      std::vector<std::string> blocked;
      for (const sched::PendingReason& r : plan.pending) {
        if (r.code != "Resources") continue;
        for (const std::string& p : w_.jobs[r.job.value - 1].view.partitions) blocked.push_back(p);
      }
      std::sort(blocked.begin(), blocked.end());
      std::fill(in_window.begin(), in_window.end(), 0);
      for (uint32_t i : picked) ++in_window[w_.jobs[i].shape];
      bool proven = true;
      for (size_t sh = 0; sh < w_.shapes.size() && proven; ++sh) {
        if (pending_by_shape_[sh] == in_window[sh]) continue;  // none of this shape left out
        for (const std::string& p : w_.shapes[sh].partitions) {
          if (!std::binary_search(blocked.begin(), blocked.end(), p)) proven = false;
        }
      }
      if (proven) return Verified(std::move(plan), picked.size(), t);
      ++result_.stats.window_retries;
      n = std::min(limit, n * 4);
    }
  }

  // The pending jobs left out of the window that `plan` does not prove would have changed
  // nothing (rules 1 and 2 of the header), at most a few times the window's share of each class.
  std::vector<uint32_t> Unproven(const sched::Plan& plan) const {
    std::vector<std::pair<JobId, uint32_t>> position;  // of each job in `plan.pending`
    position.reserve(plan.pending.size());
    for (size_t p = 0; p < plan.pending.size(); ++p)
      position.push_back({plan.pending[p].job, static_cast<uint32_t>(p)});
    std::sort(position.begin(), position.end());
    std::vector<JobId> busy;  // reservation holders, preemptors, jobs with victims on their way
    for (const sched::ReservedStart& r : plan.reservations) busy.push_back(r.job);
    for (const sched::PreemptionOrder& o : plan.preemption_orders) busy.push_back(o.preemptor);
    for (const sched::RunningJobView& r : snap_.running) {
      if (r.preempted_for.value != 0) busy.push_back(r.preempted_for);
    }
    std::sort(busy.begin(), busy.end());
    std::vector<uint32_t> more;
    for (size_t c = 0; c < class_jobs_.size(); ++c) {
      const std::vector<uint32_t>& members = class_jobs_[c];
      Duration blocks_from = kUnlimited;  // left-out jobs with a limit at least this are proven
      size_t included = 0, added = 0, cap = 0;
      for (size_t m = 0; m < class_limit_[c]; ++m) {
        const uint32_t i = members[m];
        if (stamp_of_[i] == stamp_) {
          ++included;
          const JobId id = w_.jobs[i].id;
          auto it =
              std::lower_bound(position.begin(), position.end(), std::make_pair(id, uint32_t{0}));
          if (it == position.end() || it->first != id) continue;  // it started
          if (std::binary_search(busy.begin(), busy.end(), id)) continue;
          const std::string& code = plan.pending[it->second].code;
          if (code == "Resources" || (code == "Priority" && opt_.window.strict))
            break;  // proves the rest
          if (code == "Priority") blocks_from = std::min(blocks_from, LimitOf(i));
          continue;
        }
        if (LimitOf(i) >= blocks_from && blocks_from != kUnlimited) continue;
        if (cap == 0) cap = std::max<size_t>(4, 3 * included);
        more.push_back(i);
        if (++added >= cap) break;
      }
    }
    return more;
  }

  Duration LimitOf(uint32_t i) const {
    Duration d = w_.jobs[i].view.time_limit;
    return d.count() <= 0 ? kUnlimited : d;
  }

  sched::Plan CallPolicy(Timestamp t) {
    ++result_.stats.passes;
    result_.stats.pending_seen += snap_.pending.size();
    MonoTime t0 = opt_.profile_clock != nullptr ? opt_.profile_clock->MonotonicNow() : MonoTime{};
    sched::Plan plan = policy_.Decide(snap_, t);
    if (opt_.profile_clock != nullptr) {
      result_.stats.decide_seconds += ToSecondsF(opt_.profile_clock->MonotonicNow() - t0);
    }
    if (opt_.on_pass) opt_.on_pass(snap_, t, plan);
    return plan;
  }

  Status MaybePass(Timestamp t) {
    // As the controller's pass does: ends were charged when they released their resources.
    if (use_ledger_) ledger_.Advance(t, snap_.running, config_);
    if (opt_.periodic_pass.count() > 0) {
      // Without running jobs or arrivals to come, a job that cannot start now never will
      // (short of time-based windows): stop the periodic passes then.
      ++periodic_generation_;
      if (!pending_ids_.empty() && (next_arrival_ < w_.jobs.size() || !snap_.running.empty())) {
        events_.push({t + opt_.periodic_pass, EventKind::kPeriodic, 0, periodic_generation_});
      }
    }
    if (pending_ids_.empty()) return {};
    if (opt_.skip_idle_passes && !SomeShapeFits() &&
        (!opt_.policy_may_preempt || (opt_.may_preempt && !opt_.may_preempt(HookView(), t)))) {
      ++result_.stats.skipped_passes;
      ScheduleWakeup(t);
      return {};
    }
    if (use_ledger_) ledger_.EntriesInto(&snap_.usage);
    if (opt_.checkpoint_interval.count() > 0) {
      for (sched::RunningJobView& rv : snap_.running) {
        Duration ran = t - rv.start_time;
        int64_t k = ran / opt_.checkpoint_interval;
        rv.last_checkpoint = k > 0 ? rv.start_time + k * opt_.checkpoint_interval : Timestamp{};
      }
    }
    CORRAL_ASSIGN_OR_RETURN(sched::Plan plan, Decide(t));
    for (const sched::Placement& p : plan.starts) CORRAL_RETURN_IF_ERROR(Start(p, t));
    for (size_t k = 0; k < plan.preemptions.size(); ++k) {
      sched::PreemptionOrder order;
      if (k < plan.preemption_orders.size()) {
        order = plan.preemption_orders[k];
      } else {
        order.job = plan.preemptions[k];
        order.grace_time = config_.preemption.grace_time;
      }
      CORRAL_RETURN_IF_ERROR(Preempt(order, t));
    }
    ScheduleWakeup(t);
    return {};
  }

  void ScheduleWakeup(Timestamp t) {
    if (!opt_.wakeup) return;
    std::optional<Timestamp> w = opt_.wakeup(HookView(), t);
    if (w && *w > t && *w < wake_at_) {
      wake_at_ = *w;
      events_.push({*w, EventKind::kWake, 0, ++wake_generation_});
    }
  }

  Status Start(const sched::Placement& p, Timestamp t) {
    const std::string who = "at " + FormatTimestamp(t) + ": plan starts job " + p.job.ToString();
    if (p.job.value == 0 || p.job.value > runs_.size() ||
        runs_[p.job.value - 1].state != State::kPending) {
      return Internal(who + ", which is not pending");
    }
    const uint32_t i = static_cast<uint32_t>(p.job.value - 1);
    const SimJob& j = w_.jobs[i];
    JobRun& r = runs_[i];
    if (p.nodes.empty()) return Internal(who + " on no node");
    uint32_t gpus = 0;
    for (const NodeAllocation& na : p.nodes) {
      uint32_t n = NodeIndex(na.node);
      if (n == UINT32_MAX) return Internal(who + " on unknown node " + na.node.ToString());
      const sched::NodeView& v = snap_.nodes[n];
      if (!v.schedulable) return Internal(who + " on unschedulable node " + v.name);
      if ((na.gpus - (v.usable_gpus - v.used_gpus)).size() > 0) {
        return Internal(who + " on GPUs " + na.gpus.ToString() + " of " + v.name +
                        ", not all free (used " + v.used_gpus.ToString() + ")");
      }
      if (v.used_cpus + na.cpus > v.cpus || v.used_mem_mb + na.mem_mb > v.mem_mb) {
        return Internal(who + " beyond the CPUs or memory of " + v.name);
      }
      gpus += na.gpus.size();
    }
    if (gpus != j.gpus) {
      return Internal(who + " with " + std::to_string(gpus) + " GPUs; it asks " +
                      std::to_string(j.gpus));
    }
    for (const NodeAllocation& na : p.nodes) {
      uint32_t n = NodeIndex(na.node);
      sched::NodeView& v = snap_.nodes[n];
      GpuSet before = v.used_gpus;
      v.used_gpus = v.used_gpus | na.gpus;
      v.used_cpus += na.cpus;
      v.used_mem_mb += na.mem_mb;
      v.running_jobs += 1;
      if (j.view.resources.exclusive) v.exclusive = true;
      NodeChanged(n, before);
    }
    std::vector<uint32_t>& members = class_jobs_[j.klass];
    auto pos = std::lower_bound(members.begin(), members.end(), i, ClassOrder{this});
    CORRAL_CHECK(pos != members.end() && *pos == i)
        << "job " << j.id.ToString() << " not in its class";
    members.erase(pos);
    pending_ids_.erase(std::lower_bound(pending_ids_.begin(), pending_ids_.end(), i));
    if (opt_.window.static_order) {
      ordered_.erase(std::lower_bound(ordered_.begin(), ordered_.end(), i,
                                      [this](uint32_t a, uint32_t b) { return StaticLess(a, b); }));
    }
    r.state = State::kRunning;
    r.run_start = t;
    r.generation = ++next_generation_;
    --pending_by_shape_[j.shape];
    allocated_gpus_ += gpus;
    ++result_.stats.starts;
    JobOutcome& o = result_.outcomes[i];
    if (o.first_start == Timestamp{}) o.first_start = t;

    const Duration limit = j.view.time_limit;
    const bool limited = limit.count() > 0 && limit != kUnlimited;
    sched::RunningJobView rv;
    rv.id = j.id;
    rv.user = j.view.user;
    rv.account = j.view.account;
    rv.qos = j.view.qos;
    rv.name = j.view.name;
    rv.partition = p.partition;
    rv.start_time = t;
    rv.expected_end = limited ? t + limit : Timestamp::max();
    rv.allocation.generation = Generation(r.generation);
    rv.allocation.nodes = p.nodes;
    auto it = std::lower_bound(snap_.running.begin(), snap_.running.end(), rv.id,
                               [](const sched::RunningJobView& x, JobId id) { return x.id < id; });
    snap_.running.insert(it, std::move(rv));

    r.times_out = limited && limit < r.remaining;
    events_.push({t + (r.times_out ? limit : r.remaining), EventKind::kEnd, i, r.generation});
    return {};
  }

  // Removes job `i`'s running view and frees its resources; returns its run time.
  Duration Release(uint32_t i, Timestamp t) {
    JobRun& r = runs_[i];
    const SimJob& j = w_.jobs[i];
    auto it = std::lower_bound(snap_.running.begin(), snap_.running.end(), j.id,
                               [](const sched::RunningJobView& x, JobId id) { return x.id < id; });
    CORRAL_CHECK(it != snap_.running.end() && it->id == j.id)
        << "running job " << j.id.ToString() << " not in snapshot";
    if (use_ledger_) ledger_.ChargeEnded(*it, t, config_);
    for (const NodeAllocation& na : it->allocation.nodes) {
      uint32_t n = NodeIndex(na.node);
      sched::NodeView& v = snap_.nodes[n];
      GpuSet before = v.used_gpus;
      v.used_gpus = v.used_gpus - na.gpus;
      v.used_cpus -= std::min(v.used_cpus, na.cpus);
      v.used_mem_mb -= std::min(v.used_mem_mb, na.mem_mb);
      v.running_jobs -= std::min<uint32_t>(v.running_jobs, 1);
      if (j.view.resources.exclusive) v.exclusive = false;
      NodeChanged(n, before);
    }
    snap_.running.erase(it);
    allocated_gpus_ -= j.gpus;
    Duration ran = t - r.run_start;
    result_.outcomes[i].gpu_seconds += j.gpus * ToSecondsF(ran);
    return ran;
  }

  void End(uint32_t i, Timestamp t, JobEnd kind) {
    Release(i, t);
    runs_[i].state = State::kDone;
    result_.outcomes[i].end = t;
    result_.outcomes[i].end_kind = kind;
    ++done_;
  }

  Status Preempt(const sched::PreemptionOrder& order, Timestamp t) {
    const std::string who =
        "at " + FormatTimestamp(t) + ": plan preempts job " + order.job.ToString();
    if (order.job.value == 0 || order.job.value > runs_.size() ||
        runs_[order.job.value - 1].state != State::kRunning) {
      return Internal(who + ", which is not running");
    }
    if (order.mode == sched::PreemptMode::kOff) return Internal(who + " in mode off");
    const uint32_t i = static_cast<uint32_t>(order.job.value - 1);
    auto it = std::lower_bound(snap_.running.begin(), snap_.running.end(), order.job,
                               [](const sched::RunningJobView& x, JobId id) { return x.id < id; });
    if (it->preempt_deadline != Timestamp{})
      return Internal(who + ", which is already being preempted");
    it->preempt_deadline = t + order.grace_time;
    it->preempted_for = order.preemptor;
    kill_mode_[i] = it->requeue_allowed ? order.mode : sched::PreemptMode::kCancel;
    events_.push({t + order.grace_time, EventKind::kKill, i, runs_[i].generation});
    ++result_.stats.preemption_orders;
    return {};
  }

  void Kill(uint32_t i, Timestamp t) {
    JobRun& r = runs_[i];
    const SimJob& j = w_.jobs[i];
    Duration ran = Release(i, t);
    Duration kept{0};
    if (opt_.checkpoint_interval.count() > 0)
      kept = (ran / opt_.checkpoint_interval) * opt_.checkpoint_interval;
    kept = std::min(kept, r.remaining);
    JobOutcome& o = result_.outcomes[i];
    o.preemptions += 1;
    ++result_.stats.preemptions;
    o.lost_gpu_seconds += j.gpus * ToSecondsF(ran - kept);
    r.remaining -= kept;
    r.attained += ran * j.gpus;
    if (kill_mode_[i] == sched::PreemptMode::kCancel) {
      r.state = State::kDone;
      o.end = t;
      o.end_kind = JobEnd::kCancelled;
      ++done_;
      return;
    }
    r.restarts += 1;
    Enqueue(i, t);
  }

  void Sample(Timestamp t) {
    TimelineSample s{t, allocated_gpus_, static_cast<uint32_t>(pending_ids_.size()),
                     static_cast<uint32_t>(snap_.running.size())};
    if (!result_.timeline.empty()) {
      TimelineSample& last = result_.timeline.back();
      if (last.allocated_gpus == s.allocated_gpus && last.pending_jobs == s.pending_jobs &&
          last.running_jobs == s.running_jobs) {
        return;
      }
      if (last.t == t) {
        last = s;
        return;
      }
    }
    result_.timeline.push_back(s);
  }

  void ReportProgress() {
    if (!opt_.progress || w_.jobs.empty()) return;
    uint32_t step = static_cast<uint32_t>(done_ * 200 / w_.jobs.size());
    if (step != progress_step_) {
      progress_step_ = step;
      opt_.progress(static_cast<double>(done_) / static_cast<double>(w_.jobs.size()));
    }
  }

  const Workload& w_;
  const sched::SchedulerConfig& config_;
  sched::Policy& policy_;
  const SimOptions& opt_;

  sched::ClusterSnapshot snap_;
  std::vector<JobRun> runs_;
  std::vector<sched::PreemptMode> kill_mode_;
  SimResult result_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  size_t next_arrival_ = 0;
  uint64_t next_generation_ = 0;
  uint64_t wake_generation_ = 0;
  Timestamp wake_at_ = Timestamp::max();
  uint64_t periodic_generation_ = 0;
  uint32_t allocated_gpus_ = 0;
  size_t done_ = 0;
  uint32_t progress_step_ = 0;

  sched::UsageLedger ledger_;
  bool use_ledger_ = false;

  bool window_ = false;
  std::vector<sched::PendingJobView> views_;  // per job, valid while it is pending
  std::vector<uint32_t> pending_ids_;         // pending jobs, sorted (by index = by JobId)
  std::vector<uint32_t> stamp_of_;            // per job: the pass whose window holds it
  std::vector<uint32_t> tier_;                // per job: the highest tier of its partitions
  std::vector<size_t> class_limit_;           // per class: members the policy would examine
  std::vector<uint32_t> ordered_;  // with `static_order`: pending jobs in the policy's order
  uint32_t stamp_ = 0;
  std::vector<std::vector<uint32_t>> class_jobs_;  // pending jobs of each class, in class order
  std::vector<double> static_priority_;            // per job, with `PassWindow::static_priority`

  std::vector<Pool> pools_;
  std::vector<std::vector<PoolMember>> node_pools_;
  std::vector<std::vector<uint32_t>> shape_pools_;
  std::vector<uint32_t> pending_by_shape_;
};

}  // namespace

Result<SimResult> Simulate(const Workload& workload, const std::vector<sched::NodeView>& nodes,
                           const sched::SchedulerConfig& config, sched::Policy& policy,
                           const SimOptions& options) {
  Sim sim(workload, nodes, config, policy, options);
  return sim.Run();
}

}  // namespace corral::sim
