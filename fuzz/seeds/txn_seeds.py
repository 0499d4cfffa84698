#!/usr/bin/env python3
"""Writes seed inputs of the `model` target that hold transaction scripts
(`fuzz_targets/model_txns.rs`) into `corpus/model/txn-NN`, encoded as the
`arbitrary` crate (1.x) decodes them: little-endian u32 enum tags read as
variant (tag * count) >> 32, a u8 per u8 and per bool (low bit), a
keep-going byte before each element of a Vec. Random bytes rarely make a
script of more than a step or two; these have dozens, on a few hot keys so
that commits conflict. Run from `fuzz/`: `python3 seeds/txn_seeds.py`.
"""
import random
import struct

# The first byte of a keyspace tag and a transaction mark (model.rs).
KS_TAGS = [20, 24, 26, 29, 30, 66, 70, 71, 84, 88]
TXN_MARKS = [64, 65, 66, 69, 70, 72, 73, 74, 75, 76]
OP_VARIANTS = 19    # model.rs `Op`
STEP_VARIANTS = 13  # model_txns.rs `TxnStep`
OP = {"Put": 0, "Delete": 1, "Get": 3, "Flush": 11, "Compact": 12, "Reopen": 13}
STEP = {n: i for i, n in enumerate([
    "Get", "GetForUpdate", "Put", "Delete", "Merge", "Scan", "Prefix", "Savepoint",
    "RollbackToSavepoint", "End", "PlainPut", "PlainDeleteRange", "Flush"])}


def tag(index, count, avoid=()):
    """A u32 whose variant is `index` of `count`, whose low byte is not in `avoid`."""
    v = -(-index * (1 << 32) // count)
    while v & 0xFF in avoid:
        v += 1
    assert (v * count) >> 32 == index
    return struct.pack("<I", v)


def vec(items):
    return b"".join(b"\x01" + i for i in items) + b"\x00"


def value(rng):
    return vec(bytes([rng.choice(b"abcxyz")]) for _ in range(rng.randint(0, 4)))


def key(rng):
    # key000..key005 mostly (hot, so that transactions collide).
    return bytes([rng.randint(0, 5) if rng.random() < 0.8 else rng.randint(0, 239)])


def step(rng):
    name = rng.choice(list(STEP) + ["Get", "Put", "GetForUpdate", "End"])
    who = bytes([rng.randint(0, 1)])
    body = {
        "Get": lambda: who + key(rng),
        "GetForUpdate": lambda: who + key(rng),
        "Put": lambda: who + key(rng) + value(rng),
        "Delete": lambda: who + key(rng),
        "Merge": lambda: who + key(rng) + value(rng),
        "Scan": lambda: who + key(rng) + key(rng) + bytes([rng.randint(0, 1)]),
        "Prefix": lambda: who + vec([b"k", b"e"][: rng.randint(0, 2)]),
        "Savepoint": lambda: who,
        "RollbackToSavepoint": lambda: who,
        "End": lambda: who + bytes([int(rng.random() < 0.2)]),
        "PlainPut": lambda: key(rng) + value(rng),
        "PlainDeleteRange": lambda: key(rng) + key(rng) + bytes([rng.randint(0, 24)]),
        "Flush": lambda: b"",
    }[name]()
    return tag(STEP[name], STEP_VARIANTS) + body


def script(rng):
    head = bytes([rng.choice(KS_TAGS), rng.choice(TXN_MARKS), 0, 0])
    return head + bytes([rng.randrange(8)]) + vec(step(rng) for _ in range(rng.randint(6, 35)))


def op(rng):
    name = rng.choice(list(OP))
    body = {
        "Put": lambda: key(rng) + value(rng),
        "Delete": lambda: key(rng),
        "Get": lambda: key(rng),
    }.get(name, lambda: b"")()
    return tag(OP[name], OP_VARIANTS, avoid=set(range(256)) & set(
        [20, 24, 26, 29, 30, 66, 70, 71, 84, 88, 94, 100, 104, 114, 118, 124, 129, 138, 140,
         142, 150, 152, 160, 164, 166, 174, 177, 182, 186, 192, 196, 210, 220, 223, 224, 226,
         234, 240, 246])) + body


def main():
    rng = random.Random(51)
    for n in range(24):
        items = [script(rng) if rng.random() < 0.6 else op(rng) for _ in range(rng.randint(2, 8))]
        with open(f"corpus/model/txn-{n:02}", "wb") as f:
            f.write(b"".join(b"\x01" + i for i in items) + b"\x00")


if __name__ == "__main__":
    main()
