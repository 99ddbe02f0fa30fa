package io.bloomoperator.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * fabric8's CRUD mock server with three things of a real API server that the chunk store relies on
 * and the mock lacks: set-based label selectors ({@code in}, {@code notin}), paged lists ({@code
 * limit} and {@code continue}) and the resourceVersion precondition of a delete (409 when the
 * object changed). Plus failures injected per request, for the paths a real server takes rarely.
 */
final class ApiServerDispatcher extends KubernetesCrudDispatcher {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** {@code key in (a,b)} or {@code key notin (a,b)}. */
  private static final Pattern SET_REQUIREMENT =
      Pattern.compile("\\s*([^\\s!=,()]+)\\s+(in|notin)\\s+\\(([^)]*)\\)\\s*");

  private record Failure(String method, String pathStart, int code) {}

  private final ConcurrentLinkedQueue<Failure> failures = new ConcurrentLinkedQueue<>();

  /** Every page a list returned, by number of items. */
  final List<Integer> pageSizes = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Answers the next {@code method} request whose path starts with {@code pathStart} with code. */
  void failNext(String method, String pathStart, int code) {
    failures.add(new Failure(method, pathStart, code));
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    String method = request.getMethod();
    String path = request.getPath();
    for (Failure f : failures) {
      if (f.method().equals(method) && path.startsWith(f.pathStart()) && failures.remove(f)) {
        return status(f.code(), "injected");
      }
    }
    if ("DELETE".equals(method)) {
      MockResponse conflict = preconditionFailure(path, request.getUtf8Body());
      if (conflict != null) {
        return conflict;
      }
    }
    if ("GET".equals(method) && path.contains("?")) {
      return list(path);
    }
    return super.dispatch(request);
  }

  /** 409 if the delete's precondition names another resourceVersion than the object has. */
  private MockResponse preconditionFailure(String path, String body) {
    if (body == null || body.isBlank()) {
      return null;
    }
    String wanted = tree(body).path("preconditions").path("resourceVersion").asText(null);
    if (wanted == null) {
      return null;
    }
    MockResponse current = super.handleGet(path);
    if (current.code() != 200) {
      return null; // the mock answers 404 itself
    }
    String actual =
        tree(current.getBody().readUtf8()).path("metadata").path("resourceVersion").asText();
    return wanted.equals(actual) ? null : status(409, "the object has been modified");
  }

  private MockResponse list(String path) {
    int query = path.indexOf('?');
    String base = path.substring(0, query);
    Map<String, String> params = params(path.substring(query + 1));
    List<String> simple = new ArrayList<>();
    List<Matcher> sets = new ArrayList<>();
    for (String requirement : requirements(params.getOrDefault("labelSelector", ""))) {
      Matcher m = SET_REQUIREMENT.matcher(requirement);
      if (m.matches()) {
        sets.add(m);
      } else {
        simple.add(requirement.trim());
      }
    }
    String equalityQuery =
        simple.isEmpty()
            ? base
            : base
                + "?labelSelector="
                + URLEncoder.encode(String.join(",", simple), StandardCharsets.UTF_8);
    MockResponse all = super.handleGet(equalityQuery);
    if (all.code() != 200) {
      return all;
    }
    ObjectNode list = (ObjectNode) tree(all.getBody().readUtf8());
    List<JsonNode> items = new ArrayList<>();
    list.path("items").forEach(i -> items.add(i));
    items.removeIf(
        i -> !sets.stream().allMatch(m -> matches(m, i.path("metadata").path("labels"))));
    // Name order, as etcd lists: a continue token is the offset of the next page.
    items.sort((a, b) -> name(a).compareTo(name(b)));
    int from = params.containsKey("continue") ? Integer.parseInt(params.get("continue")) : 0;
    int limit =
        params.containsKey("limit") ? Integer.parseInt(params.get("limit")) : Integer.MAX_VALUE;
    int to = (int) Math.min(items.size(), (long) from + limit);
    ArrayNode page = list.putArray("items");
    items.subList(from, to).forEach(page::add);
    pageSizes.add(to - from);
    ObjectNode metadata = list.putObject("metadata");
    if (to < items.size()) {
      metadata.put("continue", Integer.toString(to));
    }
    return new MockResponse().setResponseCode(200).setBody(list.toString());
  }

  private static boolean matches(Matcher requirement, JsonNode labels) {
    Set<String> values =
        Set.copyOf(Arrays.stream(requirement.group(3).split(",")).map(String::trim).toList());
    JsonNode value = labels.get(requirement.group(1));
    boolean in = value != null && values.contains(value.asText());
    return requirement.group(2).equals("in") == in;
  }

  /** The requirements of a selector: split at commas outside parentheses. */
  private static List<String> requirements(String selector) {
    List<String> parts = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < selector.length(); i++) {
      char c = selector.charAt(i);
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (c == ',' && depth == 0) {
        parts.add(selector.substring(start, i));
        start = i + 1;
      }
    }
    if (start < selector.length()) {
      parts.add(selector.substring(start));
    }
    return parts;
  }

  private static Map<String, String> params(String query) {
    Map<String, String> params = new LinkedHashMap<>();
    for (String pair : query.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        params.put(
            pair.substring(0, eq),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return params;
  }

  private static String name(JsonNode item) {
    return item.path("metadata").path("name").asText();
  }

  private static MockResponse status(int code, String message) {
    return new MockResponse()
        .setResponseCode(code)
        .setBody(
            "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"status\":\"Failure\",\"code\":"
                + code
                + ",\"message\":\""
                + message
                + "\"}");
  }

  private static JsonNode tree(String json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
