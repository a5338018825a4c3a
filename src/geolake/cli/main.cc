#include <cstdio>

int main() {
  std::puts("geolake");
  return 0;
}
