#include "core/gpu_series.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace corral {
namespace {

constexpr uint8_t kVersion = 1;

// Folds bucket `b` into `into` (same or coarser span).
void Merge(GpuBucket* into, const GpuBucket& b) {
  into->samples += b.samples;
  into->idle_samples += b.idle_samples;
  into->util_sum += b.util_sum;
  into->util_max = std::max(into->util_max, b.util_max);
  into->mem_max_mb = std::max(into->mem_max_mb, b.mem_max_mb);
  into->power_max_watts = std::max(into->power_max_watts, b.power_max_watts);
  into->energy_joules += b.energy_joules;
}

// Halves the track's resolution: buckets pair up 2:1.
void Coarsen(GpuTrack* t) {
  const Duration wider = t->width * 2;
  std::vector<GpuBucket> merged;
  for (const GpuBucket& b : t->buckets) {
    Timestamp start = t->origin + ((b.start - t->origin) / wider) * wider;
    if (merged.empty() || merged.back().start != start) {
      GpuBucket m = b;
      m.start = start;
      merged.push_back(m);
    } else {
      Merge(&merged.back(), b);
    }
  }
  t->buckets = std::move(merged);
  t->width = wider;
}

class Writer {
 public:
  void U(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void I(int64_t v) { U((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void D(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
  void S(std::string_view s) {
    U(s.size());
    out_.append(s);
  }
  void T(Timestamp t) { I(ToMicros(t)); }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  uint64_t U() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) return Fail("truncated number");
      uint8_t byte = static_cast<uint8_t>(in_[pos_++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    return Fail("number too long");
  }
  int64_t I() {
    uint64_t z = U();
    return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  double D() {
    if (in_.size() - pos_ < 8) return static_cast<double>(Fail("truncated double"));
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i)
      bits |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
    pos_ += 8;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  std::string S() {
    uint64_t n = U();
    if (n > in_.size() - pos_) {
      Fail("truncated string");
      return "";
    }
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  Timestamp T() { return FromMicros(I()); }
  // A count of things that each take at least `min_bytes`: bounded by what is left.
  uint64_t Count(size_t min_bytes) {
    uint64_t n = U();
    if (n > (in_.size() - pos_) / min_bytes) return Fail("count past the end");
    return n;
  }
  const std::string& error() const { return error_; }
  size_t pos() const { return pos_; }

 private:
  uint64_t Fail(const char* what) {
    if (error_.empty()) error_ = std::string(what) + " at byte " + std::to_string(pos_);
    pos_ = in_.size();
    return 0;
  }
  std::string_view in_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

bool AddGpuReading(JobGpuSeries* series, const std::string& node, const GpuReading& r) {
  auto key = [](const GpuTrack& t) { return std::tie(t.node, t.gpu); };
  auto it = std::lower_bound(
      series->tracks.begin(), series->tracks.end(), std::tie(node, r.gpu),
      [&](const GpuTrack& t, const std::tuple<const std::string&, const uint32_t&>& k) {
        return key(t) < k;
      });
  if (it == series->tracks.end() || it->node != node || it->gpu != r.gpu) {
    GpuTrack t;
    t.node = node;
    t.gpu = r.gpu;
    t.width = kInitialBucketWidth;
    t.origin = r.time;
    t.last_time = r.time;
    t.last_energy_mj = r.energy_mj;
    it = series->tracks.insert(it, std::move(t));
  } else if (r.time <= it->last_time) {
    return false;
  }
  GpuTrack& t = *it;
  if (r.time < t.origin) return false;
  while ((r.time - t.origin) / t.width >= static_cast<int64_t>(kMaxBuckets)) Coarsen(&t);
  Timestamp start = t.origin + ((r.time - t.origin) / t.width) * t.width;
  if (t.buckets.empty() || t.buckets.back().start != start) t.buckets.push_back({.start = start});
  GpuBucket& b = t.buckets.back();
  b.samples += 1;
  if (r.utilization < kGpuIdleUtilization) b.idle_samples += 1;
  b.util_sum += r.utilization;
  b.util_max = std::max(b.util_max, r.utilization);
  b.mem_max_mb = std::max(b.mem_max_mb, r.memory_used_mb);
  b.power_max_watts = std::max(b.power_max_watts, r.power_watts);
  if (r.energy_mj > t.last_energy_mj) {
    b.energy_joules += static_cast<double>(r.energy_mj - t.last_energy_mj) / 1000.0;
  }
  t.last_energy_mj = r.energy_mj;
  t.last_time = r.time;
  return true;
}

GpuTrackSummary Summarize(const GpuTrack& track) {
  GpuTrackSummary s;
  GpuBucket all;
  for (const GpuBucket& b : track.buckets) Merge(&all, b);
  s.samples = all.samples;
  s.util_mean = all.util_mean();
  s.util_max = all.util_max;
  s.idle_fraction = all.samples == 0 ? 0 : static_cast<double>(all.idle_samples) / all.samples;
  s.mem_max_mb = all.mem_max_mb;
  s.power_max_watts = all.power_max_watts;
  s.energy_joules = all.energy_joules;
  return s;
}

double WastedFraction(const GpuTrack& track, double threshold) {
  uint64_t total = 0, wasted = 0;
  for (const GpuBucket& b : track.buckets) {
    total += b.samples;
    if (b.util_mean() < threshold) wasted += b.samples;
  }
  return total == 0 ? 0 : static_cast<double>(wasted) / static_cast<double>(total);
}

std::string EncodeGpuSeries(const JobGpuSeries& s) {
  Writer w;
  w.out().push_back(static_cast<char>(kVersion));
  w.U(s.job.value);
  w.U(s.generation.value);
  w.T(s.waste_flagged);
  w.S(s.waste_note);
  w.U(s.tracks.size());
  for (const GpuTrack& t : s.tracks) {
    w.S(t.node);
    w.U(t.gpu);
    w.I(t.width.count());
    w.T(t.origin);
    w.T(t.last_time);
    w.U(t.last_energy_mj);
    w.U(t.buckets.size());
    for (const GpuBucket& b : t.buckets) {
      w.T(b.start);
      w.U(b.samples);
      w.U(b.idle_samples);
      w.D(b.util_sum);
      w.D(b.util_max);
      w.U(b.mem_max_mb);
      w.D(b.power_max_watts);
      w.D(b.energy_joules);
    }
  }
  return std::move(w.out());
}

Result<JobGpuSeries> DecodeGpuSeries(std::string_view data) {
  if (data.empty() || static_cast<uint8_t>(data[0]) != kVersion) {
    return Internal("gpu series: unknown encoding version");
  }
  Reader r(data.substr(1));
  JobGpuSeries s;
  s.job = JobId(r.U());
  s.generation = Generation(r.U());
  s.waste_flagged = r.T();
  s.waste_note = r.S();
  uint64_t tracks = r.Count(8);
  for (uint64_t i = 0; i < tracks && r.error().empty(); ++i) {
    GpuTrack t;
    t.node = r.S();
    t.gpu = static_cast<uint32_t>(r.U());
    t.width = Duration(r.I());
    t.origin = r.T();
    t.last_time = r.T();
    t.last_energy_mj = r.U();
    uint64_t buckets = r.Count(36);
    for (uint64_t j = 0; j < buckets && r.error().empty(); ++j) {
      GpuBucket b;
      b.start = r.T();
      b.samples = static_cast<uint32_t>(r.U());
      b.idle_samples = static_cast<uint32_t>(r.U());
      b.util_sum = r.D();
      b.util_max = r.D();
      b.mem_max_mb = r.U();
      b.power_max_watts = r.D();
      b.energy_joules = r.D();
      t.buckets.push_back(b);
    }
    if (t.width <= Duration(0) && r.error().empty())
      return Internal("gpu series: bad bucket width");
    s.tracks.push_back(std::move(t));
  }
  if (!r.error().empty()) return Internal("gpu series: " + r.error());
  return s;
}

}  // namespace corral
