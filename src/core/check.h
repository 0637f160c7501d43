#pragma once
/// Invariant checks for programmer errors: abort with file and line, in every build.
/// Never use for user input or infrastructure failures (those are Result values).

#include <cstdio>
#include <cstdlib>

#define ACCELOPT_CHECK(cond)                                                            \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)
