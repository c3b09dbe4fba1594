#pragma once
/// What text the API takes as a value it keeps or compares: the one rule every backend applies
/// the same way (docs/api.md "Text in requests"), checked where a request enters, so no store is
/// ever handed a value it would cut (PostgreSQL's `text` ends at U+0000 and takes only UTF-8).

#include <optional>
#include <string_view>

namespace cl::domain {

/// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool valid_utf8(std::string_view s);

/// True when `s` holds a C0 control (U+0000-U+001F), DEL or a C1 control (U+0080-U+009F).
/// `except` lists C0 controls allowed anyway (content text keeps tab, line feed, carriage return).
bool has_control_character(std::string_view s, std::string_view except = {});

/// Why `s` cannot be a value of a request: "must not contain U+0000" or "must be UTF-8";
/// nullopt when it can.
std::optional<std::string_view> text_problem(std::string_view s);

}  // namespace cl::domain
