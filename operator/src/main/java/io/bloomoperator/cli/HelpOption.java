package io.bloomoperator.cli;

import picocli.CommandLine.Option;

/** The {@code -h/--help} option every command takes, declared once. */
final class HelpOption {
  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;
}
