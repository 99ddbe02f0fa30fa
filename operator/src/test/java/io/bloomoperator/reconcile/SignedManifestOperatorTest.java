package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.chunkNames;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.publish.SigningKeySecret;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSignature;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.watch.BloomFilterListener;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator signs every manifest with the key of a Secret in its own namespace; readers that
 * trust the public key load the operator's snapshots and nothing written by anyone else.
 */
@RealKubernetes(crdDirs = "crds", controllerManager = true)
class SignedManifestOperatorTest {

  private static final String SECRET = "bloom-signing";
  private static final String KEY_FIELD = SigningKeySecret.KEY;
  private static final Duration READY = Duration.ofSeconds(30);
  private static final KeyPair FIRST = Ed25519Keys.generate();
  private static final KeyPair SECOND = Ed25519Keys.generate();
  private static final String OPERATOR_NS =
      "bloom-system-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));

  /** Signs with the key in a Secret of its own namespace, which exists before it starts. */
  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
              OperatorSettings.builder()
                  .signingKey(new SigningKeySecret(OPERATOR_NS, SECRET))
                  .build())
          .beforeStart(
              client -> {
                client
                    .namespaces()
                    .resource(
                        new NamespaceBuilder()
                            .withNewMetadata()
                            .withName(OPERATOR_NS)
                            .endMetadata()
                            .build())
                    .create();
                setSigningKey(FIRST);
              })
          .afterStop(client -> client.namespaces().withName(OPERATOR_NS).delete());

  @Test
  void trustedReaderLoadsOperatorSnapshotsAndRefusesForgeries(
      KubernetesClient client, TestNamespace ns) {
    List<String> ids = keys("sku", 200);
    applyInline(client, ns.name(), "ids", ids);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    assertThat(signatureKeyId(client, ns.name(), "ids")).isEqualTo(keyId(FIRST));

    Failures failures = new Failures();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
            .trustedKey(FIRST.getPublic())
            .listener(failures)
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      assertThat(ids).allMatch(live::mightContain);

      // Someone with ConfigMap write rights publishes an all-zero v2 ("absent" for every key)
      // exactly as the operator would, digests included, but cannot sign it.
      Manifest forged = forgeEmptyVersion(client, ns.name(), "ids", 2);
      client
          .configMaps()
          .inNamespace(ns.name())
          .withName(SnapshotNames.manifestName("ids"))
          .edit(
              cm ->
                  new ConfigMapBuilder(cm)
                      .withData(
                          SnapshotConfigMaps.manifest(ns.name(), "ids", forged.toJson(), null, null)
                              .getData())
                      .build());

      failures.await(LoadFailureReason.UNSIGNED);
      assertThat(live.currentVersion()).isNotEqualTo(2);
      assertThat(ids).allMatch(live::mightContain);
      // Not the operator's manifest: replaced by a new signed version of the same keys.
      await().atMost(READY).until(() -> live.currentVersion() == 3);
      assertThat(ids).allMatch(live::mightContain);
    }
  }

  @Test
  void reCreatedFilterReachesTrustedReadersWithoutARestart(
      KubernetesClient client, TestNamespace ns) {
    List<String> before = keys("old", 200);
    applyInline(client, ns.name(), "ids", before);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));

    Failures failures = new Failures();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
            .trustedKey(FIRST.getPublic())
            .listener(failures)
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      assertThat(live.currentVersion()).isEqualTo(1);

      // kubectl delete, then apply again at once: the new BloomFilter counts from version 1 again
      // while the garbage collector may still be removing the old one's ConfigMaps.
      client.resources(BloomFilter.class).inNamespace(ns.name()).withName("ids").delete();
      await()
          .atMost(READY)
          .until(
              () ->
                  client.resources(BloomFilter.class).inNamespace(ns.name()).withName("ids").get()
                      == null);
      List<String> after = keys("new", 200);
      applyInline(client, ns.name(), "ids", after);
      awaitStatus(
          client,
          ns.name(),
          "ids",
          f -> ready(f, "True", "Published") && Long.valueOf(1).equals(f.getStatus().getVersion()));

      await().atMost(READY).until(() -> after.stream().allMatch(live::mightContain));
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(failures.seen).isEmpty();
    }
  }

  @Test
  void signedManifestCopiedToAnotherNamespaceOrFilterIsRefused(
      KubernetesClient client, TestNamespace ns) {
    String elsewhere = ns.name() + "-copy";
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(elsewhere).endMetadata().build())
        .create();
    try {
      applyInline(client, ns.name(), "ids", keys("sku", 100));
      awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
      ConfigMap manifest =
          client
              .configMaps()
              .inNamespace(ns.name())
              .withName(SnapshotNames.manifestName("ids"))
              .get();

      // The same objects, byte for byte, in another namespace.
      for (String name : chunkNames(client, ns.name(), "ids")) {
        copy(
            client,
            client.configMaps().inNamespace(ns.name()).withName(name).get(),
            elsewhere,
            name);
      }
      copy(client, manifest, elsewhere, manifest.getMetadata().getName());
      // And the manifest as the one of another filter in the same namespace.
      copy(client, manifest, ns.name(), SnapshotNames.manifestName("other-ids"));

      Failures inOther = new Failures();
      Failures asOther = new Failures();
      try (LiveBloomFilter<String> copied =
              BloomFilterWatcher.builder(client, elsewhere, "ids", LiveKeyType.STRING)
                  .trustedKey(FIRST.getPublic())
                  .listener(inOther)
                  .start();
          LiveBloomFilter<String> renamed =
              BloomFilterWatcher.builder(client, ns.name(), "other-ids", LiveKeyType.STRING)
                  .trustedKey(FIRST.getPublic())
                  .listener(asOther)
                  .start()) {
        inOther.await(LoadFailureReason.BAD_SIGNATURE);
        asOther.await(LoadFailureReason.WRONG_FILTER);
        assertThat(copied.isReady()).isFalse();
        assertThat(renamed.isReady()).isFalse();
      }
    } finally {
      client.namespaces().withName(elsewhere).delete();
    }
  }

  @Test
  void keyRotation(KubernetesClient client, TestNamespace ns) {
    List<String> v1Keys = keys("v1", 100);
    applyInline(client, ns.name(), "ids", v1Keys);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));

    Failures oldOnlyFailures = new Failures();
    try (LiveBloomFilter<String> both =
            BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
                .trustedKey(FIRST.getPublic())
                .trustedKey(SECOND.getPublic())
                .start();
        LiveBloomFilter<String> oldOnly =
            BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
                .trustedKey(FIRST.getPublic())
                .listener(oldOnlyFailures)
                .start()) {
      assertThat(both.awaitReady(READY)).isTrue();
      assertThat(oldOnly.awaitReady(READY)).isTrue();

      setSigningKey(SECOND);
      // A rebuild with unchanged content re-signs the published version with the new key.
      requestRebuild(client, ns.name(), "ids", "rotate");
      await()
          .atMost(READY)
          .until(() -> keyId(SECOND).equals(signatureKeyId(client, ns.name(), "ids")));
      try (LiveBloomFilter<String> newOnly =
          BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
              .trustedKey(SECOND.getPublic())
              .start()) {
        assertThat(newOnly.awaitReady(READY)).isTrue();
        assertThat(newOnly.currentVersion()).isEqualTo(1);
      }

      // New content: v2, signed by the new key only.
      List<String> v2Keys = keys("v2", 100);
      applyInlineUpdate(client, ns.name(), "ids", v2Keys);
      await().atMost(READY).until(() -> both.currentVersion() == 2);
      assertThat(v2Keys).allMatch(both::mightContain);
      oldOnlyFailures.await(LoadFailureReason.UNTRUSTED_KEY);
      assertThat(oldOnly.currentVersion()).isEqualTo(1);
    } finally {
      setSigningKey(FIRST);
    }
  }

  @Test
  void rebuildSignsAnUnsignedManifestOnlyIfTheOperatorWroteIt(
      KubernetesClient client, TestNamespace ns) throws Exception {
    applyInline(client, ns.name(), "ids", keys("sku", 100));
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    String original =
        SnapshotConfigMaps.manifestJson(
            client
                .configMaps()
                .inNamespace(ns.name())
                .withName(SnapshotNames.manifestName("ids"))
                .get());
    Manifest m = Manifest.fromJson(original);
    // Same payload digest (so a rebuild counts as unchanged), other claims, no signature.
    Manifest edited =
        new Manifest(
            m.format(),
            m.version(),
            m.filterName(),
            m.keyType(),
            m.numBits(),
            m.numHashFunctions(),
            999_999,
            m.expectedFpp(),
            m.totalBytes(),
            m.sha256(),
            m.createdAt(),
            m.chunks());
    setManifestData(client, ns.name(), edited.toJson());
    requestRebuild(client, ns.name(), "ids", "after-edit");
    awaitStatus(
        client,
        ns.name(),
        "ids",
        f ->
            "after-edit".equals(f.getStatus().getRebuildRequest())
                && "Idle".equals(f.getStatus().getPhase()));
    // Not the manifest the operator wrote (status.manifestDigest): never signed, but replaced by a
    // new signed version.
    String now =
        SnapshotConfigMaps.manifestJson(
            client
                .configMaps()
                .inNamespace(ns.name())
                .withName(SnapshotNames.manifestName("ids"))
                .get());
    assertThat(now).as("edited manifest not signed").isNotEqualTo(edited.toJson());
    assertThat(Manifest.fromJson(now).version()).isGreaterThan(m.version());
    assertThat(signatureKeyId(client, ns.name(), "ids")).isEqualTo(keyId(FIRST));

    // The operator's text of version 1 without its signature: not what it last wrote either.
    setManifestData(client, ns.name(), original);
    requestRebuild(client, ns.name(), "ids", "after-restore");
    await()
        .atMost(READY)
        .until(() -> keyId(FIRST).equals(signatureKeyId(client, ns.name(), "ids")));
  }

  @Test
  void unusableSigningKeyPublishesNothing(KubernetesClient client, TestNamespace ns) {
    setSigningKeyPem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
    try {
      applyInline(client, ns.name(), "ids", keys("sku", 10));
      BloomFilter failed =
          awaitStatus(
              client, ns.name(), "ids", f -> ready(f, "False", Reasons.SIGNING_KEY_UNAVAILABLE));
      assertThat(ReadyCondition.of(failed).orElseThrow().getMessage())
          .contains(OPERATOR_NS + "/" + SECRET)
          .doesNotContain("AAAA");
      assertThat(chunkNames(client, ns.name(), "ids")).isEmpty();
      assertThat(
              client
                  .configMaps()
                  .inNamespace(ns.name())
                  .withName(SnapshotNames.manifestName("ids"))
                  .get())
          .isNull();
    } finally {
      setSigningKey(FIRST);
    }
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    assertThat(signatureKeyId(client, ns.name(), "ids")).isEqualTo(keyId(FIRST));
  }

  // ------------------------------------------------------------------ helpers

  /** Listener remembering refusals. */
  private static final class Failures implements BloomFilterListener {
    private final List<Exception> seen = new CopyOnWriteArrayList<>();

    @Override
    public void onFailure(long version, Exception exception) {
      seen.add(exception);
    }

    void await(LoadFailureReason reason) {
      org.awaitility.Awaitility.await()
          .atMost(READY)
          .until(
              () ->
                  seen.stream()
                      .anyMatch(
                          e -> e instanceof SnapshotRefusedException r && r.reason() == reason));
    }
  }

  private static void setSigningKey(KeyPair key) {
    setSigningKeyPem(Ed25519Keys.toPem(key.getPrivate()));
  }

  private static void setSigningKeyPem(String pem) {
    OPERATOR
        .client()
        .secrets()
        .inNamespace(OPERATOR_NS)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(SECRET)
                .endMetadata()
                .withData(
                    Map.of(
                        KEY_FIELD,
                        Base64.getEncoder()
                            .encodeToString(pem.getBytes(StandardCharsets.US_ASCII))))
                .build())
        .forceConflicts()
        .serverSideApply();
  }

  private static String keyId(KeyPair key) {
    return Ed25519Keys.keyId(key.getPublic());
  }

  private static String signatureKeyId(KubernetesClient client, String namespace, String filter) {
    ConfigMap cm =
        client
            .configMaps()
            .inNamespace(namespace)
            .withName(SnapshotNames.manifestName(filter))
            .get();
    String data = SnapshotConfigMaps.signatureData(cm);
    try {
      return data == null ? null : ManifestSignature.fromData(data).keyId();
    } catch (SnapshotRefusedException e) {
      throw new AssertionError("malformed manifest.sig", e);
    }
  }

  private static List<String> keys(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }

  private static void applyInline(
      KubernetesClient client, String namespace, String name, List<String> ids) {
    apply(
        client,
        namespace,
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [%s]
        """
            .formatted(name, String.join(", ", ids)));
  }

  private static void applyInlineUpdate(
      KubernetesClient client, String namespace, String name, List<String> ids) {
    SnapshotFixtures.mergePatch(
        client, namespace, name, Map.of("spec", Map.of("source", Map.of("inline", ids))));
  }

  /** Replaces manifest.json and drops manifest.sig, keeping the operator's annotations. */
  private static void setManifestData(KubernetesClient client, String namespace, String json) {
    client
        .configMaps()
        .inNamespace(namespace)
        .withName(SnapshotNames.manifestName("ids"))
        .edit(
            cm ->
                new ConfigMapBuilder(cm)
                    .withData(
                        SnapshotConfigMaps.manifest(namespace, "ids", json, null, null).getData())
                    .build());
  }

  private static void requestRebuild(
      KubernetesClient client, String namespace, String name, String value) {
    SnapshotFixtures.mergePatch(
        client,
        namespace,
        name,
        Map.of("metadata", Map.of("annotations", Map.of(RebuildRequest.ANNOTATION, value))));
  }

  /** Chunks of an all-zero filter the size of the published one, and their correct manifest. */
  private static Manifest forgeEmptyVersion(
      KubernetesClient client, String namespace, String filter, long version) {
    try {
      Manifest published = SnapshotFixtures.manifest(client, namespace, filter);
      BloomFilterBits empty =
          BloomFilterBits.builder(KeyType.STRING, published.numBits(), published.numHashFunctions())
              .build();
      SnapshotEncoder.Result encoded =
          SnapshotEncoder.encode(
              empty,
              1_000_000,
              (index, data, length, sha) ->
                  client
                      .configMaps()
                      .inNamespace(namespace)
                      .resource(
                          SnapshotConfigMaps.chunk(namespace, filter, version, index, data, length))
                      .create());
      return Manifest.of(filter, version, empty, published.keyCount(), encoded, Instant.now());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void copy(
      KubernetesClient client, ConfigMap source, String namespace, String name) {
    client
        .configMaps()
        .inNamespace(namespace)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(source.getMetadata().getLabels())
                .endMetadata()
                .withData(source.getData())
                .withBinaryData(source.getBinaryData())
                .withImmutable(source.getImmutable())
                .build())
        .create();
  }
}
