// tinyscope: no arguments or `gui` opens the workbench; `tinyscope <command>` runs the CLI.
#include "cli/Cli.h"
#include "GuiMain.h"
#include "io/DataPaths.h"
#include "nn/TorchRuntime.h"

#include <string>
#include <vector>

int main(int argc, char** argv)
{
    tinyscope::configureAllocator();
    tinyscope::setExecutablePath(argv[0]);
    if (argc < 2 || std::string(argv[1]) == "gui")
        return tinyscope::ui::runGui(argc, argv);
    std::vector<std::string> args(argv + 1, argv + argc);
    return tinyscope::cli::runCli(args);
}
