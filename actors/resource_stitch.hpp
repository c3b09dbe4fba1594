#pragma once
/// Stitching (spec 4.2.1): the parts of a Resource read that live outside its record — `source`,
/// `work`, `provenance`, `lineage`, `entities` and `rights.commercial_terms` — are fetched only
/// when the field mask names them (or is `*`), asking only the actors each one needs.
/// Included by plan sources only (it brings Boost.JSON).

#include "actors/coordinator.hpp"
#include "domain/field_mask.hpp"

#include <boost/json/object.hpp>

#include <functional>
#include <memory>

namespace cl::actors {

/// True when `mask` names `rights.commercial_terms` (or something inside it) explicitly.
bool names_commercial_terms(const domain::field_mask& mask);

/// Adds to `full` (a composed Resource) every stitched part `mask` asks for, in parallel, then
/// calls `k` with nullopt; or with the 503 reply when an actor it needed failed.
void stitch_resource(const plan_run& run, const domain::field_mask& mask, std::shared_ptr<boost::json::object> full,
                     std::function<void(std::optional<domain::api_reply>)> k);

}  // namespace cl::actors
