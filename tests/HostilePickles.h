#pragma once
// Pickles that run code when Python loads them (or try to through opcodes and globals we never
// accept), each touching `marker` if it ever runs. Shared by the pickle and checkpoint suites: the
// reader must refuse every one with an InputError and the marker must never appear.
#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope::test {

struct HostilePickle {
    std::string kind;
    std::string bytes;
    bool runs_in_python = false;   // pickle.loads runs the payload (checked by the suite when python3 is there)
};

inline std::string u32le(std::uint32_t v)
{
    std::string s;
    for (int k = 0; k < 4; ++k) s += static_cast<char>((v >> (8 * k)) & 0xFF);
    return s;
}

inline std::vector<HostilePickle> hostilePickles(const std::string& marker)
{
    const std::string touch = "touch " + marker;
    const std::string pyExpr = "__import__('os').system('" + touch + "')";
    auto binunicode = [](const std::string& s) { return "X" + u32le(static_cast<std::uint32_t>(s.size())) + s; };
    auto short8c = [](const std::string& s) { return std::string("\x8c") + static_cast<char>(s.size()) + s; };
    const std::string p0 = "cos\nsystem\n(S'" + touch + "'\ntR.";   // protocol 0: os.system('touch M')
    std::vector<HostilePickle> v = {
        {"GLOBAL os.system (protocol 0)", p0, true},
        {"GLOBAL posix.system (protocol 2)", std::string("\x80\x02") + "cposix\nsystem\n" + binunicode(touch) + "\x85R.", true},
        {"STACK_GLOBAL builtins.eval (protocol 4)",
         std::string("\x80\x04") + short8c("builtins") + short8c("eval") + "\x93" + binunicode(pyExpr) + "\x85R.", true},
        {"builtins.exec", "cbuiltins\nexec\n(S\"" + pyExpr + "\"\ntR.", true},
        {"__builtin__.eval (protocol 2, fix_imports)", std::string("\x80\x02") + "c__builtin__\neval\n" + binunicode(pyExpr) + "\x85R.", true},
        {"subprocess.check_call", "csubprocess\ncheck_call\n((S'touch'\nS'" + marker + "'\nltR.", true},
        {"getattr(__import__('os'), 'system')",
         "cbuiltins\ngetattr\n(cbuiltins\n__import__\n(S'os'\ntRS'system'\ntR(S'" + touch + "'\ntR.", true},
        {"INST opcode", "(S'" + touch + "'\nios\nsystem\n.", true},
        {"OBJ opcode", "(cos\nsystem\nS'" + touch + "'\no.", true},
        {"nested pickle (_pickle.loads)", std::string("\x80\x03") + "c_pickle\nloads\nB" + u32le(static_cast<std::uint32_t>(p0.size())) + p0 + "\x85R.", true},
        {"STACK_GLOBAL dotted name (os.system.__call__)",
         std::string("\x80\x04") + short8c("os") + short8c("system.__call__") + "\x93" + binunicode(touch) + "\x85R.", true},
        {"numpy runstring gadget", "cnumpy.testing._private.utils\nrunstring\n(S\"" + pyExpr + "\"\n(dtR.", true},
        {"NEWOBJ on subprocess.Popen", std::string("\x80\x02") + "csubprocess\nPopen\n(S'touch'\nS'" + marker + "'\nl\x85\x81.", false},
        {"NEWOBJ_EX opcode", std::string("\x80\x04") + "cbuiltins\nobject\n)}\x92.", false},
        {"EXT1 (copyreg extension registry)", std::string("\x80\x02\x82\x01."), false},
        {"PERSID text opcode", "P" + touch + "\n.", false},
        {"copyreg._reconstructor + BUILD", std::string("\x80\x02") + "ccopyreg\n_reconstructor\n(cbuiltins\nobject\ncbuiltins\nobject\nNtR}b.", false},
        {"OrderedDict called with arguments", std::string("\x80\x02") + "ccollections\nOrderedDict\n((S'k'\nS'v'\ntltR.", false},
        {"tensor rebuild on a non-storage", std::string("\x80\x02") + "ctorch._utils\n_rebuild_tensor_v2\n(S'" + touch + "'\nK\x01(K\x01t(K\x01t\x89NtR.", false},
    };
    return v;
}

}  // namespace tinyscope::test
