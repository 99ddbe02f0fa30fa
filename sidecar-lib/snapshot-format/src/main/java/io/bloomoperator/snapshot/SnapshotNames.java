package io.bloomoperator.snapshot;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Names, data keys and labels of the snapshot ConfigMaps, shared by the operator (writer) and the
 * library (reader) so they cannot drift apart.
 *
 * <ul>
 *   <li>manifest: {@code <filter>-bloom}, data key {@value #MANIFEST_DATA_KEY} (and {@value
 *       #SIGNATURE_DATA_KEY} when signed)
 *   <li>chunk: {@code <filter>-bloom-v<version>-<index>}, binaryData key {@value #CHUNK_DATA_KEY}
 * </ul>
 *
 * <p>Object names may be 253 characters and label values 63. A filter name long enough to overflow
 * either is cut and given {@link #shortHash 16 hex digits of SHA-256 of the whole name}, so two
 * long names that share a prefix still map to different objects and label values. A cut name also
 * carries a marker that no uncut name can have, so that a filter can never be named like another
 * filter's cut name and share its objects or labels:
 *
 * <ul>
 *   <li>label value: {@code <start of the name>_<hash>} (a filter name is a DNS subdomain, which
 *       never holds {@code _});
 *   <li>object names: {@code <start of the name>-<hash>.bloom…} where an uncut name has {@code
 *       -bloom…} (the rest of the name, {@code -v<version>-<index>}, ends the same way in both, so
 *       reading from the end finds the {@code .} exactly where an uncut name has {@code -}).
 * </ul>
 *
 * <p>Names of up to 63 characters, and object names of filters of up to 247, are never cut.
 */
public final class SnapshotNames {

  /** Kubernetes object names (DNS subdomains) are at most this long. */
  public static final int MAX_NAME_LENGTH = 253;

  /** Kubernetes label values are at most this long. */
  public static final int MAX_LABEL_VALUE_LENGTH = 63;

  public static final String MANIFEST_SUFFIX = "-bloom";
  public static final String MANIFEST_DATA_KEY = "manifest.json";

  /** Data key of the manifest ConfigMap holding the {@link ManifestSignature}, when signed. */
  public static final String SIGNATURE_DATA_KEY = "manifest.sig";

  public static final String CHUNK_DATA_KEY = "chunk";

  /**
   * Data key of the manifest ConfigMap holding the canary manifest: a newer version served only by
   * the readers in the {@link CanaryShare} named by {@value #CANARY_PERCENT_DATA_KEY}. Readers that
   * do not know the key ignore it and stay on {@value #MANIFEST_DATA_KEY}.
   */
  public static final String CANARY_MANIFEST_DATA_KEY = "canary.json";

  /** Data key of the canary manifest's {@link ManifestSignature}, when signed. */
  public static final String CANARY_SIGNATURE_DATA_KEY = "canary.sig";

  /** Data key of the canary share in whole percent, 1..100, as decimal digits. */
  public static final String CANARY_PERCENT_DATA_KEY = "canary.percent";

  public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
  public static final String MANAGED_BY = "bloom-operator";
  public static final String LABEL_FILTER = "bloomoperator.io/filter";
  public static final String LABEL_ROLE = "bloomoperator.io/role";
  public static final String ROLE_MANIFEST = "manifest";
  public static final String ROLE_CHUNK = "chunk";
  public static final String LABEL_VERSION = "bloomoperator.io/version";

  /** Label of delta chunks ({@value #PART_DELTA}); chunks of a whole payload have none. */
  public static final String LABEL_PART = "bloomoperator.io/part";

  public static final String PART_DELTA = "delta";

  /**
   * 64 bits: finding another name with the same start and hash (a second preimage) takes about 2^64
   * hashes; 32 bits would take an afternoon.
   */
  private static final int HASH_HEX_CHARS = 16;

  /** Between the cut start and the hash of a label value; never in a filter name. */
  private static final String CUT_LABEL_MARKER = "_";

  /** Replaces {@code -} before {@value #MANIFEST_SUFFIX}'s word in a cut object name. */
  private static final String CUT_NAME_MARKER = ".";

  /**
   * The end of a chunk name, {@code -v<version>-<index>} or {@code -v<version>-d<index>}: the
   * digits of a version in {@link SnapshotVersions}' range and of an int index, no sign, no leading
   * zero (what {@link Long#toString(long)} writes). What comes before is checked by writing the
   * name again ({@link ChunkName#parse}).
   */
  private static final Pattern CHUNK_SUFFIX =
      Pattern.compile("-v(" + SnapshotVersions.REGEX + ")-(d?)(0|[1-9][0-9]{0,9})$");

  private SnapshotNames() {}

  /**
   * Which chunk a chunk name names: chunk {@code index} of {@code version}'s whole payload, or of
   * the delta that produces {@code version}. The one place that writes and reads the {@code
   * -v<version>-[d]<index>} end of a name; the object-store clean-ups and the CLI's file listing
   * recognise a filter's chunks through {@link #parse}.
   *
   * @param delta whether the chunk holds part of a delta ({@link #deltaChunkName}) rather than of a
   *     whole payload ({@link #chunkName})
   */
  public record ChunkName(long version, int index, boolean delta) {

    /**
     * @throws IllegalArgumentException if the version is outside {@link SnapshotVersions}' range or
     *     the index is negative: no such chunk has a name
     */
    public ChunkName {
      checkPart(version, index);
    }

    /** This chunk's name for filter {@code filterName} (cut like every object name). */
    public String nameFor(String filterName) {
      return objectName(filterName, "-v" + version + (delta ? "-d" : "-") + index);
    }

    /**
     * The chunk {@code name} names, if it is exactly a name {@link #nameFor} gives for {@code
     * filterName}; empty for anything else (another filter's chunks, its manifest, a version
     * outside the range, a sign or a leading zero, a name cut differently).
     */
    public static Optional<ChunkName> parse(String filterName, String name) {
      requireName(filterName);
      if (name == null) {
        return Optional.empty();
      }
      Matcher m = CHUNK_SUFFIX.matcher(name);
      if (!m.find()) {
        return Optional.empty();
      }
      long index = Long.parseLong(m.group(3)); // at most 10 digits
      if (index > Integer.MAX_VALUE) {
        return Optional.empty();
      }
      ChunkName chunk =
          new ChunkName(
              SnapshotVersions.parse(m.group(1)).orElseThrow(), (int) index, !m.group(2).isEmpty());
      // The start must be this filter's, cut exactly as the writer cuts it for this end.
      return name.equals(chunk.nameFor(filterName)) ? Optional.of(chunk) : Optional.empty();
    }
  }

  /** {@code <filter>-bloom}, cut and marked with a hash if it would exceed 253 characters. */
  public static String manifestName(String filterName) {
    return objectName(filterName, "");
  }

  /** {@code <filter>-bloom-v<version>-<index>}, cut and marked with a hash if over 253. */
  public static String chunkName(String filterName, long version, int index) {
    return new ChunkName(version, index, false).nameFor(filterName);
  }

  /**
   * {@code <filter>-bloom-v<version>-d<index>}: chunk {@code index} of the delta that produces
   * {@code version}. Deltas have names of their own so that a version published as a delta can
   * later become a base (whole-payload chunks {@link #chunkName}) without a name clash.
   */
  public static String deltaChunkName(String filterName, long version, int index) {
    return new ChunkName(version, index, true).nameFor(filterName);
  }

  /** A chunk name exists only for a version every parser reads back ({@link SnapshotVersions}). */
  private static void checkPart(long version, int index) {
    if (!SnapshotVersions.valid(version) || index < 0) {
      throw new IllegalArgumentException(
          "version must be in "
              + SnapshotVersions.MIN
              + ".."
              + SnapshotVersions.MAX
              + " and index >= 0, got "
              + version
              + ", "
              + index);
    }
  }

  /**
   * Name of the reader report (a Lease, see {@link ReaderReports}) of the pod with UID {@code
   * podUid} about {@code filterName}: {@code <filter>-bloom-ack-<hash of the UID>}, cut like the
   * other object names. The UID, not the pod name: a StatefulSet pod re-created under its old name
   * must not collide with its predecessor's report before the garbage collector removes it.
   */
  public static String readerReportName(String filterName, String podUid) {
    if (podUid == null || podUid.isEmpty()) {
      throw new IllegalArgumentException("pod UID must not be empty");
    }
    return objectName(filterName, "-ack-" + shortHash(podUid));
  }

  /**
   * The {@value #LABEL_FILTER} value: the filter name, or if over 63 characters its start, {@code
   * _} and a hash (a value no filter name can have).
   */
  public static String filterLabelValue(String filterName) {
    requireName(filterName);
    if (filterName.length() <= MAX_LABEL_VALUE_LENGTH) {
      return filterName;
    }
    String tail = CUT_LABEL_MARKER + shortHash(filterName);
    return cut(filterName, MAX_LABEL_VALUE_LENGTH - tail.length()) + tail;
  }

  /** Labels of the manifest ConfigMap. */
  public static Map<String, String> manifestLabels(String filterName) {
    return Map.of(
        LABEL_MANAGED_BY,
        MANAGED_BY,
        LABEL_FILTER,
        filterLabelValue(filterName),
        LABEL_ROLE,
        ROLE_MANIFEST);
  }

  /** Labels of a chunk ConfigMap of {@code version}. */
  public static Map<String, String> chunkLabels(String filterName, long version) {
    return Map.of(
        LABEL_MANAGED_BY,
        MANAGED_BY,
        LABEL_FILTER,
        filterLabelValue(filterName),
        LABEL_ROLE,
        ROLE_CHUNK,
        LABEL_VERSION,
        Long.toString(version));
  }

  /** Labels of a chunk ConfigMap of the delta that produces {@code version}. */
  public static Map<String, String> deltaChunkLabels(String filterName, long version) {
    Map<String, String> labels = new java.util.HashMap<>(chunkLabels(filterName, version));
    labels.put(LABEL_PART, PART_DELTA);
    return Map.copyOf(labels);
  }

  /** Selects every snapshot ConfigMap (manifest and chunks of all versions) of a filter. */
  public static String filterSelector(String filterName) {
    return LABEL_MANAGED_BY
        + "="
        + MANAGED_BY
        + ","
        + LABEL_FILTER
        + "="
        + filterLabelValue(filterName);
  }

  /** Selects the manifest ConfigMap of a filter. */
  public static String manifestSelector(String filterName) {
    return filterSelector(filterName) + "," + LABEL_ROLE + "=" + ROLE_MANIFEST;
  }

  /** Selects the chunk ConfigMaps of all versions of a filter. */
  public static String chunkSelector(String filterName) {
    return filterSelector(filterName) + "," + LABEL_ROLE + "=" + ROLE_CHUNK;
  }

  /** Selects the chunk ConfigMaps of one version of a filter. */
  public static String chunkSelector(String filterName, long version) {
    return chunkSelector(filterName) + "," + LABEL_VERSION + "=" + version;
  }

  /**
   * 16 lower-case hex digits of SHA-256 of the UTF-8 filter name: the uniqueness part of a cut
   * name.
   */
  public static String shortHash(String filterName) {
    byte[] digest = Sha256.newDigest().digest(filterName.getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(digest, 0, HASH_HEX_CHARS / 2);
  }

  /**
   * {@code <filter>-bloom<rest>}, or when that is over 253 characters {@code
   * <start>-<hash>.bloom<rest>}.
   */
  private static String objectName(String filterName, String rest) {
    requireName(filterName);
    if (filterName.length() + MANIFEST_SUFFIX.length() + rest.length() <= MAX_NAME_LENGTH) {
      return filterName + MANIFEST_SUFFIX + rest;
    }
    String tail =
        "-" + shortHash(filterName) + CUT_NAME_MARKER + MANIFEST_SUFFIX.substring(1) + rest;
    return cut(filterName, MAX_NAME_LENGTH - tail.length()) + tail;
  }

  /**
   * The start of {@code filterName}, at most {@code keep} characters, ending on a letter or digit
   * ("a.-hash" is not a valid DNS subdomain).
   */
  private static String cut(String filterName, int keep) {
    int cut = keep;
    while (cut > 0 && !Character.isLetterOrDigit(filterName.charAt(cut - 1))) {
      cut--;
    }
    return filterName.substring(0, cut);
  }

  private static void requireName(String filterName) {
    if (filterName == null || filterName.isEmpty()) {
      throw new IllegalArgumentException("filter name must not be empty");
    }
  }
}
