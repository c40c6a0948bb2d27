#include "daemon/cli/cli.hpp"

int main(int argc, char** argv) { return flytecd::cli::run(argc, argv); }
