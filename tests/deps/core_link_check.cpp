// Linked with every object of flytecd_core and flytecd_base and only their own dependencies
// (CMakeLists.txt): building it is the check that the core references no libgit2, libcurl or
// gRPC symbol. tests/deps/core_deps.sh then asserts on the libraries it needs at run time.
int main() { return 0; }
