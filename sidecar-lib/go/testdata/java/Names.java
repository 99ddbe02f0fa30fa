import io.bloomoperator.snapshot.SnapshotNames;
public class Names {
  public static void main(String[] a) {
    String[] filters = {
      "a".repeat(250),
      "a".repeat(200) + "-b.c-" + "d".repeat(60),
      "x".repeat(225) + "." + "y".repeat(30),
      "p".repeat(230) + "-.q" + "r".repeat(20),
      "s".repeat(247),
      "s".repeat(248),
    };
    for (String f : filters) {
      System.out.println(f + "\t" + SnapshotNames.manifestName(f) + "\t" + SnapshotNames.chunkName(f, 999999999999999999L, 12345)
        + "\t" + SnapshotNames.deltaChunkName(f, 7, 0));
    }
  }
}
