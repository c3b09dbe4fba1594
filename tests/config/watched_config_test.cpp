// watched_config<T>: the one way the file-watching actors (auth, rights, access) keep a
// configuration file in force.

#include "config/watched_config.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using cl::config::watched_config;

namespace {

using watch = watched_config<int>;

/// A number file: "7" parses to 7; anything else is refused.
std::variant<int, std::string> parse_number(const std::string& text) {
  try {
    std::size_t used = 0;
    int v = std::stoi(text, &used);
    if (used != text.size()) return std::string{"trailing text"};
    return v;
  } catch (const std::exception&) {
    return std::string{"not a number"};
  }
}

struct number_file {
  std::string path = (std::filesystem::temp_directory_path()
                      / ("contentlake-watched-" + std::to_string(::getpid()) + "-" + std::to_string(++counter)))
                       .string();
  static inline int counter = 0;
  ~number_file() { std::filesystem::remove(path); }
  void write(const std::string& text) const {
    std::ofstream{path, std::ios::trunc} << text;
  }
  void remove() const { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("a watched file: fallback when unset or missing, the file's value when valid", "[config]") {
  watch unset{"test: file", "", &parse_number, -1, watch::on_missing::keep};
  CHECK(unset.start() == -1);
  CHECK_FALSE(unset.watching());
  CHECK_FALSE(unset.recheck());

  number_file f;
  watch missing{"test: file", f.path, &parse_number, -1, watch::on_missing::keep};
  CHECK(std::get<int>(missing.check()) == -1);
  CHECK(missing.start() == -1);

  f.write("42");
  watch present{"test: file", f.path, &parse_number, -1, watch::on_missing::keep};
  CHECK(std::get<int>(present.check()) == 42);
  CHECK(present.start() == 42);
  CHECK_FALSE(present.recheck());  // unchanged since start
}

TEST_CASE("a watched file that is invalid stops a start-up check and is never applied later", "[config]") {
  number_file f;
  f.write("x1");
  watch w{"test: file", f.path, &parse_number, -1, watch::on_missing::keep};
  auto checked = w.check();
  REQUIRE(std::holds_alternative<std::string>(checked));
  CHECK(std::get<std::string>(checked).find(f.path) != std::string::npos);
  CHECK(w.start() == -1);  // a restarted actor runs on the fallback rather than staying down

  f.write("1234");
  CHECK(w.recheck());
  CHECK(w.current() == 1234);
  f.write("oops!");
  CHECK_FALSE(w.recheck());
  CHECK(w.current() == 1234);
}

TEST_CASE("a watched file that disappears keeps the value or falls back, as its owner chose", "[config]") {
  number_file f;
  f.write("5");
  watch keep{"test: file", f.path, &parse_number, -1, watch::on_missing::keep};
  watch back{"test: file", f.path, &parse_number, -1, watch::on_missing::fall_back};
  CHECK(keep.start() == 5);
  CHECK(back.start() == 5);
  f.remove();
  CHECK_FALSE(keep.recheck());
  CHECK(keep.current() == 5);
  CHECK(back.recheck());
  CHECK(back.current() == -1);
}
