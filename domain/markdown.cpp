// Markdown rendering of the content format (spec 4.3; docs/content-format.md "Markdown").
//
// The output is CommonMark with GitHub tables and strikethrough, written so that a parser reads
// back exactly the source's text, links and table cells: every character CommonMark could read
// as syntax is escaped, whitespace a parser would strip is written as a character reference,
// link destinations go in angle brackets, and a decoration whose delimiters CommonMark would not
// recognise at that spot (e.g. `**` between a letter and punctuation) is left out rather than
// shown as stray asterisks. tests/markdown/roundtrip.py checks this with a real parser.

#include "domain/content_format.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace cl::domain {

namespace json = boost::json;

namespace {

std::string_view sv(const json::string& s) {
  return {s.data(), s.size()};
}

/// How CommonMark's emphasis rules see a character next to a delimiter run.
enum class char_class { space, punct, other };

/// The code point that ends `s` (UTF-8), or that starts it with `from_front`; -1 for none.
long code_point(std::string_view s, bool from_front) {
  if (s.empty()) return -1;
  std::size_t at = 0;
  if (!from_front) {
    at = s.size() - 1;
    while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  }
  auto b = static_cast<unsigned char>(s[at]);
  int extra = b < 0x80 ? 0 : b < 0xE0 ? 1 : b < 0xF0 ? 2 : 3;
  long cp = extra == 0 ? b : extra == 1 ? (b & 0x1F) : extra == 2 ? (b & 0x0F) : (b & 0x07);
  for (int i = 1; i <= extra && at + i < s.size(); ++i) cp = (cp << 6) | (static_cast<unsigned char>(s[at + i]) & 0x3F);
  return cp;
}

char_class classify(long cp) {
  if (cp < 0) return char_class::space;  // start or end of the line counts as whitespace
  if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == '\f' || cp == '\v' || cp == 0xA0 || cp == 0x3000
      || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F)
    return char_class::space;
  if ((cp < 0x80 && std::ispunct(static_cast<int>(cp))) || (cp >= 0xA1 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7
      || (cp >= 0x2010 && cp <= 0x2027) || (cp >= 0x2030 && cp <= 0x205E) || (cp >= 0x3001 && cp <= 0x303F))
    return char_class::punct;
  return char_class::other;
}

/// Whitespace that a parser trims from the ends of a paragraph, heading or table cell: CommonMark's
/// space and tab, and what markdown-it's `trim` (JavaScript's, or Python's in markdown-it-py) also
/// removes: no-break and other Unicode spaces (Zs), U+FEFF, the line and paragraph separators.
/// Line feeds and carriage returns are handled apart (breaks, `&#13;`); the content format refuses
/// other control characters (PCF005), which no character reference could carry.
bool strippable_space(long cp) {
  return cp == ' ' || cp == '\t' || cp == 0xA0 || cp == 0x1680
         || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F
         || cp == 0x3000 || cp == 0xFEFF;
}

/// CommonMark's left-flanking rule for `*` and `~` runs, between `before` and `after`.
bool can_open(char_class before, char_class after) {
  return after != char_class::space && (after != char_class::punct || before != char_class::other);
}

/// CommonMark's right-flanking rule for `*` and `~` runs.
bool can_close(char_class before, char_class after) {
  return before != char_class::space && (before != char_class::punct || after != char_class::other);
}

/// Writes inline text of one block: escapes, whitespace a parser would strip, line breaks.
class inline_writer {
public:
  /// `html_breaks`: a line break is `<br>` (headings and table cells, which are one line);
  /// otherwise a hard break followed by `continuation` (e.g. "> " inside a quote).
  inline_writer(bool html_breaks, std::string continuation, bool in_table)
    : html_breaks_(html_breaks), in_table_(in_table), continuation_(std::move(continuation)) {}

  void text(std::string_view t) {
    for (std::size_t i = 0; i < t.size();) {
      auto lead = static_cast<unsigned char>(t[i]);
      std::size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
      auto unit = t.substr(i, len);
      i += unit.size();
      if (strippable_space(code_point(unit, true)) && unit != "\n" && unit != "\r") {
        flush_breaks();
        pending_ += unit;
        continue;
      }
      for (char c : unit) put(c);
    }
  }

  /// Markup that is not text (delimiters, brackets, a code span): pending whitespace goes first.
  void markup(std::string_view m) {
    flush_breaks();
    flush_whitespace(line_start_);
    out_ += m;
    line_start_ = false;
    digits_only_ = false;
  }

  /// Opens a link's text. A `!` written just before it would make it an image: it is escaped.
  void open_link() {
    markup("[");
    if (out_.size() >= 2 && out_[out_.size() - 2] == '!') out_.insert(out_.size() - 2, 1, '\\');
  }

  /// Ends the block: trailing whitespace and line breaks would be stripped (a hard break at the
  /// end of a block is no break), so they become character references.
  std::string finish() {
    flush_whitespace(true);
    for (; pending_breaks_ > 0; --pending_breaks_) out_ += "&#10;";
    return std::move(out_);
  }

  bool in_table() const { return in_table_; }

private:
  void put(char c) {
    if (c == '\n') {
      flush_whitespace(true);
      if (html_breaks_) out_ += "<br>";
      else ++pending_breaks_;  // written once something follows it on a next line
      return;
    }
    flush_breaks();
    flush_whitespace(line_start_);
    if (c == '\r') {  // CommonMark reads a bare CR as a line ending
      out_ += "&#13;";
    } else {
      bool escape = false;
      switch (c) {
        case '\\': case '`': case '*': case '_': case '[': case ']': case '<': case '>': case '#': case '~':
        case '|': case '&':
          escape = true;
          break;
        case '-': case '+': case '=':  // bullets, thematic breaks, setext underlines
          escape = line_start_;
          break;
        case '.': case ')':  // "1." or "1)" opens an ordered list
          escape = digits_only_ && !line_start_;
          break;
        default: break;
      }
      if (escape) out_.push_back('\\');
      out_.push_back(c);
    }
    if (c < '0' || c > '9') digits_only_ = false;
    line_start_ = false;
  }

  /// Writes pending line breaks as hard breaks, each starting a line with the continuation.
  void flush_breaks() {
    for (; pending_breaks_ > 0; --pending_breaks_) {
      out_ += "\\\n" + continuation_;
      line_start_ = true;
      digits_only_ = true;
    }
  }

  /// Writes pending whitespace: as itself mid-line, as character references where a parser would
  /// strip it (line start and end) or read it as indentation.
  void flush_whitespace(bool as_references) {
    if (!as_references) {
      out_ += pending_;
    } else {
      for (std::size_t i = 0; i < pending_.size();) {
        auto lead = static_cast<unsigned char>(pending_[i]);
        std::size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        out_ += "&#" + std::to_string(code_point(std::string_view{pending_}.substr(i, len), true)) + ";";
        i += len;
      }
    }
    pending_.clear();
  }

  bool html_breaks_;
  bool in_table_;
  std::string continuation_;
  std::string out_;
  std::string pending_;
  int pending_breaks_ = 0;
  bool line_start_ = true;
  bool digits_only_ = true;  ///< the line so far is digits only (an ordered-list marker may follow)
};

/// A run of spans with the same marks, rendered as one unit.
struct piece {
  std::string text;
  bool code = false;
  std::string link_key;
  std::string href;
  bool strong = false, em = false, strike = false;
  bool decorated = false;  ///< decorations kept after the flanking check
  std::vector<piece> inside;  ///< a link run: the pieces of its text (the link itself is one atom)

  bool same_marks(const piece& o) const {
    return code == o.code && link_key == o.link_key && strong == o.strong && em == o.em && strike == o.strike;
  }
  bool has_decoration() const { return strong || em || strike; }
};

/// Whitespace that goes outside a decoration's delimiters: line breaks and what a parser trims.
bool is_blank(long cp) {
  return cp == '\n' || strippable_space(cp);
}

/// Whether `text` starts (or, `at_end`, ends) with such whitespace.
bool blank_at(std::string_view text, bool at_end) {
  return is_blank(code_point(text, !at_end));
}

/// The length of the UTF-8 sequence that ends `text`.
std::size_t last_length(std::string_view text) {
  std::size_t n = 1;
  while (n < text.size() && (static_cast<unsigned char>(text[text.size() - n]) & 0xC0) == 0x80) ++n;
  return n;
}

/// `text` without the whitespace at both ends (which goes outside the delimiters).
std::string_view core_of(std::string_view text) {
  while (!text.empty() && blank_at(text, false)) {
    auto lead = static_cast<unsigned char>(text.front());
    text.remove_prefix(std::min<std::size_t>(text.size(), lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4));
  }
  while (!text.empty() && blank_at(text, true)) text.remove_suffix(last_length(text));
  return text;
}

std::string code_span(std::string_view text, bool in_table) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  bool all_space = text.find_first_not_of(' ') == std::string_view::npos;
  bool pad = !text.empty() && (text.front() == '`' || text.back() == '`'
                               || (text.front() == ' ' && text.back() == ' ' && !all_space));
  std::string body;
  for (char c : text) {
    if (in_table && c == '|') body += "\\|";  // GFM splits cells before reading code spans
    else body.push_back(c);
  }
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

/// A link destination in angle brackets (spaces and parentheses allowed there); in a table cell a
/// `|` is escaped too, since GFM splits cells before it reads links.
std::string destination(std::string_view href, bool in_table) {
  std::string out = "<";
  for (char c : href) {
    if (c == '\\' || c == '<' || c == '>' || (in_table && c == '|')) out.push_back('\\');
    if (c == '\n') out += "%0A";  // a destination is one line
    else if (c == '\r') out += "%0D";
    else if (c == ' ') out += "%20";  // parsers (and URL parsers) drop spaces at its ends
    else out.push_back(c);
  }
  return out + ">";
}

/// The delimiter runs of a piece: `~~` outside, then one run of `*` (em, strong, or both).
std::string opener(const piece& p) {
  return std::string{p.strike ? "~~" : ""} + std::string((p.strong ? 2 : 0) + (p.em ? 1 : 0), '*');
}

std::string closer(const piece& p) {
  return std::string((p.strong ? 2 : 0) + (p.em ? 1 : 0), '*') + std::string{p.strike ? "~~" : ""};
}

/// The class of the first character a rendered piece starts with.
char_class first_class(const piece& p) {
  if (!p.link_key.empty() || p.code) return char_class::punct;  // '[' or '`' (or a delimiter before it)
  if (p.decorated && !blank_at(p.text, false)) return char_class::punct;
  return classify(code_point(p.text, true));
}

/// The class of the last character a rendered piece ends with.
char_class last_class(const piece& p) {
  if (!p.link_key.empty() || p.code) return char_class::punct;  // ')' or '`' (or a delimiter after it)
  if (p.decorated && !blank_at(p.text, true)) return char_class::punct;
  return classify(code_point(p.text, false));
}

/// Decorations go around the text (whitespace outside them); link text is written inside
/// brackets, where delimiters always flank.
void write_decorated(inline_writer& w, const piece& p) {
  if (!p.decorated) {
    if (p.code) w.markup(code_span(p.text, w.in_table()));
    else w.text(p.text);
    return;
  }
  std::string_view text = p.text;
  auto core = p.code ? text : core_of(text);
  auto lead = p.code ? std::string_view{} : text.substr(0, core.data() - text.data());
  auto trail = p.code ? std::string_view{} : text.substr(lead.size() + core.size());
  w.text(lead);
  w.markup(opener(p));
  if (p.code) w.markup(code_span(core, w.in_table()));
  else w.text(core);
  w.markup(closer(p));
  w.text(trail);
}


/// Spans of `holder` (a block, list item or table cell) as pieces; `block` holds the mark
/// definitions.
std::vector<piece> pieces_of(const json::object& holder, const json::object& block) {
  std::vector<piece> out;
  for (const auto& c : holder.at("children").as_array()) {
    const auto& span = c.as_object();
    piece p;
    p.text = std::string{span.at("text").as_string()};
    if (auto* marks = span.if_contains("marks"))
      for (const auto& m : marks->as_array()) {
        auto name = sv(m.as_string());
        if (name == "code") p.code = true;
        else if (name == "strong") p.strong = true;
        else if (name == "em") p.em = true;
        else if (name == "strike") p.strike = true;
        else if (auto* defs = block.if_contains("mark_defs"))
          for (const auto& d : defs->as_array())
            if (sv(d.as_object().at("key").as_string()) == name && d.as_object().at("type").as_string() == "link") {
              p.link_key = std::string{name};
              p.href = std::string{d.as_object().at("href").as_string()};
            }
      }
    if (p.text.empty()) continue;
    if (p.code && p.text.find_first_of("\n\r") != std::string::npos) p.code = false;  // a code span is one line
    // Nor is a code span of whitespace alone: parsers disagree on trimming one (markdown-it-py
    // judges "only spaces" by Unicode whitespace), and it shows nothing.
    if (p.code && core_of(p.text).empty()) p.code = false;
    if (!out.empty() && out.back().same_marks(p)) out.back().text += p.text;
    else out.push_back(std::move(p));
  }
  return out;
}

/// Keeps each piece's decorations only where CommonMark will read its delimiters as such; the
/// text is kept either way. Repeated until stable, since dropping one changes its neighbours'.
void decide_decorations(std::vector<piece>& pieces, char_class before_first, char_class after_last) {
  for (auto& p : pieces) p.decorated = p.has_decoration() && (p.code || !core_of(p.text).empty());
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      auto& p = pieces[i];
      if (!p.decorated) continue;
      bool runs = p.strike && (p.strong || p.em);       // an outer ~~ around an inner * run
      std::string_view text = p.text;
      auto core = p.code ? text : core_of(text);
      auto lead_text = text.substr(0, core.data() - text.data());
      auto trail_text = text.substr(lead_text.size() + core.size());
      bool lead = !lead_text.empty();
      bool trail = !trail_text.empty();
      // Whitespace kept outside the delimiters is what touches them (U+2028 and U+FEFF are not
      // whitespace to CommonMark's flanking rules).
      char_class before = lead ? classify(code_point(lead_text, false)) : i == 0 ? before_first : last_class(pieces[i - 1]);
      char_class after = trail ? classify(code_point(trail_text, true))
                               : i + 1 == pieces.size() ? after_last : first_class(pieces[i + 1]);
      char_class inside_first = p.code ? char_class::punct : classify(code_point(core, true));
      char_class inside_last = p.code ? char_class::punct : classify(code_point(core, false));
      bool ok = can_open(before, runs ? char_class::punct : inside_first)
                && can_close(runs ? char_class::punct : inside_last, after);
      // Two runs of the same character touching would be read as one.
      if (ok && !lead && i > 0 && pieces[i - 1].decorated
          && (pieces[i - 1].code || !blank_at(pieces[i - 1].text, true))
          && closer(pieces[i - 1]).back() == opener(p).front())
        ok = false;
      if (!ok) {
        p.decorated = false;
        changed = true;
      }
    }
  }
}

/// Adjacent code spans would run their backticks together: undecorated neighbours become one span.
void merge_code_neighbours(std::vector<piece>& pieces) {
  std::vector<piece> out;
  for (auto& p : pieces) {
    if (!out.empty() && p.code && !p.decorated && p.link_key.empty() && out.back().code && !out.back().decorated
        && out.back().link_key.empty())
      out.back().text += p.text;
    else
      out.push_back(std::move(p));
  }
  pieces = std::move(out);
}

/// Writes `pieces`: runs linked to one definition as one link (`[...](<href>)`), whose inside is
/// decided on its own (delimiters next to the brackets); the rest with the links as atoms that
/// start and end with punctuation.
void write_pieces(inline_writer& w, std::vector<piece> pieces) {
  // Top level: a link run is one atom (`link_key` set, which first_class/last_class read as punctuation).
  std::vector<piece> atoms;
  for (auto& p : pieces) {
    if (!p.link_key.empty() && !atoms.empty() && atoms.back().link_key == p.link_key) {
      atoms.back().inside.push_back(std::move(p));
      continue;
    }
    if (p.link_key.empty()) {
      atoms.push_back(std::move(p));
      continue;
    }
    piece atom;
    atom.link_key = p.link_key;
    atom.href = p.href;
    atom.inside.push_back(std::move(p));
    atoms.push_back(std::move(atom));
  }
  decide_decorations(atoms, char_class::space, char_class::space);
  merge_code_neighbours(atoms);
  for (auto& atom : atoms) {
    if (atom.link_key.empty()) {
      write_decorated(w, atom);
      continue;
    }
    for (auto& p : atom.inside) p.link_key.clear();
    decide_decorations(atom.inside, char_class::punct, char_class::punct);
    merge_code_neighbours(atom.inside);
    w.open_link();
    for (const auto& p : atom.inside) write_decorated(w, p);
    w.markup("](" + destination(atom.href, w.in_table()) + ")");
  }
}

/// One holder's spans as Markdown inline text.
std::string render_inline(const json::object& holder, const json::object& block, bool html_breaks,
                          const std::string& continuation, bool in_table = false) {
  inline_writer w{html_breaks, continuation, in_table};
  write_pieces(w, pieces_of(holder, block));
  return w.finish();
}

/// Plain text (alt text, attribution) written with the same escaping.
std::string render_text(std::string_view text, const std::string& continuation) {
  inline_writer w{false, continuation, false};
  w.text(text);
  return w.finish();
}

/// Text in italics on its own (an image caption); plain where `*` would not be read as emphasis.
std::string render_emphasised(std::string_view text) {
  piece p;
  p.text = std::string{text};
  p.em = true;
  if (p.text.empty()) return {};
  inline_writer w{false, "", false};
  write_pieces(w, {p});
  return w.finish();
}

void render_list(std::string& out, const json::object& holder, const json::object& block, bool ordered,
                 std::size_t indent, char bullet, bool after_text) {
  std::size_t n = 1;
  bool first = true;
  for (const auto& item : holder.at("items").as_array()) {
    std::string marker = ordered ? std::to_string(n++) + bullet + " " : std::string{bullet} + " ";
    std::string continuation(indent + marker.size(), ' ');
    auto text = render_inline(item.as_object(), block, false, continuation);
    // An empty item cannot interrupt a paragraph (it would be read as more of the parent item's
    // text): a nested list that opens with one gets a blank line before it.
    if (text.empty() && first && after_text) out += "\n";
    first = false;
    out += std::string(indent, ' ') + marker + text + "\n";
    if (item.as_object().contains("items"))
      render_list(out, item.as_object(), block, ordered, indent + marker.size(), bullet, !text.empty());
  }
}

/// A fence longer than any run of its character inside `text`.
std::string fence_for(std::string_view text, char c) {
  std::size_t longest = 0, run = 0;
  for (char x : text) {
    run = x == c ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), c);
}

}  // namespace

std::string render_markdown(const json::value& content) {
  std::string out;
  std::string previous_list;  // the marker style of a list just written: the next one must differ
  for (const auto& bv : content.as_object().at("blocks").as_array()) {
    const auto& b = bv.as_object();
    auto type = sv(b.at("type").as_string());
    if (!out.empty()) out += "\n";
    if (type != "list") previous_list.clear();
    if (type == "heading") {
      out += std::string(static_cast<std::size_t>(b.at("level").as_int64()), '#') + " " + render_inline(b, b, true, "")
             + "\n";
    } else if (type == "paragraph") {
      out += render_inline(b, b, false, "") + "\n";
    } else if (type == "quote") {
      out += "> " + render_inline(b, b, false, "> ") + "\n";
      if (auto* a = b.if_contains("attribution"); a && !a->as_string().empty())
        out += ">\n> — " + render_text(sv(a->as_string()), "> ") + "\n";
    } else if (type == "code") {
      std::string lang = b.contains("language") ? std::string{b.at("language").as_string()} : std::string{};
      auto text = std::string{b.at("text").as_string()};
      // A backtick fence's info string may not hold a backtick; tildes then.
      char c = lang.find('`') == std::string::npos ? '`' : '~';
      auto fence = fence_for(text, c);
      for (auto& ch : lang)
        if (ch == '\n' || ch == '\r') ch = ' ';
      out += fence + lang + "\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") + fence + "\n";
    } else if (type == "list") {
      // Two lists in a row would be read as one: a different bullet (or delimiter) starts a new one.
      bool ordered = b.at("ordered").as_bool();
      std::string style = ordered ? (previous_list == "." ? ")" : ".") : (previous_list == "-" ? "+" : "-");
      render_list(out, b, b, ordered, 0, style[0], false);
      previous_list = style;
    } else if (type == "table") {
      const auto& rows = b.at("rows").as_array();
      std::size_t header = b.contains("header_rows") ? static_cast<std::size_t>(b.at("header_rows").as_int64()) : 0;
      std::size_t width = rows[0].as_array().size();
      auto row_line = [&](const json::array& row) {
        std::string l = "|";
        for (const auto& cell : row) l += " " + render_inline(cell.as_object(), b, true, "", true) + " |";
        return l + "\n";
      };
      std::string separator = "|";
      for (std::size_t i = 0; i < width; ++i) separator += " --- |";
      separator += "\n";
      if (header == 0) {
        // A GitHub table needs a header row: an empty one keeps every data row a data row.
        out += "|";
        for (std::size_t i = 0; i < width; ++i) out += "  |";
        out += "\n" + separator;
        for (const auto& row : rows) out += row_line(row.as_array());
      } else {
        std::size_t r = 0;
        for (const auto& row : rows) {
          out += row_line(row.as_array());
          if (++r == 1) out += separator;
        }
      }
    } else if (type == "image") {
      inline_writer alt{true, "", false};
      alt.text(sv(b.at("alt").as_string()));
      out += "![" + alt.finish() + "](" + destination("/v0/content-lake/blobs/" + std::string{b.at("blob").as_string()}, false)
             + ")\n";
      if (auto* c = b.if_contains("caption"))
        if (auto caption = render_emphasised(sv(c->as_string())); !caption.empty()) out += "\n" + caption + "\n";
    }
  }
  return out;
}

}  // namespace cl::domain
