find_package(TBB REQUIRED)  # Debian libtbb-dev (oneTBB): TBB::tbb
