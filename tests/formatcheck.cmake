# Runs clang-format in dry-run mode over the project's C++ sources; fails on any difference.
file(GLOB_RECURSE sources
    ${ROOT}/app/*.cpp ${ROOT}/app/*.h ${ROOT}/core/*.cpp ${ROOT}/core/*.h
    ${ROOT}/ui/*.cpp ${ROOT}/ui/*.h ${ROOT}/tests/*.cpp ${ROOT}/tests/*.h
    ${ROOT}/gateway/*.cpp ${ROOT}/gateway/*.h)
list(FILTER sources EXCLUDE REGEX "/node_modules/")
execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${sources}
    RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "clang-format would change these files (run clang-format -i):\n${err}")
endif()
list(LENGTH sources n)
message(STATUS "${n} files formatted correctly")
