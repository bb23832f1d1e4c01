# The history as a headless instance keeps it: `code-sandbox --stdio` prunes it by itself (age,
# size), answers MCP calls while its history write waits for another process's lock, and is
# seen by a window opened after it (and again after the window reopens).
add_executable(tst_historyheadless ${CMAKE_CURRENT_LIST_DIR}/tst_historyheadless.cpp)
target_link_libraries(tst_historyheadless PRIVATE codesandbox_core Qt6::Test)
set_target_properties(tst_historyheadless PROPERTIES AUTOMOC ON)
add_test(NAME integration_historyheadless COMMAND tst_historyheadless)
set_tests_properties(integration_historyheadless PROPERTIES
    LABELS integration TIMEOUT 600 RESOURCE_LOCK docker
    ENVIRONMENT "CODE_SANDBOX_BIN=$<TARGET_FILE:code-sandbox>")
