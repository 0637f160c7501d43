#pragma once
/// cpp-httplib as Debian builds its library: the same feature macros, or the
/// library's and our idea of its classes' layout differ (memory corruption).
/// The PkgConfig::HTTPLIB target defines them too; this keeps a plain g++
/// build of the test files safe.

#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT
#endif
#ifndef CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#endif
#ifndef CPPHTTPLIB_BROTLI_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#endif
#include <httplib.h>
