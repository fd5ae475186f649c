// printf into a std::string (host tools' reports: --inspect, -v).
#pragma once

#include <string>

namespace einfer::tools {

// Formats like printf; output longer than 511 bytes is cut.
std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

}  // namespace einfer::tools
