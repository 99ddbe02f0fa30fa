package io.bloomoperator.snapshot;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The manifest ConfigMap's {@code manifest.sig}: an Ed25519 signature over the exact {@code
 * manifest.json} text and the namespace it is published in.
 *
 * <p>Signed bytes: {@code "bloomoperator.io/manifest-signature/v1\n" + namespace + "\n"} followed
 * by the UTF-8 bytes of {@code manifest.json}, unchanged. The namespace is part of the signed bytes
 * because the manifest names only its filter: copied into another namespace, a signed manifest does
 * not verify. The filter name (inside manifest.json) is checked by the reader against the filter it
 * reads, so a manifest cannot be replayed as another filter either.
 *
 * @param algorithm always {@value Ed25519Keys#ALGORITHM}
 * @param keyId {@link Ed25519Keys#keyId} of the signing key
 * @param signature Base64 of the 64-byte signature
 */
@JsonPropertyOrder({"algorithm", "keyId", "signature"})
public record ManifestSignature(
    @JsonProperty("algorithm") String algorithm,
    @JsonProperty("keyId") String keyId,
    @JsonProperty("signature") String signature) {

  private static final byte[] CONTEXT =
      "bloomoperator.io/manifest-signature/v1\n".getBytes(StandardCharsets.US_ASCII);

  private static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_CREATOR_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  /** The bytes a signature covers for {@code manifestJson} published in {@code namespace}. */
  public static byte[] signedBytes(String namespace, String manifestJson) {
    if (namespace == null || namespace.isEmpty() || namespace.indexOf('\n') >= 0) {
      throw new IllegalArgumentException("a namespace is required to sign or verify a manifest");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(manifestJson.length() + 128);
    out.writeBytes(CONTEXT);
    out.writeBytes(namespace.getBytes(StandardCharsets.UTF_8));
    out.write('\n');
    out.writeBytes(manifestJson.getBytes(StandardCharsets.UTF_8));
    return out.toByteArray();
  }

  /** The {@code manifest.sig} text: one line of JSON. */
  public String toData() {
    try {
      return MAPPER.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise a signature", e);
    }
  }

  /**
   * Parses {@code manifest.sig}.
   *
   * @throws SnapshotRefusedException with reason {@link LoadFailureReason#BAD_SIGNATURE} if it is
   *     not a signature record of a known algorithm
   */
  public static ManifestSignature fromData(String data) throws SnapshotRefusedException {
    ManifestSignature parsed;
    try {
      parsed = data == null ? null : MAPPER.readValue(data, ManifestSignature.class);
    } catch (JsonProcessingException e) {
      parsed = null;
    }
    if (parsed == null) {
      throw new SnapshotRefusedException(
          LoadFailureReason.BAD_SIGNATURE, "manifest.sig is not a signature record");
    }
    if (!Ed25519Keys.ALGORITHM.equals(parsed.algorithm())) {
      throw new SnapshotRefusedException(
          LoadFailureReason.BAD_SIGNATURE,
          "manifest.sig uses algorithm '"
              + parsed.algorithm()
              + "', only "
              + Ed25519Keys.ALGORITHM
              + " is accepted");
    }
    return parsed;
  }
}
