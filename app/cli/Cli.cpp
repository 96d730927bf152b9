#include "cli/Cli.h"

#include "Error.h"
#include "Version.h"

#include "cli/CliArgs.h"

#include <algorithm>
#include <iostream>
#include <new>
#include <sstream>

namespace tinyscope::cli {

namespace {
std::vector<Command> allCommands()
{
    std::vector<Command> all;
    for (auto group : {costCommands, evalCommands, trainCommands, searchCommands, graphCommands, exportCommands, deployCommands, deviceCommands, fineTuneCommands, compressCommands, tourCommands}) {
        auto cmds = group();
        all.insert(all.end(), cmds.begin(), cmds.end());
    }
    return all;
}
// `CMD --help`: the command prints its help, which is checked against the options it declares
// (an option without help, or help naming an option that does not exist, is a bug: exit 1).
int runHelp(const Command& c, const Args& args)
{
    takeDeclaredOptions();
    std::ostringstream text;
    std::streambuf* const out = std::cout.rdbuf(text.rdbuf());
    int code = 0;
    try {
        code = c.run(args);
    } catch (...) {
        std::cout.rdbuf(out);
        throw;
    }
    std::cout.rdbuf(out);
    std::cout << text.str();
    const std::vector<std::string> problems = helpProblems(text.str(), takeDeclaredOptions());
    for (const std::string& p : problems) std::cerr << "tinyscope " << c.name << ": internal error (please report): " << p << "\n";
    return problems.empty() ? code : 1;
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
        const Args rest(args.begin() + 1, args.end());
        try {
            if (std::find(rest.begin(), rest.end(), "--help") != rest.end()) return runHelp(c, rest);
            return c.run(rest);
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
