package io.bloomoperator.testing.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A private CA and server certificates it signs, made by Debian's {@code openssl} in a directory of
 * the test's: what a store behind a company CA serves. P-256 keys, valid two days.
 */
public final class TestCertificates {

  private final Path openssl;
  private final Path dir;
  private final String name;

  private TestCertificates(Path openssl, Path dir, String name) {
    this.openssl = openssl;
    this.dir = dir;
    this.name = name;
  }

  /** A new CA named {@code name}, its files in {@code dir}. */
  public static TestCertificates newCa(Path dir, String name) {
    Path openssl = ServerProcesses.find("openssl", "install Debian's openssl package");
    TestCertificates ca = new TestCertificates(openssl, dir, name);
    ServerProcesses.run(
        dir,
        openssl.toString(),
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        name + ".key",
        "-out",
        name + ".crt",
        "-days",
        "2",
        "-subj",
        "/CN=" + name,
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign");
    return ca;
  }

  /** The CA's certificate, PEM: what a {@code ca.crt} holds. */
  public Path certificate() {
    return dir.resolve(name + ".crt");
  }

  /** The CA's certificate as text. */
  public String certificatePem() {
    try {
      return Files.readString(certificate(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A server certificate and key signed by this CA. */
  public record ServerCertificate(Path certificate, Path key) {}

  /**
   * A server certificate {@code server} for the subject alternative names {@code sans} (e.g. {@code
   * IP:127.0.0.1}, {@code DNS:store.example}).
   */
  public ServerCertificate issue(String server, String... sans) {
    return signed(server, "serverAuth", sans);
  }

  /** A client certificate {@code client} (TLS client authentication) signed by this CA. */
  public ServerCertificate issueClient(String client) {
    return signed(client, "clientAuth", "DNS:" + client);
  }

  private ServerCertificate signed(String server, String usage, String... sans) {
    try {
      Files.writeString(
          dir.resolve(server + ".ext"),
          "subjectAltName="
              + String.join(",", sans)
              + "\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature"
              + "\nextendedKeyUsage="
              + usage
              + "\n",
          StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ServerProcesses.run(
        dir,
        openssl.toString(),
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        server + ".key",
        "-out",
        server + ".csr",
        "-subj",
        "/CN=" + server);
    ServerProcesses.run(
        dir,
        openssl.toString(),
        "x509",
        "-req",
        "-in",
        server + ".csr",
        "-CA",
        certificate().toString(),
        "-CAkey",
        name + ".key",
        "-CAcreateserial",
        "-out",
        server + ".crt",
        "-days",
        "2",
        "-extfile",
        server + ".ext");
    return new ServerCertificate(dir.resolve(server + ".crt"), dir.resolve(server + ".key"));
  }
}
