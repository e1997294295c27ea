#include "core/container_spec.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

const std::string kSha256(64, 'a');

ImageReference Parsed(const std::string& image) {
  auto r = ParseImageReference(image);
  EXPECT_TRUE(r.has_value()) << image << ": " << r.error().message;
  return r.value_or(ImageReference{});
}

std::string Why(const std::string& image) {
  auto r = ParseImageReference(image);
  return r ? std::string("accepted") : r.error().message;
}

TEST(ContainerSpecTest, ParsesOciPyxisSchemeAndFileImages) {
  ImageReference oci = Parsed("docker.io/library/ubuntu:24.04");
  EXPECT_EQ(oci.registry, "docker.io");
  EXPECT_EQ(oci.repository, "library/ubuntu");
  EXPECT_EQ(oci.tag, "24.04");
  EXPECT_EQ(oci.Reference(), "docker.io/library/ubuntu:24.04");

  ImageReference port = Parsed("localhost:5000/team/model-server__v2:1.0@sha256:" + kSha256);
  EXPECT_EQ(port.registry, "localhost:5000");
  EXPECT_EQ(port.repository, "team/model-server__v2");
  EXPECT_EQ(port.tag, "1.0");
  EXPECT_EQ(port.digest, "sha256:" + kSha256);

  ImageReference bare = Parsed("ubuntu");  // no registry: the runtime's default
  EXPECT_EQ(bare.registry, "");
  EXPECT_EQ(bare.Reference(), "ubuntu");
  EXPECT_EQ(Parsed("library/ubuntu").registry, "");           // "library" is no host
  EXPECT_EQ(Parsed("Registry/team/x").registry, "Registry");  // upper case: a host (docker)
  EXPECT_EQ(Parsed("localhost#x").Reference(), "localhost/x");

  ImageReference pyxis = Parsed("$oauthtoken@nvcr.io#nvidia/pytorch:24.01-py3");
  EXPECT_TRUE(pyxis.pyxis);
  EXPECT_EQ(pyxis.user, "$oauthtoken");
  EXPECT_EQ(pyxis.registry, "nvcr.io");
  EXPECT_EQ(pyxis.Reference(), "nvcr.io/nvidia/pytorch:24.01-py3");  // no user

  ImageReference scheme = Parsed("docker://nvcr.io#nvidia/pytorch:24.01-py3");
  EXPECT_EQ(scheme.scheme, "docker");
  EXPECT_EQ(scheme.Reference(), "nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(Parsed("oras://ghcr.io/x/y:1").scheme, "oras");
  EXPECT_EQ(Parsed("library://sylabsed/examples/lolcow:latest").repository,
            "sylabsed/examples/lolcow");

  ImageReference file = Parsed("/images/pytorch-24.01.sqsh");
  EXPECT_EQ(file.kind, ImageReference::Kind::kFile);
  EXPECT_EQ(file.Reference(), "/images/pytorch-24.01.sqsh");
  EXPECT_EQ(Parsed("./pytorch.sif").kind, ImageReference::Kind::kFile);
}

// What a user could type to make a root runtime read something else than an image.
TEST(ContainerSpecTest, RefusesImagesThatAreOptionsOrBreakTheGrammar) {
  for (const std::string& hostile : {
           std::string("--user=0:0"),
           std::string("-v/:/host"),
           std::string("--privileged"),
           std::string("ubuntu --privileged"),  // a blank
           std::string("ubuntu\n--privileged"),
           std::string("UBUNTU"),     // upper case repository
           std::string("ubuntu:"),    // empty tag
           std::string("ubuntu:-x"),  // a tag cannot start with '-'
           std::string("ubuntu:" + std::string(129, 'a')),
           std::string("ubuntu@sha256:abcd"),  // a short digest
           std::string("ubuntu@sha256:" + std::string(64, 'G')),
           std::string("ubuntu@md5"),
           std::string("-x.io/ubuntu"),
           std::string("host.io:99999/ubuntu"),  // port out of range
           std::string("nvcr.io#-x"),
           std::string("-u@nvcr.io#x"),
           std::string("myhost#team/image"),  // podman would read docker.io/myhost/team/image
           std::string("a b@nvcr.io#x"),
           std::string("oci-archive:/etc/shadow"),  // podman transports
           std::string("docker-archive:/root/x.tar"),
           std::string("dir:/root"),
           std::string("file:///etc/shadow"),
           std::string("docker://"),
           std::string("/images/../../etc/shadow"),
           std::string("/images/"),
           std::string("library//x"),
           std::string(std::string(256, 'a')),  // name over 255 characters
           std::string(1025, 'a'),
       }) {
    EXPECT_FALSE(ParseImageReference(hostile).has_value()) << hostile;
  }
  EXPECT_EQ(Why("--user=0:0"), "image \"--user=0:0\": an image cannot start with '-'");
  EXPECT_EQ(Why("a\nb"), "image \"a\\x0ab\": holds a blank or control character");
  EXPECT_EQ(Why(""), "image: empty");
}

TEST(ContainerSpecTest, ParsesMountsAndRefusesHostileOnes) {
  auto m = ParseContainerMount("/datasets/imagenet:/data:ro+rprivate");
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->source, "/datasets/imagenet");
  EXPECT_EQ(m->target, "/data");
  EXPECT_EQ(m->options, (std::vector<std::string>{"ro", "rprivate"}));
  EXPECT_TRUE(m->read_only());
  auto same = ParseContainerMount("/scratch/alice/");
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->source, "/scratch/alice");
  EXPECT_EQ(same->target, "/scratch/alice");
  EXPECT_TRUE(same->options.empty());

  for (const char* hostile : {
           "/:/host",  // the whole host
           "//:/host",
           "/data:/",  // over the container's root
           "relative:/x",
           "/data/../etc:/x",  // ".."
           "/data/./x:/x",
           "/data//x:/x",
           "/data:/x:ro:extra",  // options smuggled through ':'
           "/data:/x:U",         // podman: chown the source
           "/data:/x:z",         // SELinux relabelling of the host path
           "/data:/x:O",         // overlay
           "/data:/x:ro+rw",
           "/data:/x:ro+ro",
           "/a,/etc:/b",  // apptainer splits --bind at ','
           "/a b:/b",     // enroot splits at blanks
           "/a\n:/b",
           "",
       }) {
    EXPECT_FALSE(ParseContainerMount(hostile).has_value()) << hostile;
  }
  EXPECT_EQ(ParseContainerMount("/:/host").error().message,
            "mount \"/:/host\": the root directory cannot be mounted");
}

TEST(ContainerSpecTest, ValidatesNames) {
  EXPECT_TRUE(ValidateContainerName("train").has_value());
  EXPECT_TRUE(ValidateContainerName("train-1.v2_x").has_value());
  EXPECT_TRUE(ValidateContainerName("train:auto").has_value());
  EXPECT_TRUE(ValidateContainerName("train:exec").has_value());  // the controller names flags
  for (const char* bad : {"", "-x", ".x", "a/b", "a b", "a:", "a:B", "corral x",
                          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}) {
    EXPECT_FALSE(ValidateContainerName(bad).has_value()) << bad;
  }
}

TEST(ContainerSpecTest, ValidatesAWholeSpecNamingTheField) {
  ContainerSpec spec;
  spec.image = "nvcr.io#nvidia/pytorch:24.01-py3";
  spec.mounts = {"/datasets:/data:ro"};
  spec.workdir = "/workspace/my project";  // blanks are fine in a working directory
  spec.name = "train";
  spec.env = {"HF_HOME", "_X1"};
  EXPECT_TRUE(ValidateContainerSpec(spec).has_value());
  EXPECT_TRUE(ValidateContainerSpec(ContainerSpec{}).has_value());

  auto message = [&](auto change) {
    ContainerSpec s = spec;
    change(s);
    Status st = ValidateContainerSpec(s);
    return st ? std::string("accepted") : st.error().message;
  };
  EXPECT_EQ(message([](ContainerSpec& s) { s.image = "--user=0:0"; }),
            "container.image: image \"--user=0:0\": an image cannot start with '-'");
  EXPECT_EQ(message([](ContainerSpec& s) { s.mounts.push_back("/:/host"); }),
            "container.mounts: mount \"/:/host\": the root directory cannot be mounted");
  EXPECT_EQ(message([](ContainerSpec& s) { s.mounts.assign(65, "/a:/b"); }),
            "container.mounts: 65 mounts are over the limit of 64");
  EXPECT_EQ(message([](ContainerSpec& s) { s.workdir = "relative"; }),
            "container.workdir: path \"relative\": not an absolute path");
  EXPECT_EQ(message([](ContainerSpec& s) { s.name = "--rm"; }),
            "container.name: name \"--rm\": a name is [A-Za-z0-9][A-Za-z0-9_.-]*, at most 64 "
            "characters");
  EXPECT_EQ(message([](ContainerSpec& s) { s.env = {"LD_PRELOAD=/x.so"}; }),
            "container.env: \"LD_PRELOAD=/x.so\": a variable name is [A-Za-z_][A-Za-z0-9_]*");
}

}  // namespace
}  // namespace corral
