// The search index on its own (issue 14): relevance, stemming by language, filters, layer 2 in the
// query, skipping answered hits, the applied sequence surviving a reopen, and query syntax errors.

#include "storage/search/filters.hpp"
#include "storage/search/index.hpp"
#include "storage/search/shard_documents.hpp"
#include "storage/search/terms.hpp"

#include <xapian.h>
#include "tests/support/service_fixture.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <atomic>
#include <thread>
#include <unordered_set>

using namespace cl::storage;

namespace {

indexed_resource doc(std::string id, std::string title, std::string text, std::string language = "en",
                     std::vector<std::string> readers = {"u_alice"}, std::string work = "") {
  return indexed_resource{"t_a", std::move(id), std::move(title), "ARTICLE", std::move(language), std::move(work),
                          std::move(text), std::move(readers)};
}

search_query ask(std::string text, std::vector<std::string> principals = {"u_alice"}) {
  search_query q;
  q.tenant = "t_a";
  q.text = std::move(text);
  q.principals = std::move(principals);
  return q;
}

/// Indexes `n` alike Resources res_0 .. res_n-1 ("Tide", "tide table") as one batch.
void index_tides(search_index& index, int n) {
  std::vector<indexed_resource> docs;
  for (int i = 0; i < n; ++i) docs.push_back(doc("res_" + std::to_string(i), "Tide", "tide table"));
  index.apply(docs, {}, 1);
}

std::vector<std::string> ids(const search_page& p) {
  std::vector<std::string> out;
  for (const auto& h : p.hits) out.push_back(h.id);
  return out;
}

}  // namespace

TEST_CASE("the index ranks a phrase above its words apart, stems English, and filters in the query", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index.apply({doc("res_1", "Coast", "the spring tide came in over the rocks"),
               doc("res_2", "Coast", "spring was late; the tide was low, the tide slow"),
               doc("res_3", "Marées", "la marée de printemps", "fr"),
               doc("res_4", "Hidden", "spring tide notes", "en", {"u_bob"}),
               {"t_b", "res_5", "Other tenant", "ARTICLE", "en", "", "spring tide", {"u_alice"}}},
              {}, 7);
  CHECK(index.applied() == 7);
  auto phrase = index.search(ask("\"spring tide\""));
  CHECK(ids(phrase) == std::vector<std::string>{"res_1"});
  auto words = index.search(ask("spring tide"));
  REQUIRE(ids(words).size() == 2);
  // The words together rank first, though BM25 alone prefers res_2 (tide twice): the proximity bonus.
  CHECK(ids(words)[0] == "res_1");
  CHECK(words.hits[0].score > words.hits[1].score);
  CHECK(index.search(ask("tides")).hits.size() == 2);  // English stemming: tides finds tide
  // Layer 2 inside the query: u_bob's document only for u_bob; the other tenant never.
  CHECK(ids(index.search(ask("notes"))).empty());
  CHECK(ids(index.search(ask("notes", {"u_bob"}))) == std::vector<std::string>{"res_4"});
  auto french = ask("marées");
  french.languages = {"fr"};
  CHECK(ids(index.search(french)) == std::vector<std::string>{"res_3"});
  // Without a language filter each document's words are matched as its language stems them.
  CHECK(ids(index.search(ask("marée"))) == std::vector<std::string>{"res_3"});
  CHECK(ids(index.search(ask("printemps tides"))).empty());
  auto title = index.search(ask("title:coast"));
  CHECK(title.hits.size() == 2);
  CHECK(title.hits[0].snippet.empty() == false);
  CHECK(words.hits[0].snippet.find("\u00abspring\u00bb") != std::string::npos);
}

TEST_CASE("a page says the change-log position of the revision it was ranked on", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index.apply({doc("res_1", "Coast", "the spring tide")}, {}, 3);
  auto first = index.search(ask("tide"));
  CHECK(ids(first) == std::vector<std::string>{"res_1"});
  CHECK(first.applied == 3);
  // A later batch: the next page is ranked on it, and says so (the search session reads grants
  // again only for a page ranked on a revision behind what the node knows of).
  index.apply({doc("res_2", "Coast", "a neap tide")}, {}, 9);
  auto second = index.search(ask("tide"));
  CHECK(ids(second).size() == 2);
  CHECK(second.applied == 9);
}

TEST_CASE("pages skip what a session answered, and say when nothing is left", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  std::vector<indexed_resource> docs;
  for (int i = 0; i < 5; ++i) docs.push_back(doc("res_" + std::to_string(i), "Tide " + std::to_string(i), "tide table"));
  index.apply(docs, {}, 1);
  std::unordered_set<std::string> answered;
  auto q = ask("tide");
  q.page_size = 2;
  q.skip = &answered;
  std::vector<std::string> seen;
  for (int page = 0; page < 3; ++page) {
    auto p = index.search(q);
    for (const auto& h : p.hits) {
      CHECK(answered.insert(h.id).second);  // never twice
      seen.push_back(h.id);
    }
    CHECK(p.exhausted == (page == 2));
  }
  CHECK(seen.size() == 5);
}

TEST_CASE("a long skip list skips in every shard, and ids the index does not hold are ignored", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index_tides(index, 700);
  std::unordered_set<std::string> answered;
  for (int i = 0; i < 690; ++i) answered.insert("res_" + std::to_string(i));
  answered.insert("res_gone");  // never indexed (or removed since)
  auto q = ask("tide");
  q.page_size = 20;
  q.skip = &answered;
  auto p = index.search(q);
  REQUIRE(p.hits.size() == 10);
  for (const auto& h : p.hits) CHECK(answered.count(h.id) == 0);
  CHECK(p.exhausted);
  // A skipped Resource removed and indexed again (another Xapian document) is still passed over.
  index.apply({}, {{"t_a", "res_3"}}, 2);
  index.apply({doc("res_3", "Tide", "tide table")}, {}, 3);
  auto again = index.search(q);
  CHECK(again.hits.size() == 10);
  for (const auto& h : again.hits) CHECK(answered.count(h.id) == 0);
}

TEST_CASE("a metadata-only search evaluates the whole query against titles alone, ranked by them", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index.apply({doc("res_1", "Tide tables", "when the sea comes in"), doc("res_2", "Harbour", "tide tables for the harbour"),
               doc("res_3", "Cobalt harbour", "the password is tangerine"), doc("res_4", "Cobalt harbour", "nothing to see"),
               doc("res_5", "Cobalt harbour", std::string(3000, 'x') + " long text")},
              {}, 1);
  auto titles = [&](std::string text) {
    auto q = ask(std::move(text));
    q.metadata_only = true;
    q.page_size = 10;
    auto p = index.search(q);
    for (const auto& h : p.hits) CHECK(h.snippet.empty());
    return p;
  };
  CHECK(ids(titles("tide")) == std::vector<std::string>{"res_1"});
  // A phrase only the text holds matches no title; one the title holds does.
  CHECK(titles("\"tables for the harbour\"").hits.empty());
  CHECK(ids(titles("\"tide tables\"")) == std::vector<std::string>{"res_1"});
  CHECK(ids(titles("title:harbour")).size() == 4);
  // Exclusions test titles only: the words of the text never take a hit out or bring one in.
  for (const auto* q : {"cobalt -tangerine", "cobalt NOT tangerine", "cobalt -\"password is tangerine\"",
                        "title:cobalt -tangerine", "cobalt AND NOT password"}) {
    auto p = titles(q);
    auto listed = ids(p);
    std::set<std::string> got(listed.begin(), listed.end());
    CHECK(got == std::set<std::string>{"res_3", "res_4", "res_5"});
    // Equal titles weigh the same, whatever the text holds or how long it is.
    REQUIRE(p.hits.size() == 3);
    CHECK(p.hits[0].score == p.hits[1].score);
    CHECK(p.hits[1].score == p.hits[2].score);
  }
  CHECK(titles("tangerine").hits.empty());
  CHECK(titles("cobalt tangerine").hits.empty());
  CHECK(titles("cobalt OR tangerine").hits.size() == 3);
}

TEST_CASE("snippets are plain text: markup characters of the text come back as written", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index.apply({doc("res_1", "Markup", "compare <b>salinity</b> & density; a &lt; entity")}, {}, 1);
  auto p = index.search(ask("salinity"));
  REQUIRE(p.hits.size() == 1);
  CHECK(p.hits[0].snippet == "compare <b>\u00absalinity\u00bb</b> & density; a &lt; entity");
}

TEST_CASE("snippets mark the words a query matched, also where the language's stemmer strips a prefix",
          "[search][index]") {
  // Indonesian stems "membaca" to "baca" and Irish "bhfear" to "fear": the word in the text does not
  // open with its stem's first letter. English keeps first letters: there a word no stem of the
  // query opens with is not stemmed, and "tides" still is.
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index.apply({doc("res_1", "Buku", "anak itu sedang membaca buku di perpustakaan", "id"),
               doc("res_2", "Tide", "Spring tides and neap tides alternate", "en")},
              {}, 1);
  auto indonesian = index.search(ask("baca"));
  REQUIRE(ids(indonesian) == std::vector<std::string>{"res_1"});
  CHECK(indonesian.hits[0].snippet == "anak itu sedang \u00abmembaca\u00bb buku di perpustakaan");
  auto english = index.search(ask("tide"));
  REQUIRE(ids(english) == std::vector<std::string>{"res_2"});
  CHECK(english.hits[0].snippet == "Spring \u00abtides\u00bb and neap \u00abtides\u00bb alternate");
}

TEST_CASE("the hits of one page are marked each by its own language's stemmer", "[search][index]") {
  // A page stems a word once per language: English stems "tides" to the query's "tide"; Japanese has
  // no stemmer, so there "tides" is a word of its own and only "tide" as written is marked.
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index.apply({doc("res_1", "Tide", "tide tables list tides", "en"), doc("res_2", "Tide", "tide tables list tides", "ja"),
               doc("res_3", "Tide", "tides follow the tide", "en")},
              {}, 1);
  auto p = index.search(ask("tide"));
  REQUIRE(p.hits.size() == 3);
  for (const auto& h : p.hits) {
    INFO(h.id << ": " << h.snippet);
    if (h.id == "res_1") CHECK(h.snippet == "\u00abtide\u00bb tables list \u00abtides\u00bb");
    if (h.id == "res_2") CHECK(h.snippet == "\u00abtide\u00bb tables list tides");
    if (h.id == "res_3") CHECK(h.snippet == "\u00abtides\u00bb follow the \u00abtide\u00bb");
  }
}

TEST_CASE("an index of an older format is refused (the service rebuilds it)", "[search][index]") {
  cl::testing::temp_dir dir;
  {
    Xapian::WritableDatabase old{dir.path + "/search", Xapian::DB_CREATE_OR_OPEN};
    Xapian::Document d;
    d.add_boolean_term("XTt_a");
    old.add_document(d);
    old.set_metadata("applied", "5");
    old.commit();
  }
  CHECK_THROWS_AS(search_index{dir.path + "/search"}, std::runtime_error);
  search_index empty{dir.path + "/fresh"};  // a new, empty index is fine
  CHECK(empty.documents() == 0);
}

TEST_CASE("documents in a language without a stemmer match words as written", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index.apply({doc("res_1", "Kuu", "kuutamo tides", "xx"), doc("res_2", "Moon", "tides of the moon", "en")}, {}, 1);
  CHECK(ids(index.search(ask("kuutamo"))) == std::vector<std::string>{"res_1"});
  auto both = ids(index.search(ask("tides")));
  std::sort(both.begin(), both.end());
  CHECK(both == std::vector<std::string>{"res_1", "res_2"});
  CHECK(ids(index.search(ask("tide"))) == std::vector<std::string>{"res_2"});  // stems only where a stemmer applies
}

TEST_CASE("removals and the applied sequence survive a reopen; a malformed query is a syntax error", "[search][index]") {
  cl::testing::temp_dir dir;
  {
    search_index index{dir.path + "/search"};
    index.apply({doc("res_1", "A", "tide"), doc("res_2", "B", "tide")}, {}, 3);
    index.apply({}, {{"t_a", "res_1"}}, 4);
  }
  search_index again{dir.path + "/search"};
  CHECK(again.applied() == 4);
  CHECK(again.documents() == 1);
  CHECK(ids(again.search(ask("tide"))) == std::vector<std::string>{"res_2"});
  CHECK_THROWS_AS(again.search(ask("tide AND (")), query_syntax_error);
}

TEST_CASE("searches run in parallel with commits and see each commit once it is made", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  std::atomic<bool> writing{true};
  std::atomic<int> failures{0};
  std::thread writer{[&] {
    for (int batch = 0; batch < 40; ++batch) {
      std::vector<indexed_resource> docs;
      for (int i = 0; i < 5; ++i) docs.push_back(doc("res_" + std::to_string(batch * 5 + i), "Tide", "tide table"));
      index.apply(docs, {}, static_cast<std::uint64_t>(batch + 1));
    }
    writing = false;
  }};
  auto reader = [&] {
    std::size_t last = 0;
    while (writing) {
      try {
        auto q = ask("tide");
        q.page_size = 1000;
        auto seen = index.search(q).hits.size();
        if (seen < last) {  // never goes back in time
          WARN("went back from " << last << " to " << seen);
          ++failures;
        }
        last = seen;
      } catch (const std::exception& e) {
        WARN(e.what());
        ++failures;
      } catch (const Xapian::Error& e) {
        WARN(e.get_description());
        ++failures;
      }
    }
  };
  std::thread a{reader}, b{reader};
  writer.join();
  a.join();
  b.join();
  CHECK(failures == 0);
  auto all = ask("tide");
  all.page_size = 1000;
  CHECK(index.search(all).hits.size() == 200);
}

TEST_CASE("documents spread over the shards are searched as one index, replaced and removed in theirs",
          "[search][index][shards]") {
  cl::testing::temp_dir dir;
  std::vector<indexed_resource> docs;
  for (int i = 0; i < 40; ++i) docs.push_back(doc("res_" + std::to_string(i), "Doc " + std::to_string(i), "harbour tide log"));
  {
    search_index index{dir.path + "/search", 3};
    index.apply(docs, {}, 9);
    // Every shard received some documents (a stable hash of tenant and id picks the shard).
    for (int k = 0; k < 3; ++k) {
      Xapian::Database shard{dir.path + "/search/shard-" + std::to_string(k)};
      CHECK(shard.get_doccount() > 0);
    }
    auto q = ask("harbour");
    q.page_size = 100;
    auto content = index.search(q);
    CHECK(content.hits.size() == 40);
    // Metadata-only searches cover every shard: the titles hold "doc", not "harbour".
    q.metadata_only = true;
    CHECK(index.search(q).hits.empty());
    q.metadata_only = false;
    auto titles = ask("doc harbour");
    titles.page_size = 100;
    CHECK(index.search(titles).hits.size() == 40);
    titles.metadata_only = true;
    CHECK(index.search(titles).hits.empty());
    auto title_word = ask("doc");
    title_word.page_size = 100;
    title_word.metadata_only = true;
    auto by_title = index.search(title_word);
    CHECK(by_title.hits.size() == 40);
    CHECK(std::all_of(by_title.hits.begin(), by_title.hits.end(), [](const search_hit& h) { return h.score > 0; }));
    // A replace lands in the document's own shard (no duplicate), a removal finds it there.
    index.apply({doc("res_7", "Doc 7", "harbour tide log, revised")}, {{"t_a", "res_8"}}, 10);
    auto after = index.search(q);
    CHECK(after.hits.size() == 39);
    CHECK(index.documents() == 39);
    CHECK(ids(index.search(ask("revised"))) == std::vector<std::string>{"res_7"});
  }
  // Reopened with the same number of shards: nothing to rebuild.
  search_index again{dir.path + "/search", 3};
  CHECK(again.applied() == 10);
  CHECK(again.documents() == 39);
}

TEST_CASE("an index resumes from its least advanced shard; another shard count is rebuilt", "[search][index][shards]") {
  cl::testing::temp_dir dir;
  {
    search_index index{dir.path + "/search", 2};
    index.apply({doc("res_1", "A", "tide"), doc("res_2", "B", "tide"), doc("res_3", "C", "tide")}, {}, 12);
  }
  {
    // As after a crash between the two shards' commits: shard 1 still at an earlier change.
    Xapian::WritableDatabase shard{dir.path + "/search/shard-1", Xapian::DB_OPEN};
    shard.set_metadata("applied", "8");
    shard.commit();
  }
  {
    search_index index{dir.path + "/search", 2};
    CHECK(index.applied() == 8);
  }
  CHECK_THROWS_AS(search_index(dir.path + "/search", 3), std::runtime_error);
}

TEST_CASE("ranking is BM25 with length normalisation and saturating term frequency", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  std::string filler;
  for (int i = 0; i < 3000; ++i) filler += " word" + std::to_string(i % 97);
  index.apply({doc("res_long", "Log", "tide" + filler), doc("res_short", "Log", "tide and a few words"),
               doc("res_often", "Log", "tide tide tide tide and a few words")},
              {}, 1);
  auto page = index.search(ask("tide"));
  // The word more often ranks first; once in a short text above once in a text of 3,000 words.
  CHECK(ids(page) == std::vector<std::string>{"res_often", "res_short", "res_long"});
  REQUIRE(page.hits.size() == 3);
  CHECK(page.hits[0].score < 2 * page.hits[1].score);  // four times the word is not four times the score
}

namespace {

/// Every hit of `text` for u_alice, page after page.
std::set<std::string> all_hits(const search_index& index, const std::string& text) {
  std::unordered_set<std::string> answered;
  auto q = ask(text);
  q.page_size = 100;
  q.skip = &answered;
  std::set<std::string> out;
  for (;;) {
    auto p = index.search(q);
    for (const auto& h : p.hits) {
      answered.insert(h.id);
      out.insert(h.id);
    }
    if (p.exhausted || p.hits.empty()) return out;
  }
}

/// How many documents of the index under `search_dir` (its default two shards) hold `term`.
Xapian::doccount shards_holding(const std::string& search_dir, const std::string& term) {
  Xapian::doccount n = 0;
  for (std::size_t k = 0; k < search_index::default_shards; ++k)
    n += Xapian::Database{search_dir + "/shard-" + std::to_string(k)}.get_termfreq(term);
  return n;
}

/// The documents whose title or text holds `words` one after the other (the texts are plain
/// words that English leaves as they are).
std::set<std::string> holding(const std::vector<indexed_resource>& docs, const std::vector<std::string>& words) {
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in{s};
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  };
  std::set<std::string> out;
  for (const auto& d : docs)
    for (const auto* field : {&d.title, &d.text}) {
      auto w = split(*field);
      for (std::size_t i = 0; i + words.size() <= w.size(); ++i)
        if (std::equal(words.begin(), words.end(), w.begin() + static_cast<std::ptrdiff_t>(i))) out.insert(d.id);
    }
  return out;
}

}  // namespace

TEST_CASE("phrases of common words are answered from word pairs, exactly as positions answer them", "[search][index][pairs]") {
  cl::testing::temp_dir dir;
  std::mt19937 random{14};
  const std::vector<std::string> common{"sea", "wave", "rock", "sand"};
  auto text = [&](std::size_t words) {
    std::string out;
    for (std::size_t i = 0; i < words; ++i) {
      if (!out.empty()) out += ' ';
      auto pick = random() % 10;
      out += pick < 8 ? common[pick % common.size()] : "rare" + std::to_string(random() % 50);
    }
    return out;
  };
  std::vector<indexed_resource> docs;
  // A title ending in `sea` over a text starting with `wave`: not the phrase `sea wave`.
  for (int i = 0; i < 1300; ++i) docs.push_back(doc("res_" + std::to_string(i), "Note sea", "wave " + text(12)));
  const std::vector<std::vector<std::string>> phrases{{"sea", "wave"}, {"wave", "sea"}, {"rock", "rock"},
                                                      {"sand", "rock", "sea"}, {"sea", "rare7"}};
  auto check_all = [&](const search_index& index, std::size_t held) {
    std::vector<indexed_resource> present(docs.begin(), docs.begin() + static_cast<std::ptrdiff_t>(held));
    for (const auto& words : phrases) {
      std::string quoted = "\"";
      for (const auto& w : words) quoted += (quoted.size() > 1 ? " " : "") + w;
      quoted += "\"";
      INFO(quoted);
      auto expected = holding(present, words);
      CHECK(!expected.empty());
      CHECK(all_hits(index, quoted) == expected);
    }
    // ADJ and NEAR are words, not operators (docs/api.md): no document holds the word "adj".
    CHECK(all_hits(index, "sea ADJ/1 wave").empty());
    CHECK(all_hits(index, "\"sea wave\" -rock") == [&] {
      auto out = holding(present, {"sea", "wave"});
      for (const auto& id : holding(present, {"rock"})) out.erase(id);
      return out;
    }());
  };
  auto pairs_of = [&](const std::string& pair) { return shards_holding(dir.path + "/search", pair); };
  {
    search_index index{dir.path + "/search"};
    // Below the documents the common words are chosen from: phrases are checked by position.
    index.apply({docs.begin(), docs.begin() + 600}, {}, 1);
    check_all(index, 600);
    CHECK(pairs_of("XPZsea Zwave") == 0);
    // Enough documents: the common words are chosen, and the documents already held get their
    // pairs in the same commit as the batch.
    index.apply({docs.begin() + 600, docs.begin() + 1200}, {}, 2);
    CHECK(pairs_of("XPZsea Zwave") == holding({docs.begin(), docs.begin() + 1200}, {"sea", "wave"}).size());
    CHECK(pairs_of("XPZrare7 Zsea") == 0);  // rare words have no pairs
    check_all(index, 1200);
    // Documents indexed from then on have theirs; a replaced one has its new text's.
    docs[5].text = "rock sand sea wave rock rock";
    index.apply({docs.begin() + 1200, docs.end()}, {}, 3);
    index.apply({docs[5]}, {}, 4);
    check_all(index, docs.size());
  }
  search_index reopened{dir.path + "/search"};
  check_all(reopened, docs.size());
  CHECK(pairs_of("XPZsea Zwave") == holding(docs, {"sea", "wave"}).size());
}

TEST_CASE("an index whose words are all rare chooses no common words, once", "[search][index][pairs]") {
  cl::testing::temp_dir dir;
  std::vector<indexed_resource> docs;
  for (int i = 0; i < 1100; ++i)
    docs.push_back(doc("res_" + std::to_string(i), "n" + std::to_string(i), "w" + std::to_string(i) + " v" + std::to_string(i)));
  {
    search_index index{dir.path + "/search"};
    index.apply(docs, {}, 1);
    CHECK(all_hits(index, "\"w7 v7\"") == std::set<std::string>{"res_7"});
  }
  // The choice is recorded (none qualified), so later batches do not look again.
  for (int k = 0; k < 2; ++k)
    CHECK(Xapian::Database{dir.path + "/search/shard-" + std::to_string(k)}.get_metadata("common_terms") == "0");
  search_index reopened{dir.path + "/search"};
  CHECK(all_hits(reopened, "\"w8 v8\"") == std::set<std::string>{"res_8"});
}

namespace {

/// A session's first page of 10 hits of `q`, recorded in `answered` (which `q` then passes over);
/// then the fourth of them removed and indexed again with more of the word (another Xapian
/// document, now ranking first): the id the index remembers for it is stale.
void answer_then_reindex(search_index& index, search_query& q, std::unordered_set<std::string>& answered) {
  q.page_size = 10;
  q.skip = &answered;
  auto first = index.search(q);
  REQUIRE(first.hits.size() == 10);
  CHECK(first.runs == 1);
  for (const auto& h : first.hits) answered.insert(h.id);
  auto again = first.hits[3].id;
  index.apply({}, {{"t_a", again}}, 2);
  index.apply({doc(again, "Tide", "tide tide tide tide table")}, {}, 3);
}

}  // namespace

TEST_CASE("a session's answered hits are passed over by the ids they were answered with, also once indexed again",
          "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index_tides(index, 50);
  std::unordered_set<std::string> answered;
  auto q = ask("tide");
  answer_then_reindex(index, q, answered);
  std::size_t pages = 1;
  for (;;) {
    auto p = index.search(q);
    ++pages;
    CHECK(p.hits.size() == 10);  // never short
    for (const auto& h : p.hits) CHECK(answered.insert(h.id).second);  // never twice
    if (p.exhausted) break;
  }
  CHECK(answered.size() == 50);
  CHECK(pages == 5);
}

TEST_CASE("a search runs within its budget of rankings: out of it, a stale hit is dropped, never answered twice",
          "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index_tides(index, 30);
  std::unordered_set<std::string> answered;
  auto q = ask("tide");
  answer_then_reindex(index, q, answered);
  q.max_runs = 1;  // no run left to rank again: the hit is dropped and the page says more may come
  auto tight = index.search(q);
  CHECK(tight.runs == 1);
  CHECK_FALSE(tight.exhausted);
  CHECK(tight.hits.size() == 9);
  for (const auto& h : tight.hits) CHECK(answered.count(h.id) == 0);
  q.max_runs = 3;  // with runs left, the new id is learnt and the page is whole
  auto whole = index.search(q);
  CHECK(whole.runs >= 1);
  CHECK(whole.runs <= 3);
  CHECK(whole.hits.size() == 10);
  for (const auto& h : whole.hits) CHECK(answered.count(h.id) == 0);
}

TEST_CASE("phrases are checked by each document's own stemming, in a search of several languages", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  index.apply({doc("res_en1", "Coast", "the spring tides came in"), doc("res_en2", "Coast", "spring came, then the tide"),
               doc("res_fr1", "Côte", "les grandes marées arrivent"), doc("res_fr2", "Côte", "la marée est grande"),
               doc("res_none", "Note", "spring tide as written", "")},
              {}, 1);
  auto found = [&](std::string text) {
    auto page = index.search(ask(std::move(text)));
    auto out = ids(page);
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(found("\"spring tide\"") == std::vector<std::string>{"res_en1", "res_none"});
  CHECK(found("\"grande marée\"") == std::vector<std::string>{"res_fr1"});
  CHECK(found("\"marée grande\"").empty());
  CHECK(found("\"spring tide\" -written") == std::vector<std::string>{"res_en1"});
  // A phrase under OR is left to Xapian's positions: the same documents.
  CHECK(found("\"spring tide\" OR \"grande marée\"") == std::vector<std::string>{"res_en1", "res_fr1", "res_none"});
}

TEST_CASE("an index whose documents beside a shard are lost is refused (the service rebuilds it)", "[search][index]") {
  cl::testing::temp_dir dir;
  {
    search_index index{dir.path + "/search"};
    index_tides(index, 10);
    CHECK(index.search(ask("\"tide table\"")).hits.size() == 10);
  }
  std::filesystem::remove_all(dir.path + "/search/documents-1");
  CHECK_THROWS_AS(search_index{dir.path + "/search"}, std::runtime_error);
}

TEST_CASE("filters follow every commit: a grant, a new type, a removal are seen by the next search",
          "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  auto with_type = [](indexed_resource r, std::string type) {
    r.type = std::move(type);
    return r;
  };
  index.apply({doc("res_1", "Kelp", "kelp forest", "en", {"u_bob"}), doc("res_2", "Kelp", "kelp farm"),
               with_type(doc("res_3", "Kelp", "kelp soup", "fr"), "RECIPE")},
              {}, 1);
  auto alice = ask("kelp", {"u_alice", "g_divers"});
  CHECK(ids(index.search(alice)).size() == 2);  // her own two; not u_bob's
  // The filters' sets were read at the first commit; each later one must be seen.
  index.apply({doc("res_1", "Kelp", "kelp forest", "en", {"u_bob", "g_divers"})}, {}, 2);
  auto all = ids(index.search(alice));
  CHECK(std::set<std::string>(all.begin(), all.end()) == std::set<std::string>{"res_1", "res_2", "res_3"});
  auto typed = alice;
  typed.types = {"RECIPE", "ARTICLE"};
  typed.languages = {"fr"};
  CHECK(ids(index.search(typed)) == std::vector<std::string>{"res_3"});  // each filter ANDed, its values ORed
  index.apply({with_type(doc("res_2", "Kelp", "kelp farm", "fr"), "RECIPE")}, {{"t_a", "res_3"}}, 3);
  CHECK(ids(index.search(typed)) == std::vector<std::string>{"res_2"});
  CHECK(ids(index.search(ask("kelp", {"u_bob"}))) == std::vector<std::string>{"res_1"});
  CHECK(ids(index.search(ask("kelp", {"u_nobody"}))).empty());
}

TEST_CASE("a phrase with a word in nearly every document finds exactly the documents it stands in",
          "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  // `the` in all 40 documents (dense: left out of the phrase's AND); `tide` in 20 of them, after
  // `the` in 10 (0, 4, 8...), apart from it in the other 10; and in one title (titles are text too).
  std::vector<indexed_resource> docs;
  std::set<std::string> expected;
  for (int i = 0; i < 40; ++i) {
    auto id = "res_" + std::to_string(i);
    std::string text = "the water rose";
    if (i % 4 == 0) text += " and the tide turned", expected.insert(id);
    if (i % 4 == 2) text += " tide came the";
    docs.push_back(doc(id, i == 39 ? "The tide" : "Notes", text));
  }
  expected.insert("res_39");
  index.apply(docs, {}, 1);
  auto q = ask("\"the tide\"");
  q.page_size = 100;
  auto found = ids(index.search(q));
  CHECK(std::set<std::string>(found.begin(), found.end()) == expected);
  CHECK(found.size() == expected.size());
  auto both = ask("\"the tide\" turned");
  both.page_size = 100;
  CHECK(ids(index.search(both)).size() == expected.size() - 1);  // res_39 has no `turned`
  auto dense_only = ask("\"the water\"");  // every word dense: the AND keeps them all
  dense_only.page_size = 100;
  CHECK(ids(index.search(dense_only)).size() == 40);
}

TEST_CASE("a phrase whose words stand apart in most of their documents checks only those its pairs' bucket holds",
          "[search][index]") {
  cl::testing::temp_dir dir;
  std::vector<indexed_resource> docs;
  std::set<std::string> expected;
  // `gull` and `cry` in all 600 documents, together only in every 50th (and once in a title).
  for (int i = 0; i < 600; ++i) {
    auto id = "res_" + std::to_string(i);
    bool together = i % 50 == 0;
    if (together || i == 7) expected.insert(id);
    docs.push_back(doc(id, i == 7 ? "Gull cry" : "Notes", together ? "a gull cry at dawn" : "a gull at dawn and a cry"));
  }
  {
    search_index index{dir.path + "/search"};
    index.apply(docs, {}, 1);
    CHECK(all_hits(index, "\"gull cry\"") == expected);
    CHECK(all_hits(index, "title:\"gull cry\"") == std::set<std::string>{"res_7"});  // the title's own words
    CHECK(all_hits(index, "title:\"cry gull\"").empty());
  }
  // The phrase's AND is filtered by the bucket of its two words: held by the documents where they
  // stand together (documents of six words set few buckets), not by the 600 holding both words.
  auto holding_bucket =
    shards_holding(dir.path + "/search", search_detail::pair_bucket_term(word_hash("Zgull"), word_hash("Zcri")));
  CHECK(holding_bucket >= expected.size());
  CHECK(holding_bucket < expected.size() + 10);
}

TEST_CASE("a tenant with few of the index's documents is filtered as well as one with most", "[search][index]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  // t_a holds 200 documents, t_small one (under a 64th: its filters are Xapian's own terms, where
  // t_a's are bit sets); the same words in both.
  std::vector<indexed_resource> docs;
  for (int i = 0; i < 200; ++i) docs.push_back(doc("res_" + std::to_string(i), "Reef", "coral reef survey"));
  docs.push_back({"t_small", "res_s", "Reef", "ARTICLE", "en", "", "coral reef survey", {"u_carol"}});
  docs.push_back({"t_small", "res_t", "Reef", "ARTICLE", "en", "", "coral reef notes", {"u_dan"}});
  index.apply(docs, {}, 1);
  auto small = ask("\"coral reef\"", {"u_carol"});
  small.tenant = "t_small";
  CHECK(ids(index.search(small)) == std::vector<std::string>{"res_s"});
  small.principals = {"u_alice"};  // t_a's reader, asking in t_small: nothing of either tenant
  CHECK(ids(index.search(small)).empty());
  small.principals = {"u_carol", "u_dan"};
  small.page_size = 10;
  CHECK(ids(index.search(small)).size() == 2);
  auto big = ask("\"coral reef\" survey");
  big.page_size = 100;
  auto page = index.search(big);
  CHECK(page.hits.size() == 100);
  CHECK_FALSE(page.exhausted);
  auto found = ids(page);
  CHECK(std::count(found.begin(), found.end(), "res_s") + std::count(found.begin(), found.end(), "res_t") == 0);
}

TEST_CASE("a common word or pair is ranked from its impact tiers exactly as from its whole list",
          "[search][index][tiers]") {
  cl::testing::temp_dir dir;
  search_index index{dir.path + "/search"};
  // 1,400 documents of varied length, `sea` and `wave` in most of them (common: they get pairs and
  // tiers) as often as 1 to 40 times. t_a holds 1,390 (u_alice reads all, u_bob every third);
  // t_small 10 (under a 64th: its filters are Xapian's own terms, which the tiers stand aside for).
  std::mt19937 random{14};
  std::vector<indexed_resource> docs;
  for (int i = 0; i < 1400; ++i) {
    std::string text;
    auto seas = 1 + random() % 40, rest = 5 + random() % 300;
    for (std::size_t w = 0; w < seas + rest; ++w) {
      auto pick = random() % (seas + rest);
      text += pick < seas ? (random() % 2 ? "sea wave " : "sea ") : "rare" + std::to_string(random() % 5000) + " ";
    }
    auto d = doc("res_" + std::to_string(i), "Log", text);
    if (i % 3 == 0) d.readers.push_back("u_bob");
    if (seas <= 20 || i % 50 == 0) d.readers.push_back("u_carol");  // few of the top levels' documents
    if (i >= 1390) d.tenant = "t_small";
    docs.push_back(std::move(d));
  }
  index.apply(docs, {}, 1);
  // The same query with a word no document holds taken away: not one term, so the whole list.
  // `tiers_expected`: whether a level of the tiers answers some page (unset: either way).
  auto compare = [&](const std::string& text, const std::string& tenant, std::vector<std::string> principals,
                     std::optional<bool> tiers_expected, std::size_t answers) {
    INFO(text << " in " << tenant);
    std::unordered_set<std::string> answered, answered_whole;
    bool tiered = false;
    for (int page = 0; page < 5; ++page) {
      auto q = ask(text, principals), whole = ask(text + " -nowhere", principals);
      q.tenant = whole.tenant = tenant;
      q.skip = &answered;
      whole.skip = &answered_whole;
      auto got = index.search(q), expected = index.search(whole);
      INFO("page " << page);
      CHECK(expected.tier_level == 0);
      tiered = tiered || got.tier_level > 0;
      REQUIRE(ids(got) == ids(expected));
      for (std::size_t i = 0; i < got.hits.size(); ++i) CHECK(got.hits[i].score == Approx(expected.hits[i].score));
      CHECK(got.exhausted == expected.exhausted);
      CHECK(got.total_estimate >= got.hits.size());
      if (!got.exhausted) CHECK(got.total_estimate > got.hits.size());
      for (const auto& id : ids(got)) answered.insert(id), answered_whole.insert(id);
    }
    if (tiers_expected) CHECK(tiered == *tiers_expected);
    CHECK(answered.size() == answers);
  };
  compare("sea", "t_a", {"u_alice"}, true, 100);
  compare("\"sea wave\"", "t_a", {"u_alice"}, true, 100);
  compare("sea", "t_a", {"u_bob"}, true, 100);
  compare("sea", "t_small", {"u_alice"}, false, 10);
  // A reader of few of the best documents: the levels they are in fall short, lower ones answer.
  compare("sea", "t_a", {"u_carol"}, std::nullopt, 100);
  auto rare = holding({docs.begin(), docs.begin() + 1390}, {"rare7"}).size();
  compare("rare7", "t_a", {"u_alice"}, false, std::min<std::size_t>(rare, 100));  // not common: no tiers
}

TEST_CASE("a window all at the highest possible weight is ranked from the oldest documents, exactly as from the "
          "whole list", "[search][index][prefix]") {
  // 2,000 short documents alike (one of each word: the same weight), as the soak writes them.
  // `newest_best`: the last holds the first word twice, the one document at the highest weight.
  auto index_of = [](const std::string& path, const std::string& a, const std::string& b, bool newest_best) {
    auto index = std::make_unique<search_index>(path);
    std::vector<indexed_resource> docs;
    for (int i = 0; i < 2000; ++i) docs.push_back(doc("res_" + std::to_string(i), "Soak", a + " " + std::to_string(i) + " " + b));
    if (newest_best) docs.back().text = a + " " + a + " 1999 " + b;
    index->apply(docs, {}, 1);
    return index;
  };
  // Pages of 20 through a session, then one page of 400 (it wants more than half the matches:
  // the whole list): the pages are its first 100.
  auto pages = [](const search_index& index, const std::string& text, bool prefix_expected) {
    INFO(text);
    std::unordered_set<std::string> answered;
    std::vector<std::string> paged;
    for (int page = 0; page < 5; ++page) {
      auto q = ask(text);
      q.skip = &answered;
      auto got = index.search(q);
      CHECK(got.prefix_ranked == prefix_expected);
      CHECK(got.hits.size() == 20);
      CHECK_FALSE(got.exhausted);
      CHECK(got.total_estimate >= 100);
      for (const auto& id : ids(got)) answered.insert(id), paged.push_back(id);
    }
    auto whole = ask(text);
    whole.page_size = 400;
    auto all = ids(index.search(whole));
    REQUIRE(all.size() == 400);
    CHECK(paged == std::vector<std::string>(all.begin(), all.begin() + 100));
    return paged;
  };
  cl::testing::temp_dir dir;
  auto alike = index_of(dir.path + "/alike", "tide", "brest", false);
  auto tides = pages(*alike, "tide brest", true);
  CHECK(std::set<std::string>(tides.begin(), tides.end()).size() == 100);
  CHECK(alike->search(ask("tide")).prefix_ranked);
  // The newest document outranks every older one: the prefix does not answer, it comes first.
  auto best_last = index_of(dir.path + "/best-last", "reef", "survey", true);
  CHECK(pages(*best_last, "reef survey", false).front() == "res_1999");
  auto one = best_last->search(ask("reef"));
  CHECK_FALSE(one.prefix_ranked);
  CHECK(ids(one).front() == "res_1999");
}

TEST_CASE("the filter sets hold one set per shard and term, however often the index commits", "[search][index]") {
  cl::testing::temp_dir dir;
  Xapian::WritableDatabase db(dir.path + "/shard", Xapian::DB_CREATE_OR_OPEN);
  search_detail::filter_sets sets;
  std::size_t one_set = 0;
  for (int commit = 0; commit < 200; ++commit) {
    for (int i = 0; i < 50; ++i) {
      Xapian::Document d;
      d.add_boolean_term(i % 2 == 0 ? "XTa" : "XTb");
      db.add_document(d);
    }
    db.commit();
    auto a = sets.of(db, "XTa");
    auto b = sets.of(db, "XTb");
    // Every document of a revision is in the set of its term, and no other.
    REQUIRE(((*a)[0] & 0b110) == 0b010);  // docids 1 (a), 2 (b)
    REQUIRE(((*b)[0] & 0b110) == 0b100);
    REQUIRE(sets.of(db, "XTa") == a);  // the same revision: the set held
    one_set = a->size() * sizeof(std::uint64_t);
  }
  // 200 revisions later: the two sets of the newest revision, not 400.
  CHECK(sets.bytes() == 2 * one_set);
}
