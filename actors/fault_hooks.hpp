#pragma once
/// Fault injection inside a concern actor: `(fault_delay_atom, ms)` makes the actor hold every
/// message it receives for `ms` milliseconds, then handle them in their order. The actor keeps its
/// thread free while it holds them (its mailbox waits, the scheduler does not), so the delay is the
/// actor's alone. Every supervised concern actor calls `accept_fault_delays(self)` first thing; the
/// message only ever comes from the supervisor, on the admin listener's `POST /faults/delay`.

#include <caf/atom.hpp>
#include <caf/scheduled_actor.hpp>

#include <functional>

/// `(fault_delay_atom, name, ms)` to the supervisor; it forwards `(fault_delay_atom, ms)` to `name`.
CAF_ADD_ATOM(contentlake, cl::actors, fault_delay_atom, "faultdelay")
/// The held actor's own timer: the delay is over.
CAF_ADD_ATOM(contentlake, cl::actors, fault_resume_atom, "faultgo")

namespace cl::actors {

namespace detail {
/// `resume` pops the holding behavior (typed actors only know how to `unbecome` themselves).
void accept_fault_delays(caf::scheduled_actor* self, std::function<void()> resume);
}  // namespace detail

/// Lets the admin listener delay this actor's next messages (see the file comment). Messages of
/// any other unexpected type are printed and dropped, as CAF does by default.
template <class Self>
void accept_fault_delays(Self* self) {
  detail::accept_fault_delays(self, [self] { self->unbecome(); });
}

}  // namespace cl::actors
