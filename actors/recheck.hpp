#pragma once
/// The once-a-second recheck of the file-watching actors (auth, rights, access): each runs its
/// step, logs a failure instead of crashing, and schedules the next recheck.

#include "actors/type_ids.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>

namespace cl::actors {

/// Schedules `self`'s next recheck in one second.
template <class Self>
void schedule_recheck(Self* self) {
  self->delayed_send(self, std::chrono::seconds{1}, recheck_atom_v);
}

/// Runs `step` (re-reading watched files), then schedules the next recheck.
template <class Self, class Step>
void recheck(Self* self, const char* who, Step&& step) {
  try {
    step();
  } catch (const std::exception& e) {
    spdlog::error("{}: recheck failed: {}", who, e.what());
  }
  schedule_recheck(self);
}

}  // namespace cl::actors
