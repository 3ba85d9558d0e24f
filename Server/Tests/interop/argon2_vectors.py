"""Argon2 answers from argon2-cffi (libargon2, the reference C implementation) for LatchkeyPasswords' interop tests.

Needs argon2-cffi (tested with 25.1.0 and argon2-cffi-bindings 26.2.0). Every command prints JSON on stdout:

  raw-cases COUNT SEED      random inputs and the tags argon2.low_level.hash_secret_raw gives for them
  phc-strings SEED          PHC strings made by argon2.PasswordHasher, with the passwords they hash
  verify FILE               for each {"password", "phc"} in FILE, whether argon2.PasswordHasher verifies it
  scrypt-strings SEED       $scrypt$ln=…,r=…,p=…$salt$hash strings (passlib's layout) made with hashlib.scrypt
"""

import base64
import hashlib
import json
import math
import random
import sys

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from argon2.low_level import Type, hash_secret_raw

TYPES = {"argon2d": Type.D, "argon2i": Type.I, "argon2id": Type.ID}
UNICODE_PASSWORDS = ["pässwörd", "パスワード", "🔑 key", "Ωmega\u00a0space", "\u0000nul"]


def random_password(rng, index):
    """Empty first, then a mix of UTF-8 text and arbitrary bytes (not valid UTF-8 either)."""
    if index == 0:
        return b""
    if index % 4 == 1:
        return rng.choice(UNICODE_PASSWORDS).encode("utf-8")
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, 128)))


def raw_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        variant = "argon2id" if index % 3 != 2 else rng.choice(["argon2d", "argon2i"])
        lanes = rng.randint(1, 4)
        # Log-uniform memory from 8p to 4096 KiB, with the extremes always present.
        low, high = 8 * lanes, 4096
        if index == 1:
            memory = high
        elif index == 2:
            memory = low
        else:
            memory = int(math.exp(rng.uniform(math.log(low), math.log(high))))
        case = {
            "variant": variant,
            "password": random_password(rng, index).hex(),
            "salt": bytes(rng.randrange(256) for _ in range(rng.randint(8, 32))).hex(),
            "memory": memory,
            "iterations": rng.randint(1, 4),
            "parallelism": lanes,
            "tagLength": 4 if index == 3 else 64 if index == 4 else rng.randint(4, 64),
        }
        case["tag"] = hash_secret_raw(
            bytes.fromhex(case["password"]), bytes.fromhex(case["salt"]), case["iterations"], case["memory"],
            lanes, case["tagLength"], TYPES[variant]).hex()
        cases.append(case)
    return cases


def phc_strings(seed):
    rng = random.Random(seed)
    settings = [
        dict(time_cost=2, memory_cost=19456, parallelism=1, hash_len=32, salt_len=16),  # OWASP, what we store
        dict(time_cost=1, memory_cost=64, parallelism=1, hash_len=32, salt_len=16),
        dict(time_cost=3, memory_cost=256, parallelism=2, hash_len=16, salt_len=8),
        dict(time_cost=2, memory_cost=512, parallelism=4, hash_len=64, salt_len=32),
    ]
    passwords = ["", "correct horse battery staple"] + UNICODE_PASSWORDS
    results = []
    for index, password in enumerate(passwords):
        hasher = PasswordHasher(**settings[index % len(settings)])
        results.append({"password": password, "phc": hasher.hash(password)})
    # argon2i and argon2d strings as well, at small cost.
    for variant in ("argon2i", "argon2d"):
        hasher = PasswordHasher(time_cost=2, memory_cost=128, parallelism=1, type=TYPES[variant])
        password = rng.choice(passwords)
        results.append({"password": password, "phc": hasher.hash(password)})
    return results


def verify(path):
    with open(path, encoding="utf-8") as file:
        entries = json.load(file)
    hasher = PasswordHasher()
    answers = []
    for entry in entries:
        try:
            answers.append(hasher.verify(entry["phc"], entry["password"]))
        except (VerificationError, InvalidHashError):
            answers.append(False)
    return answers


def scrypt_strings(seed):
    rng = random.Random(seed)
    encode = lambda data: base64.b64encode(data).decode("ascii").rstrip("=")
    results = []
    for password, (log_cost, block_size, parallelism) in zip(["", "correct horse battery staple"] + UNICODE_PASSWORDS,
                                                             [(17, 8, 1), (10, 8, 1), (12, 4, 2), (8, 16, 1), (14, 1, 3)]):
        salt = bytes(rng.randrange(256) for _ in range(16))
        key = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=1 << log_cost, r=block_size, p=parallelism,
                             maxmem=1 << 30, dklen=32)
        phc = f"$scrypt$ln={log_cost},r={block_size},p={parallelism}${encode(salt)}${encode(key)}"
        results.append({"password": password, "phc": phc})
    return results


def main(arguments):
    command = arguments[0] if arguments else ""
    if command == "raw-cases":
        result = raw_cases(int(arguments[1]), int(arguments[2]))
    elif command == "phc-strings":
        result = phc_strings(int(arguments[1]))
    elif command == "scrypt-strings":
        result = scrypt_strings(int(arguments[1]))
    elif command == "verify":
        result = verify(arguments[1])
    else:
        sys.exit(__doc__)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
