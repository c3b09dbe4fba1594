#pragma once
/// Internal to the embedded S3 listener (http/s3_*.cpp; Beast inside, never included elsewhere).
/// One connection is an `s3_session`: it reads a request's header, checks its signature and
/// bucket, and answers; the jobs a request can need are apart:
///
/// - `s3_upload` (http/s3_upload.cpp): a PUT's body read into aligned chunks, each written
///   straight to the disk by a write thread while a hashing thread adds it to the SHA-256 (and
///   another to the MD5, when the client declared one), then checked and committed;
/// - `s3_download` (http/s3_download.cpp): a GET's body out of two buffers, the next `pread`
///   under way while the last is written;
/// - the other operations (http/s3_operations.cpp): copy, multipart, delete, each one store call
///   on the disk or read threads and one answer.
///
/// Threads: a session runs on its strand; store calls go to `server().disk` (commits, metadata),
/// `server().reads`, or (a body's stages, each on a strand of its own) `server().writes` and
/// `server().hashing`, and come back to the session's strand (`run_on`), so an I/O thread never
/// waits on a disk or a digest.

#include "http/s3_protocol.hpp"
#include "http/s3_server.hpp"
#include "storage/objects/direct_buffer.hpp"
#include "storage/objects/object_files.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cl::http {

namespace s3_listener {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

constexpr std::size_t chunk_size = 1 << 20;  ///< bytes per read from the disk (downloads, copies)
/// Bytes per read from the socket into an upload's chunk; at most `upload_chunks` of them an
/// upload: its first, and others while the listener's `spare_upload_chunks` last (memory stays
/// bounded by connections x one chunk + the spares, however many bodies arrive at once). Up to
/// 32 MiB an upload, as much as is written between two flushes (`upload_flush_every`): the
/// digests and the socket go on while the disk flushes.
constexpr std::size_t upload_chunk_size = 2 << 20;
constexpr int upload_chunks = 16;
constexpr std::uint64_t upload_flush_every = 32 << 20;  ///< object_files::receive
constexpr int spare_upload_chunks = 128;

/// A part or upload id the store does not know.
const s3::error& no_such_upload();
/// A PUT to a key closed to new bodies: an upload's URL after the upload was completed or aborted.
const s3::error& closed_key();

/// What stop() needs of a session: closing it on its own strand.
struct closable {
  virtual ~closable() = default;
  virtual void close_soon() = 0;
};

}  // namespace s3_listener

struct s3_server::impl : std::enable_shared_from_this<s3_server::impl> {
  impl(boost::asio::io_context& ioc, s3_server_config c);
  void accept();

  boost::asio::io_context& ioc;
  boost::asio::ip::tcp::acceptor acceptor;
  s3_server_config cfg;
  boost::asio::thread_pool disk;      ///< (one thread) commits, multipart, metadata: never on an I/O thread
  boost::asio::thread_pool reads{2};  ///< reads (stat, open, pread): never queued behind a large upload's writes
  boost::asio::thread_pool writes;    ///< bodies' bytes to their files (a strand an upload)
  boost::asio::thread_pool hashing;   ///< bodies' digests (a strand a digest of an upload)
  /// Upload chunks beyond each upload's first that may be taken now (s3_listener::upload_chunks).
  std::atomic<int> spare_chunks{s3_listener::spare_upload_chunks};
  std::mutex sessions_mutex;
  std::vector<std::weak_ptr<s3_listener::closable>> sessions;  ///< closed by stop()
};

namespace s3_listener {

class s3_upload;
class s3_download;

using request_header = bhttp::request_parser<bhttp::empty_body>;
using answer = std::shared_ptr<bhttp::response<bhttp::string_body>>;

class s3_session : public closable, public std::enable_shared_from_this<s3_session> {
public:
  s3_session(tcp::socket socket, std::shared_ptr<s3_server::impl> server);

  void start() { read_header(); }
  void close_soon() override;

  // --- what an operation, an upload or a download uses of its connection ---------------------

  const s3_server_config& cfg() const { return server_->cfg; }
  s3_server::impl& server() { return *server_; }
  beast::tcp_stream& stream() { return stream_; }
  beast::flat_buffer& buffer() { return buffer_; }
  /// The request's header parser (an upload moves it into its body parser).
  std::optional<request_header>& header() { return header_; }
  const s3::request_target& target() const { return target_; }
  const std::string& path() const { return path_; }
  const std::string& request_id() const { return request_id_; }
  const std::string& payload_hash() const { return payload_hash_; }
  const std::string& content_type() const { return content_type_; }
  bool keep_alive() const { return keep_alive_; }
  /// A store call failed and was answered: nothing more of this request runs.
  bool failed() const { return failed_; }

  /// Runs `work` on `where` (a pool or a strand of one), then `then(result)` back on this
  /// session's strand. A store call that throws (a full disk, an I/O error) answers the request
  /// with an S3 error instead of `then`, and never escapes into the pool's thread.
  template <class Where, class Work, class Then>
  void run_on(Where& where, Work work, Then then) {
    net::post(where, [self = shared_from_this(), work = std::move(work), then = std::move(then)]() mutable {
      try {
        auto result = std::make_shared<decltype(work())>(work());
        net::post(self->stream_.get_executor(), [self, result, then = std::move(then)]() mutable { then(std::move(*result)); });
      } catch (const std::exception& e) {
        bool full = storage::disk_full(e);
        std::string what = e.what();
        net::post(self->stream_.get_executor(), [self, full, what] { self->store_failed(full, what); });
      }
    });
  }
  template <class Work, class Then>
  void on_disk(Work work, Then then) {
    run_on(server_->disk, std::move(work), std::move(then));
  }
  template <class Work, class Then>
  void on_read(Work work, Then then) {
    run_on(server_->reads, std::move(work), std::move(then));
  }

  /// Removes, on the disk thread, the bytes of what the request's commit replaced (after its
  /// answer: storage::object_files::empty_trash).
  void empty_trash_soon() {
    on_disk([files = cfg().files] { return (files->empty_trash(), true); }, [](bool) {});
  }

  /// Answers `Expect: 100-continue` (S3 clients send it with bodies and wait for it) once the
  /// request is known to be accepted, then runs `next`.
  void continue_then(std::function<void()> next);

  /// A new answer with the headers every answer carries.
  answer reply(int status);
  /// Answers an S3 error; `unread_body`: the request's body (if any) was not read, so the
  /// connection closes after the answer.
  void fail(const s3::error& e, bool unread_body);
  void send(answer res);
  /// One access-log line: the key path and the status only (the query string carries signatures).
  void log(unsigned status);
  /// The request is answered: the next one on a kept-alive connection, else the end.
  void next_request();
  void close();

  /// The request's body job, held until the request is answered.
  void upload(std::shared_ptr<s3_upload> u) { upload_ = std::move(u); }
  void download(std::shared_ptr<s3_download> d) { download_ = std::move(d); }

private:
  void read_header();
  void dispatch();
  std::optional<s3::error> authenticate(const std::vector<std::pair<std::string, std::string>>& query);
  /// The store could not do what the request asked: nothing of it is stored (a body being received
  /// goes with its temporary files), the answer says why, and the connection closes (the rest of a
  /// body is not read).
  void store_failed(bool full, const std::string& what);

  beast::tcp_stream stream_;
  std::shared_ptr<s3_server::impl> server_;
  beast::flat_buffer buffer_;
  std::optional<request_header> header_;
  std::shared_ptr<s3_upload> upload_;      ///< the request's body being received, if any
  std::shared_ptr<s3_download> download_;  ///< the request's body being sent, if any
  s3::request_target target_;
  std::string method_, path_, request_id_, payload_hash_, content_type_;
  bool close_after_ = false;
  bool failed_ = false;
  bool keep_alive_ = false;  ///< the request's, read before its parser is moved into a body parser
};

/// A PUT's body, received and stored (http/s3_upload.cpp).
class s3_upload : public std::enable_shared_from_this<s3_upload> {
public:
  explicit s3_upload(std::shared_ptr<s3_session> session);
  ~s3_upload();
  /// Checks the declared length, opens the body's temporary file and reads it.
  void start();
  /// Whether the body's temporary files are held (from `start` until its check).
  bool holds_body() const { return incoming_ != nullptr; }
  /// Lets go of the body: its files go with the last chunk its stages have queued.
  void drop_body() { incoming_.reset(); }
  void stop() { body_timer_.cancel(); }
  /// Runs `then` on the session's strand once every stage job queued so far has run.
  void after_stages(std::function<void()> then);

  /// A chunk of the body in memory made for a direct write (storage/objects/direct_buffer.hpp),
  /// shared by its stages.
  struct chunk {
    chunk(std::size_t size, bool huge_pages) : memory(size, huge_pages), data(memory.data()) {}
    storage::direct_buffer memory;
    char* data;
    int pending = 0;  ///< stage jobs that still read it
  };

private:
  using stage = net::strand<net::thread_pool::executor_type>;
  void read_chunk();
  void read_raw_chunk();
  void after_raw_read(std::size_t got);
  void take_chunk();
  void queue(stage& where, void (storage::object_files::incoming::*step)(std::string_view),
             const std::shared_ptr<chunk>& c, std::size_t size);
  void after_stage(const std::shared_ptr<chunk>& c);
  std::shared_ptr<chunk> free_chunk();
  void finish_body();
  std::optional<s3::error> digest_refusal() const;

  std::shared_ptr<s3_session> session_;
  net::steady_timer body_timer_;               ///< bounds a raw body read (read_raw_chunk)
  std::optional<std::uint64_t> raw_remaining_;  ///< body bytes still to read, when not chunked
  std::optional<bhttp::request_parser<bhttp::buffer_body>> parser_;
  std::shared_ptr<storage::object_files::incoming> incoming_;
  stage writes_, sha256_, md5_;  ///< each in the order of the bytes, beside the others
  bool md5_wanted_ = false;      ///< the client declared a Content-MD5 to check
  bool small_ = false;           ///< the body fits one chunk: its chunk is not on a huge page
  std::shared_ptr<chunk> reading_;             ///< the chunk the socket is read into
  std::size_t filled_ = 0;                     ///< bytes of it read so far
  std::vector<std::shared_ptr<chunk>> free_;   ///< chunks no stage reads any more
  int chunks_ = 0;                             ///< chunks allocated: upload_chunks at most
  int spares_ = 0;                             ///< of them, taken from the listener's spares
  int pending_ = 0;                            ///< stage jobs queued and not done
  bool body_done_ = false;
  bool reading_paused_ = false;                ///< every chunk is with the stages
};

/// A GET's or HEAD's answer and body, from an open file (http/s3_download.cpp); the file closes
/// and the buffers go with the object.
class s3_download : public std::enable_shared_from_this<s3_download> {
public:
  s3_download(std::shared_ptr<s3_session> session, int fd) : session_(std::move(session)), fd_(fd) {}
  ~s3_download();
  void start(const storage::object_info& info);

private:
  void read_ahead();
  void write_ready();
  void finish();

  std::shared_ptr<s3_session> session_;
  int fd_;
  bhttp::response<bhttp::buffer_body> response_;
  std::optional<bhttp::response_serializer<bhttp::buffer_body>> serializer_;
  std::unique_ptr<char[]> out_[2];  ///< the two body buffers (read_ahead, write_ready)
  int ready_ = -1;                   ///< the buffer read and not written yet, if any
  std::size_t ready_size_ = 0;
  int writing_buf_ = -1;             ///< the buffer being written, if any
  bool writing_ = false;             ///< a write (the header or a chunk) is under way
  bool reading_file_ = false;        ///< a pread is under way
  int status_ = 200;
  std::uint64_t read_at_ = 0, unread_ = 0;  ///< where the next pread starts; bytes not read yet
  std::uint64_t remaining_ = 0;             ///< body bytes not written yet
};

/// The operations that are one store call and one answer (http/s3_operations.cpp).
void copy_object(const std::shared_ptr<s3_session>& s);
void receive_body(const std::shared_ptr<s3_session>& s);
void complete_upload(const std::shared_ptr<s3_session>& s);
void create_upload(const std::shared_ptr<s3_session>& s);
void list_parts(const std::shared_ptr<s3_session>& s);
void abort_upload(const std::shared_ptr<s3_session>& s);
void delete_object(const std::shared_ptr<s3_session>& s);
void send_object(const std::shared_ptr<s3_session>& s);

}  // namespace s3_listener
}  // namespace cl::http
