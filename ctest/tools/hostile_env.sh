#!/bin/sh
# env.hostile: the tests that once read the caller's settings, run by ctest with a
# caller's environment that would change every one of them (ctest/CMakeLists.txt sets
# it: quiet, another method, a report file, another bound, a plan, window memory, a
# launcher and hosts that do not exist). They pass only if each test unsets what it
# does not set itself (cmake/malTestEnvironment.cmake), and nothing may write the
# caller's report.
# usage: hostile_env.sh CTEST BUILD_DIR REGEX
set -u
ctest=$1 build=$2 regex=$3
for v in MAL_QUIET MAL_REDIST MAL_REPORT MAL_RECONF_TIMEOUT MAL_PLAN MAL_MEMORY MAL_LAUNCHER; do
    eval "set=\${$v+x}"
    [ "$set" = x ] || { echo "hostile_env: FAIL $v is not exported: nothing is tested"; exit 1; }
done
rm -f "$MAL_REPORT"
"$ctest" --test-dir "$build" --output-on-failure --no-tests=error -R "$regex"
rc=$?
[ $rc = 0 ] || { echo "hostile_env: FAIL ctest exited with $rc"; exit 1; }
[ ! -e "$MAL_REPORT" ] || { echo "hostile_env: FAIL a test wrote the caller's report"; exit 1; }
echo "hostile_env: PASS"
