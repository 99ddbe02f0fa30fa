package io.bloomoperator.cli;

import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The offline command line: builds, inspects and queries snapshots without a running operator, for
 * GitOps users who commit the snapshot ConfigMaps and apply them with kubectl.
 *
 * <p>Reached through {@code java -jar bloom-operator.jar <command> ...}: {@link
 * io.bloomoperator.OperatorMain} hands over when its first argument is one of {@link #COMMANDS}.
 */
@Command(
    name = "bloom-operator",
    description = {
      "Builds, inspects and queries Bloom filter snapshots offline, without the operator.",
      "Without a command, bloom-operator runs the operator.",
      "",
      "Typical GitOps flow:",
      "  java -jar bloom-operator.jar build --name product-ids \\",
      "      --input ids.txt.gz --fpp 0.001 --output snapshot/",
      "  kubectl apply --server-side -n shop -f snapshot/",
      "  java -jar bloom-operator.jar inspect -n shop --name product-ids",
      "  java -jar bloom-operator.jar query -n shop --name product-ids sku-1 sku-2",
      "  java -jar bloom-operator.jar export -n shop --name product-ids -o product-ids.bin",
      "",
      "Sizing a filter before creating it (docs/sizing.md):",
      "  java -jar bloom-operator.jar size --keys 100000000 --fpp 0.01 --pods 20",
      "",
      "On a cluster with the operator:",
      "  java -jar bloom-operator.jar status product-ids -n shop",
      "  java -jar bloom-operator.jar rebuild product-ids -n shop",
      "  java -jar bloom-operator.jar rollback product-ids -n shop --to 41",
      "  java -jar bloom-operator.jar approve product-ids -n shop",
      "  java -jar bloom-operator.jar promote product-ids -n shop",
      "  java -jar bloom-operator.jar abort product-ids -n shop",
      "",
    },
    subcommands = {
      BuildCommand.class,
      InspectCommand.class,
      QueryCommand.class,
      ExportCommand.class,
      KeygenCommand.class,
      SizeCommand.class,
      StatusCommand.class,
      RebuildCommand.class,
      RollbackCommand.class,
      ApproveCommand.class,
      PromoteCommand.class,
      AbortCommand.class,
      CommandLine.HelpCommand.class
    },
    footer = {"", "Exit codes: 0 ok, 1 source or verification error, 2 usage error."})
public final class BloomCli implements Runnable {

  public static final int EXIT_OK = 0;
  public static final int EXIT_FAILURE = 1;
  public static final int EXIT_USAGE = 2;

  /** First arguments that select the CLI instead of the operator. */
  public static final Set<String> COMMANDS =
      Set.of(
          "build",
          "inspect",
          "query",
          "export",
          "keygen",
          "size",
          "status",
          "rebuild",
          "rollback",
          "approve",
          "promote",
          "abort",
          "help",
          "-h",
          "--help");

  /** System property naming the command in usage texts (set by the kubectl plugin launcher). */
  public static final String CLI_NAME_PROPERTY = "bloom.cli.name";

  @Spec CommandSpec spec;

  @Mixin HelpOption help;

  private final InputStream stdin;

  public BloomCli(InputStream stdin) {
    this.stdin = stdin;
  }

  /** What {@code -} reads. */
  InputStream stdin() {
    return stdin;
  }

  /** Whether {@code args} ask for the CLI (a command or help) rather than the operator. */
  public static boolean isCliInvocation(String[] args) {
    return args != null && args.length > 0 && COMMANDS.contains(args[0]);
  }

  /**
   * A configured command line writing to {@code out} and {@code err}, reading stdin from {@code
   * in}.
   */
  public static CommandLine commandLine(InputStream in, PrintWriter out, PrintWriter err) {
    CommandLine commandLine = new CommandLine(new BloomCli(in));
    // The name usage lines show: "kubectl bloom" when run as the kubectl plugin (its launcher sets
    // it), "bloom-operator" otherwise.
    String name = System.getProperty(CLI_NAME_PROPERTY);
    if (name != null && !name.isBlank()) {
      commandLine.setCommandName(name);
    }
    commandLine.setOut(out);
    commandLine.setErr(err);
    commandLine.setExecutionExceptionHandler(
        (e, cl, parseResult) -> {
          PrintWriter stderr = cl.getErr();
          if (e instanceof CliException) {
            stderr.println("error: " + e.getMessage());
          } else {
            stderr.println("error: unexpected failure: " + e);
            e.printStackTrace(stderr);
          }
          stderr.flush();
          return EXIT_FAILURE;
        });
    return commandLine;
  }

  /**
   * Runs the CLI on the process's standard streams and returns the exit code. Logging (which the
   * operator's logback configuration sends to stdout) goes to stderr, so stdout carries only
   * command output.
   */
  public static int run(String[] args) {
    // Before anything logs: no logback status dump, and console logs (to System.out in the
    // operator's logback.xml) end up on stderr.
    System.setProperty(
        "logback.statusListenerClass", "ch.qos.logback.core.status.NopStatusListener");
    PrintStream stdout = System.out;
    System.setOut(System.err);
    PrintWriter out = new PrintWriter(new OutputStreamWriter(stdout, StandardCharsets.UTF_8), true);
    PrintWriter err =
        new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
    try {
      return commandLine(System.in, out, err).execute(args);
    } finally {
      out.flush();
      err.flush();
    }
  }

  /** Without a command: a usage error (picocli prints the message and the usage). */
  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing command");
  }
}
