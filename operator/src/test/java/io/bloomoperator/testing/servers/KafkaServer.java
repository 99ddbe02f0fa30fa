package io.bloomoperator.testing.servers;

import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A real Apache Kafka broker (KRaft, one node that is both broker and controller), in a JVM of its
 * own, with its data in a fresh temporary directory. {@link #shared()} is one broker per test JVM,
 * stopped at exit; {@link #start(Options)} is a broker of one test's own, for tests that stop, kill
 * or restart it, or that change what it advertises.
 *
 * <p>The broker runs from the runtime classpath of {@code org.apache.kafka:kafka_2.13} that the
 * build writes to a file (module operator/kafka-broker; system property {@value
 * #CLASSPATH_PROPERTY}), so that neither Scala nor the broker's jars nor its log4j binding are on
 * the tests' classpath. The storage is formatted with Kafka's own storage tool ({@code
 * kafka.tools.StorageTool format --standalone}) before the first start.
 *
 * <p>Three listeners, all on 127.0.0.1 and on ports chosen before the start (restarts keep them):
 * {@code PLAINTEXT}, the one tests connect to ({@link #bootstrap()}); {@code BROKER}, for the
 * broker's own inter-broker traffic and this class's admin client and producer, always advertised
 * as itself, so they keep working when {@code PLAINTEXT} advertises another address; and {@code
 * CONTROLLER}. Automatic topic creation is off. A missing classpath file fails the test with a
 * message naming what to build: never a skip.
 */
public final class KafkaServer implements AutoCloseable {

  /** The system property naming the file with the broker's classpath. */
  public static final String CLASSPATH_PROPERTY = "kafka.broker.classpath";

  private static final String CLASSPATH_FILE = "operator/kafka-broker/target/broker.classpath";
  private static final String LOOPBACK = "127.0.0.1";
  private static final long STARTUP_TIMEOUT_MILLIS = 90_000;
  private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration PRODUCE_TIMEOUT = Duration.ofSeconds(120);

  private static KafkaServer shared;

  private final String classpath;
  private final Path dir;
  private final int port;
  private final int brokerPort;
  private final int controllerPort;
  private final String advertisedHost;
  private final int advertisedPort;
  private final Secured secured;
  private final int sslPort;
  private final int saslSslPort;
  private final int mtlsPort;
  private Process process;
  private Admin admin;
  private KafkaProducer<String, String> producer;

  /**
   * How a broker of a test's own is set up.
   *
   * @param advertisedHost the host the {@code PLAINTEXT} listener advertises to clients instead of
   *     127.0.0.1 (e.g. {@code "127.0.0.2"}, where nothing of Kafka listens), or null
   * @param advertisedPort the port advertised with {@code advertisedHost}; 0 to pick a free one of
   *     that host
   */
  public record Options(String advertisedHost, int advertisedPort, Secured secured) {

    /** A broker that advertises the address it listens on. */
    public static Options defaults() {
      return new Options(null, 0, null);
    }

    /**
     * A broker with two more listeners on 127.0.0.1: {@code SSL} and {@code SASL_SSL}
     * (SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN), both serving {@code certificate} ({@link
     * #sslBootstrap()}, {@link #saslSslBootstrap()}). SCRAM users are added with {@link
     * #addScramUser}; the PLAIN user is {@code plainUser} with {@code plainPassword}.
     */
    public static Options secured(
        TestCertificates.ServerCertificate certificate,
        Path clientCa,
        String plainUser,
        String plainPassword) {
      return new Options(null, 0, new Secured(certificate, clientCa, plainUser, plainPassword));
    }

    /**
     * A broker whose {@code PLAINTEXT} listener still listens on 127.0.0.1 but tells clients (in
     * its metadata responses) to connect to {@code host:port}: a client that bootstraps at {@link
     * #bootstrap()} then connects to that address, which is how a test shows what a client does
     * with addresses a broker hands it.
     */
    public static Options advertising(String host, int port) {
      return new Options(host, port, null);
    }
  }

  /** The TLS and SASL listeners' certificate and PLAIN user. */
  public record Secured(
      TestCertificates.ServerCertificate certificate,
      Path clientCa,
      String plainUser,
      String plainPassword) {}

  private KafkaServer(String classpath, Options options) {
    this.classpath = classpath;
    this.advertisedHost = options.advertisedHost();
    this.secured = options.secured();
    try {
      this.dir = Files.createTempDirectory("bloom-kafka-");
      // Held open together so that the six ports differ.
      try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK));
          ServerSocket b = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK));
          ServerSocket c = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK));
          ServerSocket d = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK));
          ServerSocket e = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK));
          ServerSocket f = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
        this.port = a.getLocalPort();
        this.brokerPort = b.getLocalPort();
        this.controllerPort = c.getLocalPort();
        this.sslPort = d.getLocalPort();
        this.saslSslPort = e.getLocalPort();
        this.mtlsPort = f.getLocalPort();
      }
      if (advertisedHost != null && options.advertisedPort() == 0) {
        try (ServerSocket q = new ServerSocket(0, 1, InetAddress.getByName(advertisedHost))) {
          this.advertisedPort = q.getLocalPort();
        }
      } else {
        this.advertisedPort = options.advertisedPort();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The broker of this JVM, started on first call and stopped at JVM exit. */
  public static synchronized KafkaServer shared() {
    if (shared == null) {
      shared = start(Options.defaults());
      Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "kafka-stop"));
    }
    return shared;
  }

  /**
   * A broker of the caller's own, started and ready (unfenced, answering on every listener); {@link
   * #close()} kills it and deletes its data. A port taken between choosing and binding it is
   * retried twice on new ports.
   */
  public static KafkaServer start(Options options) {
    String classpath = readClasspath();
    IllegalStateException last = null;
    for (int attempt = 1; attempt <= 3; attempt++) {
      KafkaServer server = new KafkaServer(classpath, options);
      try {
        server.format();
        server.launch();
        return server;
      } catch (RuntimeException e) {
        String log = server.log();
        server.close();
        if (!log.contains("BindException") && !log.contains("Address already in use")) {
          throw e;
        }
        last = new IllegalStateException(e.getMessage(), e);
      }
    }
    throw last;
  }

  /** {@code 127.0.0.1:<port>} of the {@code PLAINTEXT} listener, for {@code bootstrap.servers}. */
  public String bootstrap() {
    return LOOPBACK + ":" + port;
  }

  /** {@code 127.0.0.1:<port>} of the {@code SSL} listener (a broker started {@code secured}). */
  public String sslBootstrap() {
    return LOOPBACK + ":" + sslPort;
  }

  /**
   * {@code 127.0.0.1:<port>} of the {@code SASL_SSL} listener (a broker started {@code secured}).
   */
  public String saslSslBootstrap() {
    return LOOPBACK + ":" + saslSslPort;
  }

  /**
   * {@code 127.0.0.1:<port>} of the {@code MTLS} listener (TLS that requires a client certificate
   * the broker's CA signed; a broker started {@code secured}).
   */
  public String mtlsBootstrap() {
    return LOOPBACK + ":" + mtlsPort;
  }

  /** Adds (or replaces) a SCRAM user, {@code mechanism} {@code SCRAM-SHA-512} or {@code -256}. */
  public void addScramUser(String mechanism, String user, String password) {
    ScramMechanism scram = ScramMechanism.fromMechanismName(mechanism);
    await(
        admin()
            .alterUserScramCredentials(
                List.of(
                    new UserScramCredentialUpsertion(
                        user, new ScramCredentialInfo(scram, 4096), password)))
            .all(),
        "adding SCRAM user " + user);
  }

  /** The broker's data directory ({@code log.dirs}); it survives {@link #restart()}. */
  public Path logDir() {
    return dir.resolve("data");
  }

  /**
   * Creates a topic with replication factor 1 and the given topic configs (e.g. {@code
   * max.message.bytes}), and returns once every partition has a leader.
   */
  public void createTopic(String name, int partitions, Map<String, String> configs) {
    NewTopic topic = new NewTopic(name, partitions, (short) 1).configs(configs);
    await(admin().createTopics(List.of(topic)).all(), "creating topic " + name);
    awaitLeaders(name, partitions);
  }

  /** Grows {@code topic} to {@code total} partitions and returns once each has a leader. */
  public void addPartitions(String topic, int total) {
    await(
        admin().createPartitions(Map.of(topic, NewPartitions.increaseTo(total))).all(),
        "adding partitions to " + topic);
    awaitLeaders(topic, total);
  }

  /**
   * Produces {@code values} without keys (the default partitioner spreads them) and returns once
   * all are acknowledged by the broker ({@code acks=all}), in order.
   */
  public List<RecordMetadata> produce(String topic, List<String> values) {
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    for (String value : values) {
      sent.add(producer().send(new ProducerRecord<>(topic, value)));
    }
    producer().flush();
    List<RecordMetadata> acknowledged = new ArrayList<>();
    for (Future<RecordMetadata> f : sent) {
      acknowledged.add(await(f, "producing to " + topic, PRODUCE_TIMEOUT));
    }
    return acknowledged;
  }

  /**
   * Produces one record keyed by {@code key}, in the partition Kafka's default partitioner chooses
   * for it, and returns once it is acknowledged.
   */
  public RecordMetadata produceKeyed(String topic, String key, String value) {
    return await(
        producer().send(new ProducerRecord<>(topic, key, value)),
        "producing to " + topic,
        PRODUCE_TIMEOUT);
  }

  /** Produces one record to a given partition and returns once it is acknowledged. */
  public RecordMetadata produce(String topic, int partition, String key, String value) {
    return await(
        producer().send(new ProducerRecord<>(topic, partition, key, value)),
        "producing to " + topic + "-" + partition,
        PRODUCE_TIMEOUT);
  }

  /** Stops the broker (SIGTERM, SIGKILL after 60 s) and keeps its data for {@link #restart()}. */
  public synchronized void stop() {
    closeClients();
    if (process != null) {
      ServerProcesses.stop(process, 60);
    }
  }

  /** Kills the broker (SIGKILL), as a crash would; its data stays for {@link #restart()}. */
  public synchronized void kill() {
    closeClients();
    if (process != null) {
      process.destroyForcibly();
      try {
        process.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Starts the broker again (stopping it first if it runs) on the same ports with the same data
   * directory, and returns once it is ready: what was produced before is still there.
   */
  public synchronized void restart() {
    stop();
    launch();
  }

  /**
   * Kills the broker and deletes its data: a clean shutdown would only cost seconds (about 2) for
   * data about to be deleted.
   */
  @Override
  public synchronized void close() {
    kill();
    ServerProcesses.deleteTree(dir);
  }

  private void format() {
    writeConfig();
    List<String> command = java();
    command.addAll(
        List.of(
            "kafka.tools.StorageTool",
            "format",
            "--cluster-id",
            Uuid.randomUuid().toString(),
            "--config",
            dir.resolve("server.properties").toString(),
            "--standalone"));
    try {
      ServerProcesses.run(dir, command.toArray(String[]::new));
    } catch (IllegalStateException e) {
      throw new IllegalStateException(
          "formatting the Kafka storage failed; broker log " + logFile() + ":\n" + e.getMessage(),
          e);
    }
  }

  private void launch() {
    List<String> command = java();
    command.addAll(List.of("kafka.Kafka", dir.resolve("server.properties").toString()));
    try {
      process =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("stdout.log").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + command.get(0), e);
    }
    awaitReady();
  }

  /**
   * The broker's JVM (and the storage tool's): the running JDK's java, a small heap, its own log4j
   * 2 configuration.
   */
  private List<String> java() {
    return new ArrayList<>(
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xms64m",
            "-Xmx512m",
            "-XX:+UseSerialGC",
            // C1 only: on two shared cores the broker is ready in about half the time, and the
            // tests send it little.
            "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true",
            "-Dlog4j2.configurationFile=" + dir.resolve("log4j2.properties"),
            "-cp",
            classpath));
  }

  private void writeConfig() {
    String plainAdvertised =
        advertisedHost == null ? bootstrap() : advertisedHost + ":" + advertisedPort;
    String broker = LOOPBACK + ":" + brokerPort;
    String controller = LOOPBACK + ":" + controllerPort;
    List<String> listeners =
        new ArrayList<>(
            List.of(
                "PLAINTEXT://" + bootstrap(), "BROKER://" + broker, "CONTROLLER://" + controller));
    List<String> advertised =
        new ArrayList<>(
            List.of(
                "PLAINTEXT://" + plainAdvertised,
                "BROKER://" + broker,
                "CONTROLLER://" + controller));
    String protocols = "PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT";
    List<String> security = new ArrayList<>();
    if (secured != null) {
      List<String> more =
          List.of(
              "SSL://" + sslBootstrap(),
              "SASL_SSL://" + saslSslBootstrap(),
              "MTLS://" + mtlsBootstrap());
      listeners.addAll(more);
      advertised.addAll(more);
      protocols += ",SSL:SSL,SASL_SSL:SASL_SSL,MTLS:SSL";
      Path keystore = dir.resolve("broker-keystore.pem");
      try {
        // Kafka's PEM key store file: the private key (PKCS#8), then the certificate chain.
        Files.writeString(
            keystore,
            Files.readString(secured.certificate().key())
                + Files.readString(secured.certificate().certificate()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      for (String listener : List.of("ssl", "sasl_ssl", "mtls")) {
        security.add("listener.name." + listener + ".ssl.keystore.type=PEM");
        security.add("listener.name." + listener + ".ssl.keystore.location=" + keystore);
      }
      security.add("listener.name.mtls.ssl.client.auth=required");
      security.add("listener.name.mtls.ssl.truststore.type=PEM");
      security.add("listener.name.mtls.ssl.truststore.location=" + secured.clientCa());
      security.add("sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN");
      for (String scram : List.of("scram-sha-512", "scram-sha-256")) {
        security.add(
            "listener.name.sasl_ssl."
                + scram
                + ".sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule"
                + " required;");
      }
      security.add(
          "listener.name.sasl_ssl.plain.sasl.jaas.config="
              + "org.apache.kafka.common.security.plain.PlainLoginModule required user_"
              + secured.plainUser()
              + "=\""
              + secured.plainPassword()
              + "\";");
    }
    String server =
        String.join(
            "\n",
            "process.roles=broker,controller",
            "node.id=1",
            "controller.quorum.bootstrap.servers=" + controller,
            "controller.listener.names=CONTROLLER",
            "listeners=" + String.join(",", listeners),
            "advertised.listeners=" + String.join(",", advertised),
            "inter.broker.listener.name=BROKER",
            "listener.security.protocol.map=" + protocols,
            String.join("\n", security),
            "log.dirs=" + logDir(),
            "num.partitions=1",
            "default.replication.factor=1",
            "auto.create.topics.enable=false",
            // One node: every internal topic with one replica, and with one partition, so that
            // the first consumer group or transaction does not wait for 50 partitions.
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "transaction.state.log.num.partitions=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            // After a kill, the restarted controller refuses the broker's new registration until
            // the killed one's session has expired: 4 s instead of 9 s per restart.
            "broker.heartbeat.interval.ms=500",
            "broker.session.timeout.ms=4000",
            // Two cores are shared by every test server.
            "num.network.threads=2",
            "num.io.threads=2",
            "");
    String log4j =
        String.join(
            "\n",
            "status = warn",
            "appender.file.type = File",
            "appender.file.name = file",
            "appender.file.fileName = " + logFile(),
            "appender.file.layout.type = PatternLayout",
            "appender.file.layout.pattern = [%d] %p %m (%c)%n",
            "rootLogger.level = INFO",
            "rootLogger.appenderRef.file.ref = file",
            "");
    try {
      Files.createDirectories(logDir());
      Files.writeString(dir.resolve("server.properties"), server, StandardCharsets.UTF_8);
      Files.writeString(dir.resolve("log4j2.properties"), log4j, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Ready: the process runs and the broker, unfenced, lists itself in its metadata. */
  private void awaitReady() {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STARTUP_TIMEOUT_MILLIS);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw failure("exited with " + process.exitValue() + " while starting");
      }
      try {
        if (!admin().describeCluster().nodes().get(2, TimeUnit.SECONDS).isEmpty()) {
          return;
        }
      } catch (ExecutionException | TimeoutException e) {
        // Not listening or not unfenced yet.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for Kafka", e);
      }
      ServerProcesses.sleep(100, "Kafka");
    }
    throw failure("did not become ready within " + STARTUP_TIMEOUT_MILLIS + " ms");
  }

  private void awaitLeaders(String topic, int partitions) {
    long deadline = System.nanoTime() + CLIENT_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      try {
        TopicDescription description =
            admin()
                .describeTopics(List.of(topic))
                .allTopicNames()
                .get(CLIENT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .get(topic);
        List<TopicPartitionInfo> infos = description.partitions();
        if (infos.size() == partitions && infos.stream().allMatch(p -> p.leader() != null)) {
          return;
        }
      } catch (ExecutionException e) {
        // The controller has created it, the broker's metadata may not show it yet.
        if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
          throw failure("describing " + topic + " failed: " + e.getCause(), e.getCause());
        }
      } catch (TimeoutException e) {
        throw failure("describing " + topic + " timed out after " + CLIENT_TIMEOUT, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while describing " + topic, e);
      }
      ServerProcesses.sleep(50, "Kafka");
    }
    throw failure("partitions of " + topic + " have no leader after " + CLIENT_TIMEOUT);
  }

  private synchronized Admin admin() {
    if (admin == null) {
      Properties config = new Properties();
      config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, LOOPBACK + ":" + brokerPort);
      config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
      config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
      // While the broker starts, retry the connection often rather than backing off to 1 s.
      config.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "200");
      admin = Admin.create(config);
    }
    return admin;
  }

  private synchronized KafkaProducer<String, String> producer() {
    if (producer == null) {
      Properties config = new Properties();
      config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, LOOPBACK + ":" + brokerPort);
      config.put(ProducerConfig.ACKS_CONFIG, "all");
      config.put(ProducerConfig.LINGER_MS_CONFIG, "0");
      config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(CLIENT_TIMEOUT.toMillis()));
      // Generous: a request that times out is sent again, and on a starved machine (a CI run
      // under load) the idempotent producer's retries then ended in OutOfOrderSequenceException
      // loops until the batch expired. Tests wait for acknowledgements, not for a deadline.
      config.put(
          ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(PRODUCE_TIMEOUT.toMillis()));
      config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "60000");
      // Not idempotent: the one producer serves every test and topic of the shared broker, and its
      // idempotent sequence state went out of step with the broker's (OutOfOrderSequenceException
      // on a new topic's partition, "0 incoming, 299 current", until the batch expired), even on
      // an idle machine. One request in flight keeps the order; a retry after a lost
      // acknowledgement could duplicate a record, which the tests' at-least-once reading allows.
      config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
      config.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
      producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    }
    return producer;
  }

  private synchronized void closeClients() {
    if (producer != null) {
      producer.close(Duration.ofSeconds(5));
      producer = null;
    }
    if (admin != null) {
      admin.close(Duration.ofSeconds(5));
      admin = null;
    }
  }

  private <T> T await(Future<T> future, String what) {
    return await(future, what, CLIENT_TIMEOUT);
  }

  private <T> T await(Future<T> future, String what, Duration timeout) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw failure(what + " failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw failure(what + " timed out after " + timeout, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while " + what, e);
    }
  }

  private IllegalStateException failure(String what) {
    return failure(what, null);
  }

  private IllegalStateException failure(String what, Throwable cause) {
    return new IllegalStateException(
        "Kafka broker (" + bootstrap() + ") " + what + "; its log: " + logFile() + tail(), cause);
  }

  private Path logFile() {
    return dir.resolve("server.log");
  }

  /** The broker's log and what its JVM printed, for deciding whether to retry on new ports. */
  private String log() {
    StringBuilder text = new StringBuilder();
    for (Path file : List.of(logFile(), dir.resolve("stdout.log"))) {
      try {
        if (Files.isReadable(file)) {
          text.append(Files.readString(file, StandardCharsets.UTF_8));
        }
      } catch (IOException e) {
        // Nothing to add.
      }
    }
    return text.toString();
  }

  /** The last lines of the broker's log and of its JVM's output, for a failure message. */
  private String tail() {
    List<String> lines = Arrays.asList(log().split("\n"));
    return "\n...\n"
        + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  /** The broker's classpath, from the file the build wrote (operator/kafka-broker). */
  private static String readClasspath() {
    String property = System.getProperty(CLASSPATH_PROPERTY);
    Path file =
        property != null
            ? Path.of(property)
            : RealKubernetesExtension.repoRoot().resolve(CLASSPATH_FILE);
    String build =
        "; it is written by the module operator/kafka-broker, which `mvn verify` and `mvn install"
            + " -DskipTests` build before the operator (or alone: `mvn -B -pl"
            + " operator/kafka-broker generate-resources`, online once to fetch the broker's"
            + " jars)";
    if (!Files.isReadable(file)) {
      throw new IllegalStateException(
          "the Kafka broker's classpath file " + file + " does not exist" + build);
    }
    String classpath;
    try {
      classpath = Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (String jar : classpath.split(File.pathSeparator)) {
      if (!Files.isReadable(Path.of(jar))) {
        throw new IllegalStateException(
            "the Kafka broker's classpath file " + file + " names a missing jar " + jar + build);
      }
    }
    return classpath;
  }
}
