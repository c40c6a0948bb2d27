# gRPC, protobuf, Abseil, upb, c-ares and RE2 linked from their static archives (Debian ships each
# .a next to its .so), included from CMakeLists.txt after find_package.
#
# Why: a process that loads them as shared objects resolves, before main(), every symbol that
# flytecd's generated protobuf code and those ~55 libraries take from each other: 26,000 symbol
# lookups (LD_DEBUG=statistics), 16,500 once they are archives. `flytecd --version` took
# 18-20 ms, now 12 ms (median of 31, 2-core machine), and every command pays it (a no-change
# apply, validate, plan --git). OpenSSL, zlib and everything else stay shared.
#
# How: the imported targets of those libraries (from gRPC's and Abseil's CMake packages and
# FindProtobuf) keep their names and link interfaces; only their file moves from the .so to the
# .a of the same name in the same directory. A library without an archive stays shared.
# FLYTECD_STATIC_GRPC=OFF links them all shared, as before.
option(FLYTECD_STATIC_GRPC "Link gRPC, protobuf and Abseil from their static archives" ON)

function(flytecd_link_grpc_statically)
  set(queue gRPC::grpc++ gRPC::grpc++_reflection protobuf::libprotobuf absl::synchronization)
  set(seen)
  set(moved 0)
  while(queue)
    list(POP_FRONT queue t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    if(NOT t MATCHES "^(gRPC|absl|protobuf|c-ares|re2)::")
      continue()  # OpenSSL, zlib, Threads: shared, as every other library of flytecd
    endif()
    get_target_property(type ${t} TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(configs ${t} IMPORTED_CONFIGURATIONS)
      set(props IMPORTED_LOCATION)
      if(configs)
        foreach(c ${configs})
          string(TOUPPER "${c}" c)
          list(APPEND props IMPORTED_LOCATION_${c})
        endforeach()
      endif()
      foreach(p ${props})
        get_target_property(location ${t} ${p})
        if(location MATCHES "^(.*)/(lib[^/]+)\\.so(\\.[0-9.]+)?$")
          set(archive "${CMAKE_MATCH_1}/${CMAKE_MATCH_2}.a")
          if(EXISTS "${archive}")
            set_target_properties(${t} PROPERTIES ${p} "${archive}")
            math(EXPR moved "${moved} + 1")
          endif()
        endif()
      endforeach()
    endif()
    get_target_property(deps ${t} INTERFACE_LINK_LIBRARIES)
    if(deps)
      foreach(d ${deps})
        if(TARGET ${d})
          list(APPEND queue ${d})
        endif()
      endforeach()
    endif()
  endwhile()
  message(STATUS "gRPC, protobuf and Abseil: ${moved} imported libraries linked from static archives")
endfunction()

if(FLYTECD_STATIC_GRPC)
  flytecd_link_grpc_statically()
endif()
