// The S3 protocol of the embedded object store: operations from method, path and query as boto3
// and the AWS CLI send them, XML answers, CompleteMultipartUpload bodies, byte ranges.

#include "http/s3_protocol.hpp"

#include "domain/sigv4.hpp"

#include <catch2/catch.hpp>

using namespace cl::http::s3;

namespace {

request_target target(std::string_view method, std::string_view path,
                      std::vector<std::pair<std::string, std::string>> query = {}) {
  auto r = classify(method, path, query);
  REQUIRE(std::holds_alternative<request_target>(r));
  return std::get<request_target>(r);
}

error refusal(std::string_view method, std::string_view path, std::vector<std::pair<std::string, std::string>> query = {}) {
  auto r = classify(method, path, query);
  REQUIRE(std::holds_alternative<error>(r));
  return std::get<error>(r);
}

}  // namespace

TEST_CASE("S3 operations are told apart by method and query, path-style", "[s3]") {
  auto put = target("PUT", "/contentlake/t/blb_1/upl_1");
  CHECK(put.op == operation::put_object);
  CHECK(put.bucket == "contentlake");
  CHECK(put.key == "t/blb_1/upl_1");
  CHECK(target("GET", "/b/k").op == operation::get_object);
  CHECK(target("HEAD", "/b/k").op == operation::head_object);
  CHECK(target("DELETE", "/b/k").op == operation::delete_object);
  CHECK(target("POST", "/b/k", {{"uploads", ""}}).op == operation::create_multipart_upload);
  auto part = target("PUT", "/b/k", {{"partNumber", "7"}, {"uploadId", "mpu_1"}});
  CHECK(part.op == operation::upload_part);
  CHECK(part.part_number == 7);
  CHECK(part.upload_id == "mpu_1");
  CHECK(target("GET", "/b/k", {{"uploadId", "mpu_1"}}).op == operation::list_parts);
  CHECK(target("POST", "/b/k", {{"uploadId", "mpu_1"}}).op == operation::complete_multipart_upload);
  CHECK(target("DELETE", "/b/k", {{"uploadId", "mpu_1"}}).op == operation::abort_multipart_upload);
  // Presigning parameters do not change the operation.
  CHECK(target("GET", "/b/k", {{"X-Amz-Signature", "x"}, {"X-Amz-Expires", "900"}}).op == operation::get_object);
}

TEST_CASE("S3 requests the store does not serve get S3's error codes", "[s3]") {
  CHECK(refusal("GET", "/b").code == "NotImplemented");        // bucket listing
  CHECK(refusal("GET", "/b/").code == "NotImplemented");
  CHECK(refusal("GET", "/").code == "InvalidBucketName");
  CHECK(refusal("PUT", "/b/../etc/passwd").code == "InvalidArgument");  // traversal
  CHECK(refusal("PUT", "/b/a//b").code == "InvalidArgument");
  CHECK(refusal("PUT", "/b/k", {{"partNumber", "0"}, {"uploadId", "u"}}).code == "InvalidArgument");
  CHECK(refusal("PUT", "/b/k", {{"partNumber", "10001"}, {"uploadId", "u"}}).code == "InvalidArgument");
  CHECK(refusal("PUT", "/b/k", {{"partNumber", "x"}, {"uploadId", "u"}}).code == "InvalidArgument");
  CHECK(refusal("PATCH", "/b/k").status == 405);
  CHECK(refusal("POST", "/b/k").status == 501);
}

TEST_CASE("S3 XML answers carry what clients read, escaped", "[s3]") {
  auto e = error_xml({403, "AccessDenied", "Request has expired"}, "/b/k&<x>", "req1");
  CHECK(e.find("<Code>AccessDenied</Code>") != std::string::npos);
  CHECK(e.find("<Message>Request has expired</Message>") != std::string::npos);
  CHECK(e.find("<Resource>/b/k&amp;&lt;x&gt;</Resource>") != std::string::npos);
  auto init = initiate_multipart_xml("b", "k", "mpu_1");
  CHECK(init.find("<UploadId>mpu_1</UploadId>") != std::string::npos);
  auto done = complete_multipart_xml("http://h/b/k", "b", "k", "abc-2");
  CHECK(done.find("<ETag>&quot;abc-2&quot;</ETag>") != std::string::npos);
  auto parts = list_parts_xml("b", "k", "mpu_1", {{1, "e1", 5242880, 0}, {2, "e2", 10, 0}});
  CHECK(parts.find("<Part><PartNumber>2</PartNumber>") != std::string::npos);
  CHECK(parts.find("<Size>5242880</Size>") != std::string::npos);
  CHECK(parts.find("<LastModified>1970-01-01T00:00:00.000Z</LastModified>") != std::string::npos);
}

TEST_CASE("CompleteMultipartUpload bodies as boto3 and the AWS CLI write them", "[s3]") {
  // botocore: namespaced root, quotes in the ETag text unescaped.
  auto boto = parse_complete_body(
    R"(<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Part><ETag>"e1"</ETag><PartNumber>1</PartNumber></Part>)"
    R"(<Part><ETag>"e2"</ETag><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>)");
  REQUIRE(boto);
  CHECK(*boto == std::vector<std::pair<int, std::string>>{{1, "e1"}, {2, "e2"}});
  auto escaped = parse_complete_body(
    R"(<?xml version="1.0"?><CompleteMultipartUpload><Part><PartNumber>3</PartNumber><ETag>&quot;e3&quot;</ETag></Part></CompleteMultipartUpload>)");
  REQUIRE(escaped);
  CHECK(*escaped == std::vector<std::pair<int, std::string>>{{3, "e3"}});
  CHECK_FALSE(parse_complete_body("<CompleteMultipartUpload></CompleteMultipartUpload>"));
  CHECK_FALSE(parse_complete_body("not xml"));
  CHECK_FALSE(parse_complete_body("<CompleteMultipartUpload><Part><PartNumber>x</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>"));
}

TEST_CASE("Range headers against an object's size", "[s3]") {
  auto r = parse_range("bytes=0-9", 100);
  REQUIRE(r);
  CHECK((r->first == 0 && r->last == 9 && !r->unsatisfiable));
  CHECK(parse_range("bytes=90-", 100)->first == 90);
  CHECK(parse_range("bytes=90-", 100)->last == 99);
  CHECK(parse_range("bytes=-10", 100)->first == 90);
  CHECK(parse_range("bytes=-1000", 100)->first == 0);
  CHECK(parse_range("bytes=95-200", 100)->last == 99);
  CHECK(parse_range("bytes=100-", 100)->unsatisfiable);
  CHECK(parse_range("bytes=-0", 100)->unsatisfiable);
  CHECK_FALSE(parse_range("bytes=5-1", 100));
  CHECK_FALSE(parse_range("items=0-1", 100));
  CHECK_FALSE(parse_range("bytes=0-1,5-6", 100));
  CHECK(http_date(0) == "Thu, 01 Jan 1970 00:00:00 GMT");
}

TEST_CASE("Request targets split into a decoded path and query, malformed escapes refused", "[s3]") {
  auto t = split_target("/bucket/a%20b/c?partNumber=2&uploadId=u%2F1&=skipped&flag");
  REQUIRE(t);
  CHECK(t->path == "/bucket/a b/c");
  REQUIRE(t->query.size() == 3);
  CHECK(t->query[0] == std::pair<std::string, std::string>{"partNumber", "2"});
  CHECK(t->query[1] == std::pair<std::string, std::string>{"uploadId", "u/1"});
  CHECK(t->query[2] == std::pair<std::string, std::string>{"flag", ""});
  CHECK_FALSE(split_target("/bucket/%zz"));
  CHECK_FALSE(split_target("/bucket/k?x=%4"));
  CHECK(split_target("/bucket/k")->query.empty());
}

TEST_CASE("A refused signature answers the S3 error clients expect", "[s3]") {
  using cl::domain::sigv4::failure;
  CHECK(auth_error(failure::missing, "", false).code == "AccessDenied");
  CHECK(auth_error(failure::malformed, "bad", false).code == "AuthorizationHeaderMalformed");
  CHECK(auth_error(failure::malformed, "bad", true).code == "AuthorizationQueryParametersError");
  CHECK(auth_error(failure::malformed, "bad", true).message == "bad");
  CHECK(auth_error(failure::unknown_key, "", false).code == "InvalidAccessKeyId");
  CHECK(auth_error(failure::expired, "", true).message == "Request has expired");
  CHECK(auth_error(failure::not_yet_valid, "", false).code == "RequestTimeTooSkewed");
  CHECK(auth_error(failure::not_yet_valid, "", true).code == "AccessDenied");
  CHECK(auth_error(failure::signature_mismatch, "", false).status == 403);
  CHECK(auth_error(failure::signature_mismatch, "", false).code == "SignatureDoesNotMatch");
}

TEST_CASE("Declared digests are read from standard base64; aws-chunked bodies are recognised", "[s3]") {
  // MD5("") in base64 and hex.
  CHECK(hex_of_base64("1B2M2Y8AsgTpgAmY7PhCfg==") == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(hex_of_base64("not base64!").empty());
  CHECK(aws_chunked("STREAMING-UNSIGNED-PAYLOAD-TRAILER", ""));
  CHECK(aws_chunked("STREAMING-AWS4-HMAC-SHA256-PAYLOAD", ""));
  CHECK(aws_chunked("UNSIGNED-PAYLOAD", "AWS-Chunked"));
  CHECK(aws_chunked("UNSIGNED-PAYLOAD", "aws-chunked,gzip"));
  CHECK_FALSE(aws_chunked("UNSIGNED-PAYLOAD", "gzip"));
  CHECK_FALSE(aws_chunked("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", ""));
}
