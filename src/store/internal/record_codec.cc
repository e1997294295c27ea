#include "store/internal/record_codec.h"

#include <bit>
#include <cstring>
#include <limits>
#include <string>

namespace corral::store::internal {
namespace {

enum Wire : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2 };

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

class Writer {
 public:
  explicit Writer(std::string* out) : out_(*out) {}

  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void Key(uint32_t field, Wire wire) { Varint((uint64_t{field} << 3) | wire); }
  void U64(uint32_t field, uint64_t v) {
    Key(field, kVarint);
    Varint(v);
  }
  void I64(uint32_t field, int64_t v) { U64(field, ZigZag(v)); }
  void Bool(uint32_t field, bool v) { U64(field, v ? 1 : 0); }
  void Double(uint32_t field, double v) {
    Key(field, kFixed64);
    uint64_t bits = std::bit_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(bits >> (8 * i)));
  }
  // Leaves out an empty string (its default).
  void Str(uint32_t field, std::string_view v) {
    if (v.empty()) return;
    Key(field, kLen);
    Varint(v.size());
    out_.append(v);
  }
  // Always writes the pair, even when both are empty (a map may hold an empty key).
  void StrAlways(uint32_t field, std::string_view v) {
    Key(field, kLen);
    Varint(v.size());
    out_.append(v);
  }
  // Writes a nested message produced by `fn(Writer&)`: its bytes first, then the length is
  // put in front of them (a few bytes moved, cheaper than a scratch buffer per message).
  template <typename Fn>
  void Message(uint32_t field, Fn&& fn) {
    Key(field, kLen);
    size_t start = out_.size();
    fn(*this);
    uint64_t len = out_.size() - start;
    char buf[10];
    size_t n = 0;
    while (len >= 0x80) {
      buf[n++] = static_cast<char>(len | 0x80);
      len >>= 7;
    }
    buf[n++] = static_cast<char>(len);
    out_.insert(start, buf, n);
  }

 private:
  std::string& out_;
};

// Reads one field sequence. The first error is kept in `*error` (shared with nested
// readers); after it every read returns a default value and `Next` returns false.
class Reader {
 public:
  Reader(std::string_view data, size_t base, std::string* error)
      : data_(data), base_(base), error_(*error) {}

  bool Next(Wire* wire) {
    if (!error_.empty() || pos_ >= data_.size()) return false;
    uint64_t key = Varint();
    if (!error_.empty()) return false;
    field_ = static_cast<uint32_t>(key >> 3);
    uint32_t w = static_cast<uint32_t>(key & 7);
    if (w > kLen || field_ == 0 || (key >> 3) > std::numeric_limits<uint32_t>::max()) {
      field_ = 0;
      Fail("invalid field key " + std::to_string(key));
      return false;
    }
    *wire = static_cast<Wire>(w);
    return true;
  }
  uint32_t field() const { return field_; }

  uint64_t U64(Wire wire) { return Expect(wire, kVarint) ? Varint() : 0; }
  uint32_t U32(Wire wire) {
    uint64_t v = U64(wire);
    if (v > std::numeric_limits<uint32_t>::max()) {
      Fail("value " + std::to_string(v) + " out of range");
      return 0;
    }
    return static_cast<uint32_t>(v);
  }
  int64_t I64(Wire wire) { return UnZigZag(U64(wire)); }
  int32_t I32(Wire wire) {
    int64_t v = I64(wire);
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      Fail("value " + std::to_string(v) + " out of range");
      return 0;
    }
    return static_cast<int32_t>(v);
  }
  bool Bool(Wire wire) {
    uint64_t v = U64(wire);
    if (v > 1) Fail("value " + std::to_string(v) + " is not a bool");
    return v == 1;
  }
  Duration Dur(Wire wire) { return Duration(I64(wire)); }
  Timestamp Time(Wire wire) { return FromMicros(I64(wire)); }
  double Double(Wire wire) {
    if (!Expect(wire, kFixed64)) return 0;
    if (data_.size() - pos_ < 8) {
      Fail("truncated double");
      return 0;
    }
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) {
      bits |= uint64_t{static_cast<unsigned char>(data_[pos_ + i])} << (8 * i);
    }
    pos_ += 8;
    return std::bit_cast<double>(bits);
  }
  std::string_view Bytes(Wire wire) {
    if (!Expect(wire, kLen)) return {};
    return LenPayload();
  }
  // A reader over the nested message in this field; the caller loops over its fields.
  Reader Sub(Wire wire) {
    size_t at = pos_;
    std::string_view payload = Bytes(wire);
    return Reader(payload, base_ + at + VarintSize(payload.size()), &error_);
  }
  void Skip(Wire wire) {
    switch (wire) {
      case kVarint:
        Varint();
        break;
      case kFixed64:
        if (data_.size() - pos_ < 8) {
          Fail("truncated double");
        } else {
          pos_ += 8;
        }
        break;
      case kLen:
        LenPayload();
        break;
    }
  }
  void Fail(const std::string& what) {
    if (!error_.empty()) return;
    error_ =
        what + " (field " + std::to_string(field_) + ", byte " + std::to_string(base_ + pos_) + ")";
  }

 private:
  static size_t VarintSize(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
      v >>= 7;
      ++n;
    }
    return n;
  }
  bool Expect(Wire got, Wire want) {
    if (got == want) return true;
    Fail("wire type " + std::to_string(got) + ", expected " + std::to_string(want));
    return false;
  }
  // Most values (keys, small numbers, short lengths) take one byte: that case is inline.
  uint64_t Varint() {
    if (pos_ < data_.size() && static_cast<uint8_t>(data_[pos_]) < 0x80) {
      return static_cast<uint8_t>(data_[pos_++]);
    }
    return VarintSlow();
  }
  [[gnu::noinline]] uint64_t VarintSlow() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) {
        Fail("truncated varint");
        return 0;
      }
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      if (shift == 63 && b > 1) break;
      v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return v;
    }
    Fail("varint too long");
    return 0;
  }
  std::string_view LenPayload() {
    uint64_t len = Varint();
    if (!error_.empty()) return {};
    if (len > data_.size() - pos_) {
      Fail("length " + std::to_string(len) + " past the end");
      return {};
    }
    std::string_view v = data_.substr(pos_, len);
    pos_ += len;
    return v;
  }

  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
  uint32_t field_ = 0;
  std::string& error_;
};

// Opens a top-level blob: checks the version byte.
Status CheckVersion(std::string_view data) {
  if (data.empty()) return Internal("empty encoding");
  if (static_cast<uint8_t>(data[0]) != kEncodingVersion) {
    return Internal("unknown encoding version " + std::to_string(static_cast<uint8_t>(data[0])) +
                    " (this binary reads " + std::to_string(kEncodingVersion) + ")");
  }
  return {};
}

// Dependency types on disk; never renumber.
uint64_t DependencyTypeToWire(DependencyType t) {
  switch (t) {
    case DependencyType::kAfter:
      return 1;
    case DependencyType::kAfterAny:
      return 2;
    case DependencyType::kAfterOk:
      return 3;
    case DependencyType::kAfterNotOk:
      return 4;
    case DependencyType::kAfterCorr:
      return 5;
    case DependencyType::kSingleton:
      return 6;
  }
  return 0;
}
bool DependencyTypeFromWire(uint64_t v, DependencyType* t) {
  switch (v) {
    case 1:
      *t = DependencyType::kAfter;
      return true;
    case 2:
      *t = DependencyType::kAfterAny;
      return true;
    case 3:
      *t = DependencyType::kAfterOk;
      return true;
    case 4:
      *t = DependencyType::kAfterNotOk;
      return true;
    case 5:
      *t = DependencyType::kAfterCorr;
      return true;
    case 6:
      *t = DependencyType::kSingleton;
      return true;
    default:
      return false;
  }
}

// ResourceRequest: 1 nodes, 2 nodes_max, 3 ntasks, 4 ntasks_per_node, 5 cpus_per_task,
// 6 mem_per_node_mb, 7 mem_per_cpu_mb, 8 mem_per_gpu_mb, 9 gpus, 10 gpus_per_node,
// 11 gpus_per_task, 12 cpus_per_gpu, 13 gpu_type, 14 exclusive, 15 constraint,
// 16 nodelist (repeated), 17 exclude (repeated).
void WriteResources(Writer& w, const ResourceRequest& r) {
  w.U64(1, r.nodes);
  w.U64(2, r.nodes_max);
  w.U64(3, r.ntasks);
  w.U64(4, r.ntasks_per_node);
  w.U64(5, r.cpus_per_task);
  w.U64(6, r.mem_per_node_mb);
  w.U64(7, r.mem_per_cpu_mb);
  w.U64(8, r.mem_per_gpu_mb);
  w.U64(9, r.gpus);
  w.U64(10, r.gpus_per_node);
  w.U64(11, r.gpus_per_task);
  w.U64(12, r.cpus_per_gpu);
  w.Str(13, r.gpu_type);
  w.Bool(14, r.exclusive);
  w.Str(15, r.constraint);
  for (const auto& n : r.nodelist) w.StrAlways(16, n);
  for (const auto& n : r.exclude) w.StrAlways(17, n);
}
void ReadResources(Reader r, ResourceRequest& out) {
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        out.nodes = r.U32(w);
        break;
      case 2:
        out.nodes_max = r.U32(w);
        break;
      case 3:
        out.ntasks = r.U32(w);
        break;
      case 4:
        out.ntasks_per_node = r.U32(w);
        break;
      case 5:
        out.cpus_per_task = r.U32(w);
        break;
      case 6:
        out.mem_per_node_mb = r.U64(w);
        break;
      case 7:
        out.mem_per_cpu_mb = r.U64(w);
        break;
      case 8:
        out.mem_per_gpu_mb = r.U64(w);
        break;
      case 9:
        out.gpus = r.U32(w);
        break;
      case 10:
        out.gpus_per_node = r.U32(w);
        break;
      case 11:
        out.gpus_per_task = r.U32(w);
        break;
      case 12:
        out.cpus_per_gpu = r.U32(w);
        break;
      case 13:
        out.gpu_type = r.Bytes(w);
        break;
      case 14:
        out.exclusive = r.Bool(w);
        break;
      case 15:
        out.constraint = r.Bytes(w);
        break;
      case 16:
        out.nodelist.emplace_back(r.Bytes(w));
        break;
      case 17:
        out.exclude.emplace_back(r.Bytes(w));
        break;
      default:
        r.Skip(w);
    }
  }
}

// Dependency: 1 type (wire numbers above), 2 jobs (repeated), 3 delay.
void WriteDependency(Writer& w, const Dependency& d) {
  w.U64(1, DependencyTypeToWire(d.type));
  for (JobId id : d.jobs) w.U64(2, id.value);
  w.I64(3, d.delay.count());
}
void ReadDependency(Reader r, Dependency& out) {
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1: {
        uint64_t v = r.U64(w);
        if (!DependencyTypeFromWire(v, &out.type)) {
          r.Fail("unknown dependency type " + std::to_string(v));
        }
        break;
      }
      case 2:
        out.jobs.push_back(JobId(r.U64(w)));
        break;
      case 3:
        out.delay = r.Dur(w);
        break;
      default:
        r.Skip(w);
    }
  }
}

// SignalSpec: 1 signal, 2 before, 3 batch_only.
void WriteSignal(Writer& w, const SignalSpec& s) {
  w.I64(1, s.signal);
  w.I64(2, s.before.count());
  w.Bool(3, s.batch_only);
}
void ReadSignal(Reader r, SignalSpec& out) {
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        out.signal = r.I32(w);
        break;
      case 2:
        out.before = r.Dur(w);
        break;
      case 3:
        out.batch_only = r.Bool(w);
        break;
      default:
        r.Skip(w);
    }
  }
}

// ContainerSpec: 1 image, 2 mounts (repeated), 3 workdir, 4 name, 5 env (repeated),
// 6 mount_home.
void WriteContainer(Writer& w, const ContainerSpec& c) {
  w.Str(1, c.image);
  for (const auto& m : c.mounts) w.StrAlways(2, m);
  w.Str(3, c.workdir);
  w.Str(4, c.name);
  for (const auto& e : c.env) w.StrAlways(5, e);
  w.Bool(6, c.mount_home);
}
void ReadContainer(Reader r, ContainerSpec& out) {
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        out.image = r.Bytes(w);
        break;
      case 2:
        out.mounts.emplace_back(r.Bytes(w));
        break;
      case 3:
        out.workdir = r.Bytes(w);
        break;
      case 4:
        out.name = r.Bytes(w);
        break;
      case 5:
        out.env.emplace_back(r.Bytes(w));
        break;
      case 6:
        out.mount_home = r.Bool(w);
        break;
      default:
        r.Skip(w);
    }
  }
}

// Environment entry: 1 key, 2 value.
void ReadEnvEntry(Reader r, std::map<std::string, std::string>& env) {
  std::string key, value;
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        key = r.Bytes(w);
        break;
      case 2:
        value = r.Bytes(w);
        break;
      default:
        r.Skip(w);
    }
  }
  // Entries are written in key order: appending at the end is constant time.
  if (env.empty() || env.rbegin()->first < key) {
    env.emplace_hint(env.end(), std::move(key), std::move(value));
  } else {
    env.insert_or_assign(std::move(key), std::move(value));
  }
}

// NodeAllocation: 1 node, 2 node_name, 3 cpus, 4 mem_mb, 5 gpus (mask).
void WriteNodeAllocation(Writer& w, const NodeAllocation& n) {
  w.U64(1, n.node.value);
  w.Str(2, n.node_name);
  w.U64(3, n.cpus);
  w.U64(4, n.mem_mb);
  w.U64(5, n.gpus.bits());
}
void ReadNodeAllocation(Reader r, NodeAllocation& out) {
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        out.node = NodeId(r.U32(w));
        break;
      case 2:
        out.node_name = r.Bytes(w);
        break;
      case 3:
        out.cpus = r.U32(w);
        break;
      case 4:
        out.mem_mb = r.U64(w);
        break;
      case 5:
        out.gpus = GpuSet(r.U64(w));
        break;
      default:
        r.Skip(w);
    }
  }
}

// GpuInfo: 1 index, 2 uuid, 3 model, 4 memory_mb, 5 nvlink_peers (repeated), 6 numa_node.
void WriteGpu(Writer& w, const GpuInfo& g) {
  w.U64(1, g.index);
  w.Str(2, g.uuid);
  w.Str(3, g.model);
  w.U64(4, g.memory_mb);
  for (uint32_t p : g.nvlink_peers) w.U64(5, p);
  w.I64(6, g.numa_node);
}
void ReadGpu(Reader r, GpuInfo& out) {
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        out.index = r.U32(w);
        break;
      case 2:
        out.uuid = r.Bytes(w);
        break;
      case 3:
        out.model = r.Bytes(w);
        break;
      case 4:
        out.memory_mb = r.U64(w);
        break;
      case 5:
        out.nvlink_peers.push_back(r.U32(w));
        break;
      case 6:
        out.numa_node = r.I32(w);
        break;
      default:
        r.Skip(w);
    }
  }
}

// NodeInventory (without `name`): 1 address, 2 cpus, 3 memory_mb, 4 gpus (repeated GpuInfo),
// 5 features (repeated), 6 numa_nodes, 7 gpu_backend, 8 driver_version, 9 cuda_version,
// 10 agent_version.
void WriteInventory(Writer& w, const NodeInventory& inv) {
  w.Str(1, inv.address);
  w.U64(2, inv.cpus);
  w.U64(3, inv.memory_mb);
  for (const auto& g : inv.gpus) w.Message(4, [&](Writer& m) { WriteGpu(m, g); });
  for (const auto& f : inv.features) w.StrAlways(5, f);
  w.U64(6, inv.numa_nodes);
  w.Str(7, inv.gpu_backend);
  w.Str(8, inv.driver_version);
  w.Str(9, inv.cuda_version);
  w.Str(10, inv.agent_version);
}
void ReadInventory(Reader r, NodeInventory& out) {
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        out.address = r.Bytes(w);
        break;
      case 2:
        out.cpus = r.U32(w);
        break;
      case 3:
        out.memory_mb = r.U64(w);
        break;
      case 4:
        ReadGpu(r.Sub(w), out.gpus.emplace_back());
        break;
      case 5:
        out.features.emplace_back(r.Bytes(w));
        break;
      case 6:
        out.numa_nodes = r.U32(w);
        break;
      case 7:
        out.gpu_backend = r.Bytes(w);
        break;
      case 8:
        out.driver_version = r.Bytes(w);
        break;
      case 9:
        out.cuda_version = r.Bytes(w);
        break;
      case 10:
        out.agent_version = r.Bytes(w);
        break;
      default:
        r.Skip(w);
    }
  }
}

Status Finish(const std::string& error) {
  if (error.empty()) return {};
  return Internal(error);
}

}  // namespace

// JobSpec (without name, user, account): 1 uid, 2 gid, 3 qos, 4 partitions (repeated),
// 5 script, 6 resources, 7 time_limit (present iff set), 8 working_dir, 9 environment
// (repeated {1 key, 2 value}, in key order), 10 stdout_path, 11 stderr_path, 12 append_output,
// 13 requeue, 14 nice, 15 hold, 16 begin_time, 17 dependencies (repeated), 18 dependency_any,
// 19 signal, 20 container, 21 comment, 22 reservation, 23 mail_type, 24 mail_user,
// 25 submit_host, 26 submit_dir, 27 array, 28 command, 29 stdin_path, 30 script_args
// (repeated).
void EncodeJobSpec(const JobSpec& s, std::string* out) {
  out->clear();
  out->push_back(static_cast<char>(kEncodingVersion));
  Writer w(out);
  w.U64(1, s.uid);
  w.U64(2, s.gid);
  w.Str(3, s.qos);
  for (const auto& p : s.partitions) w.StrAlways(4, p);
  w.Str(5, *s.script);
  w.Message(6, [&](Writer& m) { WriteResources(m, s.resources); });
  if (s.time_limit.has_value()) w.I64(7, s.time_limit->count());
  w.Str(8, s.working_dir);
  for (const auto& [k, v] : s.environment) {
    w.Message(9, [&](Writer& m) {
      m.StrAlways(1, k);
      m.StrAlways(2, v);
    });
  }
  w.Str(10, s.stdout_path);
  w.Str(11, s.stderr_path);
  w.Bool(12, s.append_output);
  w.Bool(13, s.requeue);
  w.I64(14, s.nice);
  w.Bool(15, s.hold);
  w.I64(16, ToMicros(s.begin_time));
  for (const auto& d : s.dependencies) w.Message(17, [&](Writer& m) { WriteDependency(m, d); });
  w.Bool(18, s.dependency_any);
  w.Message(19, [&](Writer& m) { WriteSignal(m, s.signal); });
  w.Message(20, [&](Writer& m) { WriteContainer(m, s.container); });
  w.Str(21, s.comment);
  w.Str(22, s.reservation);
  w.Str(23, s.mail_type);
  w.Str(24, s.mail_user);
  w.Str(25, s.submit_host);
  w.Str(26, s.submit_dir);
  w.Str(27, s.array);
  w.Str(28, s.command);
  w.Str(29, s.stdin_path);
  for (const auto& a : s.script_args) w.StrAlways(30, a);
}

Status DecodeJobSpec(std::string_view data, JobSpec* spec) {
  CORRAL_RETURN_IF_ERROR(CheckVersion(data));
  std::string error;
  Reader r(data.substr(1), 1, &error);
  JobSpec& s = *spec;
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        s.uid = r.U32(w);
        break;
      case 2:
        s.gid = r.U32(w);
        break;
      case 3:
        s.qos = r.Bytes(w);
        break;
      case 4:
        s.partitions.emplace_back(r.Bytes(w));
        break;
      case 5:
        s.script = std::string(r.Bytes(w));
        break;
      case 6:
        ReadResources(r.Sub(w), s.resources);
        break;
      case 7:
        s.time_limit = r.Dur(w);
        break;
      case 8:
        s.working_dir = r.Bytes(w);
        break;
      case 9:
        ReadEnvEntry(r.Sub(w), s.environment.Mutable());
        break;
      case 10:
        s.stdout_path = r.Bytes(w);
        break;
      case 11:
        s.stderr_path = r.Bytes(w);
        break;
      case 12:
        s.append_output = r.Bool(w);
        break;
      case 13:
        s.requeue = r.Bool(w);
        break;
      case 14:
        s.nice = r.I32(w);
        break;
      case 15:
        s.hold = r.Bool(w);
        break;
      case 16:
        s.begin_time = r.Time(w);
        break;
      case 17:
        ReadDependency(r.Sub(w), s.dependencies.emplace_back());
        break;
      case 18:
        s.dependency_any = r.Bool(w);
        break;
      case 19:
        ReadSignal(r.Sub(w), s.signal);
        break;
      case 20:
        ReadContainer(r.Sub(w), s.container);
        break;
      case 21:
        s.comment = r.Bytes(w);
        break;
      case 22:
        s.reservation = r.Bytes(w);
        break;
      case 23:
        s.mail_type = r.Bytes(w);
        break;
      case 24:
        s.mail_user = r.Bytes(w);
        break;
      case 25:
        s.submit_host = r.Bytes(w);
        break;
      case 26:
        s.submit_dir = r.Bytes(w);
        break;
      case 27:
        s.array = r.Bytes(w);
        break;
      case 28:
        s.command = r.Bytes(w);
        break;
      case 29:
        s.stdin_path = r.Bytes(w);
        break;
      case 30:
        s.script_args.Mutable().emplace_back(r.Bytes(w));
        break;
      default:
        r.Skip(w);
    }
  }
  return Finish(error);
}

// JobTrace: its marks in kTraceMarks order, field k+1 for mark k (microseconds); unset marks
// are left out.
void WriteJobTrace(Writer& w, const JobTrace& t) {
  for (size_t k = 0; k < kTraceMarks.size(); ++k) {
    Timestamp at = kTraceMarks[k].Of(t);
    if (at != Timestamp{}) w.I64(static_cast<int>(k + 1), ToMicros(at));
  }
}

void ReadJobTrace(Reader r, JobTrace& t) {
  Wire w;
  while (r.Next(&w)) {
    size_t k = r.field() - 1;
    if (r.field() >= 1 && k < kTraceMarks.size()) {
      const TraceMark& m = kTraceMarks[k];
      (m.agent_clock ? t.agent.*m.agent_field : t.*m.controller_field) = r.Time(w);
    } else {
      r.Skip(w);
    }
  }
}

// Allocation: 1 generation, 2 nodes (repeated NodeAllocation), 3 suspended, 4 suspend_time,
// 5 suspended_for, 6 pre_suspend (3-6 only when the run was ever suspended), 7 the job's
// trace (JobTrace, when given and not empty).
void EncodeAllocation(const Allocation& a, std::string* out, const JobTrace* trace) {
  out->clear();
  out->push_back(static_cast<char>(kEncodingVersion));
  Writer w(out);
  w.U64(1, a.generation.value);
  for (const auto& n : a.nodes) w.Message(2, [&](Writer& m) { WriteNodeAllocation(m, n); });
  if (a.suspend_time != Timestamp{}) {
    w.Bool(3, a.suspended);
    w.I64(4, ToMicros(a.suspend_time));
    w.I64(5, a.suspended_for.count());
    w.I64(6, a.pre_suspend.count());
  }
  if (trace != nullptr && *trace != JobTrace{}) {
    w.Message(7, [&](Writer& m) { WriteJobTrace(m, *trace); });
  }
}

Status DecodeAllocation(std::string_view data, Allocation* alloc, JobTrace* trace) {
  CORRAL_RETURN_IF_ERROR(CheckVersion(data));
  std::string error;
  Reader r(data.substr(1), 1, &error);
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        alloc->generation = Generation(r.U64(w));
        break;
      case 2:
        ReadNodeAllocation(r.Sub(w), alloc->nodes.emplace_back());
        break;
      case 3:
        alloc->suspended = r.Bool(w);
        break;
      case 4:
        alloc->suspend_time = r.Time(w);
        break;
      case 5:
        alloc->suspended_for = Duration(r.I64(w));
        break;
      case 6:
        alloc->pre_suspend = Duration(r.I64(w));
        break;
      case 7:
        if (trace != nullptr) {
          ReadJobTrace(r.Sub(w), *trace);
        } else {
          r.Skip(w);
        }
        break;
      default:
        r.Skip(w);
    }
  }
  return Finish(error);
}

// Node body: 1 inventory (without name), 2 registered, 3 responding, 4 drain,
// 5 powered_down, 6 reason, 7 reason_time, 8 last_heartbeat, 9 failed_gpus (mask).
void EncodeNodeBody(const Node& n, std::string* out) {
  out->clear();
  out->push_back(static_cast<char>(kEncodingVersion));
  Writer w(out);
  w.Message(1, [&](Writer& m) { WriteInventory(m, n.inventory); });
  w.Bool(2, n.registered);
  w.Bool(3, n.responding);
  w.Bool(4, n.drain);
  w.Bool(5, n.powered_down);
  w.Str(6, n.reason);
  w.I64(7, ToMicros(n.reason_time));
  w.I64(8, ToMicros(n.last_heartbeat));
  w.U64(9, n.failed_gpus.bits());
}

Status DecodeNodeBody(std::string_view data, Node* node) {
  CORRAL_RETURN_IF_ERROR(CheckVersion(data));
  std::string error;
  Reader r(data.substr(1), 1, &error);
  Node& n = *node;
  Wire w;
  while (r.Next(&w)) {
    switch (r.field()) {
      case 1:
        ReadInventory(r.Sub(w), n.inventory);
        break;
      case 2:
        n.registered = r.Bool(w);
        break;
      case 3:
        n.responding = r.Bool(w);
        break;
      case 4:
        n.drain = r.Bool(w);
        break;
      case 5:
        n.powered_down = r.Bool(w);
        break;
      case 6:
        n.reason = r.Bytes(w);
        break;
      case 7:
        n.reason_time = r.Time(w);
        break;
      case 8:
        n.last_heartbeat = r.Time(w);
        break;
      case 9:
        n.failed_gpus = GpuSet(r.U64(w));
        break;
      default:
        r.Skip(w);
    }
  }
  return Finish(error);
}

}  // namespace corral::store::internal
