#include "app/registry.hpp"

#include <caf/message.hpp>
#include <caf/sec.hpp>

#include <openssl/rand.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace cl::app {

caf::error startup_failure(std::string what) {
  return caf::make_error(caf::sec::invalid_argument, std::move(what));
}

std::string describe(const caf::error& e) {
  const auto& context = e.context();
  if (context.match_elements<std::string>()) return context.get_as<std::string>(0);
  return to_string(e);
}

void registry::add_routes(std::vector<http::route> routes) {
  for (auto& r : routes) routes_.push_back(std::move(r));
}

void registry::add_options(std::vector<config::option> options) {
  for (auto& o : options) options_.push_back(std::move(o));
}

void registry::add_actors(std::string name, spawn_fn spawn) {
  spawners_.emplace_back(std::move(name), std::move(spawn));
}

void registry::add_listener(std::string name, listener_fn start) {
  listeners_.emplace_back(std::move(name), std::move(start));
}

caf::expected<std::vector<std::pair<std::string, running_listener>>> registry::start_listeners(
  const startup& s, boost::asio::io_context& ioc) const {
  std::vector<std::pair<std::string, running_listener>> running;
  for (const auto& [name, start] : listeners_) {
    auto started = start(s, ioc);
    if (!started) {
      for (auto& [n, l] : running) l.stop();
      return startup_failure(name + ": " + describe(started.error()));
    }
    if (started->stop) running.emplace_back(name, std::move(*started));
  }
  return running;
}

caf::expected<std::vector<actors::child_spec>> registry::spawn_all(const startup& s) const {
  std::vector<actors::child_spec> all;
  for (const auto& [name, spawn] : spawners_) {
    auto children = spawn(s);
    if (!children) return startup_failure(name + ": " + describe(children.error()));
    for (auto& c : *children) all.push_back(std::move(c));
  }
  return all;
}

std::string node_name_of(const config::settings& s) {
  if (!s.node_name.empty()) return s.node_name;
  auto file = std::filesystem::path{s.data_dir} / "node-name";
  std::string name;
  if (std::ifstream in{file}; in) std::getline(in, name);
  if (!name.empty()) return name;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  for (char* c = host; *c; ++c)
    if (static_cast<unsigned char>(*c) < 0x21 || static_cast<unsigned char>(*c) > 0x7e) *c = '-';
  unsigned char random[3];
  if (RAND_bytes(random, sizeof random) != 1) throw std::runtime_error("node name: no random bytes");
  static constexpr char hex[] = "0123456789abcdef";
  name = std::string{*host ? host : "node"} + '-';
  for (auto b : random) name += {hex[b >> 4], hex[b & 15]};
  auto temporary = file;
  temporary += ".new";
  {
    std::ofstream out{temporary, std::ios::trunc};
    out << name << '\n';
    if (!out.flush()) throw std::runtime_error("node name: cannot write " + temporary.string());
  }
  std::filesystem::rename(temporary, file);
  return name;
}

}  // namespace cl::app
