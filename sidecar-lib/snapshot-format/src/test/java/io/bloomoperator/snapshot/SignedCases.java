package io.bloomoperator.snapshot;

import static io.bloomoperator.snapshot.TestVectors.NAMESPACE;
import static io.bloomoperator.snapshot.TestVectors.POD;
import static io.bloomoperator.snapshot.TestVectors.base;
import static io.bloomoperator.snapshot.TestVectors.bits;
import static io.bloomoperator.snapshot.TestVectors.loaded;
import static io.bloomoperator.snapshot.TestVectors.published;
import static io.bloomoperator.snapshot.TestVectors.refused;

import io.bloomoperator.snapshot.TestVectors.Case;
import io.bloomoperator.snapshot.TestVectors.Publication;
import io.bloomoperator.snapshot.TestVectors.Step;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.util.ArrayList;
import java.util.List;

/** Vector cases about signatures: what a reader that trusts a key loads and refuses. */
final class SignedCases {

  private static final KeyType TYPE = KeyType.STRING;

  private SignedCases() {}

  static List<Case> all() {
    Publication v1 = base(1, bits(FilterFormat.GUAVA, TYPE, 0, 300));
    Publication v2 = base(2, bits(FilterFormat.GUAVA, TYPE, 0, 320));
    var trusted = List.of(TestVectors.trusted());
    List<Case> cases = new ArrayList<>();
    cases.add(
        new Case(
            "signed-then-rollback",
            "signed v1 and v2 load; the signed v1 announced again afterwards is a rollback",
            TYPE,
            POD,
            trusted,
            List.of(
                new Step(
                    "signed v1",
                    TestVectors.published(v1, TestVectors.trusted()),
                    loaded(v1, TYPE, 0, 300)),
                new Step(
                    "signed v2",
                    TestVectors.published(v2, TestVectors.trusted()),
                    loaded(v2, TYPE, 0, 320)),
                new Step(
                    "signed v1 again (replayed)",
                    TestVectors.published(v1, TestVectors.trusted()),
                    refused(LoadFailureReason.ROLLBACK, v2, TYPE, 320)))));
    List<ConfigMap> forged = new ArrayList<>(TestVectors.published(v1, TestVectors.trusted()));
    forged.set(
        0,
        TestVectors.editedManifest(
            forged.get(0), json -> json.replaceFirst("\"keyCount\" *: *", "$01")));
    cases.add(
        new Case(
            "signed-forged",
            "a signed manifest changed after signing",
            TYPE,
            POD,
            trusted,
            List.of(
                new Step(
                    "edited v1",
                    forged,
                    refused(LoadFailureReason.BAD_SIGNATURE, null, TYPE, 0)))));
    List<ConfigMap> otherNamespace = new ArrayList<>(published(v1, null));
    String json = v1.manifest().toJson();
    otherNamespace.set(
        0,
        SnapshotConfigMaps.manifest(
            NAMESPACE,
            TestVectors.FILTER,
            json,
            new ManifestSigner(TestVectors.trusted().getPrivate()).sign("other", json).toData(),
            null));
    cases.add(
        new Case(
            "signed-for-another-namespace",
            "a manifest signed by the trusted key for namespace 'other', copied here",
            TYPE,
            POD,
            trusted,
            List.of(
                new Step(
                    "v1 signed for 'other'",
                    otherNamespace,
                    refused(LoadFailureReason.BAD_SIGNATURE, null, TYPE, 0)))));
    cases.add(
        new Case(
            "signed-missing",
            "a reader that trusts a key refuses an unsigned manifest",
            TYPE,
            POD,
            trusted,
            List.of(
                new Step(
                    "unsigned v1",
                    published(v1, null),
                    refused(LoadFailureReason.UNSIGNED, null, TYPE, 0)))));
    cases.add(
        new Case(
            "signed-by-untrusted-key",
            "a manifest signed by a key the reader does not trust",
            TYPE,
            POD,
            trusted,
            List.of(
                new Step(
                    "v1 signed by another key",
                    published(v1, TestVectors.stranger()),
                    refused(LoadFailureReason.UNTRUSTED_KEY, null, TYPE, 0)))));
    cases.add(
        new Case(
            "unsigned-version-down",
            "without trusted keys a lower version loads: it is the operator's current truth (a"
                + " re-created filter)",
            TYPE,
            POD,
            List.of(),
            List.of(
                new Step("v2", published(v2, null), loaded(v2, TYPE, 0, 320)),
                new Step("v1", published(v1, null), loaded(v1, TYPE, 0, 300)))));
    return cases;
  }
}
