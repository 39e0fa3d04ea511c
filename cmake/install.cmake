# What `cmake --install` puts where (GNU directories under CMAKE_INSTALL_PREFIX): the binary; the
# shipped configurations with their bundled traces, which name each other by relative paths, and
# the Grafana dashboards under share/etwire; the README and docs; and, when the build made them
# (every target, not the binary alone), the man page and the shell completions.
include(GNUInstallDirs)
install(TARGETS etwire RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/etwire/configs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dashboards/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/etwire/dashboards PATTERN generate.py EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_BINARY_DIR}/etwire.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 OPTIONAL)
install(FILES ${PROJECT_BINARY_DIR}/completions/etwire
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions OPTIONAL)
install(FILES ${PROJECT_BINARY_DIR}/completions/_etwire
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions OPTIONAL)
