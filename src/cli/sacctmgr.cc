// `sacctmgr` (see sacctmgr.h): the words parsed into a verb, an entity, names and KEY=VALUE
// pairs; records read and written through the controller's governance routes; tables printed
// as Slurm 22.05's sacctmgr prints them.
#include "cli/sacctmgr.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>

#include "api/governance_codec.h"
#include "cli/client.h"
#include "cli/internal/query_common.h"
#include "cli/internal/sacctmgr_keys.h"
#include "cli/internal/slurm_cli.h"
#include "cli/slurm/format_spec.h"
#include "core/duration.h"
#include "core/resources.h"
#include "core/strings.h"

namespace corral::cli {

std::string FormatTres(std::optional<uint64_t> cpus, std::optional<uint64_t> gpus,
                       std::optional<uint64_t> mem_mb) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ",") + part; };
  if (cpus) add("cpu=" + std::to_string(*cpus));
  if (gpus) add("gres/gpu=" + std::to_string(*gpus));
  if (mem_mb) {
    uint64_t m = *mem_mb;
    if (m > 0 && m % (1024 * 1024) == 0) {
      add("mem=" + std::to_string(m / (1024 * 1024)) + "T");
    } else if (m > 0 && m % 1024 == 0) {
      add("mem=" + std::to_string(m / 1024) + "G");
    } else {
      add("mem=" + std::to_string(m) + "M");
    }
  }
  return out;
}

Status ParseTres(std::string_view text, std::optional<uint64_t>* cpus,
                 std::optional<uint64_t>* gpus, std::optional<uint64_t>* mem_mb) {
  for (const std::string& part : SplitNonEmpty(text)) {
    size_t eq = part.find('=');
    if (eq == std::string::npos)
      return InvalidArgument("TRES \"" + part + "\": expected NAME=COUNT");
    std::string name = Lower(part.substr(0, eq));
    std::string value = part.substr(eq + 1);
    std::optional<uint64_t>* field = name == "cpu"                         ? cpus
                                     : name == "gres/gpu" || name == "gpu" ? gpus
                                     : name == "mem"                       ? mem_mb
                                                                           : nullptr;
    if (field == nullptr) {
      return InvalidArgument("TRES \"" + name + "\": not a limit here (" +
                             std::string(cpus ? "cpu, " : "") + "gres/gpu" +
                             (mem_mb ? ", mem" : "") + ")");
    }
    if (value == "-1") {
      field->reset();
      continue;
    }
    if (name == "mem") {
      Result<uint64_t> mb = ParseMemoryMb(value);
      if (!mb) return InvalidArgument("TRES mem=" + value + ": " + mb.error().message);
      *field = *mb;
      continue;
    }
    std::optional<uint64_t> n = ParseUint(value);
    if (!n) return InvalidArgument("TRES " + name + "=" + value + ": not a count");
    *field = *n;
  }
  return {};
}

std::string FormatSacctmgrTime(Duration d) {
  int64_t total = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  long long days = total / 86400, h = (total / 3600) % 24, m = (total / 60) % 60, s = total % 60;
  char buf[64];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", days, h, m, s);
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", h, m, s);
  }
  return buf;
}

std::string RenderSacctmgr(const std::vector<std::string>& headers, const std::vector<int>& widths,
                           const std::vector<std::vector<std::string>>& rows, bool noheader,
                           bool parsable, bool trailing_bar) {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (parsable) {
        out += cells[i];
        if (i + 1 < cells.size() || trailing_bar) out += '|';
        continue;
      }
      size_t w = static_cast<size_t>(widths[i]);
      std::string c = cells[i].size() > w ? cells[i].substr(0, w - 1) + "+" : cells[i];
      out += std::string(w - c.size(), ' ') + c + ' ';
    }
    out += '\n';
  };
  if (!noheader) {
    line(headers);
    if (!parsable) {
      for (int w : widths) out += std::string(static_cast<size_t>(w), '-') + ' ';
      out += '\n';
    }
  }
  for (const auto& r : rows) line(r);
  return out;
}

namespace {

using internal::AssocLimitsOf;
using internal::NamedAccounts;
using internal::SetAccountKey;
using internal::SetAssocLimitKey;
using internal::SetQosKey;
using internal::SetUserKey;
using internal::SetUserKeys;
using internal::ShownLimits;
using internal::Wide;

constexpr const char* kProg = "sacctmgr";

int Fail(const std::string& message) {
  std::fprintf(stderr, "sacctmgr: error: %s\n", message.c_str());
  return 1;
}

// The command line, parsed.
struct Command {
  bool immediate = false, noheader = false, parsable = false, trailing_bar = false;
  bool quiet = false;
  std::string verb;    // add, modify, delete, show
  std::string entity;  // account, user, qos, association
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::string>> where;  // lower-case keys
  std::vector<std::pair<std::string, std::string>> set;    // lower-case keys, in order
  std::string format;
};

std::string Canonical(const std::string& word, const std::map<std::string, std::string>& table) {
  auto it = table.find(Lower(word));
  return it == table.end() ? "" : it->second;
}

Result<Command> Parse(const std::vector<std::string>& words) {
  Command c;
  size_t i = 0;
  auto option = [&c](const std::string& o) -> Status {
    if (o == "-i" || o == "--immediate") {
      c.immediate = true;
    } else if (o == "-n" || o == "--noheader") {
      c.noheader = true;
    } else if (o == "-P" || o == "--parsable2") {
      c.parsable = true;
    } else if (o == "-p" || o == "--parsable") {
      c.parsable = c.trailing_bar = true;
    } else if (o == "-Q" || o == "--quiet") {
      c.quiet = true;
    } else {
      return InvalidArgument("unknown option " + o);
    }
    return {};
  };
  for (; i < words.size() && words[i].size() > 1 && words[i][0] == '-'; ++i) {
    const std::string& o = words[i];
    if (o[1] == '-') {
      CORRAL_RETURN_IF_ERROR(option(o));
      continue;
    }
    for (size_t k = 1; k < o.size(); ++k) CORRAL_RETURN_IF_ERROR(option(std::string("-") + o[k]));
  }
  if (i + 2 > words.size()) {
    return InvalidArgument(
        "usage: sacctmgr [-inPpQ] add|modify|delete|show account|user|qos|"
        "association ...");
  }
  c.verb = Canonical(words[i], {{"add", "add"},
                                {"create", "add"},
                                {"modify", "modify"},
                                {"update", "modify"},
                                {"delete", "delete"},
                                {"remove", "delete"},
                                {"show", "show"},
                                {"list", "show"}});
  if (c.verb.empty()) return InvalidArgument("unknown command \"" + words[i] + "\"");
  c.entity = Canonical(words[i + 1], {{"account", "account"},
                                      {"accounts", "account"},
                                      {"user", "user"},
                                      {"users", "user"},
                                      {"qos", "qos"},
                                      {"association", "association"},
                                      {"associations", "association"},
                                      {"assoc", "association"},
                                      {"coordinator", "coordinator"},  // issue 16 item 2
                                      {"coordinators", "coordinator"}});
  if (c.entity.empty()) return InvalidArgument("unknown entity \"" + words[i + 1] + "\"");
  if (c.entity == "coordinator" && c.verb != "add" && c.verb != "delete") {
    return InvalidArgument(
        "coordinators are added and removed; `show account withcoord` lists them");
  }
  if (c.entity == "association" && c.verb != "show") {
    return InvalidArgument("associations are changed through their user or account");
  }
  bool setting = c.verb == "add";
  for (i += 2; i < words.size(); ++i) {
    std::string w = words[i];
    if (EqualsIgnoreCase(w, "where")) {
      setting = false;
      continue;
    }
    if (EqualsIgnoreCase(w, "set")) {
      setting = true;
      continue;
    }
    size_t eq = w.find('=');
    if (eq == std::string::npos) {
      for (const std::string& n : SplitNonEmpty(w)) c.names.push_back(n);
      continue;
    }
    std::string key = Lower(w.substr(0, eq)), value = w.substr(eq + 1);
    if (key == "format") {
      c.format = value;
    } else if (key == "name" || key == "names" ||
               (!setting && key == "user" && c.entity == "user") ||
               (!setting && key == "users" && c.entity == "user")) {
      for (const std::string& n : SplitNonEmpty(value)) c.names.push_back(n);
    } else if (setting) {
      c.set.emplace_back(key, value);
    } else {
      c.where.emplace_back(key, value);
    }
  }
  return c;
}

std::string ClusterName() {
  std::string c = internal::Env("CORRAL_CLUSTER");
  return c.empty() ? "corral" : c;
}

// --- Reading and writing records through the controller. ---

template <typename Record>
struct Kind {
  std::string path;   // "accounts", "users", "qos"
  std::string title;  // "Account", "User", "QOS"
  Result<std::vector<Record>> (*decode_list)(std::string_view);
  Result<Record> (*decode)(std::string_view);
  std::string (*encode)(const Record&);
  std::string& (*name)(Record&);
  Status (*set)(Record&, const std::string&, const std::string&);
};

const Kind<AccountConfig> kAccounts{
    "accounts",         "Account",          api::DecodeAccountList,
    api::DecodeAccount, api::EncodeAccount, [](AccountConfig& a) -> std::string& { return a.name; },
    SetAccountKey};
const Kind<api::UserInfo> kUsers{
    "users",         "User",          api::DecodeUserList,
    api::DecodeUser, api::EncodeUser, [](api::UserInfo& u) -> std::string& { return u.user.name; },
    SetUserKey};
const Kind<QosConfig> kQos{
    "qos",          "QOS",          api::DecodeQosList,
    api::DecodeQos, api::EncodeQos, [](QosConfig& q) -> std::string& { return q.name; },
    SetQosKey};

// Asks Slurm's question on stdin (unless -i); true to go on.
bool Confirm(const Command& c) { return internal::ConfirmCommit(c.immediate); }

template <typename Record>
int Add(Client& client, const Command& c, const Kind<Record>& k) {
  if (c.names.empty()) return Fail("add " + c.entity + ": give a name");
  if (!c.quiet) {
    std::printf(" Adding %s(s)\n", k.title.c_str());
    for (const std::string& n : c.names) std::printf("  %s\n", n.c_str());
    if (!c.set.empty()) {
      std::printf(" Settings\n");
      for (const auto& [key, v] : c.set) std::printf("  %-13s = %s\n", key.c_str(), v.c_str());
    }
  }
  if (!Confirm(c)) return 1;
  for (const std::string& n : c.names) {
    Record r{};
    bool exists = false;
    if (c.entity == "user") {  // a new association of an existing user
      if (auto body = client.GovernanceGet(k.path, n); body.has_value()) {
        auto current = k.decode(*body);
        if (!current) return Fail(current.error().message);
        r = std::move(*current);
        exists = true;
      }
    }
    k.name(r) = n;
    if constexpr (std::is_same_v<Record, api::UserInfo>) {
      // `add user U account=A MaxJobs=N`: the limits are the new association's (Slurm's).
      if (Status s = SetUserKeys(r, c.set, NamedAccounts(c.set)); !s) {
        return Fail(s.error().message);
      }
    } else {
      for (const auto& [key, v] : c.set) {
        if (Status s = k.set(r, key, v); !s) return Fail(s.error().message);
      }
    }
    auto stored = client.GovernancePut(k.path, n, k.encode(r), !exists);
    if (!stored) return Fail(stored.error().message);
  }
  return 0;
}

// The records of kind `k` that `c` names (every one when it names none and has no where).
template <typename Record>
Result<std::vector<Record>> Selected(Client& client, const Command& c, const Kind<Record>& k) {
  CORRAL_ASSIGN_OR_RETURN(std::string body, client.GovernanceGet(k.path, ""));
  CORRAL_ASSIGN_OR_RETURN(std::vector<Record> all, k.decode_list(body));
  std::vector<Record> out;
  for (Record& r : all) {
    const std::string& name = k.name(r);
    if (!c.names.empty() && std::find(c.names.begin(), c.names.end(), name) == c.names.end()) {
      continue;
    }
    out.push_back(std::move(r));
  }
  return out;
}

template <typename Record>
int Modify(Client& client, const Command& c, const Kind<Record>& k) {
  if (c.set.empty()) return Fail("modify " + c.entity + ": nothing to set (set KEY=VALUE)");
  if (c.names.empty()) return Fail("modify " + c.entity + ": name the records (where name=X)");
  auto selected = Selected(client, c, k);
  if (!selected) return Fail(selected.error().message);
  if (selected->empty()) {
    std::printf(" Nothing modified\n");
    return 1;
  }
  // `modify user U where account=A set ...`: the limits of those associations (issue 16).
  const std::vector<std::string> accounts =
      c.entity == "user" ? NamedAccounts(c.where) : std::vector<std::string>{};
  if (!c.quiet) {
    std::printf(" Modified %s...\n",
                c.entity == "qos" ? "qos" : (c.entity + " associations").c_str());
    for (Record& r : *selected) {
      if (accounts.empty()) {
        std::printf("  %s\n", k.name(r).c_str());
        continue;
      }
      for (const std::string& a : accounts) {  // as Slurm lists the associations
        std::printf("  C = %-10s A = %-20s U = %-9s\n", ClusterName().c_str(), a.c_str(),
                    k.name(r).c_str());
      }
    }
  }
  if (!Confirm(c)) return 1;
  for (Record& r : *selected) {
    if constexpr (std::is_same_v<Record, api::UserInfo>) {
      for (const auto& [key, v] : c.set) {
        if (accounts.empty()) break;
        Result<bool> limit = true;
        for (const std::string& a : accounts) {
          limit = SetAssocLimitKey(AssocLimitsOf(r.user, a), key, v);
          if (!limit) return Fail(limit.error().message);
        }
        if (!*limit) {
          return Fail(key + "=" + v +
                      ": not a limit of an association (set it without account=, on the user)");
        }
      }
      if (!accounts.empty()) {
        auto stored = client.GovernancePut(k.path, k.name(r), k.encode(r), false);
        if (!stored) return Fail(stored.error().message);
        continue;
      }
    }
    for (const auto& [key, v] : c.set) {
      if (Status s = k.set(r, key, v); !s) return Fail(s.error().message);
    }
    auto stored = client.GovernancePut(k.path, k.name(r), k.encode(r), false);
    if (!stored) return Fail(stored.error().message);
  }
  return 0;
}

template <typename Record>
int Delete(Client& client, const Command& c, const Kind<Record>& k) {
  if (c.names.empty()) return Fail("delete " + c.entity + ": name the records (where name=X)");
  auto selected = Selected(client, c, k);
  if (!selected) return Fail(selected.error().message);
  if (selected->empty()) {
    std::printf(" Nothing deleted\n");
    return 1;
  }
  // `delete user U account=A`: only those associations.
  std::vector<std::string> accounts;
  for (const auto& [key, v] : c.where) {
    if (key == "account" || key == "accounts") {
      for (const std::string& a : SplitNonEmpty(v)) accounts.push_back(a);
    } else if (key != "cluster" && key != "clusters") {
      return Fail("delete " + c.entity + ": unknown condition \"" + key + "\"");
    }
  }
  if (!accounts.empty() && c.entity != "user") {
    return Fail("delete " + c.entity + ": account= only selects a user's associations");
  }
  if (!c.quiet) {
    std::printf(" Deleting %s...\n",
                accounts.empty() ? (c.entity + "s").c_str() : "user associations");
    for (Record& r : *selected) std::printf("  %s\n", k.name(r).c_str());
  }
  if (!Confirm(c)) return 1;
  for (Record& r : *selected) {
    if constexpr (std::is_same_v<Record, api::UserInfo>) {
      if (!accounts.empty()) {
        for (const std::string& a : accounts) {
          std::erase(r.accounts, a);
          std::erase_if(r.user.association_limits,
                        [&a](const AssociationLimits& al) { return al.account == a; });
          if (r.user.default_account == a) {
            r.user.default_account = r.accounts.empty() ? "" : r.accounts.front();
          }
        }
        auto stored = client.GovernancePut(k.path, k.name(r), k.encode(r), false);
        if (!stored) return Fail(stored.error().message);
        continue;
      }
    }
    if (Status s = client.GovernanceDelete(k.path, k.name(r)); !s) return Fail(s.error().message);
  }
  return 0;
}

// --- show ---

struct Column {
  std::string name;    // for format= (lower case)
  std::string header;  // as printed
  int width;
};

// A row of `show association`: an account, or one of its users.
struct AssocRow {
  const AccountConfig* account;
  const api::UserInfo* user;  // null: the account's own row
};

template <typename Row>
using Cells = std::function<std::string(const Row&, const std::string& column)>;

template <typename Row>
int Render(const Command& c, const std::vector<Column>& columns, const std::string& defaults,
           const std::vector<Row>& rows, const Cells<Row>& cell) {
  std::string format = c.format.empty() ? defaults : c.format;
  std::vector<std::string> headers;
  std::vector<int> widths;
  std::vector<std::string> names;
  for (const slurm::FormatItem& item : slurm::ParseFormat(format, slurm::FormatSyntax::kSacct)) {
    const Column* col = nullptr;
    for (const Column& x : columns) {
      if (EqualsIgnoreCase(x.name, item.name)) col = &x;
    }
    if (col == nullptr) return Fail("Invalid field requested: \"" + item.name + "\"");
    names.push_back(col->name);
    headers.push_back(col->header);
    widths.push_back(item.width > 0 ? item.width : item.width < 0 ? -item.width : col->width);
  }
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    std::vector<std::string> line;
    for (const std::string& n : names) line.push_back(cell(r, n));
    cells.push_back(std::move(line));
  }
  std::fputs(RenderSacctmgr(headers, widths, cells, c.noheader, c.parsable, c.trailing_bar).c_str(),
             stdout);
  return 0;
}

template <typename T>
std::string Opt(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "";
}
std::string Wall(const std::optional<Duration>& d) { return d ? FormatSacctmgrTime(*d) : ""; }
std::string Gpus(const std::optional<uint64_t>& g) { return FormatTres({}, g, {}); }

const std::vector<Column>& AssocColumns() {
  static const std::vector<Column> cols = {{"cluster", "Cluster", 10},
                                           {"account", "Account", 10},
                                           {"user", "User", 10},
                                           {"partition", "Partition", 10},
                                           {"share", "Share", 9},
                                           {"fairshare", "Share", 9},
                                           {"priority", "Priority", 10},
                                           {"grpjobs", "GrpJobs", 7},
                                           {"grptres", "GrpTRES", 13},
                                           {"grpsubmit", "GrpSubmit", 9},
                                           {"grpwall", "GrpWall", 11},
                                           {"grptresmins", "GrpTRESMins", 13},
                                           {"maxjobs", "MaxJobs", 7},
                                           {"maxtres", "MaxTRES", 13},
                                           {"maxtrespernode", "MaxTRESPerNode", 14},
                                           {"maxsubmit", "MaxSubmit", 9},
                                           {"maxwall", "MaxWall", 11},
                                           {"maxtresmins", "MaxTRESMins", 13},
                                           {"qos", "QOS", 20},
                                           {"defaultqos", "Def QOS", 9},
                                           {"grptresrunmins", "GrpTRESRunMin", 13},
                                           {"parentname", "Par Name", 10}};
  return cols;
}

int ShowAssociations(Client& client, const Command& c) {
  auto accounts = Selected(client, Command{}, kAccounts);
  if (!accounts) return Fail(accounts.error().message);
  auto users = Selected(client, Command{}, kUsers);
  if (!users) return Fail(users.error().message);
  auto qos = Selected(client, Command{}, kQos);
  if (!qos) return Fail(qos.error().message);
  std::vector<std::string> all_qos;
  for (QosConfig& q : *qos) all_qos.push_back(q.name);
  std::vector<std::string> want_accounts, want_users;
  for (const auto& [key, v] : c.where) {
    if (key == "account" || key == "accounts") want_accounts = SplitNonEmpty(v);
    if (key == "user" || key == "users") want_users = SplitNonEmpty(v);
  }
  for (const std::string& n : c.names) want_users.push_back(n);
  auto wanted = [](const std::vector<std::string>& want, const std::string& x) {
    return want.empty() || std::find(want.begin(), want.end(), x) != want.end();
  };
  std::vector<AssocRow> rows;
  for (const AccountConfig& a : *accounts) {
    if (!wanted(want_accounts, a.name)) continue;
    if (want_users.empty()) rows.push_back({&a, nullptr});
    for (const api::UserInfo& u : *users) {
      if (std::find(u.accounts.begin(), u.accounts.end(), a.name) != u.accounts.end() &&
          wanted(want_users, u.user.name)) {
        rows.push_back({&a, &u});
      }
    }
  }
  const std::string cluster = ClusterName();
  Cells<AssocRow> cell = [&](const AssocRow& r, const std::string& col) -> std::string {
    const AccountConfig& a = *r.account;
    const Limits l = r.user != nullptr ? ShownLimits(r.user->user, a.name) : a.limits;
    if (col == "cluster") return cluster;
    if (col == "account") return a.name;
    if (col == "user") return r.user != nullptr ? r.user->user.name : "";
    if (col == "share" || col == "fairshare") {
      return std::to_string(r.user != nullptr ? r.user->user.shares : a.shares);
    }
    if (col == "parentname") return r.user == nullptr ? (a.parent.empty() ? "root" : a.parent) : "";
    if (col == "grpjobs") return r.user == nullptr ? Opt(l.max_running_jobs) : "";
    if (col == "grpsubmit") return r.user == nullptr ? Opt(l.max_submitted_jobs) : "";
    if (col == "maxjobs") return r.user != nullptr ? Opt(l.max_running_jobs) : "";
    if (col == "maxsubmit") return r.user != nullptr ? Opt(l.max_submitted_jobs) : "";
    if (col == "grptres") return FormatTres(Wide(l.max_cpus), Wide(l.max_gpus), l.max_mem_mb);
    if (col == "grptresmins") return Gpus(l.max_gpu_minutes);
    if (col == "maxtres") return Gpus(Wide(l.max_gpus_per_job));
    if (col == "maxwall") return Wall(l.max_wall);
    if (col == "qos") return Join(a.allowed_qos.empty() ? all_qos : a.allowed_qos, ",");
    if (col == "defaultqos") return a.default_qos;
    return "";
  };
  return Render<AssocRow>(
      c, AssocColumns(),
      "Cluster,Account,User,Partition,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,"
      "GrpTRESMins,MaxJobs,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,DefaultQOS,"
      "GrpTRESRunMins",
      rows, cell);
}

int Show(Client& client, const Command& c) {
  if (c.entity == "association") return ShowAssociations(client, c);
  if (c.entity == "account") {
    // `withcoord` (issue 16 item 2): a Coord Accounts column, as Slurm's.
    Command cmd = c;
    const bool withcoord = std::erase_if(cmd.names, [](const std::string& n) {
                             return EqualsIgnoreCase(n, "withcoord");
                           }) > 0;
    auto rows = Selected(client, cmd, kAccounts);
    if (!rows) return Fail(rows.error().message);
    std::vector<AccountConfig> all;
    if (withcoord) {
      auto every = Selected(client, Command{}, kAccounts);
      if (!every) return Fail(every.error().message);
      all = std::move(*every);
    }
    return Render<AccountConfig>(
        cmd,
        {{"account", "Account", 10},
         {"descr", "Descr", 20},
         {"description", "Descr", 20},
         {"org", "Org", 20},
         {"organization", "Org", 20},
         {"parentname", "Par Name", 10},
         {"coordinators", "Coord Accounts", 20},
         {"coord", "Coord Accounts", 20}},
        withcoord ? "Account,Descr,Org,Coordinators" : "Account,Descr,Org", *rows,
        [&all, withcoord](const AccountConfig& a, const std::string& col) {
          if (col == "coordinators" || col == "coord") {
            return withcoord ? InheritedCoordinators(all, a.name) : std::string();
          }
          // An account's description is its name; its organisation its
          // parent (Slurm's defaults when none is given).
          if (col == "account" || col == "descr" || col == "description") return a.name;
          return a.parent.empty() ? std::string("root") : a.parent;
        });
  }
  if (c.entity == "user") {
    auto rows = Selected(client, c, kUsers);
    if (!rows) return Fail(rows.error().message);
    return Render<api::UserInfo>(
        c,
        {{"user", "User", 10},
         {"defaultaccount", "Def Acct", 10},
         {"adminlevel", "Admin", 9},
         {"admin", "Admin", 9}},
        "User,DefaultAccount,AdminLevel", *rows,
        [](const api::UserInfo& u, const std::string& col) {
          if (col == "user") return u.user.name;
          if (col == "defaultaccount") return u.user.default_account;
          return std::string("None");  // admins are [auth] admin_users, not records
        });
  }
  auto rows = Selected(client, c, kQos);
  if (!rows) return Fail(rows.error().message);
  static const std::vector<Column> kQosColumns = {{"name", "Name", 10},
                                                  {"priority", "Priority", 10},
                                                  {"gracetime", "GraceTime", 10},
                                                  {"preempt", "Preempt", 10},
                                                  {"preemptexempttime", "PreemptExemptTime", 19},
                                                  {"preemptmode", "PreemptMode", 11},
                                                  {"flags", "Flags", 40},
                                                  {"usagethres", "UsageThres", 10},
                                                  {"usagefactor", "UsageFactor", 11},
                                                  {"grptres", "GrpTRES", 13},
                                                  {"grptresmins", "GrpTRESMins", 13},
                                                  {"grptresrunmins", "GrpTRESRunMin", 13},
                                                  {"grpjobs", "GrpJobs", 7},
                                                  {"grpsubmit", "GrpSubmit", 9},
                                                  {"grpwall", "GrpWall", 11},
                                                  {"maxtres", "MaxTRES", 13},
                                                  {"maxtrespernode", "MaxTRESPerNode", 14},
                                                  {"maxtresmins", "MaxTRESMins", 13},
                                                  {"maxwall", "MaxWall", 11},
                                                  {"maxtrespu", "MaxTRESPU", 13},
                                                  {"maxjobspu", "MaxJobsPU", 9},
                                                  {"maxsubmitpu", "MaxSubmitPU", 11},
                                                  {"maxtrespa", "MaxTRESPA", 13},
                                                  {"maxjobspa", "MaxJobsPA", 9},
                                                  {"maxsubmitpa", "MaxSubmitPA", 11},
                                                  {"mintres", "MinTRES", 13}};
  return Render<QosConfig>(
      c, kQosColumns,
      "Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags,UsageThres,"
      "UsageFactor,GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJobs,GrpSubmit,GrpWall,MaxTRES,"
      "MaxTRESPerNode,MaxTRESMins,MaxWall,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxTRESPA,MaxJobsPA,"
      "MaxSubmitPA,MinTRES",
      *rows, [](const QosConfig& q, const std::string& col) -> std::string {
        if (col == "name") return q.name;
        if (col == "priority") return std::to_string(q.priority);
        if (col == "gracetime") return FormatSacctmgrTime(q.grace_time.value_or(Duration{0}));
        if (col == "preempt") return Join(q.preempt, ",");
        if (col == "preemptmode") return Upper(std::string(PreemptModeName(q.preempt_mode)));
        if (col == "usagefactor") {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%f", q.usage_factor);
          return buf;
        }
        if (col == "grptres") {
          return FormatTres(Wide(q.limits.max_cpus), Wide(q.limits.max_gpus), q.limits.max_mem_mb);
        }
        if (col == "grpjobs") return Opt(q.limits.max_running_jobs);
        if (col == "grpsubmit") return Opt(q.limits.max_submitted_jobs);
        if (col == "maxtres") return Gpus(Wide(q.limits.max_gpus_per_job));
        if (col == "maxwall") return Wall(q.max_time);
        if (col == "maxtrespu") return Gpus(Wide(q.per_user.max_gpus));
        if (col == "maxjobspu") return Opt(q.per_user.max_running_jobs);
        if (col == "maxsubmitpu") return Opt(q.per_user.max_submitted_jobs);
        return "";
      });
}

}  // namespace

namespace internal {

bool ConfirmCommit(bool immediate) {
  if (immediate) return true;
  std::printf("Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ");
  std::fflush(stdout);
  std::string answer;
  std::getline(std::cin, answer);
  std::printf("\n");
  if (!answer.empty() && (answer[0] == 'y' || answer[0] == 'Y')) return true;
  std::printf(" Changes Discarded\n");
  return false;
}

int RunSacctmgr(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  for (const std::string& w : words) {
    if (w == "-h" || w == "--help") {
      std::printf(
          "Usage: sacctmgr [-inPpQ] add|modify|delete|show account|user|qos|association ...\n"
          "Corral's sacctmgr: docs/slurm.md\n");
      return 0;
    }
    if (w == "-V" || w == "--version") {
      PrintVersion();
      return 0;
    }
  }
  Result<Command> c = Parse(words);
  if (!c) return Fail(c.error().message);
  auto client = ConnectOrReport(kProg);
  if (client == nullptr) return 1;
  if (c->verb == "show") return Show(*client, *c);
  if (c->entity == "coordinator") {  // issue 16 item 2 (sacctmgr_coord.cc)
    std::vector<std::string> accounts;
    for (const auto* pairs : {&c->set, &c->where}) {
      for (const auto& [key, v] : *pairs) {
        if (key != "account" && key != "accounts") {
          return Fail("coordinator: unknown key \"" + key + "\" (account=, names=)");
        }
        for (const std::string& a : SplitNonEmpty(v)) accounts.push_back(a);
      }
    }
    return SacctmgrCoordinator(*client, c->verb, accounts, c->names, c->immediate, c->quiet);
  }
  auto run = [&](auto& kind) {
    if (c->verb == "add") return Add(*client, *c, kind);
    if (c->verb == "modify") return Modify(*client, *c, kind);
    return Delete(*client, *c, kind);
  };
  if (c->entity == "account") return run(kAccounts);
  if (c->entity == "user") return run(kUsers);
  return run(kQos);
}

}  // namespace internal
}  // namespace corral::cli
