#include "actors/supervisor.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

namespace {

void start_child(caf::stateful_actor<supervisor_state>* self, const supervisor_config& cfg, std::size_t index) {
  self->state.running[index] = cfg.children[index].start(*self, *cfg.directory);
}

}  // namespace

std::optional<std::string> validate(const supervisor_config& cfg) {
  if (cfg.max_restarts < 0) return std::string{"supervisor.max_restarts must not be negative"};
  if (cfg.window.count() <= 0) return std::string{"supervisor.window_seconds must be positive"};
  if (!cfg.directory) return std::string{"supervisor needs a directory"};
  return std::nullopt;
}

caf::behavior supervisor(caf::stateful_actor<supervisor_state>* self, std::shared_ptr<const supervisor_config> cfg) {
  self->state.running.resize(cfg->children.size());
  for (std::size_t i = 0; i < cfg->children.size(); ++i) {
    if (cfg->stats) cfg->stats->declare_actor(cfg->children[i].name);
    start_child(self, *cfg, i);
  }

  self->set_down_handler([self, cfg](caf::down_msg& dm) {
    auto& st = self->state;
    std::size_t index = st.running.size();
    for (std::size_t i = 0; i < st.running.size(); ++i)
      if (st.running[i].address == dm.source) index = i;
    if (index == st.running.size() || st.given_up) return;
    const auto& name = cfg->children[index].name;
    auto now = std::chrono::steady_clock::now();
    while (!st.restarts.empty() && now - st.restarts.front() > cfg->window) st.restarts.pop_front();
    if (static_cast<int>(st.restarts.size()) >= cfg->max_restarts) {
      st.given_up = true;
      auto why = "actor " + name + " failed (" + to_string(dm.reason) + ") after "
                 + std::to_string(st.restarts.size()) + " restarts within "
                 + std::to_string(cfg->window.count()) + " s";
      spdlog::critical("supervisor: giving up: {}", why);
      if (cfg->health) ++cfg->health->children_down;
      if (cfg->give_up) cfg->give_up(why);
      return;
    }
    st.restarts.push_back(now);
    spdlog::warn("supervisor: actor {} went down ({}); restarting", name, to_string(dm.reason));
    if (cfg->stats) cfg->stats->count_restart(name);
    start_child(self, *cfg, index);
  });

  // Shutdown: take the children down with us; drop their handles so the system can end.
  self->set_exit_handler([self](caf::exit_msg& em) {
    for (auto& child : self->state.running)
      if (child.address) self->send_exit(child.address, em.reason);
    self->state.running.clear();
    self->quit(em.reason);
  });
  return {
    [](caf::get_atom) { return true; },
    [self, cfg](fault_kill_atom, const std::string& name) {
      for (std::size_t i = 0; i < cfg->children.size() && i < self->state.running.size(); ++i)
        if (cfg->children[i].name == name && self->state.running[i].address) {
          spdlog::warn("fault injection: killing {}", name);
          self->send_exit(self->state.running[i].address, caf::exit_reason::kill);
        }
    },
    [self, cfg](fault_delay_atom, const std::string& name, int ms) {
      for (std::size_t i = 0; i < cfg->children.size() && i < self->state.running.size(); ++i)
        if (cfg->children[i].name == name && self->state.running[i].address) {
          spdlog::warn("fault injection: {} holds its next messages for {} ms", name, ms);
          // The child answers when its hold begins (actors/fault_hooks.cpp): counted, so a fault
          // test can tell that every actor it delayed did hold.
          self->request(caf::actor_cast<caf::actor>(self->state.running[i].address), std::chrono::seconds{10},
                        fault_delay_atom_v, ms)
            .then([cfg, name]() { if (cfg->stats) cfg->stats->count_fault_delay(name); },
                  [name](caf::error& e) { spdlog::warn("fault injection: {} did not take the delay ({})", name, to_string(e)); });
        }
    },
  };
}

}  // namespace cl::actors
