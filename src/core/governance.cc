#include "core/governance.h"

namespace corral {

std::string_view PreemptModeName(PreemptMode m) {
  switch (m) {
    case PreemptMode::kOff:
      return "off";
    case PreemptMode::kRequeue:
      return "requeue";
    case PreemptMode::kCancel:
      return "cancel";
  }
  return "unknown";
}

std::optional<PreemptMode> ParsePreemptMode(std::string_view name) {
  for (PreemptMode m : {PreemptMode::kOff, PreemptMode::kRequeue, PreemptMode::kCancel}) {
    if (PreemptModeName(m) == name) return m;
  }
  return std::nullopt;
}

const Limits* FindAssociationLimits(const UserConfig& user, std::string_view account) {
  for (const AssociationLimits& a : user.association_limits) {
    if (a.account == account) return &a.limits;
  }
  return nullptr;
}

}  // namespace corral
