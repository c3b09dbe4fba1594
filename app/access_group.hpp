#pragma once
/// The access route group's configuration section (`access.*`), in `settings::groups`.

#include <string>

namespace cl::app {

struct access_settings {
  /// Group directory file, re-read when it changes; missing: no groups.
  std::string directory_file = "config/directory.json";
};

}  // namespace cl::app
