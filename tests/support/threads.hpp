#pragma once
// The threads of a process as /proc shows them: id, name and nice value (what `ps -L -o
// tid,comm,ni` prints), for tests of thread names and priorities.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace cl::testing {

struct thread_info {
  int tid = 0;
  std::string name;
  int nice = 0;
};

/// One thread of process `pid` ("self": this one) from its stat file; tid 0 when it
/// ended meanwhile. The name (field 2) may hold spaces and parentheses: fields count after its
/// last ')'; field 19 is the nice value.
inline thread_info thread_of(const std::string& pid, int tid) {
  std::ifstream in{"/proc/" + pid + "/task/" + std::to_string(tid) + "/stat"};
  std::string stat{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return {};
  std::istringstream fields{stat.substr(close + 2)};
  std::string field;
  for (int k = 3; k <= 19; ++k) fields >> field;
  return {tid, stat.substr(open + 1, close - open - 1), std::stoi(field)};
}

/// Every thread of process `pid` ("self": this one).
inline std::vector<thread_info> threads_of(const std::string& pid = "self") {
  std::vector<thread_info> threads;
  for (const auto& task : std::filesystem::directory_iterator{"/proc/" + pid + "/task"})
    if (auto t = thread_of(pid, std::stoi(task.path().filename().string())); t.tid != 0) threads.push_back(t);
  return threads;
}

}  // namespace cl::testing
