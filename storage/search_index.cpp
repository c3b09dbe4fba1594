#include "storage/search_index.hpp"

#include <xapian.h>

#include <atomic>
#include <mutex>
#include <string_view>
#include <stdexcept>

namespace cl::storage {

namespace {

constexpr Xapian::valueno id_slot = 0;
constexpr const char* applied_key = "applied";

std::string unique_term(const std::string& tenant, const std::string& id) {
  return "Q" + tenant + std::string(1, '\0') + id;
}

/// Xapian's stemmer for a language code; none (no stemming) for an unknown or absent language.
Xapian::Stem stemmer_for(const std::string& language) {
  if (language.empty()) return Xapian::Stem{};
  try {
    return Xapian::Stem{language.substr(0, language.find('-'))};
  } catch (const Xapian::Error&) {
    return Xapian::Stem{};
  }
}

/// Document data: id, title, type, language, work id, text, NUL-separated.
std::string encode(const indexed_resource& r) {
  std::string out;
  for (const auto* f : {&r.id, &r.title, &r.type, &r.language, &r.work_id, &r.text}) {
    out += *f;
    out.push_back('\0');
  }
  return out;
}

std::vector<std::string> decode(const std::string& data) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (auto nul = data.find('\0'); nul != std::string::npos; nul = data.find('\0', start)) {
    fields.push_back(data.substr(start, nul - start));
    start = nul + 1;
  }
  fields.resize(6);
  return fields;
}

/// Xapian escapes snippets for HTML; ours are plain text (the API is not a web page).
std::string unescape_html(const std::string& s) {
  static const std::pair<std::string_view, char> entities[] = {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&#39;", '\''}};
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    bool replaced = false;
    if (s[i] == '&')
      for (const auto& [entity, c] : entities)
        if (s.compare(i, entity.size(), entity) == 0) {
          out.push_back(c);
          i += entity.size();
          replaced = true;
          break;
        }
    if (!replaced) out.push_back(s[i++]);
  }
  return out;
}

/// Rejects the documents a session has already answered (and those the answer refused).
class skip_answered final : public Xapian::MatchDecider {
public:
  explicit skip_answered(const std::function<bool(const std::string&)>& skip) : skip_(skip) {}
  bool operator()(const Xapian::Document& doc) const override { return !skip_(doc.get_value(id_slot)); }

private:
  const std::function<bool(const std::string&)>& skip_;
};

Xapian::Query any_of(const std::string& prefix, const std::vector<std::string>& values) {
  std::vector<Xapian::Query> terms;
  for (const auto& v : values) terms.emplace_back(prefix + v);
  return Xapian::Query(Xapian::Query::OP_OR, terms.begin(), terms.end());
}

}  // namespace

struct search_index::impl {
  explicit impl(const std::filesystem::path& dir) : path(dir.string()), db(path, Xapian::DB_CREATE_OR_OPEN) {}

  /// A read-only view for one search at a time, current as of the last commit.
  struct reader {
    std::unique_ptr<Xapian::Database> db;
    std::uint64_t generation = 0;
  };

  /// Takes an idle reader (or opens one) and brings it to the last commit.
  reader checkout() const {
    reader r;
    {
      std::lock_guard lock{pool_mutex};
      if (!idle.empty()) {
        r = std::move(idle.back());
        idle.pop_back();
      }
    }
    auto now = generation.load();
    if (!r.db) r.db = std::make_unique<Xapian::Database>(path);
    else if (r.generation != now) r.db->reopen();
    r.generation = now;
    return r;
  }
  void give_back(reader r) const {
    std::lock_guard lock{pool_mutex};
    if (idle.size() < 16) idle.push_back(std::move(r));
  }

  std::string path;
  mutable std::mutex mutex;  ///< the writer: Xapian objects are not thread-safe, one user at a time
  mutable Xapian::WritableDatabase db;
  /// Readers: searches run in parallel, each on its own Database, reopened after commits.
  std::atomic<std::uint64_t> generation{0};
  mutable std::mutex pool_mutex;
  mutable std::vector<reader> idle;
};

search_index::search_index(std::filesystem::path dir) {
  try {
    std::filesystem::create_directories(dir);
    impl_ = std::make_unique<impl>(dir);
  } catch (const Xapian::Error& e) {
    throw std::runtime_error("search index " + dir.string() + ": " + e.get_description());
  }
}

search_index::~search_index() = default;

bool search_index::in_use(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return false;
  try {
    Xapian::WritableDatabase probe(dir.string(), Xapian::DB_OPEN);
    return false;
  } catch (const Xapian::DatabaseLockError&) {
    return true;
  } catch (const Xapian::Error&) {
    return false;  // unreadable: not in use, to be rebuilt
  }
}

std::uint64_t search_index::applied() const {
  std::lock_guard lock{impl_->mutex};
  auto v = impl_->db.get_metadata(applied_key);
  return v.empty() ? 0 : std::stoull(v);
}

std::uint64_t search_index::documents() const {
  std::lock_guard lock{impl_->mutex};
  return impl_->db.get_doccount();
}

void search_index::apply(const std::vector<indexed_resource>& upserts,
                         const std::vector<std::pair<std::string, std::string>>& removed, std::uint64_t applied_seq) {
  std::lock_guard lock{impl_->mutex};
  auto& db = impl_->db;
  Xapian::TermGenerator terms;
  for (const auto& r : upserts) {
    Xapian::Document doc;
    terms.set_document(doc);
    terms.set_stemmer(stemmer_for(r.language));
    terms.set_stemming_strategy(Xapian::TermGenerator::STEM_SOME);
    terms.index_text(r.title, 1, "S");
    terms.index_text(r.title);
    terms.increase_termpos();
    terms.index_text(r.text);
    auto unique = unique_term(r.tenant, r.id);
    doc.add_boolean_term(unique);
    doc.add_boolean_term("XT" + r.tenant);
    if (!r.type.empty()) doc.add_boolean_term("XY" + r.type);
    if (!r.language.empty()) doc.add_boolean_term("XL" + r.language);
    doc.add_boolean_term(r.work_id.empty() ? "XS1" : "XS0");
    if (!r.work_id.empty()) doc.add_boolean_term("XW" + r.work_id);
    for (const auto& p : r.readers) doc.add_boolean_term("XR" + p);
    doc.add_value(id_slot, r.id);
    doc.set_data(encode(r));
    db.replace_document(unique, doc);
  }
  for (const auto& [tenant, id] : removed) db.delete_document(unique_term(tenant, id));
  db.set_metadata(applied_key, std::to_string(applied_seq));
  db.commit();
  ++impl_->generation;
}

search_page search_index::search(const search_query& q) const {
  // A reader whose revision the writer has since overwritten throws DatabaseModifiedError: reopen
  // and run again (Xapian's documented way).
  for (int attempt = 0; attempt < 3; ++attempt) {
    try {
      auto r = impl_->checkout();  // opening or reopening may meet a discarded revision too
      auto page = run(*r.db, q);
      impl_->give_back(std::move(r));
      return page;
    } catch (const Xapian::DatabaseModifiedError&) {
      // That reader is dropped; the next attempt takes (or opens) another at the last commit.
    }
  }
  // Commits keep overtaking this search: run it on the writer's database, which cannot change
  // while its lock is held.
  std::lock_guard lock{impl_->mutex};
  return run(impl_->db, q);
}

namespace {

constexpr unsigned parse_flags = Xapian::QueryParser::FLAG_PHRASE | Xapian::QueryParser::FLAG_BOOLEAN |
                                 Xapian::QueryParser::FLAG_LOVEHATE | Xapian::QueryParser::FLAG_BOOLEAN_ANY_CASE;

/// `text` parsed for `db`: stemmed for `language` or exactly as written (documents of a language
/// without a stemmer hold only the words as written). `title_only`: unprefixed words match titles
/// only (the metadata a refused caller may match on).
Xapian::Query parse(const Xapian::Database& db, const std::string& text, const std::string& language, bool title_only) {
  Xapian::QueryParser parser;
  parser.set_database(db);
  parser.set_default_op(Xapian::Query::OP_AND);
  parser.add_prefix("title", "S");
  if (title_only) parser.add_prefix("", "S");
  try {
    parser.set_stemmer(stemmer_for(language));
    parser.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
    auto stemmed = parser.parse_query(text, parse_flags);
    parser.set_stemming_strategy(Xapian::QueryParser::STEM_NONE);
    auto exact = parser.parse_query(text, parse_flags);
    return Xapian::Query(Xapian::Query::OP_OR, stemmed, exact);
  } catch (const Xapian::QueryParserError& e) {
    throw query_syntax_error{e.get_msg()};
  }
}

}  // namespace

search_page search_index::run(const Xapian::Database& db, const search_query& q) const {
  auto language = q.languages.size() == 1 ? q.languages.front() : std::string{"en"};
  auto text = parse(db, q.text, language, false);
  std::vector<Xapian::Query> filters{Xapian::Query("XT" + q.tenant)};
  if (!q.types.empty()) filters.push_back(any_of("XY", q.types));
  if (!q.languages.empty()) filters.push_back(any_of("XL", q.languages));
  if (!q.work_id.empty()) filters.emplace_back("XW" + q.work_id);
  filters.push_back(any_of("XR", q.principals));  // layer 2: only what the caller may read
  Xapian::Query filter(Xapian::Query::OP_AND, filters.begin(), filters.end());
  Xapian::Enquire enquire{db};
  enquire.set_query(Xapian::Query(Xapian::Query::OP_FILTER, text, filter));
  std::function<bool(const std::string&)> none = [](const std::string&) { return false; };
  skip_answered decider{q.skip ? q.skip : none};
  auto mset = enquire.get_mset(0, static_cast<Xapian::doccount>(q.page_size + 1), nullptr, &decider);
  search_page page;
  page.total_estimate = mset.get_matches_estimated();
  std::vector<Xapian::Query> unique;
  for (auto it = mset.begin(); it != mset.end() && page.hits.size() < q.page_size; ++it) {
    auto f = decode(it.get_document().get_data());
    search_hit h{f[0], f[1], f[2], f[3], f[4], it.get_weight(), {}};
    h.snippet = unescape_html(
      mset.snippet(f[5], 200, stemmer_for(f[3]), Xapian::MSet::SNIPPET_EXHAUSTIVE, "\u00ab", "\u00bb", "\u2026"));
    page.hits.push_back(std::move(h));
    unique.emplace_back(unique_term(q.tenant, f[0]));
  }
  page.exhausted = mset.size() <= q.page_size;
  if (page.hits.empty()) return page;
  // Which of these hits the query finds by their metadata alone: one more query, bounded by the page.
  Xapian::Enquire metadata{db};
  metadata.set_query(Xapian::Query(Xapian::Query::OP_FILTER, parse(db, q.text, language, true),
                                   Xapian::Query(Xapian::Query::OP_OR, unique.begin(), unique.end())));
  auto found = metadata.get_mset(0, static_cast<Xapian::doccount>(page.hits.size()));
  for (auto it = found.begin(); it != found.end(); ++it) {
    auto id = it.get_document().get_value(id_slot);
    for (auto& h : page.hits)
      if (h.id == id) {
        h.metadata_match = true;
        h.metadata_score = it.get_weight();
      }
  }
  return page;
}

}  // namespace cl::storage
