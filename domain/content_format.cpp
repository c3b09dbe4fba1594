#include "domain/content_format.hpp"
#include "domain/text.hpp"

#include <map>

#include <boost/json.hpp>

#include <algorithm>
#include <set>

namespace cl::domain {

namespace json = boost::json;

namespace {

const std::set<std::string_view> block_types = {"heading", "paragraph", "quote", "list", "code", "table", "image"};
const std::set<std::string_view> decorators = {"strong", "em", "underline", "strike", "code"};
const std::set<std::string_view> entity_types = {"PERSON", "ORGANIZATION", "PLACE", "WORK", "EVENT", "CONCEPT", "OTHER"};
constexpr std::size_t max_columns = 64;

std::string_view sv(const json::string& s) {
  return {s.data(), s.size()};
}

bool valid_key(const json::value* v) {
  if (!v || !v->is_string()) return false;
  auto s = sv(v->as_string());
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

/// Walks one document; stops at the first violation.
class validator {
public:
  explicit validator(std::string base) : base_(std::move(base)) {}

  std::optional<content_violation> run(const json::value& content) {
    if (!content.is_object()) return fail("PCF001", base_, "content must be a JSON object");
    const auto& doc = content.as_object();
    auto* format = doc.if_contains("format");
    if (!format || !format->is_string() || sv(format->as_string()) != content_format_v1)
      return fail("PCF001", base_ + "/format", "format must be \"" + std::string{content_format_v1} + "\"");
    for (const auto& member : doc)
      if (member.key() != "format" && member.key() != "blocks")
        return fail("PCF001", base_ + "/" + std::string{member.key()}, "unknown member of the content document");
    auto* blocks = doc.if_contains("blocks");
    if (!blocks || !blocks->is_array()) return fail("PCF002", base_ + "/blocks", "blocks must be an array");
    if (blocks->as_array().size() > max_blocks)
      return fail("PCF002", base_ + "/blocks", "at most " + std::to_string(max_blocks) + " blocks");
    std::size_t i = 0;
    for (const auto& b : blocks->as_array()) {
      auto path = base_ + "/blocks/" + std::to_string(i++);
      if (!b.is_object()) return fail("PCF002", path, "each block must be a JSON object");
      if (auto v = block(b.as_object(), path)) return v;
    }
    if (auto at = control_at(content, base_))
      return fail("PCF005", *at,
                  "text must not contain control characters other than tab, line feed and carriage return "
                  "(U+0000-U+001F, U+007F-U+009F): Markdown cannot carry them");
    return std::nullopt;
  }

private:
  /// True when `s` holds a C0 control other than tab, LF and CR, DEL, or a C1 control: NUL reads
  /// back as U+FFFD in CommonMark, the others cannot be written as character references there.
  static bool has_control(std::string_view s) { return has_control_character(s, "\t\n\r"); }

  /// The JSON Pointer of the first string under `v` (at `path`) with a control character.
  static std::optional<std::string> control_at(const json::value& v, const std::string& path) {
    if (v.is_string()) {
      if (has_control(sv(v.as_string()))) return path;
    } else if (v.is_array()) {
      std::size_t i = 0;
      for (const auto& item : v.as_array())
        if (auto at = control_at(item, path + "/" + std::to_string(i++))) return at;
    } else if (v.is_object()) {
      for (const auto& member : v.as_object())
        if (auto at = control_at(member.value(), path + "/" + std::string{member.key()})) return at;
    }
    return std::nullopt;
  }

  static std::optional<content_violation> fail(const char* rule, std::string path, std::string description) {
    return content_violation{rule, std::move(path), std::move(description)};
  }

  std::optional<content_violation> block(const json::object& b, const std::string& path) {
    auto* type = b.if_contains("type");
    if (!type || !type->is_string() || !block_types.count(sv(type->as_string())))
      return fail("PCF003", path + "/type",
                  "type must be one of heading, paragraph, quote, list, code, table, image");
    auto* key = b.if_contains("key");
    if (!valid_key(key))
      return fail("PCF004", path + "/key", "key must be 1-64 characters of [A-Za-z0-9_-]");
    if (!keys_.insert(std::string{key->as_string()}).second)
      return fail("PCF004", path + "/key", "key must be unique within the document");
    auto t = sv(type->as_string());
    if (t == "heading") {
      auto* level = b.if_contains("level");
      if (!level || !level->is_int64() || level->as_int64() < 1 || level->as_int64() > 6)
        return fail("PCF006", path + "/level", "heading level must be an integer from 1 to 6");
    }
    std::set<std::string> defs;
    if (auto v = mark_defs(b, path, defs)) return v;
    if (t == "heading" || t == "paragraph" || t == "quote") {
      if (auto v = spans(b, path, defs)) return v;
      if (auto* a = b.if_contains("attribution"); a && !a->is_string())
        return fail("PCF005", path + "/attribution", "attribution must be a string");
    } else if (t == "code") {
      auto* text = b.if_contains("text");
      if (!text || !text->is_string()) return fail("PCF005", path + "/text", "code blocks carry their text as a string");
      if (auto* lang = b.if_contains("language"); lang && !lang->is_string())
        return fail("PCF005", path + "/language", "language must be a string");
    } else if (t == "list") {
      auto* ordered = b.if_contains("ordered");
      if (!ordered || !ordered->is_bool()) return fail("PCF009", path + "/ordered", "ordered must be true or false");
      if (auto v = list_items(b, path, defs, 1)) return v;
    } else if (t == "table") {
      if (auto v = table(b, path, defs)) return v;
    } else if (t == "image") {
      auto* blob = b.if_contains("blob");
      if (!blob || !blob->is_string() || blob->as_string().size() <= 4 || sv(blob->as_string()).substr(0, 4) != "blb_")
        return fail("PCF011", path + "/blob", "image blocks reference a blob by its blb_ id");
      auto* alt = b.if_contains("alt");
      if (!alt || !alt->is_string()) return fail("PCF011", path + "/alt", "image blocks carry alt text");
      if (auto* c = b.if_contains("caption"); c && !c->is_string())
        return fail("PCF011", path + "/caption", "caption must be a string");
    }
    return std::nullopt;
  }

  std::optional<content_violation> mark_defs(const json::object& b, const std::string& path, std::set<std::string>& defs) {
    auto* list = b.if_contains("mark_defs");
    if (!list) return std::nullopt;
    if (!list->is_array()) return fail("PCF008", path + "/mark_defs", "mark_defs must be an array");
    std::size_t i = 0;
    for (const auto& d : list->as_array()) {
      auto p = path + "/mark_defs/" + std::to_string(i++);
      if (!d.is_object()) return fail("PCF008", p, "a mark definition is an object");
      const auto& o = d.as_object();
      auto* key = o.if_contains("key");
      if (!valid_key(key)) return fail("PCF008", p + "/key", "key must be 1-64 characters of [A-Za-z0-9_-]");
      if (decorators.count(sv(key->as_string())) || !defs.insert(std::string{key->as_string()}).second)
        return fail("PCF008", p + "/key", "key must be unique in the block and not a decorator name");
      auto* type = o.if_contains("type");
      if (!type || !type->is_string()) return fail("PCF008", p + "/type", "type must be link or entity");
      auto t = sv(type->as_string());
      if (t == "link") {
        auto* href = o.if_contains("href");
        std::string_view h = href && href->is_string() ? sv(href->as_string()) : std::string_view{};
        if (!(h.substr(0, 8) == "https://" || h.substr(0, 7) == "http://" || h.substr(0, 7) == "mailto:") || h.size() < 8)
          return fail("PCF008", p + "/href", "a link needs an absolute http, https or mailto URL");
      } else if (t == "entity") {
        auto* id = o.if_contains("entity_id");
        if (!id || !id->is_string() || id->as_string().empty())
          return fail("PCF008", p + "/entity_id", "an entity annotation needs an entity_id");
        auto* et = o.if_contains("entity_type");
        if (!et || !et->is_string() || !entity_types.count(sv(et->as_string())))
          return fail("PCF008", p + "/entity_type",
                      "entity_type must be one of PERSON, ORGANIZATION, PLACE, WORK, EVENT, CONCEPT, OTHER");
        if (auto* label = o.if_contains("label"); label && !label->is_string())
          return fail("PCF008", p + "/label", "label must be a string");
      } else {
        return fail("PCF008", p + "/type", "type must be link or entity");
      }
    }
    return std::nullopt;
  }

  std::optional<content_violation> spans(const json::object& holder, const std::string& path,
                                         const std::set<std::string>& defs) {
    auto* children = holder.if_contains("children");
    if (!children || !children->is_array() || children->as_array().empty())
      return fail("PCF005", path + "/children", "children must be a non-empty array of spans");
    std::size_t i = 0;
    for (const auto& c : children->as_array()) {
      auto p = path + "/children/" + std::to_string(i++);
      if (!c.is_object()) return fail("PCF005", p, "a span is an object");
      const auto& s = c.as_object();
      auto* type = s.if_contains("type");
      if (!type || !type->is_string() || type->as_string() != "span")
        return fail("PCF005", p + "/type", "a span has type \"span\"");
      auto* text = s.if_contains("text");
      if (!text || !text->is_string()) return fail("PCF005", p + "/text", "a span carries its text as a string");
      if (auto* marks = s.if_contains("marks")) {
        if (!marks->is_array()) return fail("PCF007", p + "/marks", "marks must be an array of strings");
        std::size_t k = 0;
        for (const auto& m : marks->as_array()) {
          auto mp = p + "/marks/" + std::to_string(k++);
          if (!m.is_string() || !(decorators.count(sv(m.as_string())) || defs.count(std::string{m.as_string()})))
            return fail("PCF007", mp, "a mark is a decorator (strong, em, underline, strike, code) or the key of one "
                                      "of the block's mark_defs");
        }
      }
    }
    return std::nullopt;
  }

  std::optional<content_violation> list_items(const json::object& holder, const std::string& path,
                                              const std::set<std::string>& defs, std::size_t depth) {
    auto* items = holder.if_contains("items");
    if (!items || !items->is_array() || items->as_array().empty())
      return fail("PCF009", path + "/items", "a list has a non-empty array of items");
    if (depth > max_list_depth)
      return fail("PCF009", path + "/items", "lists nest at most " + std::to_string(max_list_depth) + " deep");
    std::size_t i = 0;
    for (const auto& item : items->as_array()) {
      auto p = path + "/items/" + std::to_string(i++);
      if (!item.is_object()) return fail("PCF009", p, "a list item is an object");
      if (auto v = spans(item.as_object(), p, defs)) return v;
      if (item.as_object().contains("items"))
        if (auto v = list_items(item.as_object(), p, defs, depth + 1)) return v;
    }
    return std::nullopt;
  }

  std::optional<content_violation> table(const json::object& b, const std::string& path, const std::set<std::string>& defs) {
    auto* rows = b.if_contains("rows");
    if (!rows || !rows->is_array() || rows->as_array().empty())
      return fail("PCF010", path + "/rows", "a table has a non-empty array of rows");
    std::size_t width = 0, r = 0;
    for (const auto& row : rows->as_array()) {
      auto p = path + "/rows/" + std::to_string(r);
      if (!row.is_array() || row.as_array().empty() || row.as_array().size() > max_columns)
        return fail("PCF010", p, "a row is a non-empty array of at most " + std::to_string(max_columns) + " cells");
      if (r == 0) width = row.as_array().size();
      if (row.as_array().size() != width) return fail("PCF010", p, "every row has as many cells as the first");
      std::size_t c = 0;
      for (const auto& cell : row.as_array()) {
        auto cp = p + "/" + std::to_string(c++);
        if (!cell.is_object()) return fail("PCF010", cp, "a cell is an object with children");
        if (auto v = spans(cell.as_object(), cp, defs)) return v;
      }
      ++r;
    }
    if (auto* h = b.if_contains("header_rows"))
      if (!h->is_int64() || h->as_int64() < 0 || static_cast<std::size_t>(h->as_int64()) > r)
        return fail("PCF010", path + "/header_rows", "header_rows must be an integer from 0 to the number of rows");
    return std::nullopt;
  }

  std::string base_;
  std::set<std::string> keys_;
};

const json::object* find_def(const json::object& block, std::string_view key) {
  if (auto* defs = block.if_contains("mark_defs"))
    for (const auto& d : defs->as_array())
      if (sv(d.as_object().at("key").as_string()) == key) return &d.as_object();
  return nullptr;
}

void entity_walk(const json::object& holder, const json::object& block, std::vector<entity_mention>& out) {
  if (auto* children = holder.if_contains("children"))
    for (const auto& c : children->as_array()) {
      const auto& span = c.as_object();
      if (auto* marks = span.if_contains("marks"))
        for (const auto& m : marks->as_array())
          if (auto* def = find_def(block, sv(m.as_string())); def && def->at("type").as_string() == "entity") {
            entity_mention e;
            e.entity_id = std::string{def->at("entity_id").as_string()};
            e.entity_type = std::string{def->at("entity_type").as_string()};
            if (auto* label = def->if_contains("label")) e.label = std::string{label->as_string()};
            e.block_key = std::string{block.at("key").as_string()};
            e.text = std::string{span.at("text").as_string()};
            out.push_back(std::move(e));
          }
    }
  if (auto* items = holder.if_contains("items"))
    for (const auto& item : items->as_array()) entity_walk(item.as_object(), block, out);
  if (auto* rows = holder.if_contains("rows"))
    for (const auto& row : rows->as_array())
      for (const auto& cell : row.as_array()) entity_walk(cell.as_object(), block, out);
}

}  // namespace

std::optional<content_violation> validate_content(const json::value& content, std::string_view base) {
  return validator{std::string{base}}.run(content);
}

const std::vector<content_rule>& content_rules() {
  static const std::vector<content_rule> rules = {
    {"PCF001", "The content is a JSON object with `format` \"cl.content/1\" and no members but `format` and `blocks`."},
    {"PCF002", "`blocks` is an array of at most 10,000 block objects."},
    {"PCF003", "Each block's `type` is one of heading, paragraph, quote, list, code, table, image."},
    {"PCF004", "Each block's `key` is 1-64 characters of [A-Za-z0-9_-] and unique within the document."},
    {"PCF005", "Text is well-formed: `children` is a non-empty array of `{\"type\":\"span\",\"text\":...}`; code "
               "blocks carry `text`; `attribution` and `language` are strings."},
    {"PCF006", "A heading's `level` is an integer from 1 to 6."},
    {"PCF007", "Each span mark is a decorator (strong, em, underline, strike, code) or the key of one of the "
               "block's `mark_defs`."},
    {"PCF008", "Each mark definition has a unique `key` and is a `link` with an absolute http(s)/mailto `href`, or an "
               "`entity` with `entity_id` and an `entity_type` from the documented list."},
    {"PCF009", "A list has boolean `ordered` and a non-empty `items` array of items with children, nested at most 8 "
               "deep."},
    {"PCF010", "A table has a non-empty `rows` array of rows of equal width (1-64 cells), each cell with children; "
               "`header_rows` is 0 to the row count."},
    {"PCF011", "An image references a blob by its `blb_` id in `blob` and carries `alt` text; `caption` is a string. "
               "The blob exists and the writer may read it now (checked by the service on every write)."},
  };
  return rules;
}

void for_each_block_line(const json::value& content, const std::function<void(std::string)>& line) {
  for (const auto& b : content.as_object().at("blocks").as_array()) line(json::serialize(b));
}

std::vector<entity_mention> entity_mentions(const json::value& content) {
  std::vector<entity_mention> out;
  for (const auto& b : content.as_object().at("blocks").as_array()) entity_walk(b.as_object(), b.as_object(), out);
  return out;
}

}  // namespace cl::domain

namespace cl::domain {

api_error to_api_error(const content_violation& v) {
  int n = std::stoi(v.rule.substr(3));
  auto id = static_cast<error_id>(static_cast<int>(error_id::pcf001) + n - 1);
  return api_error{id, "The content breaks rule " + v.rule + ": " + v.description + ".", {{v.path, v.description}}};
}

boost::json::array entity_overlay(const boost::json::value& content) {
  namespace json = boost::json;
  json::array entities;
  std::map<std::string, std::size_t> index;
  for (const auto& m : entity_mentions(content)) {
    auto [it, fresh] = index.emplace(m.entity_id, entities.size());
    if (fresh) {
      json::object e{{"entity_id", m.entity_id}, {"entity_type", m.entity_type}, {"mentions", json::array{}}};
      if (!m.label.empty()) e["label"] = m.label;
      entities.push_back(std::move(e));
    }
    entities[it->second].as_object()["mentions"].as_array().push_back(
      json::object{{"block_key", m.block_key}, {"text", m.text}});
  }
  return entities;
}

std::vector<blob_reference> blob_references(const json::value& content, std::string_view base) {
  std::vector<blob_reference> out;
  const auto* doc = content.if_object();
  const auto* blocks = doc ? doc->if_contains("blocks") : nullptr;
  if (!blocks || !blocks->is_array()) return out;
  const auto& list = blocks->as_array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto* block = list[i].if_object();
    if (!block) continue;
    auto* type = block->if_contains("type");
    auto* blob = block->if_contains("blob");
    if (type && type->is_string() && type->as_string() == "image" && blob && blob->is_string())
      out.push_back({std::string{base} + "/blocks/" + std::to_string(i) + "/blob", std::string{blob->as_string()}});
  }
  return out;
}

std::vector<std::string> referenced_blobs(const json::value& content) {
  std::vector<std::string> out;
  for (auto& r : blob_references(content, "")) out.push_back(std::move(r.blob_id));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

void collect_text(const json::value& v, std::string& out) {
  if (const auto* o = v.if_object()) {
    for (const auto& m : *o) {
      if ((m.key() == "text" || m.key() == "alt" || m.key() == "caption") && m.value().is_string()) {
        if (!out.empty()) out.push_back('\n');
        out.append(m.value().as_string().data(), m.value().as_string().size());
      } else {
        collect_text(m.value(), out);
      }
    }
  } else if (const auto* a = v.if_array()) {
    for (const auto& e : *a) collect_text(e, out);
  }
}

}  // namespace

std::string search_text(const json::value& content) {
  std::string out;
  if (const auto* doc = content.if_object())
    if (const auto* blocks = doc->if_contains("blocks")) collect_text(*blocks, out);
  return out;
}

std::vector<std::string> referenced_blobs_in(std::string_view content_json) {
  if (content_json.find("\"image\"") == std::string_view::npos) return {};
  return referenced_blobs(json::parse(content_json));
}

}  // namespace cl::domain
