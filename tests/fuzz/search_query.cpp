// Search query text (words, phrases, operators, field prefixes) parsed and run on an index.
#include "storage/search/index.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <cstdlib>
#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static auto* index = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cl-fuzz-search-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    return new cl::storage::search_index(tmpl);  // lives as long as the process
  }();
  cl::storage::search_query q;
  q.tenant = "t_a";
  q.text = std::string{cl::fuzz::text(data, size)};
  q.principals = {"u_a"};
  for (bool metadata_only : {false, true}) {
    q.metadata_only = metadata_only;
    try {
      (void)index->search(q);
    } catch (const cl::storage::query_syntax_error&) {
      // a 400 for the caller: expected
    }
  }
  return 0;
}
