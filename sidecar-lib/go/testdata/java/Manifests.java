import io.bloomoperator.snapshot.*;
import java.nio.file.*; import java.util.*;
public class Manifests {
  public static void main(String[] a) throws Exception {
    for (String line : Files.readAllLines(Path.of("manifests.txt"))) {
      String[] f = line.split("\t");
      String text = new String(Base64.getDecoder().decode(f.length > 1 ? f[1] : ""), "UTF-8");
      String verdict;
      try { Manifest.fromJson(text); verdict = "ok"; }
      catch (SnapshotVerificationException e) { verdict = "refused"; }
      catch (RuntimeException e) { verdict = "throws " + e.getClass().getSimpleName(); }
      System.out.println(line + "\t" + verdict);
    }
  }
}
