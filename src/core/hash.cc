#include "core/hash.h"

#include <openssl/evp.h>

#include "core/check.h"

namespace accelopt {

struct ContentHasher::State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~State() { EVP_MD_CTX_free(ctx); }
};

// A failure of libcrypto here is an allocation failure: a broken invariant, not input.
ContentHasher::ContentHasher() : state_(std::make_unique<State>()) {
  ACCELOPT_CHECK(state_->ctx != nullptr && EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) == 1);
}

ContentHasher::~ContentHasher() = default;

ContentHasher& ContentHasher::Add(std::string_view data) {
  ACCELOPT_CHECK(EVP_DigestUpdate(state_->ctx, data.data(), data.size()) == 1);
  return *this;
}

std::string ContentHasher::Hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  ACCELOPT_CHECK(EVP_DigestFinal_ex(state_->ctx, digest, &size) == 1);
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) out += {digits[digest[i] >> 4], digits[digest[i] & 15]};
  return out;
}

std::string ContentHash(std::string_view data) { return ContentHasher().Add(data).Hex(); }

}  // namespace accelopt
