"""Key hashes against values printed by the Java reader's own Murmur3x64 and Xxh64 classes."""

import numpy as np
import pytest

from bloomoperator_reader import hashing

# (key, murmur3 h1, murmur3 h2, xxh64): Murmur3x64.hashString / Xxh64.hashString of the same
# Java String (escapes as Java wrote them: "a\ud800b" holds an unpaired surrogate).
JAVA_STRINGS = [
    ('', 0, 0, 17241709254077376921),
    ('a', 9607679276477937801, 16624257681780017498, 15154266338359012955),
    ('hello', 14688674573012802306, 6565844092913065241, 2794345569481354659),
    ('product-0001', 9003263603283529973, 8448187108762728657, 16005799756711255609),
    ('0123456789abcdef', 5467490433528156583, 9782763267945859290, 6655072042875317515),
    ('0123456789abcdefX', 14838185036522510071, 10336343437188549415, 1784008730403585549),
    ('\\u00fcn\\u00efc\\u00f8d\\u00e9 \\u2713 \\ud83d\\ude00', 9302572739424607899, 9158132281353274931, 15663167060340529846),
    ('a\\ud800b', 7348157743185517386, 5990230301833966713, 6044807404705189727),
    ('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 13202881899713328253, 16954208655622672484, 12968755452232992934),
    ('The quick brown fox jumps over the lazy dog, twice over', 17065100528403357150, 16940445858002342254, 9317421213731043412),
]

# The same for Murmur3x64.hashLong / Xxh64.hashLong.
JAVA_LONGS = [
    (0, 2945182322382062539, 17462001654787800658, 3803688792395291579),
    (1, 19144387141682250, 4434582959624657926, 11468921228449061269),
    (-1, 11593587578262711667, 7575356704511641263, 9642548396912002761),
    (42, 13163110875106803192, 2646172625393561472, 13066772586158965587),
    (-9223372036854775808, 78142285821850151, 10078766454864339126, 4558309869707674848),
    (9223372036854775807, 7815693464130447828, 9078010830062108062, 18406436390665352972),
    (1234567890123, 15506224910913890035, 17379845352513669601, 15696548885179269725),
    (-987654321, 16290015928157564497, 7991310287991116146, 14615264728609429271),
]


def java_string(escaped: str) -> str:
    return escaped.encode("ascii").decode("unicode_escape")


@pytest.mark.parametrize(("key", "h1", "h2", "xxh"), JAVA_STRINGS)
def test_string_hashes_match_java(key, h1, h2, xxh):
    data = hashing.utf8(java_string(key))
    assert hashing.murmur3_128(data) == (h1, h2)
    assert hashing.xxh64(data) == xxh


def test_string_batches_match_java():
    keys = [java_string(row[0]) for row in JAVA_STRINGS]
    h1, h2 = hashing.murmur3_strings(keys)
    assert h1.tolist() == [row[1] for row in JAVA_STRINGS]
    assert h2.tolist() == [row[2] for row in JAVA_STRINGS]
    assert hashing.xxh64_strings(keys).tolist() == [row[3] for row in JAVA_STRINGS]


@pytest.mark.parametrize(("key", "h1", "h2", "xxh"), JAVA_LONGS)
def test_long_hashes_match_java(key, h1, h2, xxh):
    data = hashing.long_bytes(key)
    assert hashing.murmur3_128(data) == (h1, h2)
    assert hashing.xxh64(data) == xxh


def test_long_batches_are_hashed_as_arrays_exactly_as_java():
    keys = np.array([row[0] for row in JAVA_LONGS], dtype=np.int64)
    h1, h2 = hashing.murmur3_longs(keys)
    assert h1.tolist() == [row[1] for row in JAVA_LONGS]
    assert h2.tolist() == [row[2] for row in JAVA_LONGS]
    assert hashing.xxh64_longs(keys).tolist() == [row[3] for row in JAVA_LONGS]


def test_array_hashes_equal_the_c_hashes_on_many_keys():
    rng = np.random.default_rng(7)
    keys = rng.integers(-(2**63), 2**63 - 1, size=2000, dtype=np.int64, endpoint=True)
    h1, h2 = hashing.murmur3_longs(keys)
    xx = hashing.xxh64_longs(keys)
    for i, key in enumerate(keys.tolist()):
        data = hashing.long_bytes(key)
        assert hashing.murmur3_128(data) == (int(h1[i]), int(h2[i]))
        assert hashing.xxh64(data) == int(xx[i])


def test_surrogate_pair_held_as_two_code_points_is_one_character_as_in_java():
    assert hashing.utf8("\ud83d\ude00") == "\U0001F600".encode("utf-8")
    assert hashing.utf8("a\ud800b") == b"a?b"


def test_long_keys_outside_64_bits_are_refused():
    with pytest.raises(OverflowError):
        hashing.long_bytes(2**63)
    with pytest.raises(OverflowError):
        hashing.as_long_array([2**63])
    with pytest.raises(TypeError):
        hashing.as_long_array([True])
