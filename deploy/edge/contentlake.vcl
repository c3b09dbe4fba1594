# The edge cache in front of contentlake (issue 29, part 3): Varnish 7.1 with vmod_xkey
# (Debian: varnish, varnish-modules). docs/operations.md "Edge cache" explains how to run it;
# deploy/edge/run starts it (and the TLS front) for one machine.
#
# - Caches only the reads that say an edge may keep them: a 200 to GET or HEAD of a Resource, its
#   entities, a Work or a Source that carries `xkey` and `Surrogate-Control: max-age=N` (N is the
#   time until the token expires or the rights change at a window edge; capped here). Nothing
#   else is cached; the change feed and its event stream pass through unbuffered.
# - The cache key holds the `Authorization` header (and `X-Usage-Purpose`, `Accept`): two tokens
#   never share an entry, even of the same principal.
# - Purges come from the service's purger: `PURGE` with `X-Purge-Secret` (the environment variable
#   CONTENTLAKE_PURGE_SECRET of varnishd) from an address in the `purgers` ACL; `xkey-purge`
#   removes what carries the keys, `xkey-softpurge` makes it revalidate, `X-Purge-All` bans all.
# - `xkey`, `Surrogate-Key` and `Surrogate-Control` never reach clients.
vcl 4.1;

import std;
import xkey;

# The backend and the purge ACL of this site (deploy/edge/contentlake-site.vcl is an example).
include "contentlake-site.vcl";

sub vcl_recv {
  if (req.method == "PURGE") {
    if (!(client.ip ~ purgers) || std.getenv("CONTENTLAKE_PURGE_SECRET") == ""
        || req.http.X-Purge-Secret != std.getenv("CONTENTLAKE_PURGE_SECRET")) {
      return (synth(403, "Forbidden"));
    }
    if (req.http.X-Purge-All) {
      ban("obj.status != 0");
      return (synth(200, "Banned"));
    }
    set req.http.X-Purged = 0;
    if (req.http.xkey-purge) {
      set req.http.X-Purged = xkey.purge(req.http.xkey-purge);
    }
    if (req.http.xkey-softpurge) {
      set req.http.X-Purged = std.integer(req.http.X-Purged, 0) + xkey.softpurge(req.http.xkey-softpurge);
    }
    return (synth(200, "Purged " + req.http.X-Purged));
  }
  # Headers only the purger sends never travel further.
  unset req.http.X-Purge-Secret;
  unset req.http.X-Purge-All;
  unset req.http.xkey-purge;
  unset req.http.xkey-softpurge;
  if (req.method != "GET" && req.method != "HEAD") {
    return (pass);
  }
  # The routes whose answers may be kept; everything else (lists, the change feed and its stream,
  # search, blobs, the OpenAPI document) passes.
  if (req.url ~ "^/v0/content-lake/(resources/[^/?]+(/entities|/rights/odrl)?|works/[^/?]+|sources/[^/?]+)(\?.*)?$") {
    return (hash);
  }
  return (pass);
}

sub vcl_hash {
  hash_data(req.url);
  if (req.http.host) {
    hash_data(req.http.host);
  } else {
    hash_data(server.ip);
  }
  # Two tokens never share an entry; the declared use and the rendering change the answer.
  hash_data("authorization:" + req.http.Authorization);
  hash_data("purpose:" + req.http.X-Usage-Purpose);
  hash_data("accept:" + req.http.Accept);
  return (lookup);
}

sub vcl_backend_response {
  if (bereq.uncacheable) {
    # Passed requests (the feed's long polls and event streams among them) stream as they come.
    set beresp.do_stream = true;
    return (deliver);
  }
  if (beresp.status == 200 && beresp.http.xkey && beresp.http.Surrogate-Control ~ "max-age=[0-9]+") {
    set beresp.ttl = std.duration(regsub(beresp.http.Surrogate-Control, "^.*max-age=([0-9]+).*$", "\1") + "s", 0s);
    # The longest this edge keeps an answer; purges usually end it much sooner.
    if (beresp.ttl > 300s) {
      set beresp.ttl = 300s;
    }
    # Never served stale: past its time or after a purge an answer is fetched again; a soft purge
    # keeps it for a conditional fetch (If-None-Match; a 304 renews it without its body).
    set beresp.grace = 0s;
    set beresp.keep = 300s;
    return (deliver);
  }
  # Not for the cache (errors, answers without keys): later requests go to the service, uncoalesced.
  set beresp.ttl = 10s;
  set beresp.grace = 0s;
  set beresp.uncacheable = true;
  return (deliver);
}

sub vcl_deliver {
  unset resp.http.xkey;
  unset resp.http.Surrogate-Key;
  unset resp.http.Surrogate-Control;
  if (obj.hits > 0) {
    set resp.http.X-Cache = "HIT";
    # The stored answer names the request that filled it; this one is another.
    if (req.http.X-Request-Id) {
      set resp.http.X-Request-Id = req.http.X-Request-Id;
    } else {
      set resp.http.X-Request-Id = "edge-" + req.xid;
    }
  } else {
    set resp.http.X-Cache = "MISS";
  }
}

sub vcl_synth {
  # A refused or answered purge says only its status.
  set resp.http.Content-Type = "text/plain";
  set resp.body = resp.reason + {"
"};
  return (deliver);
}
