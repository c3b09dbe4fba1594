# The site part of the edge configuration, included by contentlake.vcl: where the service
# listens and who may purge. deploy/edge/run writes its own copy with the ports it was given.
backend contentlake {
  .host = "127.0.0.1";
  .port = "8080";
  # Long polls of the change feed answer after up to 60 s; event streams send a heartbeat every 15 s.
  .first_byte_timeout = 90s;
  .between_bytes_timeout = 60s;
}

# Purges are accepted from these addresses only (and only with the secret).
acl purgers {
  "127.0.0.1";
  "::1";
}
