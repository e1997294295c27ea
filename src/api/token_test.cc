#include "api/token.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "api/testing/jwt_testing.h"
#include "store/testing/temp_dir.h"

namespace corral::api {
namespace {

using testing::B64Url;
using testing::SignRaw;
using testing::SplitToken;

const Timestamp kNow = FromMicros(int64_t{1'780'000'000} * 1'000'000);
const std::string kSecretA(40, 'a');
const std::string kSecretB(40, 'b');

Keyring Ring(std::string_view text) {
  Result<Keyring> r = Keyring::Parse(text);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r.has_value() ? *r : Keyring();
}

// One cluster key "k1" (kSecretA) that signs.
Keyring OneKey() { return Ring("sign k1\nkey k1 " + kSecretA + "\n"); }

TokenClaims UserClaims(Timestamp now = kNow, Duration ttl = Seconds(300)) {
  TokenClaims c;
  c.issuer = "c1";
  c.audience = "corral-controller";
  c.subject = "alice";
  c.issued_at = now;
  c.not_before = now;
  c.expires_at = now + ttl;
  c.role = Role::kUser;
  c.uid = 1001;
  c.gid = 100;
  return c;
}

TokenCheck ControllerCheck(Duration max_lifetime = Minutes(60)) {
  return TokenCheck{.issuer = "c1",
                    .audiences = {{"corral-controller", max_lifetime}},
                    .clock_skew = Seconds(30)};
}

void ExpectRefused(const Result<VerifiedToken>& r, std::string_view what) {
  ASSERT_FALSE(r.has_value()) << "accepted, expected: " << what;
  EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
  EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
}

constexpr std::string_view kHeaderK1 = R"({"alg":"HS256","kid":"k1","typ":"JWT"})";
// Claims of a valid user token at kNow, to be varied.
std::string ClaimsJson(std::string_view extra_or_override = "") {
  std::string base = R"("aud":"corral-controller","exp":1780000300,"gid":100,"iat":1780000000,)"
                     R"("iss":"c1","nbf":1780000000,"role":"user","sub":"alice","uid":1001)";
  return "{" + std::string(extra_or_override) + base + "}";
}

TEST(KeyringTest, SignsTheStandardClaimsWithTheKid) {
  Result<std::string> token = OneKey().Sign(UserClaims());
  ASSERT_TRUE(token.has_value()) << token.error().message;
  // Byte for byte what an independent HMAC over the same JSON gives.
  EXPECT_EQ(*token, SignRaw(kSecretA, kHeaderK1, ClaimsJson()));

  Result<VerifiedToken> v = OneKey().Verify(*token, ControllerCheck(), kNow);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->kid, "k1");
  EXPECT_EQ(v->claims, UserClaims());
}

TEST(KeyringTest, RoundTripsEveryRoleWithItsClaims) {
  TokenClaims agent = UserClaims();
  agent.role = Role::kAgent;
  agent.subject = "agent:node01";
  agent.uid = agent.gid = 0;
  agent.node = "node01";
  TokenClaims controller = agent;
  controller.role = Role::kController;
  controller.subject = "corral-controller";
  controller.audience = "node01";
  TokenClaims job = UserClaims();
  job.role = Role::kJob;
  job.audience = "corral-job";
  job.job = JobId(42);
  job.generation = Generation(7);
  for (const TokenClaims& c : {agent, controller, job}) {
    TokenCheck check = ControllerCheck();
    check.audiences = {{c.audience, Minutes(60)}};
    Result<VerifiedToken> v = OneKey().Verify(*OneKey().Sign(c), check, kNow);
    ASSERT_TRUE(v.has_value()) << RoleName(c.role) << ": " << v.error().message;
    EXPECT_EQ(v->claims, c);
  }
}

TEST(KeyringTest, RefusesTheWrongAudienceAndIssuer) {
  Keyring ring = OneKey();
  TokenClaims c = UserClaims();
  c.audience = "node01";
  ExpectRefused(ring.Verify(*ring.Sign(c), ControllerCheck(), kNow), "wrong aud");
  c = UserClaims();
  c.issuer = "other-cluster";
  ExpectRefused(ring.Verify(*ring.Sign(c), ControllerCheck(), kNow), "another cluster");
}

TEST(KeyringTest, RefusesExpiredAndNotYetValidTokensWithSkew) {
  Keyring ring = OneKey();
  std::string token = *ring.Sign(UserClaims(kNow, Seconds(300)));
  // Skew is 30 s: still good 29 s after exp, refused at 30 s.
  EXPECT_TRUE(ring.Verify(token, ControllerCheck(), kNow + Seconds(329)).has_value());
  ExpectRefused(ring.Verify(token, ControllerCheck(), kNow + Seconds(330)), "expired at");

  TokenClaims later = UserClaims();
  later.not_before = kNow + Seconds(120);
  token = *ring.Sign(later);
  ExpectRefused(ring.Verify(token, ControllerCheck(), kNow), "not valid before");
  EXPECT_TRUE(ring.Verify(token, ControllerCheck(), kNow + Seconds(90)).has_value());

  // Issued in the future (a clock far ahead, or a forged iat to stretch the lifetime).
  TokenClaims future = UserClaims(kNow + Seconds(600));
  ExpectRefused(ring.Verify(*ring.Sign(future), ControllerCheck(), kNow), "issued in the future");
}

TEST(KeyringTest, RefusesALifetimeOverTheCap) {
  Keyring ring = OneKey();
  // The token of issue 15 that expired in the year 5138.
  std::string token =
      SignRaw(kSecretA, kHeaderK1,
              R"({"aud":"corral-controller","exp":99999999999,"gid":0,"iat":1780000000,)"
              R"("iss":"c1","nbf":1780000000,"role":"user","sub":"root","uid":0})");
  ExpectRefused(ring.Verify(token, ControllerCheck(), kNow), "exceeds the maximum of 3600 s");
  // Exactly at the cap is fine; one second over is not.
  EXPECT_TRUE(
      ring.Verify(*ring.Sign(UserClaims(kNow, Minutes(60))), ControllerCheck(), kNow).has_value());
  ExpectRefused(
      ring.Verify(*ring.Sign(UserClaims(kNow, Minutes(60) + Seconds(1))), ControllerCheck(), kNow),
      "lifetime of 3601 s");
  // The cap is per audience.
  TokenCheck two = ControllerCheck();
  two.audiences.push_back({"corral-job", Minutes(600)});
  TokenClaims job = UserClaims(kNow, Minutes(300));
  job.role = Role::kJob;
  job.audience = "corral-job";
  job.job = JobId(1);
  EXPECT_TRUE(ring.Verify(*ring.Sign(job), two, kNow).has_value());
  ExpectRefused(ring.Verify(*ring.Sign(UserClaims(kNow, Minutes(300))), two, kNow), "exceeds");
}

TEST(KeyringTest, RefusesUnknownMissingOrMalformedKids) {
  Keyring ring = OneKey();
  ExpectRefused(ring.Verify(SignRaw(kSecretA, R"({"alg":"HS256","kid":"k9"})", ClaimsJson()),
                            ControllerCheck(), kNow),
                "unknown key id \"k9\"");
  ExpectRefused(ring.Verify(SignRaw(kSecretA, R"({"alg":"HS256","typ":"JWT"})", ClaimsJson()),
                            ControllerCheck(), kNow),
                "no kid");
  for (std::string_view header :
       {R"({"alg":"HS256","kid":7})", R"({"alg":"HS256","kid":""})",
        R"({"alg":"HS256","kid":"a b"})", R"({"alg":"HS256","kid":"\u0000"})"}) {
    ExpectRefused(ring.Verify(SignRaw(kSecretA, header, ClaimsJson()), ControllerCheck(), kNow),
                  "kid is not a key id");
  }
  ExpectRefused(
      ring.Verify(SignRaw(kSecretA, R"({"alg":"HS256","kid":"k1","crit":["exp"]})", ClaimsJson()),
                  ControllerCheck(), kNow),
      "crit");
}

TEST(KeyringTest, RefusesOtherAlgorithms) {
  Keyring ring = OneKey();
  std::vector<std::string> parts = SplitToken(*ring.Sign(UserClaims()));
  for (const char* header : {R"({"alg":"none","kid":"k1"})", R"({"alg":"RS256","kid":"k1"})",
                             R"({"alg":"HS512","kid":"k1"})", R"({"alg":"hs256","kid":"k1"})"}) {
    for (const std::string& sig : {std::string(), parts[2]}) {
      ExpectRefused(
          ring.Verify(B64Url(header) + "." + parts[1] + "." + sig, ControllerCheck(), kNow),
          "unsupported alg");
    }
  }
}

TEST(KeyringTest, RefusesTamperedTokens) {
  Keyring ring = Ring("sign k1\nkey k1 " + kSecretA + "\nkey k2 " + kSecretB + "\n");
  std::string token = *ring.Sign(UserClaims());
  std::vector<std::string> parts = SplitToken(token);
  // Payload: a different user, same signature.
  std::string forged = B64Url(ClaimsJson().replace(ClaimsJson().find("alice"), 5, "root0"));
  ExpectRefused(ring.Verify(parts[0] + "." + forged + "." + parts[2], ControllerCheck(), kNow),
                "bad signature");
  // Header: the kid moved to another listed key.
  ExpectRefused(ring.Verify(B64Url(R"({"alg":"HS256","kid":"k2","typ":"JWT"})") + "." + parts[1] +
                                "." + parts[2],
                            ControllerCheck(), kNow),
                "bad signature");
  // One signature character flipped.
  std::string flipped = token;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  ExpectRefused(ring.Verify(flipped, ControllerCheck(), kNow), "bad signature");
  // Signed with a key of the same kid in another keyring.
  Keyring other = Ring("sign k1\nkey k1 " + kSecretB + "\n");
  ExpectRefused(ring.Verify(*other.Sign(UserClaims()), ControllerCheck(), kNow), "bad signature");
}

TEST(KeyringTest, RefusesSignedButIncompleteClaims) {
  Keyring ring = OneKey();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"aud":"corral-controller","exp":1780000300,"iat":1780000000,"nbf":1780000000,"role":"user","sub":"a","uid":1,"gid":1})",
       "claim \"iss\""},
      {R"({"iss":"c1","exp":1780000300,"iat":1780000000,"nbf":1780000000,"role":"user","sub":"a","uid":1,"gid":1})",
       "claim \"aud\""},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000300,"nbf":1780000000,"role":"user","sub":"a","uid":1,"gid":1})",
       "claim \"iat\""},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000300,"iat":1780000000,"role":"user","sub":"a","uid":1,"gid":1})",
       "claim \"nbf\""},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000300.5,"iat":1780000000,"nbf":1780000000,"role":"user","sub":"a","uid":1,"gid":1})",
       "claim \"exp\""},
      {R"({"iss":"c1","aud":"corral-controller","exp":-1,"iat":1780000000,"nbf":1780000000,"role":"user","sub":"a","uid":1,"gid":1})",
       "claim \"exp\""},
      {R"({"iss":"c1","aud":["corral-controller"],"exp":1780000300,"iat":1780000000,"nbf":1780000000,"role":"user","sub":"a","uid":1,"gid":1})",
       "claim \"aud\""},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000300,"iat":1780000000,"nbf":1780000000,"role":"user","sub":"a","gid":1})",
       "claim \"uid\""},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000300,"iat":1780000000,"nbf":1780000000,"role":"agent","sub":"agent:n1"})",
       "claim \"node\""},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000300,"iat":1780000000,"nbf":1780000000,"role":"agent","sub":"agent:n1","node":"-x"})",
       "not a node name"},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000300,"iat":1780000000,"nbf":1780000000,"role":"job","sub":"a","uid":1,"gid":1,"gen":1})",
       "claim \"job\""},
      {R"({"iss":"c1","aud":"corral-controller","exp":1779999000,"iat":1779998000,"nbf":1779998000,"role":"user","sub":"a","uid":1,"gid":1})",
       "expired"},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000000,"iat":1780000000,"nbf":1780000000,"role":"user","sub":"a","uid":1,"gid":1})",
       "exp is not after iat"},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000100,"iat":1780000000,"nbf":1780000200,"role":"user","sub":"a","uid":1,"gid":1})",
       "not valid before"},
      {R"({"iss":"c1","aud":"corral-controller","exp":1780000300,"iat":1780000000,"nbf":1780000000,"role":"root","sub":"a","uid":1,"gid":1})",
       "unknown role"},
  };
  for (const auto& [claims, expected] : cases) {
    SCOPED_TRACE(claims);
    ExpectRefused(ring.Verify(SignRaw(kSecretA, kHeaderK1, claims), ControllerCheck(), kNow),
                  expected);
  }
}

TEST(KeyringTest, RotationOverlapsThenTheOldKeyIsRefused) {
  Keyring ring = Ring("sign old\nkey old " + kSecretA + "\n");
  std::string old_token = *ring.Sign(UserClaims());

  // 1. Add the new key everywhere: both verify, the old one still signs.
  ASSERT_TRUE(ring.Add("new", kSecretB).has_value());
  EXPECT_EQ(SplitToken(*ring.Sign(UserClaims()))[0], SplitToken(old_token)[0]);
  // 2. Switch signing: new tokens carry kid "new"; old tokens still verify.
  ASSERT_TRUE(ring.SetSigning("new").has_value());
  std::string new_token = *ring.Sign(UserClaims());
  Result<VerifiedToken> v = ring.Verify(new_token, ControllerCheck(), kNow);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->kid, "new");
  v = ring.Verify(old_token, ControllerCheck(), kNow);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->kid, "old");
  // A verifier that has only the new key (not yet updated the other way) refuses old tokens.
  EXPECT_FALSE(Ring("key new " + kSecretB + "\n").Verify(old_token, ControllerCheck(), kNow));
  // 3. Drop the old key: its tokens are refused, the new ones are not.
  EXPECT_EQ(ring.Remove("new").error().code, ErrorCode::kFailedPrecondition);  // signs
  ASSERT_TRUE(ring.Remove("old").has_value());
  ExpectRefused(ring.Verify(old_token, ControllerCheck(), kNow), "unknown key id \"old\"");
  EXPECT_TRUE(ring.Verify(new_token, ControllerCheck(), kNow).has_value());
  EXPECT_EQ(ring.Remove("old").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(ring.SetSigning("old").error().code, ErrorCode::kNotFound);
}

TEST(KeyringTest, ANodeKeySignsOnlyThatNodesTokens) {
  Keyring controller =
      Ring("sign c1\nkey c1 " + kSecretA + "\nkey n1 " + kSecretB + " node=node01\nsign n1\n");
  Keyring node01 = Ring("sign n1\nkey n1 " + kSecretB + " node=node01\n");
  TokenClaims agent = UserClaims();
  agent.role = Role::kAgent;
  agent.subject = "agent:node01";
  agent.node = "node01";
  // The agent signs with its own key and the controller accepts it as node01.
  std::string token = *node01.Sign(agent);
  EXPECT_EQ(SplitToken(token)[0], B64Url(R"({"alg":"HS256","kid":"n1","typ":"JWT"})"));
  EXPECT_TRUE(controller.Verify(token, ControllerCheck(), kNow).has_value());
  // The controller signs its calls to node01 with node01's key, other tokens with its own.
  TokenClaims call = agent;
  call.role = Role::kController;
  call.subject = "corral-controller";
  call.audience = "node01";
  EXPECT_EQ(SplitToken(*controller.Sign(call))[0], SplitToken(token)[0]);
  EXPECT_NE(SplitToken(*controller.Sign(UserClaims()))[0], SplitToken(token)[0]);
  // node01's key cannot make a user token or node02's agent token, even hand-signed.
  EXPECT_EQ(node01.Sign(UserClaims()).error().code, ErrorCode::kFailedPrecondition);
  std::string forged_user = SignRaw(kSecretB, R"({"alg":"HS256","kid":"n1"})", ClaimsJson());
  ExpectRefused(controller.Verify(forged_user, ControllerCheck(), kNow), "belongs to node node01");
  std::string forged_node02 =
      SignRaw(kSecretB, R"({"alg":"HS256","kid":"n1"})",
              R"({"aud":"corral-controller","exp":1780000300,"iat":1780000000,"iss":"c1",)"
              R"("nbf":1780000000,"node":"node02","role":"agent","sub":"agent:node02"})");
  ExpectRefused(controller.Verify(forged_node02, ControllerCheck(), kNow),
                "belongs to node node01");
}

TEST(KeyringTest, SignNeedsASigningKeyForTheScope) {
  Keyring verify_only = Ring("key k1 " + kSecretA + "\n");
  Result<std::string> r = verify_only.Sign(UserClaims());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  TokenClaims bad = UserClaims();
  bad.subject = "\xff\xfe";
  EXPECT_EQ(OneKey().Sign(bad).error().code, ErrorCode::kInvalidArgument);
}

TEST(KeyringFileTest, ParsesAndSerializesTheFormat) {
  Keyring ring = Ring("# comment\n\n  sign k2 \nkey k1 " + kSecretA + "\nkey\tk2\t" + kSecretB +
                      "\nkey n1 " + std::string(32, 'n') + " node=node01\n");
  ASSERT_EQ(ring.entries().size(), 3u);
  EXPECT_EQ(ring.entries()[0], (Keyring::Entry{"k1", kSecretA, "", false}));
  EXPECT_EQ(ring.entries()[1], (Keyring::Entry{"k2", kSecretB, "", true}));
  EXPECT_EQ(ring.entries()[2], (Keyring::Entry{"n1", std::string(32, 'n'), "node01", false}));
  Result<Keyring> back = Keyring::Parse(ring.Serialize());
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->entries(), ring.entries());
}

TEST(KeyringFileTest, ErrorsNameTheLineAndNeverTheSecret) {
  const std::string secret = "s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"key k1 " + secret + "\nkye k2 " + secret + "\n", "f: line 2: expected"},
      {"key k1 short\n", "f: line 1: key \"k1\": secret of 5 bytes is too short"},
      {"key k1 " + secret + "\nkey k1 " + secret + "\n", "line 2: key id \"k1\" is listed"},
      {"key k/1 " + secret + "\n", "line 1: key id"},
      {"key k1 " + secret + " node=bad/name\n", "line 1: key \"k1\": node name"},
      {"key k1 " + secret + " nod=x\n", "line 1: expected node=NAME"},
      {"key k1 " + secret + "\nsign k9\n", "line 2: sign names key \"k9\", not listed"},
      {"key k1 " + secret + "\nkey k2 " + secret + "\nsign k1\nsign k2\n",
       "line 4: a second signing key for the cluster"},
      {"# only a comment\n", "f: no key"},
      {"tooshort", "f: jwt key of 8 bytes is too short"},
  };
  for (const auto& [text, expected] : cases) {
    Result<Keyring> r = Keyring::Parse(text, "f");
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find(expected), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find(secret), std::string::npos) << r.error().message;
  }
}

TEST(KeyringFileTest, AFirstReleaseKeyFileIsOneSigningKey) {
  std::string legacy = std::string(64, 'L');
  Keyring ring = Ring(legacy + "\n");
  ASSERT_EQ(ring.entries().size(), 1u);
  EXPECT_EQ(ring.entries()[0].kid, Keyring::Fingerprint(legacy));
  EXPECT_TRUE(ring.entries()[0].signing);
  EXPECT_EQ(ring.entries()[0].secret, legacy);
  // The same as the JwtKey of that file, on every host.
  EXPECT_EQ(Keyring::FromKey(*JwtKey::FromBytes(legacy)).entries(), ring.entries());
  EXPECT_EQ(Keyring::Fingerprint(legacy).size(), 17u);
  EXPECT_NE(Keyring::Fingerprint(legacy), Keyring::Fingerprint(std::string(64, 'M')));
}

TEST(KeyringFileTest, CreateFileAndFromFileFollowTheKeyFileRules) {
  store::testing::TempDir dir;
  std::string path = dir.File("keyring");
  Result<Keyring> created = Keyring::CreateFile(path, "2026-01");
  ASSERT_TRUE(created.has_value()) << created.error().message;
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(created->entries().size(), 1u);
  EXPECT_EQ(created->entries()[0].kid, "2026-01");
  EXPECT_GE(created->entries()[0].secret.size(), 64u);

  Result<Keyring> read = Keyring::FromFile(path);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_EQ(read->entries(), created->entries());
  EXPECT_EQ(Keyring::CreateFile(path, "x").error().code, ErrorCode::kAlreadyExists);

  // Rotation written back atomically.
  ASSERT_TRUE(read->Add("2026-02", *Keyring::GenerateSecret()).has_value());
  ASSERT_TRUE(read->SetSigning("2026-02").has_value());
  ASSERT_TRUE(read->WriteFile(path, WriteMode::kReplace).has_value());
  EXPECT_EQ(Keyring::FromFile(path)->entries(), read->entries());

  chmod(path.c_str(), 0640);
  Result<Keyring> loose = Keyring::FromFile(path);
  ASSERT_FALSE(loose.has_value());
  EXPECT_EQ(loose.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(loose.error().message.find("keyring file " + path + ": mode 0640"), std::string::npos)
      << loose.error().message;
}

// ---------------------------------------------------------------------------------------------
// JwtKey, the first release's single key: the lifetime cap and the key file rules.

TEST(JwtKeyLegacyTest, RefusesALifetimeOverTheCap) {
  JwtKey key = *JwtKey::FromBytes(kSecretA);
  Identity alice{"alice", 1001, 100, Role::kUser};
  EXPECT_TRUE(key.Verify(key.Sign(alice, kNow, kLegacyMaxTokenLifetime), kNow).has_value());
  Result<Identity> r =
      key.Verify(key.Sign(alice, kNow, kLegacyMaxTokenLifetime + Seconds(1)), kNow);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("lifetime exceeds the maximum of 86400 s"), std::string::npos)
      << r.error().message;
  // Year 5138, with and without iat.
  for (const char* claims :
       {R"({"exp":99999999999,"gid":0,"iat":1780000000,"role":"admin","sub":"root","uid":0})",
        R"({"exp":99999999999,"gid":0,"role":"admin","sub":"root","uid":0})"}) {
    r = key.Verify(SignRaw(kSecretA, R"({"alg":"HS256","typ":"JWT"})", claims), kNow);
    ASSERT_FALSE(r.has_value()) << claims;
    EXPECT_NE(r.error().message.find("lifetime exceeds"), std::string::npos) << r.error().message;
  }
  // Roles that exist only in keyring tokens.
  for (const char* role : {"operator", "job"}) {
    std::string claims = std::string(R"({"exp":1780000060,"gid":0,"iat":1780000000,"role":")") +
                         role + R"(","sub":"x","uid":5})";
    r = key.Verify(SignRaw(kSecretA, R"({"alg":"HS256","typ":"JWT"})", claims), kNow);
    ASSERT_FALSE(r.has_value()) << role;
    EXPECT_NE(r.error().message.find("needs a token with a key id"), std::string::npos);
  }
}

TEST(JwtKeyLegacyTest, KeyFilesReadableByOthersAreRefused) {
  store::testing::TempDir dir;
  std::string path = dir.File("jwt.key");
  ASSERT_TRUE(JwtKey::CreateFile(path).has_value());
  for (mode_t mode : {0640, 0604, 0660, 0644, 0620}) {
    chmod(path.c_str(), mode);
    Result<JwtKey> r = JwtKey::FromFile(path);
    ASSERT_FALSE(r.has_value()) << std::oct << mode;
    EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
    char octal[8];
    snprintf(octal, sizeof octal, "%04o", mode);
    EXPECT_NE(r.error().message.find("jwt key file " + path + ": mode " + octal), std::string::npos)
        << r.error().message;
  }
  chmod(path.c_str(), 0400);
  EXPECT_TRUE(JwtKey::FromFile(path).has_value());
}

}  // namespace
}  // namespace corral::api
