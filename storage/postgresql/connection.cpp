#include "storage/postgresql/connection.hpp"

#include "domain/text.hpp"

#include <libpq-fe.h>

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace cl::storage::pg {

namespace {

/// libpq's message, first line only and without trailing blanks: never the connection string.
std::string first_line(const char* message) {
  std::string m = message ? message : "";
  if (auto nl = m.find('\n'); nl != std::string::npos) m.resize(nl);
  while (!m.empty() && (m.back() == ' ' || m.back() == '\r')) m.pop_back();
  return m;
}

/// libpq's message for a failed connection, every line: with several hosts (a multi-host URL) one
/// line names each host tried and why it was passed over (read-only, timeout expired, refused), and
/// the first alone hides the one that mattered. Host, port and user only: never the password.
std::string every_line(const char* message) {
  std::string out, line;
  for (const char* p = message ? message : ""; ; ++p) {
    if (*p == '\n' || *p == '\0') {
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
      if (!line.empty()) out += (out.empty() ? "" : "; ") + line;
      line.clear();
      if (*p == '\0' || out.size() > 1000) break;
    } else {
      line.push_back(*p);
    }
  }
  return out;
}

bool starts_with(const char* s, const char* prefix) {
  return s && std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

/// Throws what a failed result means (see the header).
[[noreturn]] void raise(PGconn* conn, PGresult* r, bool& broken) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = first_line(r ? PQresultErrorMessage(r) : PQerrorMessage(conn));
  if (message.empty()) message = first_line(PQerrorMessage(conn));
  std::string code = state ? state : "";
  if (PQstatus(conn) != CONNECTION_OK || !state || starts_with(state, "08") || starts_with(state, "57P")) {
    broken = true;
    throw unavailable("the database is unavailable: " + message);
  }
  // A write on a server that is not (or no longer, or not yet) the primary: a replicated
  // database failing over, its old primary demoted or its new one still promoting. The
  // connection is given up: the next one finds the primary (HAProxy, target_session_attrs).
  if (code == "25006") {
    broken = true;
    throw unavailable("the database is read-only here (failing over?): " + message);
  }
  if (code == "53100") throw store_full("the database has no room left (" + message + ")");
  // A value the database cannot hold as given (not UTF-8, or a key too long for its index).
  if (code == "22021" || code == "22P05" || code == "54000")
    throw value_unstorable("the database cannot hold a value as given (SQLSTATE " + code + ")");
  if (code == "23505" || code == "40001" || code == "40P01") throw conflict(message + " (SQLSTATE " + code + ")");
  throw std::runtime_error("database statement failed: " + message + " (SQLSTATE " + code + ")");
}

}  // namespace

rows::rows(pg_result* r) : result_(r, PQclear), count_(static_cast<std::size_t>(PQntuples(r))) {}

std::string_view rows::text(std::size_t row, int column) const {
  auto* r = result_.get();
  auto i = static_cast<int>(row);
  return {PQgetvalue(r, i, column), static_cast<std::size_t>(PQgetlength(r, i, column))};
}

std::int64_t rows::integer(std::size_t row, int column) const {
  auto t = text(row, column);
  return t.empty() ? 0 : std::strtoll(std::string{t}.c_str(), nullptr, 10);
}

bool rows::is_null(std::size_t row, int column) const {
  return PQgetisnull(result_.get(), static_cast<int>(row), column) != 0;
}

std::uint64_t rows::affected() const {
  const char* n = result_ ? PQcmdTuples(result_.get()) : "";
  return n && *n ? std::strtoull(n, nullptr, 10) : 0;
}

std::string array_literal(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out.push_back(',');
    out.push_back('"');
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    out.push_back('"');
  }
  out.push_back('}');
  return out;
}

std::vector<std::string> parse_array(std::string_view literal) {
  std::vector<std::string> out;
  if (literal.size() < 2 || literal.front() != '{') return out;
  literal = literal.substr(1, literal.size() - 2);
  std::size_t i = 0;
  while (i < literal.size()) {
    std::string item;
    if (literal[i] == '"') {
      for (++i; i < literal.size() && literal[i] != '"'; ++i) {
        if (literal[i] == '\\' && i + 1 < literal.size()) ++i;
        item.push_back(literal[i]);
      }
      ++i;  // the closing quote
    } else {
      for (; i < literal.size() && literal[i] != ','; ++i) item.push_back(literal[i]);
    }
    out.push_back(std::move(item));
    if (i < literal.size() && literal[i] == ',') ++i;
  }
  return out;
}

connection::connection(const std::string& url, const std::string& password, std::size_t replan_after,
                       std::chrono::milliseconds answer_wait)
  : answer_wait_(answer_wait), replan_after_(replan_after == 0 ? 1 : replan_after) {
  // The URL is expanded as `dbname`: it overrides the defaults before it (a connection attempt
  // gives up after 3 s, a silent peer is noticed by TCP keepalives) and a password given apart,
  // after it, overrides the URL's.
  const char* keys[] = {"connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count",
                        "dbname", password.empty() ? nullptr : "password", nullptr};
  const char* values[] = {"3", "10", "5", "3", url.c_str(), password.c_str(), nullptr};
  conn_ = PQconnectdbParams(keys, values, 1);
  if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
    std::string why = every_line(conn_ ? PQerrorMessage(conn_) : "out of memory");
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    throw unavailable("cannot connect to the database: " + why);
  }
  // Server notices (NOTICE: ... skipping) are not errors: they stay out of stderr.
  PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
  // Every session the same: UTC, no statement waits forever on a lock, and a session that stops
  // talking inside a transaction (its node frozen, or its network stalled with the TCP connection
  // up, which keepalives do not notice) is ended by the server after 5 s: its transaction may hold
  // the change log's head, which every node's writes wait for. Ours never idle that long: a
  // transaction's statements are sent back to back.
  exec("SET TIME ZONE 'UTC'; SET lock_timeout = '10s'; SET idle_in_transaction_session_timeout = '5s'");
}

connection::~connection() {
  if (conn_) PQfinish(conn_);
}

bool connection::healthy() const { return conn_ && !broken_ && queued_ == 0 && PQstatus(conn_) == CONNECTION_OK; }

namespace {

/// NUL-terminated copies of the parameters, and pointers to them.
struct parameters {
  explicit parameters(std::initializer_list<std::string_view> params) {
    owned.reserve(params.size());
    int n = 0;
    for (auto v : params) {
      ++n;
      // Sent as a C string, a value would end at its first U+0000: refused instead, before anything
      // of the statement is sent (the connection stays usable).
      if (std::memchr(v.data(), '\0', v.size()))
        throw value_unstorable("parameter $" + std::to_string(n) + " holds U+0000, which PostgreSQL's text cannot hold");
      // Nor bytes that are not UTF-8 (the server would refuse them, after the statement was sent).
      if (!domain::valid_utf8(v))
        throw value_unstorable("parameter $" + std::to_string(n) + " is not UTF-8, which PostgreSQL's text cannot hold");
      owned.emplace_back(v);
    }
    for (const auto& v : owned) values.push_back(v.c_str());
  }
  int count() const { return static_cast<int>(values.size()); }
  std::vector<std::string> owned;
  std::vector<const char*> values;
};

using result_ptr = std::unique_ptr<PGresult, void (*)(PGresult*)>;

bool failed(ExecStatusType status) { return status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK; }

}  // namespace

const std::string& connection::prepared_name(const statement& s) const {
  auto& entry = prepared_[s.sql];
  if (!entry.name.empty()) {
    if (++entry.uses < replan_after_) return entry.name;
    retired_.push_back(std::move(entry.name));
    entry = prepared{};
  }
  auto& name = entry.name;
  // A new name every time: one prepared in a pipeline that then failed may exist on the server.
  std::string candidate = "s" + std::to_string(names_++);
  {  // sent in the pipeline (`send` entered it)
    if (!PQsendPrepare(conn_, candidate.c_str(), s.sql, 0, nullptr)) {
      prepared_.erase(s.sql);
      raise(conn_, nullptr, broken_);
    }
    ++queued_;  // its answer comes in the pipeline, before the statement's
    prepared_in_pipeline_.push_back(s.sql);
  }
  name = std::move(candidate);
  return name;
}

void connection::enter_pipeline() const {
  if (PQpipelineStatus(conn_) != PQ_PIPELINE_OFF) return;
  if (!PQenterPipelineMode(conn_)) raise(conn_, nullptr, broken_);
}

void connection::deallocate_retired() const {
  if (retired_.empty() || queued_ > 0 || PQtransactionStatus(conn_) != PQTRANS_IDLE) return;
  std::string sql;
  for (const auto& name : retired_) sql += "DEALLOCATE " + name + ";";
  retired_.clear();
  simple(sql);
}

void connection::simple(const std::string& sql) const {
  if (!PQsendQuery(conn_, sql.c_str())) raise(conn_, nullptr, broken_);
  auto until = deadline();
  result_ptr error{nullptr, PQclear};
  for (;;) {
    await_answer(until);
    PGresult* r = PQgetResult(conn_);
    if (!r) break;
    if (failed(PQresultStatus(r)) && !error) error.reset(r);
    else PQclear(r);
  }
  if (error || PQstatus(conn_) != CONNECTION_OK) raise(conn_, error.get(), broken_);
}

void connection::abandon() const {
  queued_ = 0;
  prepared_in_pipeline_.clear();  // nothing of the connection is used again
  broken_ = true;
}

void connection::await_answer(std::chrono::steady_clock::time_point until) const {
  while (PQisBusy(conn_)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      // What was sent may still run when the server wakes (a COMMIT among it too): the caller
      // answers 503, as for a connection lost after a COMMIT was sent.
      abandon();
      if (on_silence_) on_silence_();
      throw no_answer("the database did not answer within " + std::to_string(answer_wait_.count()) + " ms");
    }
    pollfd p{PQsocket(conn_), POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, INT_MAX)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (n > 0 && !PQconsumeInput(conn_))) {
      abandon();
      throw unavailable("the database is unavailable: " + first_line(PQerrorMessage(conn_)));
    }
  }
}

rows connection::run_within(const statement& s, std::chrono::milliseconds wait) const {
  waiting within{*this, wait};
  return run(s, {});
}

rows connection::run(const statement& s, std::initializer_list<std::string_view> params) const {
  if (queued_ > 0) {
    send(s, params);  // with what is queued, in one round trip
    return drain(true);
  }
  deallocate_retired();
  send(s, params);  // alone in the pipeline: the same messages as PQexecPrepared, with a bounded wait
  return drain(true);
}

std::size_t connection::queue(const statement& s, std::initializer_list<std::string_view> params) const {
  parameters p{params};  // first: a value it refuses leaves nothing sent
  enter_pipeline();
  const auto& name = prepared_name(s);
  if (!PQsendQueryPrepared(conn_, name.c_str(), p.count(), p.values.data(), nullptr, nullptr, 0))
    raise(conn_, nullptr, broken_);
  return queued_++;
}

void connection::send(const statement& s, std::initializer_list<std::string_view> params) const { queue(s, params); }

rows connection::run_and_commit(const statement& s, std::initializer_list<std::string_view> params) const {
  auto at = queue(s, params);
  send_exec("COMMIT");
  return drain(true, at);
}

void connection::send_exec(const std::string& sql) const {
  enter_pipeline();
  if (!PQsendQueryParams(conn_, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0)) raise(conn_, nullptr, broken_);
  ++queued_;
}

void connection::exec(const std::string& sql) const {
  if (queued_ > 0) {
    send_exec(sql);
    drain(true);
    return;
  }
  deallocate_retired();
  simple(sql);
}

void connection::flush() const {
  if (queued_ > 0) drain(true);
}

void connection::discard() const {
  if (queued_ > 0) drain(false);
}

rows connection::run_after(const statement& first, rows& first_rows, const statement& s,
                           std::initializer_list<std::string_view> params) const {
  // Each is picked by where it was queued: a statement prepared in the pipeline comes after its
  // Prepare's answer.
  auto first_at = queue(first, {});
  auto at = queue(s, params);
  return drain(true, at, &first_rows, first_at);
}

rows connection::drain(bool raise_errors, std::size_t pick, rows* first, std::size_t first_at) const {
  // Every command answers one result and then a null; the sync answers PGRES_PIPELINE_SYNC. After
  // an error the server skips the rest up to the sync (PGRES_PIPELINE_ABORTED each).
  auto lost = [&] {
    abandon();
    throw unavailable("the database is unavailable: " + first_line(PQerrorMessage(conn_)));
  };
  if (!PQpipelineSync(conn_)) lost();
  auto until = deadline();
  result_ptr error{nullptr, PQclear};
  result_ptr last{nullptr, PQclear};
  int nulls = 0;
  for (std::size_t at = 0;; ++at) {  // `at`: the command this result answers, in the order queued
    await_answer(until);
    PGresult* r = PQgetResult(conn_);
    if (!r) {
      if (++nulls > 1 || PQstatus(conn_) != CONNECTION_OK) lost();
      --at;  // the null that ends a command's results answers no command of its own
      continue;
    }
    nulls = 0;
    auto status = PQresultStatus(r);
    if (status == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      break;
    }
    if (status == PGRES_PIPELINE_ABORTED) {
      PQclear(r);
    } else if (failed(status)) {
      if (!error) error.reset(r);
      else PQclear(r);
    } else if (pick == no_pick || at == pick) {
      last.reset(r);
    } else if (first && at == first_at) {
      *first = rows{r};
    } else {
      PQclear(r);
    }
  }
  queued_ = 0;
  if (error)
    for (const char* sql : prepared_in_pipeline_) prepared_.erase(sql);
  prepared_in_pipeline_.clear();
  rows out = last ? rows{last.release()} : rows{};
  if (!PQexitPipelineMode(conn_)) {
    broken_ = true;
    throw unavailable("the database is unavailable: " + first_line(PQerrorMessage(conn_)));
  }
  if (error && (raise_errors || PQstatus(conn_) != CONNECTION_OK)) raise(conn_, error.get(), broken_);
  return out;
}

pool::pool(std::string url, std::string password, std::size_t size, std::chrono::milliseconds wait,
           std::size_t replan_after, std::chrono::milliseconds answer_wait)
  : url_(std::move(url)), password_(std::move(password)), size_(size == 0 ? 1 : size), wait_(wait),
    replan_after_(replan_after), answer_wait_(answer_wait) {}

pool::lease::~lease() {
  if (pool_ && conn_) pool_->give_back(std::move(conn_));
}

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

void pool::unreachable() { down_until_ms_ = steady_ms() + hold.count(); }

std::unique_ptr<connection> pool::connect() {
  try {
    auto c = std::make_unique<connection>(url_, password_, replan_after_, answer_wait_);
    c->on_silence([this] { unreachable(); });
    return c;
  } catch (const unavailable&) {
    unreachable();
    throw;
  }
}

pool::lease pool::acquire(bool probe) {
  if (!probe && steady_ms() < down_until_ms_.load())
    throw unavailable("the database did not answer a moment ago (tried again within " +
                      std::to_string(hold.count() / 1000) + " s)");
  std::unique_ptr<connection> c;
  {
    std::unique_lock<std::mutex> guard{mutex_};
    if (!freed_.wait_for(guard, wait_, [&] { return !idle_.empty() || leased_ < size_; }))
      throw unavailable("no database connection free within " + std::to_string(wait_.count()) + " ms");
    ++leased_;
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  try {
    if (!c || !c->healthy()) {
      c.reset();
      c = connect();
    }
  } catch (...) {
    std::lock_guard<std::mutex> guard{mutex_};
    --leased_;
    freed_.notify_one();
    throw;
  }
  return lease{*this, std::move(c)};
}

std::size_t pool::in_use() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return leased_;
}

void pool::give_back(std::unique_ptr<connection> c) {
  std::lock_guard<std::mutex> guard{mutex_};
  --leased_;
  if (c->healthy()) idle_.push_back(std::move(c));
  freed_.notify_one();
}

void pool::drop_idle() {
  std::vector<std::unique_ptr<connection>> stale;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    stale.swap(idle_);
  }
}

rows pooled_session::run(const statement& s, std::initializer_list<std::string_view> params) const {
  {
    auto c = pool_.acquire();  // no connection free, or none can be made: unavailable, at once
    try {
      return c->run(s, params);
    } catch (const no_answer&) {
      throw;  // the server is there but silent: another connection would wait as long again
    } catch (const unavailable&) {
      // The connection broke (a server that restarted since): the others are stale too.
    }
  }
  pool_.drop_idle();
  auto c = pool_.acquire();  // a read: safe to send again
  return c->run(s, params);
}

}  // namespace cl::storage::pg
