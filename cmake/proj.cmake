find_package(PROJ REQUIRED)  # Debian libproj-dev: PROJ::proj
