#pragma once
/// One PostgreSQL connection through libpq, and a small pool of them (storage-private). Statements
/// are prepared once per connection and sent with text parameters; every failure is classified
/// so callers know what to do with it: `unavailable` (no connection, or it broke: the request
/// answers 503 and the pool reconnects by itself), `conflict` (another transaction's commit made
/// this statement fail: a unique key taken, a serialization failure; safe to run the mutation
/// again), `store_full` (the database's disk is full: 507), anything else std::runtime_error.
/// No message carries the connection string (it may hold a password).

#include "storage/record_store.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <condition_variable>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

struct pg_conn;
struct pg_result;

namespace cl::storage::pg {

/// The database cannot be reached or the connection broke.
struct unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The server did not answer in time (hung, or its host unreachable): the connection was given up.
struct no_answer : unavailable {
  using unavailable::unavailable;
};

/// A statement lost to another transaction (SQLSTATE 23505, 40001, 40P01), or a compare-and-set
/// that found another version.
struct conflict : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The rows a statement answered, as text.
class rows {
public:
  rows() = default;
  explicit rows(pg_result* r);
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::string_view text(std::size_t row, int column) const;
  std::string str(std::size_t row, int column) const { return std::string{text(row, column)}; }
  std::int64_t integer(std::size_t row, int column) const;
  bool is_null(std::size_t row, int column) const;
  /// The statement's row count (UPDATE, DELETE, INSERT).
  std::uint64_t affected() const;

private:
  std::shared_ptr<pg_result> result_;
  std::size_t count_ = 0;
};

/// A statement: its SQL with $1, $2, ... placeholders. Kept as a static constant, it is prepared
/// once per connection under its own name.
struct statement {
  const char* sql;
};

/// Where statements run: a pooled connection per call (committed state), or one transaction.
class session {
public:
  virtual ~session() = default;
  virtual rows run(const statement& s, std::initializer_list<std::string_view> params) const = 0;
  rows run(const statement& s) const { return run(s, {}); }
  /// A write whose rows nobody reads. In a transaction it is sent without waiting for its answer
  /// (libpq's pipeline mode): it travels with the next statement that is waited for, and an error
  /// of its own is thrown there. Elsewhere the same as `run`.
  virtual void send(const statement& s, std::initializer_list<std::string_view> params) const { run(s, params); }
};

/// Milliseconds of the steady clock (timeouts and lags, never shown as a time of day).
std::int64_t steady_ms();

/// A PostgreSQL array literal of `items` (text), for a `$n::text[]` parameter.
std::string array_literal(const std::vector<std::string>& items);
/// The items of a text array as PostgreSQL prints it.
std::vector<std::string> parse_array(std::string_view literal);

class connection final : public session {
public:
  /// Connects (throws `unavailable` when it cannot, saying why without the connection string);
  /// `password`, when not empty, overrides the one the URL names. A statement is prepared again
  /// after `replan_after` uses (below).
  /// An answer not come within `answer_wait` gives the connection up (`no_answer`): a database
  /// that stopped answering (hung, its host unreachable) never holds a thread longer than that.
  explicit connection(const std::string& url, const std::string& password = {}, std::size_t replan_after = 1000,
                      std::chrono::milliseconds answer_wait = std::chrono::seconds{15});
  ~connection() override;
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  using session::run;
  rows run(const statement& s, std::initializer_list<std::string_view> params) const override;
  /// Queues `s` in the connection's pipeline: sent now, its answer read with the next statement
  /// waited for (`run`, `exec`, `flush`), which throws its error if it failed.
  void send(const statement& s, std::initializer_list<std::string_view> params) const override;
  /// Runs SQL text without parameters (several statements allowed when nothing is queued): BEGIN,
  /// SAVEPOINT, migrations.
  void exec(const std::string& sql) const;
  /// Queues one SQL command without parameters (SAVEPOINT): as `send`.
  void send_exec(const std::string& sql) const;
  /// Queues `s` and a COMMIT and waits for every answer, in one round trip: `s`'s rows, or the
  /// first error (after which the server skipped the COMMIT: the transaction is still open, failed).
  rows run_and_commit(const statement& s, std::initializer_list<std::string_view> params) const;
  /// Waits for the queued statements' answers; throws the first error among them.
  void flush() const;
  /// Waits for the queued statements' answers and forgets their errors (a rollback follows); a
  /// broken connection still throws `unavailable`.
  void discard() const;
  /// True while the connection is usable (and nothing queued is left unread).
  bool healthy() const;
  /// Gives the connection up: its pool closes it rather than hand it out again.
  void give_up() const { broken_ = true; }
  /// `run`, waiting at most `wait` for the answer (a probe of the database's health).
  rows run_within(const statement& s, std::chrono::milliseconds wait) const;
  /// `c` waits `wait` for its answers while this lives (a migration's statements may run long).
  class waiting {
  public:
    waiting(const connection& c, std::chrono::milliseconds wait) : c_(c), saved_(std::exchange(c.answer_wait_, wait)) {}
    ~waiting() { c_.answer_wait_ = saved_; }
    waiting(const waiting&) = delete;
    waiting& operator=(const waiting&) = delete;

  private:
    const connection& c_;
    std::chrono::milliseconds saved_;
  };
  /// Called when an answer did not come in time, before `no_answer` is thrown (the pool stops
  /// handing out connections for a while).
  void on_silence(std::function<void()> f) { on_silence_ = std::move(f); }
  /// `first` (no parameters) and then `s`, in one round trip: `s`'s rows, and `first`'s in
  /// `first_rows`. The first error among them is thrown.
  rows run_after(const statement& first, rows& first_rows, const statement& s,
                 std::initializer_list<std::string_view> params) const;
  /// On a replica: whether its server was last seen to have replayed the change log through
  /// `head` on the history of `timeline` (the timeline that wrote the head: storage/postgresql/
  /// replicas.hpp). A server's replay only moves on along one history; a connection keeps its server.
  bool replayed_through(std::uint64_t head, std::uint64_t timeline) const {
    return replayed_timeline_ == timeline && replayed_ >= head;
  }
  void replayed(std::uint64_t head, std::uint64_t timeline) const {
    if (timeline != replayed_timeline_) replayed_ = 0;
    replayed_timeline_ = timeline;
    replayed_ = std::max(replayed_, head);
  }

private:
  /// The name `s` is prepared under on this connection, preparing it when it is not (yet, or any
  /// more). PostgreSQL keeps a prepared statement's plan until the statistics of a table it reads
  /// change, and autovacuum analyzes a table at most once a minute: a plan made while a new
  /// database's tables were tiny (where an index that walks the whole tenant costs the same as
  /// the right one) would read every row of the tenant once they have grown. So a statement is
  /// retired after `replan_after_` uses and prepared, and planned, again.
  const std::string& prepared_name(const statement& s) const;
  /// Deallocates the retired statements, when the connection is outside a transaction and nothing
  /// is queued (in a failed transaction the server refuses every command but ROLLBACK).
  void deallocate_retired() const;
  void enter_pipeline() const;
  /// Runs SQL text (the simple protocol: several statements allowed) outside a pipeline.
  void simple(const std::string& sql) const;
  /// Waits until an answer can be read without blocking, at most until `deadline`; past it the
  /// connection is given up (`no_answer`, and never used again).
  void await_answer(std::chrono::steady_clock::time_point deadline) const;
  /// Gives the connection up: nothing queued is read, the pool makes a new one.
  void abandon() const;
  std::chrono::steady_clock::time_point deadline() const { return std::chrono::steady_clock::now() + answer_wait_; }
  /// Queues `s` (`send`); answers its position among the commands queued, for `drain`.
  std::size_t queue(const statement& s, std::initializer_list<std::string_view> params) const;
  /// Syncs the pipeline and reads every answer: the rows of the command queued at `pick` (by
  /// default the last statement's), or the first error.
  /// Reads every queued answer; the rows of command `pick` (the last one's by default), and of
  /// command `first_at` in `first` when given.
  rows drain(bool raise_errors, std::size_t pick = no_pick, rows* first = nullptr, std::size_t first_at = 0) const;
  static constexpr std::size_t no_pick = static_cast<std::size_t>(-1);

  pg_conn* conn_ = nullptr;
  mutable std::chrono::milliseconds answer_wait_;
  std::function<void()> on_silence_;
  struct prepared {
    std::string name;
    std::size_t uses = 0;
  };
  mutable std::unordered_map<const char*, prepared> prepared_;  ///< statement SQL -> name, uses
  mutable std::vector<std::string> retired_;  ///< names prepared on the server, to deallocate
  std::size_t replan_after_;
  mutable std::uint64_t names_ = 0;    ///< prepared statement names given so far
  /// Statements prepared in the pipeline now under way: forgotten when it fails (a Parse after an
  /// error is skipped by the server), prepared again under a new name at their next use.
  mutable std::vector<const char*> prepared_in_pipeline_;
  mutable std::size_t queued_ = 0;     ///< commands sent in the pipeline, answers not yet read
  mutable bool broken_ = false;
  mutable std::uint64_t replayed_ = 0;
  mutable std::uint64_t replayed_timeline_ = 0;
};

/// A fixed number of connections, made when first needed and again after one breaks.
class pool {
public:
  pool(std::string url, std::string password, std::size_t size, std::chrono::milliseconds wait,
       std::size_t replan_after = 1000, std::chrono::milliseconds answer_wait = std::chrono::seconds{15});

  /// A connection for the caller's use until the lease ends.
  class lease {
  public:
    lease(pool& p, std::unique_ptr<connection> c) : pool_(&p), conn_(std::move(c)) {}
    lease(lease&& o) noexcept : pool_(o.pool_), conn_(std::move(o.conn_)) {}
    lease& operator=(lease&&) = delete;
    ~lease();
    connection& operator*() const { return *conn_; }
    connection* operator->() const { return conn_.get(); }

  private:
    pool* pool_;
    std::unique_ptr<connection> conn_;
  };

  /// Waits at most the pool's wait for a free connection (`unavailable` past it, or when the
  /// database cannot be reached). While the database is marked unreachable, refuses at once
  /// (no connection attempt, no wait: a request answers 503 without holding a thread), unless
  /// `probe`: a health probe tries it.
  lease acquire(bool probe = false);
  /// Marks the database unreachable (a connection could not be made, or an answer did not come)
  /// for `hold` at most; a probe that reaches it (`reachable`) ends that sooner.
  void unreachable();
  void reachable() { down_until_ms_ = 0; }
  static constexpr std::chrono::milliseconds hold{5000};
  std::chrono::milliseconds answer_wait() const { return answer_wait_; }
  std::size_t size() const { return size_; }
  /// Connections leased now (a metric).
  std::size_t in_use() const;
  /// Closes the idle connections: after one broke (the server restarted), the others are stale too.
  void drop_idle();

private:
  void give_back(std::unique_ptr<connection> c);
  /// A new connection; when none can be made, the database is marked unreachable.
  std::unique_ptr<connection> connect();

  std::string url_;
  std::string password_;
  std::size_t size_;
  std::chrono::milliseconds wait_;
  std::size_t replan_after_;
  std::chrono::milliseconds answer_wait_;
  std::atomic<std::int64_t> down_until_ms_{0};  ///< steady clock, ms: refused until then
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<connection>> idle_;
  std::size_t leased_ = 0;
};

/// Runs each statement on a connection leased for it: reads of committed state. A statement that
/// finds its connection broken runs once more on a new one (a server that restarted since); one
/// that got no answer in time, or found no connection, does not (it would wait as long again).
class pooled_session final : public session {
public:
  explicit pooled_session(pool& p) : pool_(p) {}
  using session::run;
  rows run(const statement& s, std::initializer_list<std::string_view> params) const override;

private:
  pool& pool_;
};

}  // namespace cl::storage::pg
