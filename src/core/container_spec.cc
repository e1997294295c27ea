#include "core/container_spec.h"

#include <algorithm>
#include <array>

#include "core/strings.h"

namespace corral {
namespace {

bool Lowercase(char c) { return c >= 'a' && c <= 'z'; }
bool Digit(char c) { return c >= '0' && c <= '9'; }
bool Alpha(char c) { return Lowercase(c) || (c >= 'A' && c <= 'Z'); }
bool Alnum(char c) { return Alpha(c) || Digit(c); }
bool LowerAlnum(char c) { return Lowercase(c) || Digit(c); }
bool Control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }
bool Blank(char c) { return c == ' ' || c == '\t'; }
bool LowerHex(char c) { return Digit(c) || (c >= 'a' && c <= 'f'); }

// `s` quoted for an error message: at most 80 bytes, control and non-ASCII bytes as \xNN.
std::string Shown(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > 80) out += "...";
  return out + "\"";
}

tl::unexpected<Error> Bad(std::string_view what, std::string_view text, std::string_view why) {
  return InvalidArgument(std::string(what) + " " + Shown(text) + ": " + std::string(why));
}

// A DNS label: [A-Za-z0-9] or [A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9].
bool DomainLabel(std::string_view s) {
  if (s.empty() || s.size() > 63 || !Alnum(s.front()) || !Alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return Alnum(c) || c == '-'; });
}

// host[:port].
bool Registry(std::string_view s) {
  std::string_view host = s;
  if (size_t colon = s.find(':'); colon != std::string_view::npos) {
    host = s.substr(0, colon);
    std::optional<uint64_t> port = ParseUint(s.substr(colon + 1));
    if (!port || *port == 0 || *port > 65535 || s.size() - colon - 1 > 5) return false;
  }
  if (host.empty() || host.size() > 253) return false;
  for (const std::string& label : Split(host, '.')) {
    if (!DomainLabel(label)) return false;
  }
  return true;
}

// A repository path component: [a-z0-9]+ separated by '.', '_', "__" or one or more '-'.
bool PathComponent(std::string_view s) {
  if (s.empty() || !LowerAlnum(s.front()) || !LowerAlnum(s.back())) return false;
  for (size_t i = 0; i < s.size();) {
    if (LowerAlnum(s[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && !LowerAlnum(s[j])) ++j;
    std::string_view sep = s.substr(i, j - i);
    bool dashes = std::all_of(sep.begin(), sep.end(), [](char c) { return c == '-'; });
    if (sep != "." && sep != "_" && sep != "__" && !dashes) return false;
    i = j;
  }
  return true;
}

// Whether the first component of an OCI name is a registry rather than part of the
// repository (docker's rule: a '.' or ':', "localhost", or an upper-case letter).
bool NamesARegistry(std::string_view head) {
  return head.find_first_of(".:") != std::string_view::npos || head == "localhost" ||
         std::any_of(head.begin(), head.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

bool Repository(std::string_view s) {
  for (const std::string& c : Split(s, '/')) {
    if (!PathComponent(c)) return false;
  }
  return true;
}

bool Tag(std::string_view s) {
  if (s.empty() || s.size() > kMaxImageTagBytes) return false;
  if (!Alnum(s.front()) && s.front() != '_') return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return Alnum(c) || c == '_' || c == '.' || c == '-'; });
}

// ALGORITHM:ENCODED; sha256 and sha512 are checked for their exact hex form.
std::string DigestProblem(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0)
    return "a digest is ALGORITHM:HEX (sha256:...)";
  std::string_view algorithm = s.substr(0, colon), encoded = s.substr(colon + 1);
  if (!LowerAlnum(algorithm.front()) || !LowerAlnum(algorithm.back()) ||
      !std::all_of(algorithm.begin(), algorithm.end(), [](char c) {
        return LowerAlnum(c) || c == '+' || c == '.' || c == '_' || c == '-';
      })) {
    return "bad digest algorithm";
  }
  size_t want = algorithm == "sha256" ? 64 : algorithm == "sha512" ? 128 : 0;
  if (want != 0) {
    if (encoded.size() != want || !std::all_of(encoded.begin(), encoded.end(), LowerHex))
      return "a " + std::string(algorithm) + " digest is " + std::to_string(want) +
             " lower-case hex digits";
    return "";
  }
  if (encoded.size() < 32 || encoded.size() > 1024 ||
      !std::all_of(encoded.begin(), encoded.end(),
                   [](char c) { return Alnum(c) || c == '=' || c == '_' || c == '-'; })) {
    return "bad digest";
  }
  return "";
}

// REPOSITORY[:TAG][@DIGEST] into `ref`; returns why not, or "".
std::string ParseNameTagDigest(std::string_view s, bool registry_allowed, ImageReference* ref) {
  if (size_t at = s.find('@'); at != std::string_view::npos) {
    ref->digest = std::string(s.substr(at + 1));
    if (std::string why = DigestProblem(ref->digest); !why.empty()) return why;
    s = s.substr(0, at);
  }
  size_t slash = s.rfind('/');
  size_t colon = s.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    ref->tag = std::string(s.substr(colon + 1));
    if (!Tag(ref->tag)) return "a tag is [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}";
    s = s.substr(0, colon);
  }
  if (registry_allowed) {
    size_t first = s.find('/');
    if (first != std::string_view::npos) {
      std::string_view head = s.substr(0, first);
      if (NamesARegistry(head)) {
        ref->registry = std::string(head);
        if (!Registry(ref->registry)) return "bad registry host[:port]";
        s = s.substr(first + 1);
      }
    }
  }
  ref->repository = std::string(s);
  if (!Repository(ref->repository)) {
    return "a repository is lower-case [a-z0-9] components joined by '/', '.', '_' or '-'";
  }
  size_t name = ref->repository.size() + (ref->registry.empty() ? 0 : ref->registry.size() + 1);
  if (name > kMaxImageNameBytes) return "the name is longer than 255 characters";
  return "";
}

}  // namespace

std::string ImageReference::Reference() const {
  if (kind == Kind::kFile) return path;
  std::string out = registry.empty() ? repository : registry + "/" + repository;
  if (!tag.empty()) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

Result<ImageReference> ParseImageReference(std::string_view image) {
  const char* what = "image";
  if (image.empty()) return InvalidArgument("image: empty");
  if (image.size() > kMaxImageReferenceBytes)
    return Bad(what, image, "longer than " + std::to_string(kMaxImageReferenceBytes) + " bytes");
  if (image.front() == '-') return Bad(what, image, "an image cannot start with '-'");
  if (std::any_of(image.begin(), image.end(), [](char c) { return Control(c) || Blank(c); }))
    return Bad(what, image, "holds a blank or control character");
  ImageReference ref;
  std::string_view rest = image;
  if (size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
    ref.scheme = std::string(rest.substr(0, scheme));
    if (ref.scheme != "docker" && ref.scheme != "oras" && ref.scheme != "library")
      return Bad(what, image, "the scheme must be docker://, oras:// or library://");
    rest = rest.substr(scheme + 3);
  } else if (rest.front() == '/' || rest.rfind("./", 0) == 0) {
    ref.kind = ImageReference::Kind::kFile;
    ref.path = std::string(rest);
    std::string_view abs = rest.front() == '/' ? rest : rest.substr(1);
    if (Status s = ValidateContainerPath(abs, false); !s) return Bad(what, image, "bad file path");
    if (rest.back() == '/') return Bad(what, image, "an image file cannot end with '/'");
    return ref;
  }
  if (rest.empty()) return Bad(what, image, "no image after the scheme");
  std::string why;
  if (size_t hash = rest.find('#'); hash != std::string_view::npos) {
    ref.pyxis = true;
    std::string_view left = rest.substr(0, hash);
    if (size_t at = left.find('@'); at != std::string_view::npos) {
      ref.user = std::string(left.substr(0, at));
      left = left.substr(at + 1);
      bool user_ok = !ref.user.empty() && ref.user.size() <= 255 &&
                     std::all_of(ref.user.begin(), ref.user.end(), [](char c) {
                       return Alnum(c) || c == '$' || c == '.' || c == '_' || c == '-';
                     });
      if (!user_ok) return Bad(what, image, "a user is [A-Za-z0-9$._-]+");
    }
    ref.registry = std::string(left);
    if (!Registry(ref.registry)) return Bad(what, image, "bad registry host[:port] before '#'");
    // Written REGISTRY/IMAGE for podman and docker, it must still name a registry there
    // (else "myhost#x" would become docker.io's "myhost/x").
    if (!NamesARegistry(ref.registry))
      return Bad(what, image, "a registry holds a '.' or ':' or is localhost");
    why = ParseNameTagDigest(rest.substr(hash + 1), /*registry_allowed=*/false, &ref);
  } else {
    why = ParseNameTagDigest(rest, /*registry_allowed=*/true, &ref);
  }
  if (!why.empty()) return Bad(what, image, why);
  return ref;
}

bool ContainerMount::read_only() const {
  return std::find(options.begin(), options.end(), "ro") != options.end();
}
bool ContainerMount::read_write() const {
  return std::find(options.begin(), options.end(), "rw") != options.end();
}

Status ValidateContainerPath(std::string_view path, bool strict) {
  const char* what = "path";
  if (path.empty() || path.front() != '/') return Bad(what, path, "not an absolute path");
  if (path.size() > kMaxContainerPathBytes) return Bad(what, path, "too long");
  for (char c : path) {
    if (Control(c)) return Bad(what, path, "holds a control character");
    if (strict && (Blank(c) || c == ',' || c == ':'))
      return Bad(what, path, "a mount path cannot hold a blank, ',' or ':'");
  }
  std::string_view body = path.substr(1);
  if (!body.empty() && body.back() == '/') body.remove_suffix(1);
  if (body.empty()) return {};
  for (const std::string& part : Split(body, '/')) {
    if (part.empty()) return Bad(what, path, "has an empty component (\"//\")");
    if (part == "." || part == "..") return Bad(what, path, "has a \".\" or \"..\" component");
  }
  return {};
}

Result<ContainerMount> ParseContainerMount(std::string_view mount) {
  const char* what = "mount";
  std::vector<std::string> parts = Split(mount, ':');
  if (mount.empty() || parts.size() > 3)
    return Bad(what, mount, "a mount is SRC[:DST[:FLAGS]] with absolute paths");
  ContainerMount m;
  auto clean = [](std::string p) {
    if (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
  };
  for (size_t i = 0; i < std::min<size_t>(parts.size(), 2); ++i) {
    if (Status s = ValidateContainerPath(parts[i], /*strict=*/true); !s)
      return Bad(what, mount, (i == 0 ? "source " : "destination ") + s.error().message);
    if (clean(parts[i]) == "/")
      return Bad(what, mount,
                 i == 0 ? "the root directory cannot be mounted"
                        : "nothing can be mounted over the container's root");
  }
  m.source = clean(parts[0]);
  m.target = parts.size() > 1 ? clean(parts[1]) : m.source;
  if (parts.size() == 3) {
    static constexpr std::array<std::string_view, 11> kAllowed = {
        "ro",     "rw",    "private", "rprivate", "slave", "rslave",
        "nosuid", "nodev", "noexec",  "bind",     "rbind"};
    std::string flags = parts[2];
    std::replace(flags.begin(), flags.end(), '+', ',');
    for (const std::string& f : Split(flags, ',')) {
      if (std::find(kAllowed.begin(), kAllowed.end(), f) == kAllowed.end()) {
        return Bad(what, mount,
                   "flag " + Shown(f) +
                       " is not one of ro, rw, private, rprivate, slave, rslave, nosuid, nodev, "
                       "noexec, bind, rbind");
      }
      if (std::find(m.options.begin(), m.options.end(), f) != m.options.end())
        return Bad(what, mount, "flag " + f + " given twice");
      m.options.push_back(f);
    }
    if (m.read_only() && m.read_write()) return Bad(what, mount, "both ro and rw");
  }
  return m;
}

Status ValidateContainerName(std::string_view name) {
  const char* what = "name";
  std::string_view base = name, flag;
  if (size_t colon = name.find(':'); colon != std::string_view::npos) {
    base = name.substr(0, colon);
    flag = name.substr(colon + 1);
    if (flag.empty() ||
        !std::all_of(flag.begin(), flag.end(), [](char c) { return Lowercase(c) || c == '_'; }))
      return Bad(what, name, "a flag after ':' is [a-z_]+");
  }
  if (base.empty() || base.size() > kMaxContainerNameBytes || !Alnum(base.front()) ||
      !std::all_of(base.begin(), base.end(),
                   [](char c) { return Alnum(c) || c == '_' || c == '.' || c == '-'; })) {
    return Bad(what, name, "a name is [A-Za-z0-9][A-Za-z0-9_.-]*, at most 64 characters");
  }
  return {};
}

Status ValidateContainerSpec(const ContainerSpec& spec) {
  auto field = [](const char* name, const Error& e) { return Annotate(e, name); };
  if (!spec.image.empty()) {
    if (auto r = ParseImageReference(spec.image); !r) return field("container.image", r.error());
  }
  if (spec.mounts.size() > kMaxContainerMounts) {
    return InvalidArgument("container.mounts: " + std::to_string(spec.mounts.size()) +
                           " mounts are over the limit of " + std::to_string(kMaxContainerMounts));
  }
  for (const std::string& m : spec.mounts) {
    if (auto r = ParseContainerMount(m); !r) return field("container.mounts", r.error());
  }
  if (!spec.workdir.empty()) {
    if (Status s = ValidateContainerPath(spec.workdir, false); !s)
      return field("container.workdir", s.error());
  }
  if (!spec.name.empty()) {
    if (Status s = ValidateContainerName(spec.name); !s) return field("container.name", s.error());
  }
  if (spec.env.size() > kMaxContainerEnvNames) {
    return InvalidArgument("container.env: " + std::to_string(spec.env.size()) +
                           " names are over the limit of " + std::to_string(kMaxContainerEnvNames));
  }
  for (const std::string& n : spec.env) {
    bool ok = !n.empty() && n.size() <= 256 && (Alpha(n.front()) || n.front() == '_') &&
              std::all_of(n.begin(), n.end(), [](char c) { return Alnum(c) || c == '_'; });
    if (!ok) return Bad("container.env:", n, "a variable name is [A-Za-z_][A-Za-z0-9_]*");
  }
  return {};
}

}  // namespace corral
