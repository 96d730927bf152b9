#!/usr/bin/env bash
# The device pipeline by hand (docs/DEVICE_RUNNER.md); the script itself is resources/device/run_export.sh,
# which `tinyscope device-run` (core/device/DeviceRunner) runs.
exec "$(dirname "${BASH_SOURCE[0]}")/../../resources/device/run_export.sh" "$@"
