#pragma once
/// The stored form of the blob and webhook stores' records (storage-internal): a JSON object per
/// record, the same bytes on every backend (a key-value value, a PostgreSQL `record` column), so a
/// record moves between backends as it is.

#include "storage/blob_store.hpp"
#include "storage/webhook_store.hpp"

#include <string>
#include <string_view>

namespace cl::storage {

std::string encode_upload(const upload_record& u);
upload_record decode_upload(std::string_view stored);
std::string encode_blob_version(const blob_version& v);
blob_version decode_blob_version(std::string_view stored);

std::string encode_webhook(const webhook_record& w);
webhook_record decode_webhook(std::string_view stored);
std::string encode_retry(const webhook_retry& r);
webhook_retry decode_retry(std::string_view stored);
std::string encode_delivery(const webhook_delivery& d);
webhook_delivery decode_delivery(std::string_view stored);

}  // namespace cl::storage
