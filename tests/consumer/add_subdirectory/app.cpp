// The add_subdirectory consumer's own C++ file: the C API and a C++ header through <einfer/...>.
#include <einfer/einfer.h>
#include <einfer/runtime/status.h>
#include <einfer/version.h>

#include <cstdio>
#include <cstring>

int main() {
  einfer_options o;
  einfer_options_default(&o);
  const char* name = einfer::status_code_name(einfer::StatusCode::out_of_memory);
  std::printf("einfer %s: greedy by default %d, status name %s\n", EINFER_VERSION_STRING,
              o.temperature == 0.0f, name);
  return o.temperature == 0.0f && std::strcmp(name, "out_of_memory") == 0 ? 0 : 1;
}
