#pragma once
/// Plans of the blobs route group (spec 4.4, 3.2), registered in app/blobs_group.cpp. The broker
/// (actors/blobs/blob_broker.hpp) talks to the object store; these plans check who may do what, write
/// the records through the writer, and shape the answers.
///
/// Who may read a blob: its uploader, and any principal who may read (layer 2) a Resource whose
/// content references it in an `image` block, when that Resource's rights allow the request's use
/// (layer 3, `X-Usage-Purpose`). docs/api.md "Blobs" states the rule.

#include "actors/coordinator.hpp"
#include "domain/content_format.hpp"

namespace cl::actors {

/// POST /v0/content-lake/blobs/uploads
void plan_start_upload(const plan_run& run);

/// GET /v0/content-lake/blobs/uploads/{uploadId}/parts
void plan_upload_parts(const plan_run& run);

/// POST /v0/content-lake/blobs/uploads/{uploadId}/complete
void plan_complete_upload(const plan_run& run);

/// DELETE /v0/content-lake/blobs/uploads/{uploadId}
void plan_abort_upload(const plan_run& run);

/// Before a write that puts `refs` (image blocks' blob references) into a Resource's content:
/// calls `k` when the caller may read every referenced blob now (by the rule above, for a plain
/// read); otherwise answers 400 `PCF011` naming the first reference's JSON Pointer, the same for a
/// blob that does not exist (no oracle). A reference would otherwise open the blob to the
/// Resource's readers, the writer among them.
void with_readable_blobs(const plan_run& run, std::vector<domain::blob_reference> refs, std::function<void()> k);

/// GET /v0/content-lake/blobs/{id}
void plan_get_blob(const plan_run& run);

/// POST /v0/content-lake/blobs/locations
void plan_blob_locations(const plan_run& run);

}  // namespace cl::actors
