// Shared<T>: an immutable value that copies share instead of duplicating. The tasks of a job
// array are copies of one submitted job; their script, environment and arguments (up to
// megabytes each) are held once in memory however many tasks there are (issue 15 item 8).
//
// A value type: copying shares the value, comparing compares values, and assigning a new value
// (`=`, `clear()`, `Mutable()`) changes this copy only: the value other copies share is never
// written (copy on write). Reads go through `get()`, `*`, `->` or the implicit conversion to
// `const T&`; `begin()`, `end()`, `size()` and `empty()` are forwarded for the common cases.
//
// Thread-safety: as `std::shared_ptr<const T>`: copies may be read and destroyed on any
// thread; one object must not be changed while another thread reads or copies it.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace corral {

template <typename T>
class Shared {
 public:
  Shared() = default;
  Shared(T value) : value_(std::make_shared<T>(std::move(value))) {}  // NOLINT: implicit
  Shared(const char* text)                                           // NOLINT: implicit
    requires std::is_constructible_v<T, const char*>
      : Shared(T(text)) {}
  Shared(std::initializer_list<typename T::value_type> items)  // NOLINT: implicit
    requires(!std::is_same_v<T, std::string>)
      : Shared(T(items)) {}

  Shared& operator=(T value) {
    value_ = std::make_shared<T>(std::move(value));
    return *this;
  }
  Shared& operator=(const char* text)
    requires std::is_constructible_v<T, const char*>
  {
    return *this = T(text);
  }
  Shared& operator=(std::initializer_list<typename T::value_type> items)
    requires(!std::is_same_v<T, std::string>)
  {
    return *this = T(items);
  }

  const T& get() const { return value_ ? *value_ : Empty(); }
  operator const T&() const { return get(); }  // NOLINT: implicit
  const T& operator*() const { return get(); }
  const T* operator->() const { return &get(); }
  auto begin() const { return get().begin(); }
  auto end() const { return get().end(); }
  size_t size() const { return get().size(); }
  bool empty() const { return get().empty(); }

  // The value to change in place: this copy's own (copied first when others share it).
  T& Mutable() {
    if (!value_ || value_.use_count() != 1) value_ = std::make_shared<T>(get());
    return *value_;
  }
  // Makes this copy empty (others keep their value).
  void clear() { value_.reset(); }
  // True when this copy and `other` hold the very same value in memory.
  bool SharesWith(const Shared& other) const {
    return value_ != nullptr && value_ == other.value_;
  }

  bool operator==(const Shared& o) const { return value_ == o.value_ || get() == o.get(); }
  bool operator==(const T& o) const { return get() == o; }
  bool operator==(const char* o) const
    requires std::is_constructible_v<T, const char*>
  {
    return get() == o;
  }

 private:
  static const T& Empty() {
    static const T empty{};
    return empty;
  }

  // Shared by the copies of this object: the value is never changed while shared (`Mutable`
  // copies it first). Null: the empty value.
  std::shared_ptr<T> value_;
};

}  // namespace corral
