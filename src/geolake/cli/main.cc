#include "geolake/cli/app.h"

int main(int argc, char** argv) { return geolake::cli::RunCli(argc, argv); }
