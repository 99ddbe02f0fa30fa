"""Writes manifests.txt: a chain manifest of the test vectors, mutated field by field (name, then
the text in Base64, one per line), for Manifests.java to judge with Java's Manifest.fromJson."""
import base64
import json
import sys

case = json.load(open(sys.argv[1] + "/guava-chain/case.json"))
base = case["steps"][1]["configMaps"][0]["data"]["manifest.json"]
m = json.loads(base)
out = []


def add(name, text):
    out.append((name, text))


def mut(name, path, value, delete=False):
    d = json.loads(base)
    o = d
    for p in path[:-1]:
        o = o[p]
    if delete:
        del o[path[-1]]
    else:
        o[path[-1]] = value
    add(name, json.dumps(d, indent=2))


def raw(name, key, rawvalue):
    d = json.loads(base)
    d[key] = "@@RAW@@"
    add(name + "=" + rawvalue, json.dumps(d, indent=2).replace('"@@RAW@@"', rawvalue))


add("base", base)
for k in m:
    mut("missing " + k, [k], None, True)
    mut("null " + k, [k], None)
RAW = {
    "version": ['"2"', "2.0", "2e0", "true", "-0", '" 2"', '""', '"+2"', '"02"', '"2.0"', '"2e0"', '" "',
                '"0x2"', '"\uff12"', '"2 "', '"\\t2\\n"', '"2\\u00a0"', '"-2"', '"99999999999999999999"',
                '"2L"', '"1_0"'],
    "filterName": ["5", "true", '["products"]', "{}", "5.0", "1e2", "-3", "false", "5.50"],
    "keyType": ['"Long"', '"string"', "1"],
    "numBits": ['"5760"', "5760.0", "5.76e3"],
    "numHashFunctions": ['"7"', "7.5", "2147483655", '"7 "', '"+7"', '"07"', '"2147483648"'],
    "expectedFpp": ['"0.01"', "1", "1.5", "-0.0", "true", "1e-400", '" 0.01"', '"NaN"', '"Infinity"',
                    '"1e-2"', '".5"', '"0x1p-3"', '"5."', '"1d"', '"1f"', '""', "-0", "1E-2", "0.5e+0",
                    '"-0.0"', '"+0.5"', '"0x1"', '"inf"', '"0.5_0"'],
    "keyCount": ["9223372036854775808", "-1"],
    "totalBytes": ['"726"'],
    "createdAt": ["1767225660", "true", '"2026-01-01T00:01:00Z "'],
    "chunks": ["{}", '"x"', "[]", "[null]", "5"],
    "chain": ["[]", '"x"', "{}", "5", "null"],
    "store": ['""', '"s3"', "5", "null", '"S3"', "true"],
    "sha256": ['"' + m["sha256"].upper() + '"', '"' + m["sha256"][:63] + '"'],
    "unknownField": ['{"a":[1,2]}'],
}
for k, values in RAW.items():
    for v in values:
        raw(k, k, v)
mut("chunk bytes as string", ["chunks", 0, "bytes"], str(m["chunks"][0]["bytes"]))
mut("chunk bytes as float", ["chunks", 0, "bytes"], float(m["chunks"][0]["bytes"]))
mut("chunk extra field", ["chunks", 0, "extra"], 1)
mut("chunk name number", ["chunks", 0, "name"], 5)
mut("chunk missing sha", ["chunks", 0, "sha256"], None, True)
mut("chain baseVersion string", ["chain", "baseVersion"], "1")
mut("chain deltas null elem", ["chain", "deltas"], [None])
mut("chain deltas empty", ["chain", "deltas"], [])
mut("delta version string", ["chain", "deltas", 0, "version"], "2")
mut("delta changedBits float", ["chain", "deltas", 0, "changedBits"], 1.0)
mut("delta chunks missing", ["chain", "deltas", 0, "chunks"], None, True)
mut("delta extra", ["chain", "deltas", 0, "x"], None)
add("duplicate version", base.replace('"version" : 2,', '"version" : 1, "version" : 2,', 1))
add("duplicate version 2", base.replace('"version" : 2,', '"version" : 2, "version" : 1,', 1))
add("trailing object", base + " {}")
add("trailing garbage", base + " x")
add("trailing whitespace", base + " \n ")
add("leading whitespace", " \n" + base)
add("bom", "\ufeff" + base)
add("comment", "/* c */" + base)
add("array", "[" + base + "]")
add("number", "5")
add("string", '"x"')
add("null", "null")
add("empty", "")
add("trailing comma", base[:-1].rstrip() + ",}")
add("single quotes", base.replace('"format"', "'format'"))
add("nan", base.replace('"expectedFpp" : ', '"expectedFpp" : NaN, "x": ', 1))
with open("manifests.txt", "w") as f:
    for n, t in out:
        f.write(n.replace("\t", " ") + "\t" + base64.b64encode(t.encode()).decode() + "\n")
