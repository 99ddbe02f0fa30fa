#!/usr/bin/env python3
"""A client of the lookup sidecar's HTTP API in another language, written from its README alone
(standard library only). Usage: lookup_client.py BASE_URL FILTER PROBES_FILE

Asks every probe key of PROBES_FILE (one a line, UTF-8) three ways: one GET per key (percent-encoded
UTF-8 in the query string), one text/plain batch (a key a line) and one JSON batch (an array).
Prints one JSON line per way: {"way", "versions": [...], "answers": "0101..."}; the Java test
compares the answers with Java's for the version named.
"""
import json
import sys
import urllib.parse
import urllib.request


def ask(request):
    with urllib.request.urlopen(request, timeout=10) as answer:
        if answer.status != 200:
            raise SystemExit("HTTP %d" % answer.status)
        return json.loads(answer.read().decode("utf-8"))


def main():
    base, name, probes_file = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(probes_file, encoding="utf-8") as f:
        keys = f.read().split("\n")
    url = "%s/v1/filters/%s/contains" % (base, urllib.parse.quote(name, safe=""))

    versions, answers = set(), []
    for key in keys:
        got = ask(url + "?key=" + urllib.parse.quote(key, safe=""))
        versions.add(got["version"])
        answers.append("1" if got["present"] else "0")
    print(json.dumps({"way": "get", "versions": sorted(versions), "answers": "".join(answers)}))

    text = urllib.request.Request(
        url, data="\n".join(keys).encode("utf-8"), headers={"Content-Type": "text/plain"})
    got = ask(text)
    print(json.dumps({"way": "text", "versions": [got["version"]],
                      "answers": "".join("1" if p else "0" for p in got["present"])}))

    array = urllib.request.Request(
        url, data=json.dumps(keys).encode("utf-8"), headers={"Content-Type": "application/json"})
    got = ask(array)
    print(json.dumps({"way": "json", "versions": [got["version"]],
                      "answers": "".join("1" if p else "0" for p in got["present"])}))


if __name__ == "__main__":
    main()
