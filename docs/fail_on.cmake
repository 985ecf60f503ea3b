# Shared by the docs checks: stop with every problem found, one a line, under a title.
function(fail_on problems title)
  if(problems)
    string(REPLACE ";" "\n  " problems "${problems}")
    message(FATAL_ERROR "${title}:\n  ${problems}")
  endif()
endfunction()
