# Several hosts (ctest/multihost/multihost.sh): two network namespaces with their own host
# names and a veth link, Open MPI launching into the second through rsh-agent. Each test
# makes the hosts, runs one job (ended by the script after 45 s, so it always cleans up)
# and removes them; multihost.clean runs after them, even after a failure or a timeout,
# removes whatever is left and fails if anything remains. One at a time (the namespaces have
# fixed names). Skipped, with the reason, where namespaces cannot be made (not root, no
# iproute2, no unshare).
set(mal_multihost ${CMAKE_CURRENT_SOURCE_DIR}/multihost/multihost.sh)
set(mal_multihost_tests)
if(TARGET jacobi)
  add_test(NAME multihost.jacobi COMMAND sh ${mal_multihost} jacobi $<TARGET_FILE:jacobi>)
  add_test(NAME multihost.mixed COMMAND sh ${mal_multihost} mixed $<TARGET_FILE:jacobi>)
  add_test(NAME multihost.cycles COMMAND sh ${mal_multihost} cycles $<TARGET_FILE:jacobi>)
  add_test(NAME multihost.policy COMMAND sh ${mal_multihost} policy $<TARGET_FILE:jacobi>)
  list(APPEND mal_multihost_tests multihost.jacobi multihost.mixed multihost.cycles
    multihost.policy)
  set(mal_policy_test multihost.policy)
endif()
if(TARGET mal_bench_redist)
  add_test(NAME multihost.redist COMMAND sh ${mal_multihost} redist
    $<TARGET_FILE:mal_bench_redist>)
  list(APPEND mal_multihost_tests multihost.redist)
endif()
# Scale (label scale): four hosts, 8 to 32 processes (multihost.sh scale, scale-soak).
set(mal_scale_tests)
if(TARGET mal_soak)
  add_test(NAME multihost.scale COMMAND sh ${mal_multihost} scale $<TARGET_FILE:mal_soak>)
  add_test(NAME multihost.scale_soak COMMAND sh ${mal_multihost} scale-soak
    $<TARGET_FILE:mal_soak>)
  set(mal_scale_tests multihost.scale multihost.scale_soak)
  list(APPEND mal_multihost_tests ${mal_scale_tests})
endif()
add_test(NAME multihost.clean COMMAND sh ${mal_multihost} clean)
set_tests_properties(${mal_multihost_tests} PROPERTIES FIXTURES_REQUIRED multihost
  ENVIRONMENT "${MAL_TEST_BOUND}")
set_tests_properties(multihost.clean PROPERTIES FIXTURES_CLEANUP multihost)
set_tests_properties(${mal_multihost_tests} multihost.clean PROPERTIES LABELS multihost
  TIMEOUT 60 RESOURCE_LOCK mal_namespaces SKIP_RETURN_CODE 77
  PASS_REGULAR_EXPRESSION "multihost: PASS" FAIL_REGULAR_EXPRESSION "multihost: FAIL")
if(mal_scale_tests OR mal_policy_test)
  set_tests_properties(${mal_scale_tests} ${mal_policy_test} PROPERTIES
    LABELS "multihost;scale")
  set_tests_properties(multihost.scale PROPERTIES TIMEOUT 240)
  set_tests_properties(multihost.scale_soak PROPERTIES TIMEOUT 420)
endif()
