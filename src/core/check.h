// CORRAL_CHECK: programmer-error assertions that log and abort in every build (like Envoy's
// RELEASE_ASSERT). Never CHECK user input or environment failures; return a Result instead.
// CORRAL_DCHECK runs in debug builds only.
//
// Thread-safety: thread-safe.
#pragma once

#include <sstream>

namespace corral::internal {

// Collects the streamed message and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `CORRAL_CHECK(x) << ...` be a void expression in both arms of the ternary.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace corral::internal

#define CORRAL_CHECK(cond)                     \
  (cond) ? (void)0                             \
         : ::corral::internal::Voidify() &     \
               ::corral::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()

#ifdef NDEBUG
#define CORRAL_DCHECK(cond) \
  true ? (void)0 : ::corral::internal::Voidify() & ::corral::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()
#else
#define CORRAL_DCHECK(cond) CORRAL_CHECK(cond)
#endif
