#include "api/auth.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "api/testing/jwt_testing.h"
#include "store/testing/temp_dir.h"

extern char** environ;

namespace corral::api {
namespace {

namespace fs = std::filesystem;

const Timestamp kNow = FromMicros(int64_t{1'780'000'000} * 1'000'000);

JwtKey TestKey(char fill = 'k') { return *JwtKey::FromBytes(std::string(32, fill)); }

Identity Alice() { return Identity{"alice", 1001, 100, Role::kUser}; }

HttpRequest WithAuthorization(std::string value) {
  HttpRequest r;
  r.headers["authorization"] = std::move(value);
  return r;
}

using testing::B64Url;
using testing::SignRaw;

std::vector<std::string> Split(const std::string& token) { return testing::SplitToken(token); }

// A directory removed with its contents at the end of the test.
class TempDir {
 public:
  const fs::path& path() const { return path_; }

 private:
  store::testing::TempDir dir_;
  fs::path path_ = dir_.path();
};

TEST(RoleTest, NamesRoundTrip) {
  for (Role r : {Role::kUser, Role::kAdmin, Role::kAgent, Role::kController, Role::kOperator,
                 Role::kJob, Role::kMetrics}) {
    EXPECT_EQ(*ParseRole(RoleName(r)), r);
  }
  EXPECT_EQ(RoleName(Role::kMetrics), "metrics");
  EXPECT_FALSE(IsUserRole(Role::kMetrics));
  EXPECT_EQ(RoleName(Role::kController), "controller");
  EXPECT_EQ(RoleName(Role::kOperator), "operator");
  EXPECT_EQ(RoleName(Role::kJob), "job");
  EXPECT_EQ(ParseRole("root").error().code, ErrorCode::kInvalidArgument);
  // A hostile name is not echoed.
  EXPECT_EQ(ParseRole("a\nb").error().message.find('\n'), std::string::npos);
  EXPECT_TRUE(IsUserRole(Role::kOperator));
  EXPECT_FALSE(IsUserRole(Role::kAgent));
  EXPECT_FALSE(IsUserRole(Role::kJob));
}

TEST(NodeNameTest, NamesThatCanBeAnAudienceAndACertificateName) {
  for (std::string_view ok : {"node01", "gpu-a100.rack3", "n_1", "7"}) {
    EXPECT_TRUE(CheckNodeName(ok).has_value()) << ok;
  }
  for (std::string_view bad : {"", "-node", ".x", "node 1", "node,1", "n/1", "corral-controller",
                               "corral-job", "\xc3\xa9"}) {
    EXPECT_EQ(CheckNodeName(bad).error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(CheckNodeName(std::string(65, 'n')).has_value());
  EXPECT_TRUE(CheckNodeName(std::string(64, 'n')).has_value());
}

TEST(JwtTest, SignVerifyRoundTrip) {
  JwtKey key = TestKey();
  for (Role role : {Role::kUser, Role::kAdmin, Role::kAgent, Role::kController}) {
    Identity id{"bob \"the builder\" \xc3\xa9", 4294967295u, 0, role};
    std::string token = key.Sign(id, kNow, Seconds(300));
    EXPECT_EQ(Split(token).size(), 3u);
    EXPECT_EQ(token.find('='), std::string::npos);  // no padding
    Result<Identity> back = key.Verify(token, kNow + Seconds(299));
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(*back, id);
  }
}

TEST(JwtTest, TokenIsStandardHs256) {
  std::string token = TestKey().Sign(Alice(), kNow, Seconds(60));
  std::vector<std::string> parts = Split(token);
  EXPECT_EQ(parts[0], B64Url(R"({"alg":"HS256","typ":"JWT"})"));
  EXPECT_EQ(
      parts[1],
      B64Url(
          R"({"exp":1780000060,"gid":100,"iat":1780000000,"role":"user","sub":"alice","uid":1001})"));
}

TEST(JwtTest, ExpiredTokenIsRejected) {
  JwtKey key = TestKey();
  std::string token = key.Sign(Alice(), kNow, Seconds(60));
  Result<Identity> r = key.Verify(token, kNow + Seconds(60));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
  EXPECT_NE(r.error().message.find("expired"), std::string::npos) << r.error().message;
}

TEST(JwtTest, WrongKeyAndTamperedPayloadAreBadSignatures) {
  JwtKey key = TestKey('a');
  std::string token = key.Sign(Alice(), kNow, Seconds(60));
  Result<Identity> r = TestKey('b').Verify(token, kNow);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), (Error{ErrorCode::kUnauthenticated, "jwt: bad signature"}));

  std::vector<std::string> parts = Split(token);
  std::string forged_claims =
      B64Url(R"({"exp":1780000060,"gid":0,"iat":1780000000,"role":"admin","sub":"root","uid":0})");
  r = key.Verify(parts[0] + "." + forged_claims + "." + parts[2], kNow);
  EXPECT_EQ(r.error(), (Error{ErrorCode::kUnauthenticated, "jwt: bad signature"}));

  // One flipped signature character.
  std::string flipped = token;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(key.Verify(flipped, kNow).error().message, "jwt: bad signature");
}

TEST(JwtTest, AlgNoneAndOtherAlgsAreRejected) {
  JwtKey key = TestKey();
  std::vector<std::string> parts = Split(key.Sign(Alice(), kNow, Seconds(60)));
  for (const char* header :
       {R"({"alg":"none","typ":"JWT"})", R"({"alg":"HS512"})", R"({"alg":"RS256"})"}) {
    for (const std::string& sig : {std::string(), parts[2]}) {
      Result<Identity> r = key.Verify(B64Url(header) + "." + parts[1] + "." + sig, kNow);
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
      EXPECT_NE(r.error().message.find("unsupported alg"), std::string::npos) << r.error().message;
    }
  }
}

TEST(JwtTest, GarbageIsMalformed) {
  JwtKey key = TestKey();
  const std::string header = B64Url(R"({"alg":"HS256","typ":"JWT"})");
  const std::vector<std::string> garbage = {
      "",
      "abc",
      "a.b",
      "a.b.c.d",
      "!!!.b.c",
      header + "=.e30.sig",
      B64Url("not json") + ".e30.c2ln",
      B64Url("[1]") + ".e30.c2ln",
      B64Url(R"({"typ":"JWT"})") + ".e30.c2ln",
      header + ".e30.sig*",
      std::string(10000, 'a'),
  };
  for (const std::string& token : garbage) {
    Result<Identity> r = key.Verify(token, kNow);
    ASSERT_FALSE(r.has_value()) << token;
    EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
    EXPECT_NE(r.error().message.find("malformed"), std::string::npos) << r.error().message;
  }
}

constexpr std::string_view kHs256 = R"({"alg":"HS256","typ":"JWT"})";

TEST(JwtTest, SignatureMatchesAnIndependentHmac) {
  std::string key(32, 'k');
  std::string token = TestKey().Sign(Alice(), kNow, Seconds(60));
  EXPECT_EQ(
      token,
      SignRaw(
          key, kHs256,
          R"({"exp":1780000060,"gid":100,"iat":1780000000,"role":"user","sub":"alice","uid":1001})"));
  // Keys longer than SHA-256's block are hashed first (RFC 2104).
  std::string long_key(100, 'L');
  EXPECT_EQ(
      JwtKey::FromBytes(long_key)->Sign(Alice(), kNow, Seconds(60)),
      SignRaw(
          long_key, kHs256,
          R"({"exp":1780000060,"gid":100,"iat":1780000000,"role":"user","sub":"alice","uid":1001})"));
  // Claims in another order, with extra fields and a fractional exp, from another issuer.
  Result<Identity> id = TestKey().Verify(
      SignRaw(
          key, R"({"typ":"JWT","alg":"HS256","kid":"x"})",
          R"({"role":"agent","uid":5,"gid":6,"sub":"node7","exp":1780000000.5,"aud":"corral"})"),
      kNow);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(*id, (Identity{"node7", 5, 6, Role::kAgent}));
}

TEST(JwtTest, SignedButBadClaimsAreRejectedNamingTheClaim) {
  std::string key(32, 'k');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([1,2])", "not a JSON object"},
      {R"(not json)", "not a JSON object"},
      {R"({"uid":1,"gid":1,"role":"user","exp":1780000060})", "claim \"sub\""},
      {R"({"sub":"","uid":1,"gid":1,"role":"user","exp":1780000060})", "claim \"sub\""},
      {R"({"sub":"a","uid":-1,"gid":1,"role":"user","exp":1780000060})", "claim \"uid\""},
      {R"({"sub":"a","uid":4294967296,"gid":1,"role":"user","exp":1780000060})", "claim \"uid\""},
      {R"({"sub":"a","uid":1,"gid":"1","role":"user","exp":1780000060})", "claim \"gid\""},
      {R"({"sub":"a","uid":1,"gid":1,"role":"root","exp":1780000060})", "unknown role \"root\""},
      {R"({"sub":"a","uid":1,"gid":1,"exp":1780000060})", "claim \"role\""},
      {R"({"sub":"a","uid":1,"gid":1,"role":"user"})", "claim \"exp\""},
      {R"({"sub":"a","uid":1,"gid":1,"role":"user","exp":"tomorrow"})", "claim \"exp\""},
  };
  for (const auto& [claims, expected] : cases) {
    Result<Identity> r = TestKey().Verify(SignRaw(key, kHs256, claims), kNow);
    ASSERT_FALSE(r.has_value()) << claims;
    EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
    EXPECT_NE(r.error().message.find(expected), std::string::npos) << r.error().message;
  }
}

TEST(JwtKeyTest, ShortKeyIsRejected) {
  Result<JwtKey> k = JwtKey::FromBytes(std::string(31, 'x'));
  ASSERT_FALSE(k.has_value());
  EXPECT_EQ(k.error().code, ErrorCode::kInvalidArgument);
}

TEST(JwtKeyTest, CreateFileWritesA0600KeyThatFromFileReads) {
  TempDir dir;
  std::string path = (dir.path() / "jwt.key").string();
  Result<JwtKey> created = JwtKey::CreateFile(path);
  ASSERT_TRUE(created.has_value()) << created.error().message;
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  EXPECT_GE(st.st_size, 32);

  Result<JwtKey> read = JwtKey::FromFile(path);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  std::string token = created->Sign(Alice(), kNow, Seconds(60));
  EXPECT_EQ(*read->Verify(token, kNow), Alice());

  // Never overwritten.
  Result<JwtKey> again = JwtKey::CreateFile(path);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(again.error().message.find(path), std::string::npos);

  // Two keys differ.
  Result<JwtKey> other = JwtKey::CreateFile((dir.path() / "other.key").string());
  ASSERT_TRUE(other.has_value());
  EXPECT_FALSE(other->Verify(token, kNow).has_value());
}

TEST(JwtKeyTest, FromFileErrorsNameThePath) {
  TempDir dir;
  std::string missing = (dir.path() / "missing").string();
  Result<JwtKey> r = JwtKey::FromFile(missing);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find(missing), std::string::npos);

  std::string short_key = (dir.path() / "short").string();
  std::ofstream(short_key) << "tooshort\n";
  chmod(short_key.c_str(), 0600);  // key files must be private (the rule has its own tests)
  r = JwtKey::FromFile(short_key);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find(short_key), std::string::npos);

  // A hand-written key (with a newline) is the same key as the bytes without it.
  std::string written = (dir.path() / "written").string();
  std::ofstream(written) << std::string(40, 'w') << "\n";
  chmod(written.c_str(), 0600);
  Result<JwtKey> k = JwtKey::FromFile(written);
  ASSERT_TRUE(k.has_value());
  std::string token = JwtKey::FromBytes(std::string(40, 'w'))->Sign(Alice(), kNow, Seconds(9));
  EXPECT_TRUE(k->Verify(token, kNow).has_value());

  if (geteuid() != 0) {  // root reads anything
    std::string locked = (dir.path() / "locked").string();
    std::ofstream(locked) << std::string(40, 'l');
    chmod(locked.c_str(), 0);  // also private: refused for the read, not the mode
    EXPECT_EQ(JwtKey::FromFile(locked).error().code, ErrorCode::kPermissionDenied);
  }
}

TEST(AuthenticatorTest, BearerTokens) {
  JwtKey key = TestKey();
  auto auth = MakeAuthenticator(key, "", {"carol"});
  Result<Identity> id =
      auth->Authenticate(WithAuthorization(BearerHeader(key, Alice(), kNow)), kNow);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(*id, Alice());

  // The scheme is case-insensitive.
  id = auth->Authenticate(WithAuthorization("bearer " + key.Sign(Alice(), kNow, Seconds(5))), kNow);
  EXPECT_TRUE(id.has_value());

  // Signed roles are kept; configured admins and uid 0 with a user token are raised to admin.
  Identity agent{"node1", 0, 0, Role::kAgent};
  EXPECT_EQ(auth->Authenticate(WithAuthorization(BearerHeader(key, agent, kNow)), kNow)->role,
            Role::kAgent);
  Identity carol{"carol", 1002, 100, Role::kUser};
  EXPECT_EQ(auth->Authenticate(WithAuthorization(BearerHeader(key, carol, kNow)), kNow)->role,
            Role::kAdmin);
  Identity root{"root", 0, 0, Role::kUser};
  EXPECT_EQ(auth->Authenticate(WithAuthorization(BearerHeader(key, root, kNow)), kNow)->role,
            Role::kAdmin);

  // Expiry uses the `now` given.
  std::string header = BearerHeader(key, Alice(), kNow, Seconds(10));
  Result<Identity> late = auth->Authenticate(WithAuthorization(header), kNow + Seconds(11));
  ASSERT_FALSE(late.has_value());
  EXPECT_NE(late.error().message.find("expired"), std::string::npos);
}

TEST(AuthenticatorTest, AnAgentIsNeverRootEvenWithAUidZeroToken) {
  JwtKey key = TestKey();
  auto auth = MakeAuthenticator(key, "", {"agent:node1"});
  // The first release's agents sign uid 0; listed or not, the agent is not root.
  Identity agent{"agent:node1", 0, 0, Role::kAgent};
  Result<Identity> id = auth->Authenticate(WithAuthorization(BearerHeader(key, agent, kNow)), kNow);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(id->role, Role::kAgent);
  EXPECT_EQ(id->uid, kNoUnixId);
  EXPECT_EQ(id->gid, kNoUnixId);
}

TEST(AuthenticatorTest, MissingOrUnknownCredentialsAreUnauthenticated) {
  auto auth = MakeAuthenticator(TestKey(), "", {});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "missing Authorization header"},
      {"Basic dXNlcjpwYXNz", "unsupported Authorization scheme \"Basic\""},
      {"Bearer", "empty bearer credential"},
      {"Bearer garbage", "malformed"},
      {"Munge MUNGE:abc:", "munge authentication is not enabled"},
  };
  for (const auto& [header, expected] : cases) {
    HttpRequest r = header.empty() ? HttpRequest{} : WithAuthorization(header);
    Result<Identity> id = auth->Authenticate(r, kNow);
    ASSERT_FALSE(id.has_value()) << header;
    EXPECT_EQ(id.error().code, ErrorCode::kUnauthenticated) << header;
    EXPECT_NE(id.error().message.find(expected), std::string::npos) << id.error().message;
  }
}

TEST(AuthenticatorTest, CurrentProcessIdentity) {
  Identity id = CurrentProcessIdentity();
  EXPECT_EQ(id.uid, getuid());
  EXPECT_EQ(id.gid, getgid());
  EXPECT_FALSE(id.user.empty());
  EXPECT_EQ(id.role, Role::kUser);
}

// ---------------------------------------------------------------------------------------------
// MUNGE, against a real munged started for the test with its own key and socket.

std::string FindMunged() {
  std::vector<std::string> dirs = {"/usr/sbin", "/sbin", "/usr/local/sbin"};
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) dirs.push_back(dir);
  }
  for (const std::string& dir : dirs) {
    std::string candidate = dir + "/munged";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Runs `argv` and waits for it; returns its exit status, or -1.
int RunAndWait(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One munged serves every test of the suite (stopping it takes munged about a second).
class MungeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    munged_ = FindMunged();
    if (munged_.empty()) {
      setup_error_ =
          "munged not found in /usr/sbin, /sbin or PATH: MUNGE is a declared dependency "
          "(Debian package munge, installed by tools/setup.sh)";
      return;
    }
    // munged checks that its key is private and its socket directory not world-writable.
    fs::path key = dir_->path() / "munge.key";
    {
      std::ifstream random("/dev/urandom", std::ios::binary);
      std::string bytes(1024, '\0');
      random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      std::ofstream(key, std::ios::binary) << bytes;
    }
    chmod(key.c_str(), 0400);
    socket_ = (dir_->path() / "munge.socket").string();
    // Without -F munged forks and its parent exits once the socket is ready, so the exit
    // status is the readiness signal. --force lets it run as root and over a stale socket.
    int rc = RunAndWait({munged_, "--force", "--key-file=" + key.string(), "--socket=" + socket_,
                         "--pid-file=" + (dir_->path() / "munged.pid").string(),
                         "--log-file=" + (dir_->path() / "munged.log").string(),
                         "--seed-file=" + (dir_->path() / "munged.seed").string()});
    if (rc != 0) {
      setup_error_ = "munged failed to start (exit " + std::to_string(rc) + "); its log:\n" +
                     ReadFile(dir_->path() / "munged.log");
      return;
    }
    started_ = true;
  }

  static void TearDownTestSuite() {
    if (started_) {
      // Signals our daemon and waits until it has exited.
      if (RunAndWait({munged_, "--stop", "--socket=" + socket_}) != 0) {
        std::string pid = ReadFile(dir_->path() / "munged.pid");
        if (!pid.empty()) kill(static_cast<pid_t>(std::stol(pid)), SIGKILL);
        ADD_FAILURE() << "munged --stop failed; killed pid " << pid;
      }
      started_ = false;
    }
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override { ASSERT_TRUE(started_) << setup_error_; }

  static inline TempDir* dir_ = nullptr;
  static inline std::string munged_;
  static inline std::string socket_;
  static inline std::string setup_error_;
  static inline bool started_ = false;
};

TEST_F(MungeTest, EncodedCredentialAuthenticatesTheCallingUser) {
  Result<std::string> header = MungeHeader(socket_);
  ASSERT_TRUE(header.has_value()) << header.error().message;
  EXPECT_EQ(header->rfind("Munge MUNGE:", 0), 0u) << *header;

  Identity me = CurrentProcessIdentity();
  auto auth = MakeAuthenticator(TestKey(), socket_, {});
  Result<Identity> id = auth->Authenticate(WithAuthorization(*header), kNow);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(id->uid, me.uid);
  EXPECT_EQ(id->gid, me.gid);
  EXPECT_EQ(id->user, me.user);
  EXPECT_EQ(id->role, me.uid == 0 ? Role::kAdmin : Role::kUser);

  // A credential is good once: a replay is refused.
  Result<Identity> replay = auth->Authenticate(WithAuthorization(*header), kNow);
  ASSERT_FALSE(replay.has_value());
  EXPECT_EQ(replay.error().code, ErrorCode::kUnauthenticated);
  EXPECT_NE(replay.error().message.find("munge"), std::string::npos) << replay.error().message;
}

TEST_F(MungeTest, ConfiguredAdminGetsAdminRole) {
  Identity me = CurrentProcessIdentity();
  auto auth = MakeAuthenticator(TestKey(), socket_, {"someone", me.user});
  Result<Identity> id = auth->Authenticate(WithAuthorization(*MungeHeader(socket_)), kNow);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(id->role, Role::kAdmin);
}

TEST_F(MungeTest, ForgedCredentialIsRejected) {
  auto auth = MakeAuthenticator(TestKey(), socket_, {});
  std::string header = *MungeHeader(socket_);
  // Alter one character in the middle of the credential's payload.
  size_t mid = header.size() / 2;
  header[mid] = header[mid] == 'A' ? 'B' : 'A';
  for (const std::string& h :
       {header, std::string("Munge MUNGE:garbage:"), std::string("Munge x")}) {
    Result<Identity> id = auth->Authenticate(WithAuthorization(h), kNow);
    ASSERT_FALSE(id.has_value()) << h;
    EXPECT_EQ(id.error().code, ErrorCode::kUnauthenticated) << id.error().message;
  }
}

// A passwd database that knows only the uids given.
class FakeUsers final : public UserDirectory {
 public:
  explicit FakeUsers(std::map<uint32_t, std::string> users) : users_(std::move(users)) {}
  std::optional<std::string> UserName(uint32_t uid) const override {
    auto it = users_.find(uid);
    if (it == users_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> GroupNames(const std::string&, uint32_t) const override {
    return {"wheel-ops"};
  }

 private:
  std::map<uint32_t, std::string> users_;
};

TEST_F(MungeTest, UidAndGidComeFromMungedAndTheNameFromPasswd) {
  Identity me = CurrentProcessIdentity();
  // Whatever a client claims elsewhere, the identity is munged's uid/gid and passwd's name.
  FakeUsers users({{me.uid, "renamed-in-passwd"}});
  Result<std::string> header = MungeHeaderFor(kControllerAudience, socket_);
  ASSERT_TRUE(header.has_value()) << header.error().message;
  Result<Identity> id =
      DecodeMungeCredential(header->substr(6), socket_, kControllerAudience, users);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(*id, (Identity{"renamed-in-passwd", me.uid, me.gid, Role::kUser}));
  // Replayed: refused by munged.
  Result<Identity> replay =
      DecodeMungeCredential(header->substr(6), socket_, kControllerAudience, users);
  ASSERT_FALSE(replay.has_value());
  EXPECT_EQ(replay.error().code, ErrorCode::kUnauthenticated);
  EXPECT_NE(replay.error().message.find("Replayed credential"), std::string::npos)
      << replay.error().message;
  // A uid with no passwd entry is nobody: refused, not named after its number.
  FakeUsers nobody({});
  id = DecodeMungeCredential(MungeHeaderFor(kControllerAudience, socket_)->substr(6), socket_,
                             kControllerAudience, nobody);
  ASSERT_FALSE(id.has_value());
  EXPECT_NE(id.error().message.find("uid " + std::to_string(me.uid) + " has no passwd entry"),
            std::string::npos)
      << id.error().message;
}

TEST_F(MungeTest, ACredentialForAnotherAudienceIsRefused) {
  FakeUsers users({{CurrentProcessIdentity().uid, "me"}});
  for (const std::string& header : {*MungeHeaderFor("node01", socket_), *MungeHeader(socket_)}) {
    Result<Identity> id =
        DecodeMungeCredential(header.substr(6), socket_, kControllerAudience, users);
    ASSERT_FALSE(id.has_value());
    EXPECT_EQ(id.error().code, ErrorCode::kUnauthenticated);
    EXPECT_NE(id.error().message.find("not meant for \"corral-controller\""), std::string::npos)
        << id.error().message;
  }
}

TEST_F(MungeTest, TheControllerAuthenticatorResolvesTheRoleOfAMungeUser) {
  Identity me = CurrentProcessIdentity();
  FakeUsers users({{me.uid, "mungeuser"}});
  auto auth = MakeControllerAuthenticator(ControllerAuthOptions{
      .credentials = Credentials(*Keyring::Parse("sign k\nkey k " + std::string(32, 'k')),
                                 TokenPolicy{.cluster = "c1"}),
      .roles = RoleResolver(RoleConfig{.operator_groups = {"wheel-ops"}}, users),
      .munge_socket = socket_,
      .users = &users,
  });
  Result<Identity> id =
      auth->Authenticate(WithAuthorization(*MungeHeaderFor(kControllerAudience, socket_)), kNow);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(id->user, "mungeuser");
  EXPECT_EQ(id->uid, me.uid);
  EXPECT_EQ(id->role, me.uid == 0 ? Role::kAdmin : Role::kOperator);
  // The first release's credentials (no audience) are not accepted by it.
  Result<Identity> old = auth->Authenticate(WithAuthorization(*MungeHeader(socket_)), kNow);
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.error().code, ErrorCode::kUnauthenticated);
}

TEST_F(MungeTest, UnreachableMungedIsUnavailable) {
  std::string nowhere = (dir_->path() / "no.socket").string();
  Result<std::string> header = MungeHeader(nowhere);
  ASSERT_FALSE(header.has_value());
  EXPECT_EQ(header.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(header.error().message.find(nowhere), std::string::npos) << header.error().message;

  auto auth = MakeAuthenticator(TestKey(), nowhere, {});
  Result<Identity> id = auth->Authenticate(WithAuthorization(*MungeHeader(socket_)), kNow);
  ASSERT_FALSE(id.has_value());
  EXPECT_EQ(id.error().code, ErrorCode::kUnavailable) << id.error().message;
}

}  // namespace
}  // namespace corral::api
