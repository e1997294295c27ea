#include "api/internal/http_wire.h"

#include <algorithm>
#include <cstring>

#include "core/strings.h"

namespace corral::api::internal {
namespace {

bool IsTchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Optional white space around a header value: spaces and tabs only (a CR left inside a
// value is a control character, refused, not trimmed).
std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The next line of `*text` without its line end; advances past it.
std::string_view NextLine(std::string_view* text) {
  size_t nl = text->find('\n');
  std::string_view line = text->substr(0, nl);
  text->remove_prefix(nl == std::string_view::npos ? text->size() : nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

bool IsToken(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTchar); }

bool HasControlChars(std::string_view s, bool allow_tab) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && !(allow_tab && c == '\t')) || u == 0x7f) return true;
  }
  return false;
}

bool HasToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    if (EqualsIgnoreCase(Trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::string LastToken(std::string_view value) {
  size_t comma = value.rfind(',');
  return Lower(Trim(comma == std::string_view::npos ? value : value.substr(comma + 1)));
}

std::optional<uint64_t> ParseContentLength(std::string_view s) {
  std::optional<uint64_t> v = ParseUint(s);
  if (!v && !s.empty() && std::all_of(s.begin(), s.end(), IsDigit)) return UINT64_MAX;
  return v;
}

std::string ParseHeaderLines(std::string_view text, HeaderMap* headers) {
  while (!text.empty()) {
    std::string_view line = NextLine(&text);
    if (line.empty()) {
      if (text.empty()) break;  // the blank line that ends the head
      return "empty header line";
    }
    if (line.front() == ' ' || line.front() == '\t') return "obsolete header line folding";
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return "header line without a colon";
    std::string_view name = line.substr(0, colon);
    if (!IsToken(name)) return "invalid header name";
    std::string_view value = TrimOws(line.substr(colon + 1));
    if (HasControlChars(value, /*allow_tab=*/true)) return "control character in a header value";
    std::string key = Lower(name);
    auto [it, inserted] = headers->try_emplace(key, value);
    if (!inserted) {
      if (key == "content-length") {
        if (it->second != value) return "conflicting Content-Length headers";
      } else if (key == "host") {
        return "more than one Host header";
      } else {
        it->second.append(", ").append(value);
      }
    }
  }
  return "";
}

// --- HeadCollector --------------------------------------------------------------------------

void HeadCollector::Reset() {
  buf_.clear();
  if (buf_.capacity() > 4096) buf_.shrink_to_fit();  // idle connections keep no big buffers
  line_start_ = 0;
  lines_ = 0;
}

bool HeadCollector::Collect(std::string_view data, const WireLimits& limits, size_t* consumed,
                            WireError* error) {
  size_t i = 0;
  if (skip_leading_ && buf_.empty()) {
    while (i < data.size() && (data[i] == '\r' || data[i] == '\n')) ++i;
  }
  while (i < data.size()) {
    size_t nl = data.find('\n', i);
    size_t take = nl == std::string_view::npos ? data.size() - i : nl + 1 - i;
    if (buf_.size() + take > limits.max_head_bytes) {
      *consumed = i;
      *error = {431, "request line and headers exceed " + std::to_string(limits.max_head_bytes) +
                         " bytes"};
      return false;
    }
    buf_.append(data.substr(i, take));
    i += take;
    if (nl == std::string_view::npos) break;
    // A line ended at the end of `buf_`.
    size_t end = buf_.size() - 1;
    bool crlf = end > line_start_ && buf_[end - 1] == '\r';
    if (strict_ && !crlf) {
      *consumed = i;
      *error = {400, "bad request: bare LF line ending"};
      return false;
    }
    size_t length = end - line_start_ - (crlf ? 1 : 0);
    line_start_ = buf_.size();
    if (length == 0) {
      *consumed = i;
      return true;
    }
    if (++lines_ > limits.max_header_count + 1) {
      *consumed = i;
      *error = {431, "more than " + std::to_string(limits.max_header_count) + " header lines"};
      return false;
    }
  }
  *consumed = i;
  return false;
}

// --- BodyReader -----------------------------------------------------------------------------

void BodyReader::Start(Mode mode, uint64_t length, const WireLimits& limits) {
  mode_ = mode;
  received_ = 0;
  remaining_ = length;
  max_body_ = limits.max_body_bytes;
  max_line_ = limits.max_chunk_line;
  max_trailers_ = limits.max_head_bytes;
  trailer_bytes_ = 0;
  line_.clear();
  switch (mode) {
    case Mode::kNone:
      state_ = State::kDone;
      break;
    case Mode::kLength:
      state_ = length == 0 ? State::kDone : State::kData;
      break;
    case Mode::kChunked:
      state_ = State::kChunkSize;
      break;
    case Mode::kUntilClose:
      state_ = State::kData;
      break;
  }
}

WireStep BodyReader::Parse(std::string_view data, WireError* error) {
  size_t i = 0;
  auto fail = [&](std::string message) {
    *error = {400, std::move(message)};
    return WireStep{WireEvent::kError, i, {}};
  };
  // Collects a line into `line_`; true once it ended.
  auto collect_line = [&](size_t max) -> int {
    size_t nl = data.find('\n', i);
    size_t take = nl == std::string_view::npos ? data.size() - i : nl - i;
    if (line_.size() + take > max) return -1;
    line_.append(data.substr(i, take));
    i += take;
    if (nl == std::string_view::npos) return 0;
    ++i;  // the LF
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    return 1;
  };
  while (true) {
    switch (state_) {
      case State::kDone:
        return {WireEvent::kDone, i, {}};
      case State::kData:
      case State::kChunkData: {
        if (i == data.size()) return {WireEvent::kNeedMore, i, {}};
        // Until close, the limit is reached exactly and the next byte is the error, so that
        // the outcome does not depend on how the input was cut.
        uint64_t cap = mode_ == Mode::kUntilClose ? max_body_ - received_ : remaining_;
        if (cap == 0) {
          *error = {413, "body exceeds " + std::to_string(max_body_) + " bytes"};
          return {WireEvent::kError, i, {}};
        }
        size_t n = static_cast<size_t>(std::min<uint64_t>(data.size() - i, cap));
        std::string_view piece = data.substr(i, n);
        i += n;
        received_ += n;
        if (mode_ != Mode::kUntilClose) {
          remaining_ -= n;
          if (remaining_ == 0) state_ = state_ == State::kData ? State::kDone : State::kChunkEnd;
        }
        return {WireEvent::kBody, i, piece};
      }
      case State::kChunkSize: {
        int got = collect_line(max_line_);
        if (got < 0) return fail("chunk line too long");
        if (got == 0) return {WireEvent::kNeedMore, i, {}};
        std::string_view size_text = Trim(std::string_view(line_).substr(0, line_.find(';')));
        if (size_text.empty() || size_text.size() > 15) return fail("malformed chunk size");
        uint64_t size = 0;
        for (char c : size_text) {
          int v = HexValue(c);
          if (v < 0) return fail("malformed chunk size");
          size = size * 16 + static_cast<uint64_t>(v);
        }
        line_.clear();
        if (size == 0) {
          state_ = State::kTrailers;
          break;
        }
        if (received_ + size > max_body_) {
          *error = {413, "body exceeds " + std::to_string(max_body_) + " bytes"};
          return {WireEvent::kError, i, {}};
        }
        remaining_ = size;
        state_ = State::kChunkData;
        break;
      }
      case State::kChunkEnd: {
        int got = collect_line(2);
        if (got < 0 || (got == 1 && !line_.empty())) return fail("missing chunk end");
        if (got == 0) return {WireEvent::kNeedMore, i, {}};
        state_ = State::kChunkSize;
        break;
      }
      case State::kTrailers: {
        size_t before = i;
        int got = collect_line(max_line_);
        trailer_bytes_ += i - before;
        if (got < 0 || trailer_bytes_ > max_trailers_) return fail("trailers too large");
        if (got == 0) return {WireEvent::kNeedMore, i, {}};
        bool end = line_.empty();
        line_.clear();
        if (end) state_ = State::kDone;
        break;
      }
    }
  }
}

// --- RequestParser --------------------------------------------------------------------------

RequestParser::RequestParser(WireLimits limits) : limits_(limits) {}

void RequestParser::Reset() {
  state_ = State::kHead;
  collector_.Reset();
  head_ = WireRequestHead{};
  error_ = WireError{};
}

WireStep RequestParser::Fail(int status, std::string message, size_t consumed) {
  state_ = State::kError;
  error_ = {status, std::move(message)};
  return {WireEvent::kError, consumed, {}};
}

bool RequestParser::LimitBody(uint64_t max_body_bytes) {
  if (head_.content_length > max_body_bytes) {
    Fail(413,
         "request body of " + std::to_string(head_.content_length) +
             " bytes exceeds the limit of " + std::to_string(max_body_bytes) + " bytes",
         0);
    return false;
  }
  WireLimits limits = limits_;
  limits.max_body_bytes = max_body_bytes;
  body_.Start(head_.chunked ? BodyReader::Mode::kChunked : BodyReader::Mode::kLength,
              head_.content_length, limits);
  return true;
}

WireStep RequestParser::Parse(std::string_view data) {
  switch (state_) {
    case State::kHead: {
      size_t used = 0;
      WireError e;
      if (!collector_.Collect(data, limits_, &used, &e)) {
        if (!e.message.empty()) return Fail(e.status, std::move(e.message), used);
        return {WireEvent::kNeedMore, used, {}};
      }
      if (!ParseHead(collector_.head())) return {WireEvent::kError, used, {}};
      state_ = State::kHeadDone;
      return {WireEvent::kHead, used, {}};
    }
    case State::kHeadDone:
    case State::kBody: {
      state_ = State::kBody;
      WireError e;
      WireStep step = body_.Parse(data, &e);
      if (step.event == WireEvent::kError) {
        return Fail(e.status,
                    e.status == 413 ? "request " + e.message : "bad request: " + e.message,
                    step.consumed);
      }
      if (step.event == WireEvent::kDone) state_ = State::kDone;
      return step;
    }
    case State::kDone:
      return {WireEvent::kDone, 0, {}};
    case State::kError:
      return {WireEvent::kError, 0, {}};
  }
  return {WireEvent::kError, 0, {}};
}

bool RequestParser::ParseHead(std::string_view text) {
  auto bad = [this](std::string message) {
    Fail(400, "bad request: " + std::move(message), 0);
    return false;
  };
  // Request line: METHOD SP request-target SP HTTP-version.
  std::string_view line = NextLine(&text);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return bad("malformed request line");
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return bad("invalid method");
  WireRequestHead& r = head_;
  if (version == "HTTP/1.1") {
    r.http10 = false;
  } else if (version == "HTTP/1.0") {
    r.http10 = true;
  } else if (version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[6] == '.' &&
             IsDigit(version[5]) && IsDigit(version[7])) {
    Fail(505, "http version not supported", 0);
    return false;
  } else {
    return bad("malformed http version");
  }
  if (target.empty() || HasControlChars(target, false)) return bad("invalid request target");
  if (target.substr(0, 7) == "http://" || target.substr(0, 8) == "https://") {
    size_t authority = target.find("//") + 2;
    size_t slash = target.find('/', authority);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (target.front() != '/') return bad("request target must start with \"/\"");
  size_t question = target.find('?');
  r.method = std::string(method);
  r.raw_path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) r.raw_query = std::string(target.substr(question + 1));

  std::string err = ParseHeaderLines(text, &r.headers);
  if (!err.empty()) return bad(err);
  if (!r.http10 && r.headers.count("host") == 0) return bad("HTTP/1.1 request without Host");

  auto it = r.headers.find("connection");
  if (r.http10) {
    r.keep_alive = it != r.headers.end() && HasToken(it->second, "keep-alive");
  } else {
    r.keep_alive = it == r.headers.end() || !HasToken(it->second, "close");
  }
  if (auto te = r.headers.find("transfer-encoding"); te != r.headers.end()) {
    r.has_transfer_encoding = true;
    r.chunked = LastToken(te->second) == "chunked";
    if (!r.chunked) {
      Fail(501, "transfer-encoding \"" + te->second + "\" is not supported", 0);
      return false;
    }
  } else if (auto cl = r.headers.find("content-length"); cl != r.headers.end()) {
    std::optional<uint64_t> n = ParseContentLength(cl->second);
    if (!n) return bad("invalid Content-Length");
    r.content_length = *n;
  }
  if (auto ex = r.headers.find("expect"); ex != r.headers.end()) {
    r.expect = ex->second;
    if (!EqualsIgnoreCase(ex->second, "100-continue")) {
      Fail(417, "expectation \"" + ex->second + "\" is not supported", 0);
      return false;
    }
    r.expect_continue = !r.http10;
  }
  if (!r.chunked && r.content_length > limits_.max_body_bytes) {
    Fail(413,
         "request body of " + r.headers["content-length"] + " bytes exceeds the limit of " +
             std::to_string(limits_.max_body_bytes) + " bytes",
         0);
    return false;
  }
  body_.Start(r.chunked ? BodyReader::Mode::kChunked : BodyReader::Mode::kLength, r.content_length,
              limits_);
  return true;
}

// --- ResponseParser -------------------------------------------------------------------------

ResponseParser::ResponseParser(WireLimits limits) : limits_(limits) {}

void ResponseParser::Reset() {
  state_ = State::kHead;
  head_request_ = false;
  collector_.Reset();
  head_ = WireResponseHead{};
  error_ = WireError{};
}

WireStep ResponseParser::Fail(std::string message, size_t consumed) {
  state_ = State::kError;
  error_ = {400, std::move(message)};
  return {WireEvent::kError, consumed, {}};
}

bool ResponseParser::FinishOnClose() {
  if ((state_ == State::kBody || state_ == State::kHeadDone) && body_.FinishOnClose()) {
    state_ = State::kDone;
    return true;
  }
  return state_ == State::kDone;
}

WireStep ResponseParser::Parse(std::string_view data) {
  size_t total = 0;
  while (true) {
    switch (state_) {
      case State::kHead: {
        size_t used = 0;
        WireError e;
        bool complete = collector_.Collect(data.substr(total), limits_, &used, &e);
        total += used;
        if (!e.message.empty()) return Fail("response head too large", total);
        if (!complete) return {WireEvent::kNeedMore, total, {}};
        if (!ParseHead(collector_.head())) return {WireEvent::kError, total, {}};
        collector_.Reset();
        if (head_.status < 200) {  // an interim answer: the real one follows
          head_ = WireResponseHead{};
          continue;
        }
        state_ = State::kHeadDone;
        return {WireEvent::kHead, total, {}};
      }
      case State::kHeadDone:
      case State::kBody: {
        state_ = State::kBody;
        WireError e;
        WireStep step = body_.Parse(data.substr(total), &e);
        step.consumed += total;
        if (step.event == WireEvent::kError) {
          return Fail(e.status == 413 ? "response body too large"
                                      : "malformed chunked response: " + e.message,
                      step.consumed);
        }
        if (step.event == WireEvent::kDone) state_ = State::kDone;
        return step;
      }
      case State::kDone:
        return {WireEvent::kDone, total, {}};
      case State::kError:
        return {WireEvent::kError, total, {}};
    }
  }
}

bool ResponseParser::ParseHead(std::string_view text) {
  std::string_view line = NextLine(&text);
  if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || (line[7] != '0' && line[7] != '1') ||
      line[8] != ' ' || !IsDigit(line[9]) || !IsDigit(line[10]) || !IsDigit(line[11]) ||
      (line.size() > 12 && line[12] != ' ')) {
    Fail("malformed response status line", 0);
    return false;
  }
  WireResponseHead& r = head_;
  r.http10 = line[7] == '0';
  r.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  if (r.status < 100) {
    Fail("malformed response status line", 0);
    return false;
  }
  if (r.status == 101) {
    Fail("unexpected protocol switch", 0);
    return false;
  }
  std::string err = ParseHeaderLines(text, &r.headers);
  if (!err.empty()) {
    Fail("malformed response: " + err, 0);
    return false;
  }
  if (r.status < 200) return true;
  auto header = [&r](const char* name) -> const std::string* {
    auto it = r.headers.find(name);
    return it == r.headers.end() ? nullptr : &it->second;
  };
  const std::string* connection = header("connection");
  r.keep_alive = r.http10 ? (connection != nullptr && HasToken(*connection, "keep-alive"))
                          : (connection == nullptr || !HasToken(*connection, "close"));
  const std::string* te = header("transfer-encoding");
  const std::string* cl = header("content-length");
  if (head_request_ || r.status == 204 || r.status == 304) {
    body_.Start(BodyReader::Mode::kNone, 0, limits_);
  } else if (te != nullptr && LastToken(*te) == "chunked") {
    body_.Start(BodyReader::Mode::kChunked, 0, limits_);
  } else if (te == nullptr && cl != nullptr) {
    std::optional<uint64_t> n = ParseContentLength(*cl);
    if (!n) {
      Fail("malformed response: invalid Content-Length", 0);
      return false;
    }
    if (*n > limits_.max_body_bytes) {
      Fail("response body too large (" + *cl + " bytes)", 0);
      return false;
    }
    body_.Start(BodyReader::Mode::kLength, *n, limits_);
  } else {
    // Neither length nor chunks: the body ends when the server closes.
    r.until_close = true;
    r.keep_alive = false;
    body_.Start(BodyReader::Mode::kUntilClose, 0, limits_);
  }
  return true;
}

}  // namespace corral::api::internal
