package io.bloomoperator.cli;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs the CLI in-process, capturing its streams. */
final class Cli {

  record Run(int exit, String out, String err) {
    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  private Cli() {}

  static Run run(String... args) {
    return run(new ByteArrayInputStream(new byte[0]), args);
  }

  static Run run(InputStream stdin, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        BloomCli.commandLine(stdin, new PrintWriter(out, true), new PrintWriter(err, true))
            .execute(args);
    return new Run(exit, out.toString(), err.toString());
  }
}
