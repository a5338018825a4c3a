find_package(GTest REQUIRED)  # Debian libgtest-dev/libgmock-dev: GTest::gtest, GTest::gmock
include(GoogleTest)
