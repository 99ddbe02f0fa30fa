package io.bloomoperator;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.watch.LiveBloomFilter;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Applications compile against sidecar-lib: whatever it makes public, the few wire-format types an
 * application is meant to touch ({@link #FORMAT_TYPES_FOR_APPLICATIONS}), and whatever type of the
 * wire format their public signatures reach, is a promise. This test lists those types with their
 * public and protected members and compares the list with {@code
 * src/test/resources/public-api.txt}, so that the API only changes on purpose.
 */
class PublicApiTest {

  private static final String EXPECTED = "public-api.txt";
  private static final Path EXPECTED_SOURCE = Path.of("src/test/resources", EXPECTED);
  private static final String UPDATE_PROPERTY = "public-api.update";

  /**
   * The wire-format types an application uses although no signature of sidecar-lib names them: the
   * key loading behind {@code Builder.trustedKey} and the exceptions its listeners receive.
   */
  static final List<Class<?>> FORMAT_TYPES_FOR_APPLICATIONS =
      List.of(
          Ed25519Keys.class,
          KeyType.class,
          SnapshotRefusedException.class,
          SnapshotVerificationException.class);

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

  @Test
  void applicationsDoNotSeeTheWireFormatsInternals() throws Exception {
    // Every type here changes with the wire format; an application that could name one would break
    // with the next format change.
    List<String> api = describeApi();
    for (String internal :
        List.of(
            "snapshot.Manifest",
            "BloomFilterBits",
            "BloomFilterSizing",
            "SnapshotEncoder",
            "SnapshotDelta",
            "SnapshotDecoder",
            "ManifestSigner",
            "SnapshotConfigMaps",
            "ConfigMapChunks")) {
      assertThat(api).as(internal).noneMatch(line -> line.contains(internal));
    }
  }

  /**
   * One line per public type an application sees and per public or protected member, sorted: every
   * public type of sidecar-lib and of {@link #FORMAT_TYPES_FOR_APPLICATIONS}, and every type of the
   * wire format (bloom-snapshot-format) that is reachable from their public signatures. The
   * format's other public types are its own API (the operator's), not a promise to applications.
   */
  static List<String> describeApi() throws IOException, URISyntaxException, ClassNotFoundException {
    Path classes =
        Path.of(LiveBloomFilter.class.getProtectionDomain().getCodeSource().getLocation().toURI());
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
              .toList();
    }
    Set<Class<?>> seen = new HashSet<>();
    Deque<Class<?>> todo = new ArrayDeque<>();
    for (String name : names) {
      Class<?> type = Class.forName(name, false, PublicApiTest.class.getClassLoader());
      if (isVisible(type) && seen.add(type)) {
        todo.add(type);
      }
    }
    for (Class<?> type : FORMAT_TYPES_FOR_APPLICATIONS) {
      if (seen.add(type)) {
        todo.add(type);
      }
    }
    List<String> lines = new ArrayList<>();
    for (Class<?> type = todo.poll(); type != null; type = todo.poll()) {
      lines.add(describeType(type));
      List<Type> reached = new ArrayList<>();
      reached.add(type.getGenericSuperclass());
      reached.addAll(List.of(type.getGenericInterfaces()));
      for (Field field : type.getDeclaredFields()) {
        if (isApi(field) && !field.isSynthetic()) {
          lines.add("  " + field.toGenericString());
          reached.add(field.getGenericType());
        }
      }
      for (Constructor<?> constructor : type.getDeclaredConstructors()) {
        if (isApi(constructor) && !constructor.isSynthetic()) {
          lines.add("  " + constructor.toGenericString());
          reached.addAll(List.of(constructor.getGenericParameterTypes()));
          reached.addAll(List.of(constructor.getGenericExceptionTypes()));
        }
      }
      for (Method method : type.getDeclaredMethods()) {
        if (isApi(method) && !method.isSynthetic() && !method.isBridge()) {
          lines.add("  " + method.toGenericString());
          reached.add(method.getGenericReturnType());
          reached.addAll(List.of(method.getGenericParameterTypes()));
          reached.addAll(List.of(method.getGenericExceptionTypes()));
        }
      }
      for (Class<?> nested : type.getDeclaredClasses()) {
        reached.add(nested);
      }
      for (Type t : reached) {
        for (Class<?> c : ourClasses(t)) {
          if (isVisible(c) && seen.add(c)) {
            todo.add(c);
          }
        }
      }
    }
    return sortedWithinTypes(sortedByType(lines));
  }

  /** The project's classes a (possibly generic) type names: raw type, arguments, bounds, arrays. */
  private static List<Class<?>> ourClasses(Type type) {
    List<Class<?>> out = new ArrayList<>();
    if (type instanceof Class<?> c) {
      Class<?> element = c;
      while (element.isArray()) {
        element = element.getComponentType();
      }
      if (element.getName().startsWith("io.bloomoperator.")) {
        out.add(element);
      }
    } else if (type instanceof ParameterizedType p) {
      out.addAll(ourClasses(p.getRawType()));
      for (Type argument : p.getActualTypeArguments()) {
        out.addAll(ourClasses(argument));
      }
    } else if (type instanceof GenericArrayType a) {
      out.addAll(ourClasses(a.getGenericComponentType()));
    } else if (type instanceof WildcardType w) {
      for (Type bound : w.getUpperBounds()) {
        out.addAll(ourClasses(bound));
      }
      for (Type bound : w.getLowerBounds()) {
        out.addAll(ourClasses(bound));
      }
    } else if (type instanceof TypeVariable<?> v) {
      for (Type bound : v.getBounds()) {
        if (bound != type) {
          out.addAll(ourClasses(bound));
        }
      }
    }
    return out;
  }

  /** Blocks of a type line and its member lines, ordered by the type line. */
  private static List<String> sortedByType(List<String> lines) {
    List<List<String>> blocks = new ArrayList<>();
    for (String line : lines) {
      if (!line.startsWith("  ")) {
        blocks.add(new ArrayList<>());
      }
      blocks.get(blocks.size() - 1).add(line);
    }
    blocks.sort(Comparator.comparing(block -> typeName(block.get(0))));
    return blocks.stream().flatMap(List::stream).toList();
  }

  private static String typeName(String typeLine) {
    for (String word : typeLine.split(" ")) {
      if (word.startsWith("io.bloomoperator.")) {
        return word;
      }
    }
    return typeLine;
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
