# What `cmake --install` puts where (GNU directories under CMAKE_INSTALL_PREFIX): the binary; the
# shipped configurations with their bundled traces, which name each other by relative paths, and
# the Grafana dashboards under share/etwire; the README and docs; and, when the build made them
# (every target, not the binary alone), the man page, the shell completions and the
# configuration's JSON Schema.
include(GNUInstallDirs)
install(TARGETS etwire RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/etwire/configs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dashboards/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/etwire/dashboards PATTERN generate.py EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_BINARY_DIR}/etwire.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 OPTIONAL)
install(FILES ${PROJECT_BINARY_DIR}/etwire.schema.json DESTINATION ${CMAKE_INSTALL_DATADIR}/etwire
        OPTIONAL)
install(FILES ${PROJECT_BINARY_DIR}/completions/etwire
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions OPTIONAL)
install(FILES ${PROJECT_BINARY_DIR}/completions/_etwire
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions OPTIONAL)

# A .deb of the same files (`cpack -G DEB`, or the `package` target): its dependencies are the
# Debian packages of the libraries the binary links, as dpkg-shlibdeps finds them.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME etwire)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "replays Chakra execution traces as RoCEv2 traffic against a device under test")
set(CPACK_PACKAGE_CONTACT "etwire maintainers <etwire@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# DPDK's virtual devices are drivers the EAL loads by name at run time, which no link shows.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "librte-net-af-packet23, librte-net-memif23, librte-net-null23, librte-net-pcap23")
# mpirun, for runs split between emulator processes.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
