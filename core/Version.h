#pragma once
// The workbench's version: CMake's project(VERSION) (the About box, `tinyscope --version`, the ONNX
// producer_version). One place, so no copy of the number can drift.
namespace tinyscope {

const char* tinyscopeVersion();

}  // namespace tinyscope
