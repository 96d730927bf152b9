#include "cli/Cli.h"

#include "Error.h"
#include "Version.h"

#include <iostream>
#include <new>

namespace tinyscope::cli {

namespace {
std::vector<Command> allCommands()
{
    std::vector<Command> all;
    for (auto group : {costCommands, evalCommands, trainCommands, searchCommands, graphCommands, exportCommands, deployCommands, deviceCommands, fineTuneCommands, tourCommands}) {
        auto cmds = group();
        all.insert(all.end(), cmds.begin(), cmds.end());
    }
    return all;
}
}  // namespace

void printUsage()
{
    std::cout << "usage: tinyscope [gui]                   open the workbench\n"
                 "       tinyscope <command> [options]     run a command\n"
                 "       tinyscope --version               print the version\n\ncommands:\n";
    for (const Command& c : allCommands()) {
        std::string n = c.name;
        n.resize(16, ' ');
        std::cout << "  " << n << c.summary << "\n";
    }
    std::cout << "\nRun 'tinyscope <command> --help' for a command's options.\n";
}

int runCli(const Args& args)
{
    const std::string& name = args.front();
    if (name == "help" || name == "--help" || name == "-h") {
        printUsage();
        return 0;
    }
    if (name == "--version" || name == "version") {
        std::cout << "tinyscope " << tinyscopeVersion() << "\n";
        return 0;
    }
    for (const Command& c : allCommands()) {
        if (name != c.name) continue;
        try {
            return c.run(Args(args.begin() + 1, args.end()));
        } catch (const InfeasibleError& e) {
            std::cerr << "tinyscope " << name << ": " << e.what() << "\n";
            return 3;
        } catch (const CancelledError& e) {
            std::cerr << "tinyscope " << name << ": cancelled\n";
            return 4;
        } catch (const InputError& e) {
            std::cerr << "tinyscope " << name << ": " << e.what() << "\n";
            return 2;
        } catch (const std::bad_alloc&) {
            // Readers bound what they allocate and name the file; this is the last line of defence.
            std::cerr << "tinyscope " << name << ": out of memory: the input asks for more memory than this machine has\n";
            return 2;
        } catch (const std::exception& e) {
            // Not an error the core anticipated: a bug to report, distinguishable from bad input.
            std::cerr << "tinyscope " << name << ": internal error (please report): " << e.what() << "\n";
            return 1;
        }
    }
    std::cerr << "tinyscope: unknown command '" << name << "' (run 'tinyscope help' for the list)\n";
    return 2;
}

}  // namespace tinyscope::cli
