#!/usr/bin/env bash
# The embedded S3 listener against the AWS CLI (Debian's awscli): a multipart upload and a
# download with `aws s3 cp`, head-object, put-object, and a URL from `aws s3 presign` fetched with
# curl. Usage: s3_awscli.sh S3_TEST_SERVER_BINARY
set -euo pipefail
server_bin=$1
aws=/usr/bin/aws
work=$(mktemp -d)
cleanup() { exec 9>&-; wait || true; rm -rf "$work"; }
trap cleanup EXIT
key=CLTESTKEY0000000002 secret=c2VjcmV0LWF3c2NsaS10ZXN0LWtleQ
mkfifo "$work/stdin"
"$server_bin" "$work/data" "$key" "$secret" <"$work/stdin" >"$work/port" 2>"$work/server.log" &
exec 9>"$work/stdin"  # the server runs until this closes
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(head -1 "$work/port")
cat >"$work/config" <<CFG
[default]
region = us-east-1
s3 =
  addressing_style = path
  multipart_threshold = 8MB
  multipart_chunksize = 8MB
CFG
export AWS_CONFIG_FILE="$work/config" AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_PAGER=""
s3() { "$aws" --endpoint-url "http://127.0.0.1:$port" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }

head -c $((20 * 1024 * 1024 + 12345)) /dev/urandom >"$work/big"
s3 s3 cp --only-show-errors "$work/big" s3://contentlake/t_demo/blb_9/upl_9
s3 s3 cp --only-show-errors s3://contentlake/t_demo/blb_9/upl_9 "$work/back"
cmp -s "$work/big" "$work/back" || fail "aws s3 cp download differs from the upload"
size=$(s3 s3api head-object --bucket contentlake --key t_demo/blb_9/upl_9 --query ContentLength --output text)
[ "$size" = $((20 * 1024 * 1024 + 12345)) ] || fail "head-object ContentLength $size"
etag=$(s3 s3api head-object --bucket contentlake --key t_demo/blb_9/upl_9 --query ETag --output text)
[[ "$etag" == *-3\" ]] || fail "a 20 MiB upload in 8 MiB parts has a -3 multipart ETag, got $etag"

printf 'small body' >"$work/small"
s3 s3api put-object --bucket contentlake --key t_demo/blb_8/upl_8 --body "$work/small" --content-type text/plain >/dev/null
url=$(s3 s3 presign s3://contentlake/t_demo/blb_8/upl_8 --expires-in 60)
[ "$(curl -sf "$url")" = "small body" ] || fail "a URL from aws s3 presign fetched with curl"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data x "$url")
[ "$code" = 403 ] || fail "the presigned GET used for PUT answered $code"

grep -q "s3 PUT /contentlake/t_demo/blb_8/upl_8 200" "$work/server.log" || fail "the access log has the key path and status"
if grep -q -e X-Amz-Signature -e X-Amz-Credential -e "$secret" "$work/server.log"; then fail "a signature or the secret is in the log"; fi
echo "all AWS CLI checks passed"
