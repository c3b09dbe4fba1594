"""The API reference in a real browser (issue 70): GET /v0/docs opened in headless Chromium
(tests/client/api_docs.mjs). The page renders without a console error, a failed or blocked request
or a request to another origin; every operation of the OpenAPI document the service serves appears
(counted against the document, so a route added without docs fails); the scopes, the error reasons
and this API's headers are on the page; a screenshot is left in the build folder.
  api_docs.py CONTENTLAKE_BINARY SOURCE_DIR MODULES CHROMIUM"""
import json
import os
import subprocess
import sys

from harness import Service


def main():
    binary, source, modules, chromium = sys.argv[1:5]
    screenshot = os.path.join(os.path.dirname(binary), "api-docs.png")
    failures = []
    with Service(binary, source) as svc:
        status, _, body = svc.request("GET", "/v0/openapi.json")
        assert status == 200, status
        document = json.loads(body)
        operations = {op["operationId"] for item in document["paths"].values() for op in item.values()
                      if isinstance(op, dict) and "operationId" in op}
        reasons = {e["reason"] for e in document.get("x-error-catalogue", [])}
        out = subprocess.run(["node", os.path.join(source, "tests/client/api_docs.mjs"), modules, chromium,
                              "http://127.0.0.1:%d/v0/docs" % svc.port, screenshot],
                             capture_output=True, text=True, timeout=180)
        if out.returncode != 0:
            print(out.stdout, out.stderr)
            raise SystemExit("FAILED: the browser did not finish")
        report = json.loads(out.stdout.strip().splitlines()[-1])
    if report["status"] != 200:
        failures.append("GET /v0/docs answered %s" % report["status"])
    if "'unsafe" in report["policy"] or "default-src 'none'" not in report["policy"]:
        failures.append("the page's policy is not the strict one: " + report["policy"])
    for kind in ("console_errors", "failed", "elsewhere", "violations"):
        if report[kind]:
            failures.append("%s: %s" % (kind, report[kind][:5]))
    rendered = set(report["operations"])
    if rendered != operations:
        failures.append("operations in the document but not on the page: %s; on the page but not in the document: %s"
                        % (sorted(operations - rendered), sorted(rendered - operations)))
    scoped = {op["operationId"]: op["x-required-scope"] for item in document["paths"].values() for op in item.values()
              if isinstance(op, dict) and "x-required-scope" in op}
    unshown = sorted(o for o, scope in scoped.items() if scope not in report["operations"].get(o, []))
    if not scoped or unshown:
        failures.append("operations whose scope their section does not show: %s" % unshown[:10])
    missing_reasons = sorted(reasons - set(report["reasons"]))
    if not reasons or missing_reasons:
        failures.append("error reasons of the catalogue not on the page: %s" % missing_reasons[:10])
    want_headers = ["Idempotency-Key", "Content-Lake-Position", "X-Usage-Purpose", "Content-Usage", "tdm-reservation"]
    if report["headers_named"] != want_headers:
        failures.append("headers not on the page: %s" % sorted(set(want_headers) - set(report["headers_named"])))
    print("api_docs: %d operations rendered of %d, the scope shown on %d of %d, %d catalogue reasons, screenshot %s"
          % (len(rendered), len(operations), len(scoped) - len(unshown), len(scoped), len(reasons), screenshot))
    if failures:
        for f in failures:
            print("FAILED: " + f)
        sys.exit(1)


if __name__ == "__main__":
    main()
