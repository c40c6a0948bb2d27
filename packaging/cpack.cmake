# Debian package of flytecd (CPack DEB generator), included from the root CMakeLists.txt.
#   cmake -S . -B build -G Ninja && cmake --build build -j2 && (cd build && cpack -G DEB)
# produces build/flytecd_<version>_<arch>.deb: the binary, the hardened systemd unit, a commented
# default configuration as a conffile, the README and the example repository as documentation,
# the man page and bash/zsh/fish completion.
# Runtime dependencies come from dpkg-shlibdeps (CPACK_DEBIAN_PACKAGE_SHLIBDEPS).

set(FLYTECD_PKG_DIR ${CMAKE_CURRENT_LIST_DIR})

# /usr/lib/systemd/system is on systemd's unit search path on Debian 12 (merged /usr).
install(FILES ${FLYTECD_PKG_DIR}/systemd/flytecd.service DESTINATION lib/systemd/system)
# /etc is absolute on purpose: it is the conffile (see deb/conffiles), never under the prefix.
install(FILES ${FLYTECD_PKG_DIR}/etc/flytecd/config.yaml DESTINATION /etc/flytecd)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${FLYTECD_PKG_DIR}/deb/copyright
        DESTINATION share/doc/flytecd)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/repo-layout-example
        DESTINATION share/doc/flytecd/examples)

# The man page and the shell completion scripts, generated at build time by the binary from its
# command definitions (`flytecd man`, `flytecd completion bash|zsh|fish`; daemon/cli/completion.cpp).
set(FLYTECD_DOC_DIR ${CMAKE_BINARY_DIR}/doc)
set(FLYTECD_DOC_FILES ${FLYTECD_DOC_DIR}/flytecd.1.gz ${FLYTECD_DOC_DIR}/flytecd.bash
    ${FLYTECD_DOC_DIR}/_flytecd ${FLYTECD_DOC_DIR}/flytecd.fish ${FLYTECD_DOC_DIR}/changelog.gz)
add_custom_command(
  OUTPUT ${FLYTECD_DOC_FILES}
  COMMAND sh ${FLYTECD_PKG_DIR}/deb/gen-doc.sh $<TARGET_FILE:flytecd> ${FLYTECD_DOC_DIR}
          ${FLYTECD_PKG_DIR}/deb/changelog
  DEPENDS flytecd ${FLYTECD_PKG_DIR}/deb/gen-doc.sh ${FLYTECD_PKG_DIR}/deb/changelog
  COMMENT "Generating flytecd.1 and the bash, zsh and fish completion from the CLI"
  VERBATIM)
add_custom_target(flytecd_doc ALL DEPENDS ${FLYTECD_DOC_FILES})
install(FILES ${FLYTECD_DOC_DIR}/flytecd.1.gz DESTINATION share/man/man1)
install(FILES ${FLYTECD_DOC_DIR}/flytecd.bash DESTINATION share/bash-completion/completions
        RENAME flytecd)
install(FILES ${FLYTECD_DOC_DIR}/_flytecd DESTINATION share/zsh/vendor-completions)
install(FILES ${FLYTECD_DOC_DIR}/flytecd.fish DESTINATION share/fish/vendor_completions.d)
# A native package's changelog, and lintian overrides (each with its reason).
install(FILES ${FLYTECD_DOC_DIR}/changelog.gz DESTINATION share/doc/flytecd)
install(FILES ${FLYTECD_PKG_DIR}/deb/lintian-overrides DESTINATION share/lintian/overrides
        RENAME flytecd)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME flytecd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "flytecd maintainers <flytecd@example.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GitOps for Flyte: keeps FlyteAdmin equal to a Git repository")
set(CPACK_PACKAGE_DESCRIPTION
    "flytecd validates Flyte overrides (matchable attributes), projects and workflow\n"
    "registrations kept in Git, shows what a change will do before it merges, and\n"
    "reconciles FlyteAdmin to the repository as a daemon with status, metrics and\n"
    "drift detection. This package ships the daemon and a hardened systemd unit.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${FLYTECD_PKG_DIR}/deb/conffiles ${FLYTECD_PKG_DIR}/deb/postinst
    ${FLYTECD_PKG_DIR}/deb/prerm ${FLYTECD_PKG_DIR}/deb/postrm)
include(CPack)
