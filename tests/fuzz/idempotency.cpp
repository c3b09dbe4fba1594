// Idempotency-Key checks, the request fingerprint (JSON canonicalisation of any body) and the
// stored ledger record's parser.
#include "domain/canonical_json.hpp"
#include "domain/idempotency.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto f = cl::fuzz::fields(cl::fuzz::text(data, size), 4);
  (void)cl::domain::idempotency_key_problem(f[0]);
  cl::domain::api_request r;
  r.method = "POST";
  r.path = "/v0/content-lake/resources";
  r.query = f[1];
  r.body = f[2];
  r.content_type = "application/json";
  (void)cl::domain::request_fingerprint(r, "u_a", {"content-lake.write"});
  (void)cl::domain::parse_ledger_record(f[3]);
  return 0;
}
