// Fault injection (docs/architecture.md, "Supervision tree"):
//
// Fault injection (`admin.fault_injection`) goes through the supervisor: a kill is `send_exit(kill)`;
// a delay makes the actor's default handler (`actors/fault_hooks.hpp`) push a behavior that skips
// everything but its resume timer, so a delayed actor holds its messages, in order, without holding
// a scheduler thread.

#include "actors/fault_hooks.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <memory>

namespace cl::actors::detail {

void accept_fault_delays(caf::scheduled_actor* self, std::function<void()> resume) {
  auto held = std::make_shared<bool>(false);
  self->set_default_handler([held, resume = std::move(resume)](caf::scheduled_actor* me, caf::message_view& x)
                                -> caf::result<caf::message> {
    // While held, only the holding behavior's resume matches: everything else waits, in order.
    if (*held) return caf::skip;
    const auto& content = x.content();
    if (!content.match_elements<fault_delay_atom, int>()) return caf::print_and_drop(me, x);
    auto ms = content.get_as<int>(1);
    if (ms <= 0) return caf::message{};
    *held = true;
    me->do_become(caf::behavior{[held, resume](fault_resume_atom) {
                    *held = false;
                    resume();
                  }},
                  false);
    caf::delayed_anon_send(caf::actor_cast<caf::actor>(me), std::chrono::milliseconds{ms}, fault_resume_atom_v);
    return caf::message{};
  });
}

}  // namespace cl::actors::detail
