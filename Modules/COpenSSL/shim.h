#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
/* OpenSSL's libcrypto (Debian's libssl-dev, 3.0): the AES, HMAC, SHA-2 and RSA-OAEP that CryptoPrimitives wraps.
 * Only CryptoPrimitives imports this module. */
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/bio.h>

/* Macros Swift cannot import as values, as functions returning the real ones. */
static inline int copenssl_pkey_rsa(void) { return EVP_PKEY_RSA; }
static inline int copenssl_rsa_pkcs1_oaep_padding(void) { return RSA_PKCS1_OAEP_PADDING; }
#endif
