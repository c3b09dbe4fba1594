#pragma once
/// The HTTP client of webhook deliveries (issue 29, part 2). It resolves the target's name at every
/// attempt, keeps only the addresses the policy allows (domain::address_allowed: no loopback,
/// private, link-local, ... unless allowlisted) and connects to one of those, so a name that
/// changes its answer between check and connect (DNS rebinding) still reaches only a checked
/// address. Redirects are not followed; only the answer's header is read (a capped read).
/// Blocking: the dispatcher runs it on a detached worker.

#include "domain/webhook.hpp"

#include <string>
#include <vector>

namespace cl::http {

struct webhook_client_options {
  bool https_only = true;
  std::vector<domain::ip_network> allowed_networks;  ///< the operator's allowlist
  std::string ca_file;                               ///< extra CAs to trust (tests); system CAs always
  std::string user_agent = "contentlake-webhooks";
};

/// POSTs `r` and says what came of it; never throws (an error class instead), never puts the
/// signature, the body or the URL's query in its error.
domain::webhook_response post_webhook(const domain::webhook_request& r, const webhook_client_options& options);

}  // namespace cl::http
