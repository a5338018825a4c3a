find_package(SQLite3 REQUIRED)  # Debian libsqlite3-dev: SQLite::SQLite3
