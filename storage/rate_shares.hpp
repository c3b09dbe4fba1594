#pragma once
/// What the nodes' rate limiters tell each other (spec 8: the limit is per `client_id`, whichever
/// node a request lands on). Each node keeps its own token buckets and, every share interval,
/// adds what it admitted to the store and is told what the other nodes admitted since it last
/// asked; that is charged to its buckets. On one node there is nothing to share.

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cl::storage {

/// Admissions per client: (client_id, tokens taken).
using admissions = std::vector<std::pair<std::string, double>>;

/// The shared tally (PostgreSQL: storage/postgresql/leases.cpp). Calls throw when the store cannot
/// be reached; what a failed call carried is lost to the other nodes (the limit is then per node
/// for that interval).
class rate_exchange {
public:
  virtual ~rate_exchange() = default;
  /// Adds `admitted_here` to this node's tally and answers what the other nodes admitted since this
  /// node's previous call (their tallies' growth; a client new to this node counts from its first
  /// sight here).
  virtual admissions exchange(const admissions& admitted_here) = 0;
};

}  // namespace cl::storage
