#include "Version.h"

namespace tinyscope {

const char* tinyscopeVersion() { return TINYSCOPE_VERSION; }

}  // namespace tinyscope
