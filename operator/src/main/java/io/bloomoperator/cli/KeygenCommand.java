package io.bloomoperator.cli;

import io.bloomoperator.snapshot.Ed25519Keys;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code keygen}: a new Ed25519 key pair for signing manifests. */
@Command(
    name = "keygen",
    description = {
      "Generates an Ed25519 key pair for manifest signatures: the private key as PKCS#8 PEM "
          + "(for the operator's signing Secret or 'build --signing-key'; written readable by "
          + "its owner only) and the public key as X.509 PEM (for applications: "
          + "BloomFilterWatcher.builder(...).trustedKey(...)). Prints the key id manifests "
          + "will carry. Existing files are never overwritten."
    },
    sortOptions = false)
final class KeygenCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = "--private-key",
      required = true,
      paramLabel = "<file>",
      description = "Where to write the private key (PEM).")
  Path privateKey;

  @Option(
      names = "--public-key",
      required = true,
      paramLabel = "<file>",
      description = "Where to write the public key (PEM).")
  Path publicKey;

  @Mixin HelpOption help;

  @Override
  public Integer call() throws CliException {
    KeyPair pair = Ed25519Keys.generate();
    writeNew(privateKey, Ed25519Keys.toPem(pair.getPrivate()), true);
    try {
      writeNew(publicKey, Ed25519Keys.toPem(pair.getPublic()), false);
    } catch (CliException e) {
      try {
        Files.deleteIfExists(privateKey); // no private key without its public half
      } catch (IOException ignored) {
        // reported below
      }
      throw e;
    }
    PrintWriter out = spec.commandLine().getOut();
    out.println("key id: " + Ed25519Keys.keyId(pair.getPublic()));
    out.flush();
    PrintWriter err = spec.commandLine().getErr();
    err.println(
        "operator: kubectl -n <operator-namespace> create secret generic <name> "
            + "--from-file=ed25519.pem="
            + privateKey
            + " and set BLOOM_SIGNING_KEY_SECRET=<name>");
    err.println("applications: ship " + publicKey + " and pass it to trustedKey()");
    err.flush();
    return BloomCli.EXIT_OK;
  }

  private static void writeNew(Path file, String pem, boolean secret) throws CliException {
    try {
      if (secret && file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
        Files.createFile(
            file,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(
            file, pem, StandardCharsets.US_ASCII, StandardOpenOption.TRUNCATE_EXISTING);
      } else {
        Files.writeString(
            file,
            pem,
            StandardCharsets.US_ASCII,
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE);
      }
    } catch (FileAlreadyExistsException e) {
      throw new CliException(file + " already exists; not overwriting a key", e);
    } catch (IOException e) {
      throw new CliException("cannot write " + file + ": " + e, e);
    }
  }
}
