find_package(PostgreSQL REQUIRED)  # Debian libpq-dev: PostgreSQL::PostgreSQL
