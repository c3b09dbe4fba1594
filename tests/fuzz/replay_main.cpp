// Replays files (or every file of directories) through the target: the seed corpus in ctest, or a
// crash file found by scripts/fuzz, with any compiler. Exits non-zero only by a crash.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::size_t runs = 0;
  auto run = [&](const std::filesystem::path& p) {
    std::ifstream in{p, std::ios::binary};
    std::vector<char> bytes{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ++runs;
  };
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path p{argv[i]};
    if (std::filesystem::is_directory(p)) {
      for (const auto& f : std::filesystem::recursive_directory_iterator{p})
        if (f.is_regular_file()) run(f.path());
    } else {
      run(p);
    }
  }
  std::cout << "replayed " << runs << " inputs\n";
  return runs > 0 ? 0 : 1;  // an empty corpus proves nothing
}
