// Runs a function on a thread with a deliberately small stack, so that any code path that recurses
// once per node (and would overflow on a long trace) crashes in the test instead of in the field.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <functional>
#include <stdexcept>

namespace etwire::feeder::testing {

inline void run_on_small_stack(const std::function<void()>& fn, size_t stack_bytes = 512 * 1024) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  int rc = pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&fn));
  pthread_attr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("pthread_create failed");
  pthread_join(thread, nullptr);
}

}  // namespace etwire::feeder::testing
