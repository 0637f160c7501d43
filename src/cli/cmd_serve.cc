// accelopt serve: the store's runs in a browser, live while a run goes (src/report/serve.h).

#include <fmt/core.h>

#include "cli/common.h"
#include "report/serve.h"
#include "store/store.h"

namespace accelopt::cli {

void RegisterServe(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "serve", "a local, read-only web view of the store: the runs, each run's report, live while it goes");
  static std::string db = "accelopt.db";
  static report::ServeOptions options;
  cmd->add_option("--store,--db", db, kDbHelp);
  cmd->add_option("--port", options.port, "the port to listen on; default 8765 (0: any free one)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--bind", options.bind,
                  "the address to listen on; default 127.0.0.1 (this machine only): any other lets other machines "
                  "read the store");
  cmd->callback([] {
    // Read-only: this process cannot write the store, whatever a request asks.
    auto store = store::OpenStoreReadOnly(db);
    if (!store) throw Exit{kExitError, store.error().message};
    auto server = report::Server::Start(**store, options);
    if (!server) throw Exit{kExitError, server.error().message};
    if (!report::IsLoopback(options.bind))
      fmt::print(stderr,
                 "warning: serving on {}, not on loopback: anyone who reaches this machine on port {} can read the "
                 "store (its kernels, prompts and answers)\n",
                 options.bind, (*server)->port());
    fmt::print("serving {} (read-only) at {}\n", store::RedactUri(db), (*server)->url());
    std::fflush(stdout);
    (*server)->Wait();
  });
}

}  // namespace accelopt::cli
