// The embedded S3 listener's operations that are one store call and one answer: copy, multipart
// create/list/complete/abort, delete, and the lookup that starts a download. Writes run on the
// disk thread, lookups on the read threads (http/s3_session.hpp).

#include "http/s3_session.hpp"

#include <fcntl.h>

#include <fstream>

namespace cl::http::s3_listener {

namespace {

void send_xml(const std::shared_ptr<s3_session>& s, std::string xml) {
  auto res = s->reply(200);
  res->set(bhttp::field::content_type, "application/xml");
  res->body() = std::move(xml);
  s->send(res);
}

struct copied {
  std::optional<storage::object_info> info;
  std::optional<s3::error> refusal;
};

/// CopyObject (the whole source) or UploadPartCopy (bytes `range` of it), on the disk thread.
copied copy_on_disk(const std::shared_ptr<storage::object_files>& files, const s3::request_target& t,
                    const std::pair<std::string, std::string>& source, const std::string& range) {
  auto info = files->stat(source.first, source.second);
  auto path = files->data_path(source.first, source.second);
  if (!info || !path) return {std::nullopt, s3::error{404, "NoSuchKey", "The specified key does not exist."}};
  if (t.op == s3::operation::put_object && files->closed(t.bucket, t.key)) return {std::nullopt, closed_key()};
  std::uint64_t first = 0, last = info->size == 0 ? 0 : info->size - 1;
  if (!range.empty()) {
    auto r = s3::parse_range(range, info->size);
    if (!r || r->unsatisfiable) return {std::nullopt, s3::error{400, "InvalidArgument", "The x-amz-copy-source-range is not valid for the source."}};
    first = r->first;
    last = r->last;
  }
  std::shared_ptr<storage::object_files::incoming> body{files->receive().release()};
  std::ifstream in{*path, std::ios::binary};
  in.seekg(static_cast<std::streamoff>(first));
  std::string buffer(chunk_size, '\0');
  auto left = info->size == 0 ? 0 : last - first + 1;
  while (left > 0 && in) {
    in.read(buffer.data(), static_cast<std::streamsize>(std::min<std::uint64_t>(left, buffer.size())));
    auto got = static_cast<std::uint64_t>(in.gcount());
    if (got == 0) break;
    body->append(std::string_view{buffer.data(), got});
    left -= got;
  }
  if (left > 0) return {std::nullopt, s3::error{500, "InternalError", "The copy source could not be read."}};
  if (t.op == s3::operation::put_object) return {files->commit_object(body, t.bucket, t.key, info->content_type), std::nullopt};
  auto part = files->commit_part(body, t.upload_id, t.part_number);
  if (!part) return {std::nullopt, no_such_upload()};
  return {part, std::nullopt};
}

void finish_complete(const std::shared_ptr<s3_session>& s, storage::complete_error e, const storage::object_info& info) {
  using storage::complete_error;
  switch (e) {
    case complete_error::no_such_upload: return s->fail(no_such_upload(), false);
    case complete_error::invalid_part: return s->fail({400, "InvalidPart", "One or more of the specified parts could not be found."}, false);
    case complete_error::invalid_part_order: return s->fail({400, "InvalidPartOrder", "The list of parts was not in ascending order."}, false);
    case complete_error::entity_too_small: return s->fail({400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size."}, false);
    case complete_error::checksum_mismatch:  // not asked for by S3 clients (no expected SHA-256)
    case complete_error::none: break;
  }
  const auto& t = s->target();
  send_xml(s, s3::complete_multipart_xml(s->path(), t.bucket, t.key, info.etag));
}

}  // namespace

/// An object of this bucket becomes the target object or part; a closed key takes no copy either.
void copy_object(const std::shared_ptr<s3_session>& s) {
  const auto& req = s->header()->get();
  if (req.has_content_length() && req[bhttp::field::content_length] != "0")
    return s->fail({400, "InvalidRequest", "A copy request carries no body."}, true);
  auto source = s3::parse_copy_source(std::string{req["x-amz-copy-source"]});
  if (!source || !storage::object_files::valid_key(source->second))
    return s->fail({400, "InvalidArgument", "x-amz-copy-source must be bucket/key."}, false);
  if (source->first != s->cfg().bucket) return s->fail({403, "AccessDenied", "The copy source is not in this bucket."}, false);
  auto t = s->target();
  auto range = std::string{req["x-amz-copy-source-range"]};
  if (t.op == s3::operation::put_object && !range.empty())
    return s->fail({400, "InvalidArgument", "CopyObject takes no x-amz-copy-source-range."}, false);
  s->on_disk([files = s->cfg().files, t, source = *source, range] { return copy_on_disk(files, t, source, range); },
             [s](copied c) {
               if (c.refusal) return s->fail(*c.refusal, false);
               bool whole = s->target().op == s3::operation::put_object;
               send_xml(s, whole ? s3::copy_object_xml(c.info->etag, c.info->modified)
                                 : s3::copy_part_xml(c.info->etag, c.info->modified));
               s->empty_trash_soon();
             });
}

void receive_body(const std::shared_ptr<s3_session>& s) {
  auto upload = std::make_shared<s3_upload>(s);
  s->upload(upload);
  s->continue_then([upload] { upload->start(); });
}

/// Reads the CompleteMultipartUpload document (1 MiB at most), then completes on the disk thread.
void complete_upload(const std::shared_ptr<s3_session>& s) {
  s->continue_then([s] {
    auto parser = std::make_shared<bhttp::request_parser<bhttp::string_body>>(std::move(*s->header()));
    parser->body_limit(1 << 20);
    bhttp::async_read(s->stream(), s->buffer(), *parser, [s, parser](beast::error_code ec, std::size_t) {
      if (ec) return s->close();
      auto parts = s3::parse_complete_body(parser->get().body());
      if (!parts)
        return s->fail({400, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."}, false);
      s->on_disk(
        [files = s->cfg().files, t = s->target(), min = s->cfg().min_part_size, parts = *parts] {
          storage::object_info out;
          auto e = files->complete_upload(t.upload_id, parts, min, out);
          return std::pair{e, out};
        },
        [s](std::pair<storage::complete_error, storage::object_info> r) { finish_complete(s, r.first, r.second); });
    });
  });
}

void create_upload(const std::shared_ptr<s3_session>& s) {
  s->on_disk([files = s->cfg().files, t = s->target(), type = s->content_type()] { return files->create_upload(t.bucket, t.key, type); },
             [s](std::string id) { send_xml(s, s3::initiate_multipart_xml(s->target().bucket, s->target().key, id)); });
}

void list_parts(const std::shared_ptr<s3_session>& s) {
  s->on_read(
    [files = s->cfg().files, t = s->target()]() -> std::optional<std::vector<s3::listed_part>> {
      if (!files->upload(t.upload_id)) return std::nullopt;
      std::vector<s3::listed_part> out;
      for (const auto& [n, info] : files->parts(t.upload_id)) out.push_back({n, info.etag, info.size, info.modified});
      return out;
    },
    [s](std::optional<std::vector<s3::listed_part>> parts) {
      if (!parts) return s->fail(no_such_upload(), false);
      const auto& t = s->target();
      send_xml(s, s3::list_parts_xml(t.bucket, t.key, t.upload_id, *parts));
    });
}

void abort_upload(const std::shared_ptr<s3_session>& s) {
  s->on_disk([files = s->cfg().files, t = s->target()] { return files->abort_upload(t.upload_id); }, [s](bool found) {
    if (!found) return s->fail(no_such_upload(), false);
    s->send(s->reply(204));
  });
}

void delete_object(const std::shared_ptr<s3_session>& s) {
  s->on_disk([files = s->cfg().files, t = s->target()] { return files->remove(t.bucket, t.key); },
             [s](bool) { s->send(s->reply(204)); });
}

/// Finds the object and opens it on a read thread, then starts its download.
void send_object(const std::shared_ptr<s3_session>& s) {
  s->on_read(
    [files = s->cfg().files, t = s->target()]() -> std::optional<std::pair<storage::object_info, int>> {
      auto info = files->stat(t.bucket, t.key);
      auto path = files->data_path(t.bucket, t.key);
      if (!info || !path) return std::nullopt;
      int fd = ::open(path->c_str(), O_RDONLY);
      if (fd < 0) return std::nullopt;
      return std::pair{*info, fd};
    },
    [s](std::optional<std::pair<storage::object_info, int>> found) {
      if (!found) return s->fail({404, "NoSuchKey", "The specified key does not exist."}, false);
      auto d = std::make_shared<s3_download>(s, found->second);
      s->download(d);
      d->start(found->first);
    });
}

}  // namespace cl::http::s3_listener
