/// \file
/// Everything a geolake test includes (library geolake_testing, linked into every test
/// executable): Status/Result matchers, the test environment contract (data, oracle and shared
/// folders; the skip rule), temporary directories and RunCommand. docs/testing.md describes
/// the contract. Include only from *_test.cc files.
#pragma once

#include "geolake/testing/command.h"
#include "geolake/testing/environment.h"
#include "geolake/testing/matchers.h"
#include "geolake/testing/temp_dir.h"
