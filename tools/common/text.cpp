#include "tools/common/text.h"

#include <cstdarg>
#include <cstdio>

namespace einfer::tools {

std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

}  // namespace einfer::tools
