// Template part of service.h.
#pragma once

#include <future>
#include <memory>

namespace corral::controller {

template <typename T>
Result<T> ControllerService::Call(std::function<Result<T>(Controller&)> fn) {
  auto promise = std::make_shared<std::promise<Result<T>>>();  // shared by the two closures
  auto result = std::make_shared<std::optional<Result<T>>>();
  std::future<Result<T>> future = promise->get_future();
  PostAudited(
      [fn = std::move(fn), result](Controller& c) {
        result->emplace(fn(c));
        return AuditOutcomeOf(**result);
      },
      CurrentAudit(),
      [this, promise, result] {
         if (!LastCommitOk()) {
           // The batch of this call was fenced (this controller was deposed): nothing of it
           // is stored, and the caller may repeat it at the leader.
           promise->set_value(MakeError(ErrorCode::kUnavailable,
                                        "controller stepped down: the request was not carried "
                                        "out; the leader is " + leader_url()));
         } else if (result->has_value()) {
           promise->set_value(std::move(**result));
         } else {
           promise->set_value(MakeError(ErrorCode::kUnavailable, "controller is shutting down"));
         }
       });
  return future.get();
}

}  // namespace corral::controller
