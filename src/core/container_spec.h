// The grammar of what a user may ask of a container (`ContainerSpec`, pyxis' `--container-*`
// options): image references, mounts, the container's name and working directory, and the
// names of the variables carried in. The controller checks a spec at submit and at step
// creation (a 400 naming the field); the agent checks it again on the node and builds each
// runtime's command from the parsed parts, never from the raw text, because a container
// runtime runs as root and reads an argument that starts with '-' as an option.
//
// Images (`ParseImageReference`):
//   OCI      [REGISTRY/]REPOSITORY[:TAG][@DIGEST]    docker.io/library/ubuntu:24.04
//   pyxis    [USER@][REGISTRY#]REPOSITORY[:TAG][@DIGEST]   nvcr.io#nvidia/pytorch:24.01-py3
//   scheme   docker://, oras://, library:// before either form (apptainer, enroot)
//   file     an absolute path or one starting with "./" (a squashfs or SIF image)
// following the OCI distribution grammar: REGISTRY is host[:port] (DNS labels; the first
// component of an OCI name is the registry when it holds a '.', ':' or an upper-case letter
// or is "localhost", and a pyxis REGISTRY must be one by that rule);
// REPOSITORY components are [a-z0-9]+ joined by '.', '_', "__" or dashes; TAG is
// [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}; DIGEST is ALGORITHM:HEX (sha256: 64, sha512: 128 lower-case
// hex digits); registry plus repository at most 255 characters. Nothing may start with '-',
// hold blanks or control characters, and the whole reference is at most 1024 bytes.
//
// Mounts (`ParseContainerMount`): SRC[:DST[:FLAGS]] with absolute paths that hold no "." or
// ".." component, no blank, ',' or control character, neither of them "/"; FLAGS joined by
// '+' (pyxis) or ',' from ro, rw, private, rprivate, slave, rslave, nosuid, nodev, noexec,
// bind, rbind (not both ro and rw). Which sources a node lets users mount is the agent's
// configuration (`[container] allow_mounts`), checked there as the job's user.
//
// Value types and pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/result.h"

namespace corral {

inline constexpr size_t kMaxImageReferenceBytes = 1024;
inline constexpr size_t kMaxImageNameBytes = 255;  // registry + '/' + repository (OCI)
inline constexpr size_t kMaxImageTagBytes = 128;
inline constexpr size_t kMaxContainerPathBytes = 4096;
inline constexpr size_t kMaxContainerMounts = 64;
inline constexpr size_t kMaxContainerEnvNames = 256;
inline constexpr size_t kMaxContainerNameBytes = 64;

struct ImageReference {
  enum class Kind { kRegistry, kFile };
  Kind kind = Kind::kRegistry;
  std::string scheme;      // "docker", "oras", "library"; "" = none given
  std::string user;        // pyxis' USER@ (enroot's credentials); "" = none
  std::string registry;    // "nvcr.io", "localhost:5000"; "" = the runtime's default
  std::string repository;  // "nvidia/pytorch"
  std::string tag;         // "" = none
  std::string digest;      // "sha256:..."; "" = none
  std::string path;        // kFile: the image file as given
  bool pyxis = false;      // written REGISTRY#REPOSITORY

  // kRegistry: REGISTRY/REPOSITORY[:TAG][@DIGEST] without scheme or user (what podman and
  // docker take); kFile: the path.
  std::string Reference() const;
  bool operator==(const ImageReference&) const = default;
};

// Parses `image` by the grammar above. Returns kInvalidArgument saying what is wrong (the
// message quotes the text, escaped and shortened).
Result<ImageReference> ParseImageReference(std::string_view image);

struct ContainerMount {
  std::string source;                // absolute, without a trailing '/'
  std::string target;                // the same as `source` when not given
  std::vector<std::string> options;  // as given, in order
  bool read_only() const;
  bool read_write() const;  // "rw" given
  bool operator==(const ContainerMount&) const = default;
};

// Parses one `--container-mounts` entry. Returns kInvalidArgument saying what is wrong.
Result<ContainerMount> ParseContainerMount(std::string_view mount);

// A path inside or outside the container as users write it: absolute, at most
// kMaxContainerPathBytes, no "." or ".." component, no empty component ("//"), no control
// character; with `strict` (mount paths) also no blank and no ','. A trailing '/' is allowed.
// Returns kInvalidArgument saying what is wrong.
Status ValidateContainerPath(std::string_view path, bool strict);

// pyxis' `--container-name`: NAME[:FLAG], NAME [A-Za-z0-9][A-Za-z0-9_.-]* of at most
// kMaxContainerNameBytes, FLAG [a-z_]+ (which flags Corral supports is the controller's).
// Returns kInvalidArgument saying what is wrong.
Status ValidateContainerName(std::string_view name);

// Every field of `spec`: the image (when given), each mount (at most kMaxContainerMounts),
// the working directory, the name and the variable names ([A-Za-z_][A-Za-z0-9_]*, at most
// kMaxContainerEnvNames). Returns kInvalidArgument naming the field ("container.image: ...",
// "container.mounts: ...", "container.workdir: ...", "container.name: ...",
// "container.env: ...").
Status ValidateContainerSpec(const ContainerSpec& spec);

}  // namespace corral
