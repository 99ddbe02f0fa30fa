package io.bloomoperator.lookup;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The JDK HttpClient against a sidecar, with the answers decoded the way a client would. */
final class LookupClient {

  private static final Pattern PRESENT = Pattern.compile("\"present\":(true|false)");
  private static final Pattern VERSION = Pattern.compile("\"version\":(-?\\d+)");
  private static final Pattern LIST = Pattern.compile("\"present\":\\[([a-z,]*)\\]");

  private final HttpClient http =
      HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(5))
          .version(HttpClient.Version.HTTP_1_1)
          .build();
  private final String base;

  LookupClient(InetSocketAddress address) {
    this.base = "http://" + address.getHostString() + ":" + address.getPort();
  }

  HttpResponse<String> get(String pathAndQuery) {
    return send(HttpRequest.newBuilder(URI.create(base + pathAndQuery)).GET());
  }

  HttpResponse<String> contains(String filter, String key) {
    return get(
        "/v1/filters/"
            + filter
            + "/contains?key="
            + URLEncoder.encode(key, StandardCharsets.UTF_8));
  }

  HttpResponse<String> post(String path, String contentType, String body) {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", contentType)
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)));
  }

  HttpResponse<String> send(HttpRequest.Builder request) {
    try {
      return http.send(
          request.timeout(Duration.ofSeconds(20)).build(),
          HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The single answer of a 200 response. */
  static boolean present(HttpResponse<String> response) {
    Matcher m = PRESENT.matcher(response.body());
    if (response.statusCode() != 200 || !m.find()) {
      throw new AssertionError("not an answer: " + response.statusCode() + " " + response.body());
    }
    return Boolean.parseBoolean(m.group(1));
  }

  /** The answers of a 200 batch response, in order. */
  static boolean[] presentAll(HttpResponse<String> response) {
    Matcher m = LIST.matcher(response.body());
    if (response.statusCode() != 200 || !m.find()) {
      throw new AssertionError("not an answer: " + response.statusCode() + " " + response.body());
    }
    if (m.group(1).isEmpty()) {
      return new boolean[0];
    }
    List<String> values = List.of(m.group(1).split(","));
    boolean[] answers = new boolean[values.size()];
    for (int i = 0; i < answers.length; i++) {
      answers[i] = Boolean.parseBoolean(values.get(i));
    }
    return answers;
  }

  static long version(HttpResponse<String> response) {
    Matcher m = VERSION.matcher(response.body());
    if (!m.find()) {
      throw new AssertionError("no version: " + response.body());
    }
    return Long.parseLong(m.group(1));
  }
}
