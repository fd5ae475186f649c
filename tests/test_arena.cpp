#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

#include "runtime/arena.h"
#include "runtime/status.h"

using namespace einfer;

TEST_CASE("arena: aligned bump allocation, mark/rewind, high-water mark") {
  alignas(64) unsigned char buf[1024];
  Arena arena(buf, sizeof buf);
  void* a = nullptr;
  REQUIRE(arena.allocate(10, 64, &a).ok());
  CHECK(a == buf);
  void* b = nullptr;
  REQUIRE(arena.allocate(8, 32, &b).ok());
  CHECK(reinterpret_cast<uintptr_t>(b) % 32 == 0);
  CHECK(static_cast<unsigned char*>(b) == buf + 32);
  const size_t m = arena.mark();
  void* c = nullptr;
  REQUIRE(arena.allocate(500, 64, &c).ok());
  CHECK(arena.high_water() == 64 + 500);
  arena.rewind(m);
  CHECK(arena.used() == 40);
  CHECK(arena.high_water() == 564);
}

TEST_CASE("arena: a failed allocation names the bytes needed and leaves the arena usable") {
  alignas(64) unsigned char buf[256];
  Arena arena(buf, sizeof buf);
  void* p = reinterpret_cast<void*>(1);
  Status s = arena.allocate(1000, 64, &p);
  CHECK(s.code == StatusCode::out_of_memory);
  CHECK(p == nullptr);
  CHECK(s.need == 1000);
  CHECK(s.have == 256);
  char msg[128];
  format_status(s, msg, sizeof msg);
  CHECK(std::strcmp(msg, "arena too small: bytes (need 1000, have 256)") == 0);
  CHECK(arena.allocate(200, 64, &p).ok());
  CHECK(arena.allocate(1, 3, &p).code == StatusCode::invalid_argument);
}

TEST_CASE("arena: a measuring arena counts exactly what a real one uses") {
  alignas(64) unsigned char buf[4096];
  Arena real(buf, sizeof buf);
  Arena measure = Arena::measuring();
  const size_t sizes[] = {3, 100, 64, 1, 257};
  const size_t aligns[] = {64, 4, 16, 64, 8};
  for (int i = 0; i < 5; ++i) {
    void* p = nullptr;
    REQUIRE(real.allocate(sizes[i], aligns[i], &p).ok());
    REQUIRE(measure.allocate(sizes[i], aligns[i], &p).ok());
    CHECK(p == nullptr);
  }
  CHECK(measure.used() == real.used());
  CHECK(measure.is_measuring());
}
