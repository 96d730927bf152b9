// The host of a precompiled header shared by the test suites (tests/CMakeLists.txt, TINYSCOPE_PCH).
