"""Forwards @rules_java's macros to Bazel's native Java rules (offline stand-in)."""

def java_binary(**attrs):
    native.java_binary(**attrs)

def java_library(**attrs):
    native.java_library(**attrs)

def java_import(**attrs):
    native.java_import(**attrs)

def java_test(**attrs):
    native.java_test(**attrs)

def java_toolchain(**attrs):
    native.java_toolchain(**attrs)

def java_runtime(**attrs):
    native.java_runtime(**attrs)
