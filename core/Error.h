#pragma once
// Errors the core reports to the user. Every message says what was wrong and
// where (file, key, value); front ends show it verbatim. Nothing in the core aborts.
#include <stdexcept>
#include <string>

namespace tinyscope {

// Bad user input: a malformed file, a value outside the design space, an unknown option.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A well-formed request that no subnet of the space can satisfy.
class InfeasibleError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Work stopped because the user asked for it.
class CancelledError : public std::runtime_error {
public:
    CancelledError() : std::runtime_error("cancelled") {}
};

}  // namespace tinyscope
