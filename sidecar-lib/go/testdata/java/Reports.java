import io.bloomoperator.snapshot.SnapshotNames;
public class Reports {
  public static void main(String[] a) {
    String[][] cases = {
      {"ids", "0f8fad5b-d9cb-469f-a165-70867728950e"},
      {"a".repeat(63), "7c9e6679-7425-40de-944b-e07fc1f90ae7"},
      {"a".repeat(45) + "-." + "b".repeat(20), "7c9e6679-7425-40de-944b-e07fc1f90ae7"},
      {"a".repeat(200) + "-b.c-" + "d".repeat(40), "e02fa0e4-01ad-090a-c130-0d05a0008ba0"},
      {"s".repeat(233), "e02fa0e4-01ad-090a-c130-0d05a0008ba0"},
      {"s".repeat(253), "x"},
    };
    for (String[] c : cases) {
      System.out.println(c[0] + "\t" + c[1] + "\t" + SnapshotNames.readerReportName(c[0], c[1])
        + "\t" + SnapshotNames.filterLabelValue(c[0]));
    }
  }
}
