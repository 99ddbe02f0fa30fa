/**
 * Printed by the build (operator/pom.xml, execution image-skipped) where the
 * operator image cannot be built: it needs linux/amd64 (the JDK and C libraries it packs are that
 * platform's). Run as a single-file program so that it needs nothing but the JDK building the rest.
 */
public class ImageSkipped {
  public static void main(String[] args) {
    System.out.println(
        "[bloom-operator] The operator image is built on linux/amd64 only; this is "
            + System.getProperty("os.name")
            + "/"
            + System.getProperty("os.arch")
            + ". Building the jars, the kubectl plugin and the libraries without it"
            + " (-DskipImage is implied). See docs/image.md.");
  }
}
