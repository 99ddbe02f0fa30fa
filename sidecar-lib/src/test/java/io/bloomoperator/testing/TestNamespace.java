package io.bloomoperator.testing;

/** The namespace a single test owns; deleted after the test. */
public record TestNamespace(String name) {}
