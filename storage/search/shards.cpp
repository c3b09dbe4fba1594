#include "storage/search/shards.hpp"

#include "storage/search/filters.hpp"

#include <array>

namespace cl::storage::search_detail {

std::string encode_record(const indexed_resource& r) {
  std::string out;
  for (const auto* f : {&r.id, &r.title, &r.type, &r.language, &r.work_id, &r.text}) {
    out += *f;
    out.push_back('\0');
  }
  return out;
}

hit_record decode_record(std::string_view data) {
  std::array<std::string_view, 6> fields;
  std::size_t start = 0, i = 0;
  for (auto nul = data.find('\0'); nul != std::string_view::npos && i < fields.size(); nul = data.find('\0', start)) {
    fields[i++] = data.substr(start, nul - start);
    start = nul + 1;
  }
  return hit_record{fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]};
}

search_hit hit_record::hit(double score) const {
  return search_hit{std::string{id}, std::string{title}, std::string{type}, std::string{language}, std::string{work_id}, score, {}};
}

shard_docid split_docid(Xapian::docid merged, std::size_t n) {
  return {(merged - 1) % n, static_cast<Xapian::docid>((merged - 1) / n + 1)};
}

Xapian::docid merge_docid(Xapian::docid local, std::size_t k, std::size_t n) {
  return static_cast<Xapian::docid>((local - 1) * n + k + 1);
}

std::size_t shard_of(const std::string& tenant, const std::string& id, std::size_t shards) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](unsigned char c) { h = (h ^ c) * 1099511628211ull; };
  for (unsigned char c : tenant) mix(c);
  mix(0);
  for (unsigned char c : id) mix(c);
  return static_cast<std::size_t>(h % shards);
}

std::filesystem::path shard_path(const std::filesystem::path& dir, std::size_t k) {
  return dir / ("shard-" + std::to_string(k));
}

std::size_t shard_dirs(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("shard-", 0) == 0) ++n;
  return n;
}

std::vector<std::string> index_keys_of(const Xapian::Database& db) {
  std::vector<std::string> keys;
  for (auto t = db.allterms_begin("XK"); t != db.allterms_end("XK"); ++t) keys.push_back((*t).substr(2));
  return keys;
}

void write_shard(Xapian::WritableDatabase& db, shard_documents& documents,
                 const std::vector<const indexed_resource*>& upserts,
                 const std::vector<const std::pair<std::string, std::string>*>& removed, const metadata_list& metadata,
                 const term_set& common) {
  Xapian::TermGenerator terms;
  for (const auto* r : upserts) {
    Xapian::Document doc;
    terms.set_document(doc);
    auto stemmer = stemmer_for(r->language);
    terms.set_stemmer(stemmer);
    // Stems only where a stemmer applies; words as written otherwise (what a `none` parse looks for).
    terms.set_stemming_strategy(stemmer.is_none() ? Xapian::TermGenerator::STEM_NONE : Xapian::TermGenerator::STEM_ALL_Z);
    auto inc = wdf_per_occurrence(count_words(r->title) + count_words(r->text));
    // The title's own terms weigh by the title alone: a caller whose rights refuse the content is
    // ranked by them, so nothing of the content (not even its length) may move their weight.
    terms.index_text(r->title, wdf_per_occurrence(count_words(r->title)), "S");
    terms.index_text(r->title, inc);
    terms.increase_termpos();
    terms.index_text(r->text, inc);
    if (!common.empty()) add_pairs(doc, common);
    auto words = sequence_of(doc);
    add_pair_buckets(doc, words);
    auto unique = unique_term(r->tenant, r->id);
    doc.add_boolean_term(unique);
    doc.add_boolean_term("XK" + stem_key(r->language));
    add_filter_terms(doc, *r);
    auto did = db.replace_document(unique, doc);
    documents.put(did, word_hash(stem_key(r->language)), words, encode_record(*r));
  }
  for (const auto* key : removed) {
    auto unique = unique_term(key->first, key->second);
    if (auto at = db.postlist_begin(unique); at != db.postlist_end(unique)) documents.erase(*at);
    db.delete_document(unique);
  }
  for (const auto& [key, value] : metadata) db.set_metadata(key, value);
}

}  // namespace cl::storage::search_detail
