#include "domain/api_reference.hpp"

namespace cl::domain {

std::string api_reference_page(std::string_view nonce) {
  std::string page;
  page.reserve(512);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // No icon to ask for: a browser would otherwise ask /favicon.ico, which this API does not have.
  page += "<link rel=\"icon\" href=\"data:,\">\n<title>Content Lake API reference</title>\n</head>\n";
  page += "<body>\n<redoc></redoc>\n<script src=\"";
  page += api_reference_script_path;
  page += "\" nonce=\"";
  page += nonce;
  page += "\"></script>\n</body>\n</html>\n";
  return page;
}

std::string_view api_reference_start() {
  // Redoc's options: `showExtensions` names the one vendor extension a reader needs, the scope each
  // operation requires (shown on the operation as `x-required-scope: content-lake.read`); success
  // answers expanded show their headers (the rights headers among them); `nonce` reaches every
  // <style> Redoc injects after it starts (styled-components).
  static const std::string start = std::string{"\n;(function () {\n"
                                               "  var script = document.currentScript;\n"
                                               "  var element = document.querySelector('redoc');\n"
                                               "  if (!element || !script) return;\n"
                                               "  Redoc.init('"}
                                   + std::string{api_document_path}
                                   + "', {\n"
                                     "    nonce: script.nonce,\n"
                                     "    showExtensions: ['x-required-scope'],\n"
                                     "    requiredPropsFirst: true,\n"
                                     "    pathInMiddlePanel: true,\n"
                                     "    expandResponses: '200,201,202,204,302,303'\n"
                                     "  }, element);\n"
                                     "})();\n";
  return start;
}

std::string api_reference_policy(std::string_view nonce) {
  std::string n = "'nonce-" + std::string{nonce} + "'";
  return "default-src 'none'; script-src 'self'; style-src 'self' " + n
         + "; font-src 'self'; img-src 'self' data:; connect-src 'self'; worker-src 'self' blob:"
           "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'";
}

}  // namespace cl::domain
