// Prints a presigned path-style URL (bench helper): presign METHOD BASE_URL HOST BUCKET KEY ACCESS_KEY SECRET
#include "domain/sigv4.hpp"

#include <ctime>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 8) {
    std::cerr << "usage: presign METHOD BASE_URL HOST BUCKET KEY ACCESS_KEY SECRET\n";
    return 2;
  }
  cl::domain::sigv4::presign_request r;
  r.method = argv[1];
  r.host = argv[3];
  r.path = std::string{"/"} + argv[4] + "/" + argv[5];
  r.access_key_id = argv[6];
  r.secret_access_key = argv[7];
  r.region = "us-east-1";
  r.now = static_cast<std::int64_t>(std::time(nullptr));
  r.expires = 3600;
  std::cout << argv[2] << cl::domain::sigv4::presign(r) << "\n";
}
