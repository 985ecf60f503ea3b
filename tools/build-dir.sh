# Sourced by tools/build.sh, test.sh and main.sh (with `top` set): the stack they run on
# and the build directory they use, in one place.
# MAL_STACK=debian13: the calling command runs again, with its arguments and
# environment, inside the Debian 13 root that tools/stack.sh makes and enters.
if [ -n "${MAL_STACK:-}" ] && [ "${MAL_STACK_INSIDE:-}" != "$MAL_STACK" ]; then
    exec sh "$top/tools/stack.sh" "$MAL_STACK" sh "$top/tools/$(basename "$0")" "$@"
fi
# ./build, or ./build-debian13 inside that stack; -mpich for MAL_MPI=mpich, -sanitize for
# MAL_SANITIZE=1 (build-debian13-mpich-sanitize...). MAL_BUILD_DIR overrides it.
mal_build_name=build${MAL_STACK_INSIDE:+-$MAL_STACK_INSIDE}
[ "${MAL_MPI:-}" = mpich ] && mal_build_name=$mal_build_name-mpich
[ "${MAL_SANITIZE:-0}" = 1 ] && mal_build_name=$mal_build_name-sanitize
build=${MAL_BUILD_DIR:-$top/$mal_build_name}
