package io.bloomoperator;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.KeyType;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Applications compile against sidecar-lib: whatever it makes public is a promise. This test lists
 * every public type of its packages with its public and protected members and compares the list
 * with {@code src/test/resources/public-api.txt}, so that the API only changes on purpose.
 */
class PublicApiTest {

  private static final String EXPECTED = "public-api.txt";
  private static final Path EXPECTED_SOURCE = Path.of("src/test/resources", EXPECTED);
  private static final String UPDATE_PROPERTY = "public-api.update";

  @Test
  void publicApiIsTheCommittedOne() throws Exception {
    String actual = String.join("\n", describeApi()) + "\n";
    if (Boolean.getBoolean(UPDATE_PROPERTY)) {
      Files.writeString(EXPECTED_SOURCE, actual, StandardCharsets.UTF_8);
      return;
    }
    String expected;
    try (InputStream in = PublicApiTest.class.getResourceAsStream("/" + EXPECTED)) {
      expected = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertThat(actual)
        .withFailMessage(
            () ->
                "The public API of sidecar-lib changed. If that is intended, update "
                    + EXPECTED_SOURCE
                    + " (mvn -o -pl sidecar-lib test -Dtest=PublicApiTest -D"
                    + UPDATE_PROPERTY
                    + "=true) and commit it with the change.\n"
                    + diff(expected, actual))
        .isEqualTo(expected);
  }

  @Test
  void listingSeesPublicMembersAndSkipsInternals() throws Exception {
    List<String> api = describeApi();
    assertThat(api).contains("public enum io.bloomoperator.snapshot.KeyType");
    assertThat(api).anyMatch(line -> line.contains("LiveBloomFilter.mightContain(K)"));
    assertThat(api).noneMatch(line -> line.contains("Murmur3x64"));
    assertThat(api).noneMatch(line -> line.contains("WatchLoop"));
  }

  /** One line per public type and per public or protected member, sorted. */
  static List<String> describeApi() throws IOException, URISyntaxException, ClassNotFoundException {
    Path classes =
        Path.of(KeyType.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<String> names;
    try (Stream<Path> files = Files.walk(classes.resolve("io/bloomoperator"))) {
      names =
          files
              .filter(file -> file.toString().endsWith(".class"))
              .filter(file -> !file.getFileName().toString().equals("package-info.class"))
              .map(file -> classes.relativize(file).toString())
              .map(
                  name ->
                      name.substring(0, name.length() - ".class".length())
                          .replace('/', '.')
                          .replace('\\', '.'))
              .sorted()
              .toList();
    }
    List<String> lines = new ArrayList<>();
    for (String name : names) {
      Class<?> type = Class.forName(name, false, PublicApiTest.class.getClassLoader());
      if (!isVisible(type)) {
        continue;
      }
      lines.add(describeType(type));
      for (Field field : type.getDeclaredFields()) {
        if (isApi(field) && !field.isSynthetic()) {
          lines.add("  " + field.toGenericString());
        }
      }
      for (Constructor<?> constructor : type.getDeclaredConstructors()) {
        if (isApi(constructor) && !constructor.isSynthetic()) {
          lines.add("  " + constructor.toGenericString());
        }
      }
      for (Method method : type.getDeclaredMethods()) {
        if (isApi(method) && !method.isSynthetic() && !method.isBridge()) {
          lines.add("  " + method.toGenericString());
        }
      }
    }
    return sortedWithinTypes(lines);
  }

  /** A public type whose enclosing types are public too (reachable from outside the package). */
  private static boolean isVisible(Class<?> type) {
    for (Class<?> t = type; t != null; t = t.getEnclosingClass()) {
      if (!Modifier.isPublic(t.getModifiers()) || t.isAnonymousClass() || t.isLocalClass()) {
        return false;
      }
    }
    return true;
  }

  private static boolean isApi(Member member) {
    int modifiers = member.getModifiers();
    return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
  }

  private static String describeType(Class<?> type) {
    String kind =
        type.isAnnotation()
            ? "@interface"
            : type.isInterface()
                ? "interface"
                : type.isEnum() ? "enum" : type.isRecord() ? "record" : "class";
    String modifiers =
        Modifier.toString(
            type.getModifiers()
                & ~(type.isInterface() ? Modifier.ABSTRACT | Modifier.INTERFACE : 0)
                & ~(type.isEnum() || type.isRecord() ? Modifier.FINAL : 0));
    StringBuilder line =
        new StringBuilder(modifiers)
            .append(' ')
            .append(kind)
            .append(' ')
            .append(type.getTypeName());
    if (type.getTypeParameters().length > 0) {
      line.append(
          Stream.of(type.getTypeParameters())
              .map(Object::toString)
              .collect(Collectors.joining(", ", "<", ">")));
    }
    if (type.getGenericSuperclass() != null
        && type.getSuperclass() != Object.class
        && !type.isEnum()
        && !type.isRecord()) {
      line.append(" extends ").append(type.getGenericSuperclass().getTypeName());
    }
    if (type.getGenericInterfaces().length > 0) {
      line.append(type.isInterface() ? " extends " : " implements ")
          .append(
              Stream.of(type.getGenericInterfaces())
                  .map(t -> t.getTypeName())
                  .collect(Collectors.joining(", ")));
    }
    return line.toString();
  }

  /** Types stay in name order; members under each type are sorted (reflection order is not). */
  private static List<String> sortedWithinTypes(List<String> lines) {
    List<String> out = new ArrayList<>();
    List<String> members = new ArrayList<>();
    for (String line : lines) {
      if (line.startsWith("  ")) {
        members.add(line);
      } else {
        members.sort(null);
        out.addAll(members);
        members.clear();
        out.add(line);
      }
    }
    members.sort(null);
    out.addAll(members);
    return out;
  }

  private static String diff(String expected, String actual) {
    List<String> was = expected.lines().toList();
    List<String> now = actual.lines().toList();
    StringBuilder out = new StringBuilder();
    now.stream()
        .filter(line -> !was.contains(line))
        .forEach(line -> out.append("+ ").append(line).append('\n'));
    was.stream()
        .filter(line -> !now.contains(line))
        .forEach(line -> out.append("- ").append(line).append('\n'));
    return out.toString();
  }
}
