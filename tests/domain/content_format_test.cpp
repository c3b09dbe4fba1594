// The content format: one test per validation rule (PCF001..PCF011), and the renderings.

#include "tests/support/paths.hpp"
#include "domain/content_format.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <fstream>

using namespace cl::domain;
namespace json = boost::json;

namespace {

/// A document that uses every block type, decorators, a link and an entity annotation.
json::value sample() {
  return json::parse(R"json({
    "format": "cl.content/1",
    "blocks": [
      {"type": "heading", "key": "h1", "level": 1, "children": [{"type": "span", "text": "On Tides"}]},
      {"type": "paragraph", "key": "p1",
       "mark_defs": [{"key": "l1", "type": "link", "href": "https://example.org/moon"},
                     {"key": "e1", "type": "entity", "entity_id": "ent_moon", "entity_type": "PLACE", "label": "Moon"}],
       "children": [{"type": "span", "text": "The "},
                    {"type": "span", "text": "Moon", "marks": ["e1", "l1"]},
                    {"type": "span", "text": " pulls", "marks": ["strong"]},
                    {"type": "span", "text": " *oceans*", "marks": ["em"]}]},
      {"type": "quote", "key": "q1", "children": [{"type": "span", "text": "Time and tide"}], "attribution": "Proverb"},
      {"type": "list", "key": "l1", "ordered": true,
       "items": [{"children": [{"type": "span", "text": "spring"}],
                  "items": [{"children": [{"type": "span", "text": "new moon"}]}]},
                 {"children": [{"type": "span", "text": "neap"}]}]},
      {"type": "code", "key": "c1", "language": "python", "text": "print('tide')"},
      {"type": "table", "key": "t1", "header_rows": 1,
       "rows": [[{"children": [{"type": "span", "text": "Port"}]}, {"children": [{"type": "span", "text": "Range"}]}],
                [{"children": [{"type": "span", "text": "Brest"}]}, {"children": [{"type": "span", "text": "7 m"}]}]]},
      {"type": "image", "key": "i1", "blob": "blb_tidechart", "alt": "Tide chart", "caption": "Brest, March"}
    ]})json");
}

/// The first violation after `edit` changes the sample document.
std::optional<content_violation> violation_after(const std::function<void(json::object&)>& edit) {
  auto doc = sample();
  edit(doc.as_object());
  return validate_content(doc, "/content");
}

json::object& block(json::object& doc, std::size_t i) {
  return doc["blocks"].as_array()[i].as_object();
}

void expect(const std::optional<content_violation>& v, const std::string& rule, const std::string& path) {
  REQUIRE(v);
  CHECK(v->rule == rule);
  CHECK(v->path == path);
  CHECK_FALSE(v->description.empty());
}

}  // namespace

TEST_CASE("the sample document is valid", "[content]") {
  auto v = validate_content(sample(), "/content");
  INFO((v ? v->rule + " " + v->path : ""));
  CHECK_FALSE(v);
  CHECK_FALSE(validate_content(json::parse(R"({"format":"cl.content/1","blocks":[]})"), "/content"));
}

TEST_CASE("PCF001: a versioned content object", "[content]") {
  expect(validate_content(json::parse("[]"), "/content"), "PCF001", "/content");
  expect(violation_after([](json::object& d) { d["format"] = "cl.content/2"; }), "PCF001", "/content/format");
  expect(violation_after([](json::object& d) { d.erase("format"); }), "PCF001", "/content/format");
  expect(violation_after([](json::object& d) { d["title"] = "x"; }), "PCF001", "/content/title");
}

TEST_CASE("PCF002: blocks is an array of objects, bounded", "[content]") {
  expect(violation_after([](json::object& d) { d["blocks"] = "none"; }), "PCF002", "/content/blocks");
  expect(violation_after([](json::object& d) { d["blocks"].as_array().push_back(7); }), "PCF002", "/content/blocks/7");
  expect(violation_after([](json::object& d) {
           auto& blocks = d["blocks"].as_array();
           while (blocks.size() <= max_blocks) blocks.push_back(blocks[1]);
         }),
         "PCF002", "/content/blocks");
}

TEST_CASE("PCF003: known block types", "[content]") {
  expect(violation_after([](json::object& d) { block(d, 2)["type"] = "video"; }), "PCF003", "/content/blocks/2/type");
  expect(violation_after([](json::object& d) { block(d, 0).erase("type"); }), "PCF003", "/content/blocks/0/type");
}

TEST_CASE("PCF004: block keys are well-formed and unique", "[content]") {
  expect(violation_after([](json::object& d) { block(d, 3)["key"] = "p1"; }), "PCF004", "/content/blocks/3/key");
  expect(violation_after([](json::object& d) { block(d, 1)["key"] = "has space"; }), "PCF004", "/content/blocks/1/key");
  expect(violation_after([](json::object& d) { block(d, 1).erase("key"); }), "PCF004", "/content/blocks/1/key");
}

TEST_CASE("PCF005: text is spans with string text", "[content]") {
  expect(violation_after([](json::object& d) { block(d, 0)["children"] = json::array{}; }), "PCF005",
         "/content/blocks/0/children");
  expect(violation_after([](json::object& d) { block(d, 1)["children"].as_array()[2].as_object()["text"] = 5; }),
         "PCF005", "/content/blocks/1/children/2/text");
  expect(violation_after([](json::object& d) { block(d, 1)["children"].as_array()[0].as_object()["type"] = "img"; }),
         "PCF005", "/content/blocks/1/children/0/type");
  expect(violation_after([](json::object& d) { block(d, 4).erase("text"); }), "PCF005", "/content/blocks/4/text");
  // A control character anywhere in a text (NUL, VT, NEL, ...): CommonMark reads NUL as U+FFFD and
  // no character reference carries the others. Tab, LF and CR are text.
  expect(violation_after([](json::object& d) {
           block(d, 1)["children"].as_array()[2].as_object()["text"] = json::string{std::string{"a\0b", 3}};
         }),
         "PCF005", "/content/blocks/1/children/2/text");
  expect(violation_after([](json::object& d) { block(d, 4)["text"] = json::string{std::string{"\0", 1}}; }), "PCF005",
         "/content/blocks/4/text");
  for (const char* control : {"\x0b", "\x1f", "\x7f", "\xc2\x85", "\xc2\x9f"})
    expect(violation_after([&](json::object& d) { block(d, 0)["children"].as_array()[0].as_object()["text"] = control; }),
           "PCF005", "/content/blocks/0/children/0/text");
  CHECK_FALSE(violation_after([](json::object& d) {
    block(d, 0)["children"].as_array()[0].as_object()["text"] = "tab\tline\ncr\r\xc2\xa0nbsp";
  }));
}

TEST_CASE("PCF006: heading levels 1 to 6", "[content]") {
  expect(violation_after([](json::object& d) { block(d, 0)["level"] = 7; }), "PCF006", "/content/blocks/0/level");
  expect(violation_after([](json::object& d) { block(d, 0)["level"] = "1"; }), "PCF006", "/content/blocks/0/level");
}

TEST_CASE("PCF007: marks are decorators or defined annotations", "[content]") {
  expect(violation_after([](json::object& d) {
           block(d, 1)["children"].as_array()[1].as_object()["marks"] = json::array{"e1", "glow"};
         }),
         "PCF007", "/content/blocks/1/children/1/marks/1");
  // A mark defined in another block is not visible here.
  expect(violation_after([](json::object& d) {
           block(d, 0)["children"].as_array()[0].as_object()["marks"] = json::array{"l1"};
         }),
         "PCF007", "/content/blocks/0/children/0/marks/0");
}

TEST_CASE("PCF008: mark definitions are links or entities, well-formed", "[content]") {
  auto def = [](json::object& d) -> json::object& { return block(d, 1)["mark_defs"].as_array()[0].as_object(); };
  expect(violation_after([&](json::object& d) { def(d)["href"] = "javascript:alert(1)"; }), "PCF008",
         "/content/blocks/1/mark_defs/0/href");
  expect(violation_after([&](json::object& d) { def(d)["type"] = "footnote"; }), "PCF008",
         "/content/blocks/1/mark_defs/0/type");
  expect(violation_after([&](json::object& d) { def(d)["key"] = "e1"; }), "PCF008", "/content/blocks/1/mark_defs/1/key");
  expect(violation_after([&](json::object& d) { def(d)["key"] = "strong"; }), "PCF008",
         "/content/blocks/1/mark_defs/0/key");
  expect(violation_after([](json::object& d) {
           block(d, 1)["mark_defs"].as_array()[1].as_object()["entity_type"] = "ANIMAL";
         }),
         "PCF008", "/content/blocks/1/mark_defs/1/entity_type");
}

TEST_CASE("PCF009: lists have items, bounded nesting", "[content]") {
  expect(violation_after([](json::object& d) { block(d, 3).erase("ordered"); }), "PCF009", "/content/blocks/3/ordered");
  expect(violation_after([](json::object& d) { block(d, 3)["items"] = json::array{}; }), "PCF009",
         "/content/blocks/3/items");
  expect(violation_after([](json::object& d) {
           json::object item{{"children", json::array{json::object{{"type", "span"}, {"text", "deep"}}}}};
           for (int i = 0; i < 9; ++i) item = json::object{{"children", item["children"]}, {"items", json::array{item}}};
           block(d, 3)["items"] = json::array{item};
         }),
         "PCF009", "/content/blocks/3/items/0/items/0/items/0/items/0/items/0/items/0/items/0/items/0/items");
}

TEST_CASE("PCF010: tables are rectangular rows of cells", "[content]") {
  expect(violation_after([](json::object& d) { block(d, 5)["rows"].as_array()[1].as_array().pop_back(); }), "PCF010",
         "/content/blocks/5/rows/1");
  expect(violation_after([](json::object& d) { block(d, 5)["header_rows"] = 3; }), "PCF010",
         "/content/blocks/5/header_rows");
  expect(violation_after([](json::object& d) { block(d, 5)["rows"].as_array()[0].as_array()[1] = "cell"; }), "PCF010",
         "/content/blocks/5/rows/0/1");
}

TEST_CASE("PCF011: images reference a blob and carry alt text", "[content]") {
  expect(violation_after([](json::object& d) { block(d, 6)["blob"] = "https://cdn.example/x.png"; }), "PCF011",
         "/content/blocks/6/blob");
  expect(violation_after([](json::object& d) { block(d, 6).erase("alt"); }), "PCF011", "/content/blocks/6/alt");
}

TEST_CASE("eleven documented rules", "[content]") {
  REQUIRE(content_rules().size() == 11);
  CHECK(content_rules().front().id == "PCF001");
  CHECK(content_rules().back().id == "PCF011");
}

TEST_CASE("NDJSON: one compact JSON block per line", "[content]") {
  std::vector<std::string> lines;
  for_each_block_line(sample(), [&](std::string l) { lines.push_back(std::move(l)); });
  REQUIRE(lines.size() == 7);
  for (const auto& l : lines) {
    CHECK(l.find('\n') == std::string::npos);
    CHECK(json::parse(l).is_object());
  }
  CHECK(json::parse(lines[4]).as_object().at("key").as_string() == "c1");
}

TEST_CASE("Markdown renders every block type and leaves entity annotations out", "[content]") {
  auto md = render_markdown(sample());
  CHECK(md.find("# On Tides\n") == 0);
  // Whitespace goes outside the delimiters (`** pulls**` would not be read as strong); Markdown in
  // text is escaped; link destinations are in angle brackets.
  CHECK(md.find("The [Moon](<https://example.org/moon>) **pulls** *\\*oceans\\**\n") != std::string::npos);
  CHECK(md.find("> Time and tide\n") != std::string::npos);
  CHECK(md.find("1. spring\n   1. new moon\n2. neap\n") != std::string::npos);
  CHECK(md.find("```python\nprint('tide')\n```\n") != std::string::npos);
  CHECK(md.find("| Port | Range |\n| --- | --- |\n| Brest | 7 m |\n") != std::string::npos);
  CHECK(md.find("![Tide chart](</v0/content-lake/blobs/blb_tidechart>)\n\n*Brest, March*\n") != std::string::npos);
  CHECK(md.find("ent_moon") == std::string::npos);
  CHECK(md.find("PLACE") == std::string::npos);
}

TEST_CASE("Markdown escapes what CommonMark would read as syntax", "[content][markdown]") {
  auto md = render_markdown(json::parse(R"json({"format": "cl.content/1", "blocks": [
    {"type": "paragraph", "key": "p1", "mark_defs": [{"key": "l1", "type": "link", "href": "https://x.org/a (b) c"}],
     "children": [{"type": "span", "text": "1. not a list\n- nor this\n    nor code"}, {"type": "span", "text": "link", "marks": ["l1"]}]},
    {"type": "table", "key": "t1", "rows": [[{"children": [{"type": "span", "text": "a|b\nc"}]}]]}]})json"));
  CHECK(md.find("1\\. not a list\\\n\\- nor this\\\n&#32;&#32;&#32;&#32;nor code[link](<https://x.org/a%20(b)%20c>)\n")
        != std::string::npos);
  CHECK(md.find("| a\\|b<br>c |\n") != std::string::npos);
}

TEST_CASE("Markdown writes whitespace a parser trims at a block's ends as character references", "[content][markdown]") {
  // U+00A0, U+2003, U+3000, U+2028 and U+2029 at the ends of a paragraph, a heading and a cell;
  // the same characters mid-line are written as they are.
  const std::string spaces = "\u00a0\u2003\u3000\u2028\u2029";
  json::object doc{{"format", "cl.content/1"}};
  auto spans = [&](const std::string& t) { return json::array{json::object{{"type", "span"}, {"text", t}}}; };
  doc["blocks"] = json::array{
    json::object{{"type", "paragraph"}, {"key", "p1"}, {"children", spans(spaces + "a" + spaces + "b" + spaces)}},
    json::object{{"type", "heading"}, {"key", "h1"}, {"level", 2}, {"children", spans("\u00a0h\u00a0")}},
    json::object{{"type", "table"}, {"key", "t1"},
                 {"rows", json::array{json::array{json::object{{"children", spans("\u3000c\u3000")}}}}}}};
  auto md = render_markdown(doc);
  CHECK(md.find("&#160;&#8195;&#12288;&#8232;&#8233;a" + spaces + "b&#160;&#8195;&#12288;&#8232;&#8233;\n")
        != std::string::npos);
  CHECK(md.find("## &#160;h&#160;\n") != std::string::npos);
  CHECK(md.find("| &#12288;c&#12288; |") != std::string::npos);
}

TEST_CASE("entity mentions come from entity annotations, in order", "[content]") {
  auto found = entity_mentions(sample());
  REQUIRE(found.size() == 1);
  CHECK(found[0].entity_id == "ent_moon");
  CHECK(found[0].entity_type == "PLACE");
  CHECK(found[0].label == "Moon");
  CHECK(found[0].block_key == "p1");
  CHECK(found[0].text == "Moon");
}

TEST_CASE("a violation becomes its PCF reason with the JSON path in details", "[content]") {
  auto v = violation_after([](json::object& d) { block(d, 0)["level"] = 9; });
  REQUIRE(v);
  auto e = to_api_error(*v);
  CHECK(e.id == error_id::pcf006);
  CHECK(entry(e.id).reason == "PCF006");
  CHECK(entry(e.id).http_status == 400);
  REQUIRE(e.details.size() == 1);
  CHECK(e.details[0].field == "/content/blocks/0/level");
  CHECK(entry(to_api_error(content_violation{"PCF011", "/x", "y"}).id).reason == "PCF011");
  CHECK(entry(to_api_error(content_violation{"PCF001", "/x", "y"}).id).reason == "PCF001");
}

TEST_CASE("docs/content-format.md states every rule", "[content][docs]") {
  std::ifstream in{cl::testing::source_dir() + "/docs/content-format.md"};
  REQUIRE(in);
  std::string doc{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  for (const auto& rule : content_rules()) {
    INFO(rule.id);
    CHECK(doc.find("| `" + std::string{rule.id} + "` |") != std::string::npos);
  }
}

TEST_CASE("the blobs a content document's images reference, each once, sorted", "[content]") {
  auto doc = boost::json::parse(
    R"({"format":"cl.content/1","blocks":[{"type":"image","key":"b","blob":"blb_2","alt":"x"},)"
    R"({"type":"paragraph","key":"p","children":[{"type":"span","text":"blb_7 in text is no reference"}]},)"
    R"({"type":"image","key":"a","blob":"blb_1","alt":"y"},{"type":"image","key":"c","blob":"blb_2","alt":"z"}]})");
  CHECK(cl::domain::referenced_blobs(doc) == std::vector<std::string>{"blb_1", "blb_2"});
  CHECK(cl::domain::referenced_blobs_in(boost::json::serialize(doc)) == std::vector<std::string>{"blb_1", "blb_2"});
  CHECK(cl::domain::referenced_blobs_in(R"({"format":"cl.content/1","blocks":[]})").empty());
  // With where each is: the JSON Pointer of the block's blob member, in document order.
  auto refs = cl::domain::blob_references(doc, "/content");
  REQUIRE(refs.size() == 3);
  CHECK(refs[0].pointer == "/content/blocks/0/blob");
  CHECK(refs[0].blob_id == "blb_2");
  CHECK(refs[1].pointer == "/content/blocks/2/blob");
  CHECK(refs[2].pointer == "/content/blocks/3/blob");
  CHECK(refs[2].blob_id == "blb_2");
}

TEST_CASE("the text a search indexes: spans, code, list items, table cells, image alt and caption", "[content][search]") {
  auto doc = json::parse(R"json({"format":"cl.content/1","blocks":[
    {"type":"heading","key":"h","level":1,"children":[{"type":"span","text":"Spring tides"}]},
    {"type":"paragraph","key":"p","mark_defs":[{"key":"m","type":"link","href":"https://secret.example"}],
     "children":[{"type":"span","text":"Seven metres","marks":["m"]}]},
    {"type":"list","key":"l","ordered":false,"items":[{"children":[{"type":"span","text":"neap"}]}]},
    {"type":"table","key":"t","rows":[[{"children":[{"type":"span","text":"Brest"}]}]]},
    {"type":"code","key":"c","text":"tide()"},
    {"type":"image","key":"i","blob":"blb_1","alt":"a chart","caption":"Figure one"}]})json");
  CHECK(search_text(doc) == "Spring tides\nSeven metres\nneap\nBrest\ntide()\na chart\nFigure one");
  CHECK(search_text(json::parse(R"({"format":"cl.content/1","blocks":[]})")).empty());
}
