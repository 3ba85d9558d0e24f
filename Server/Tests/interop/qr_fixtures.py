"""Writes Server/Tests/LatchkeyQRTests/ReferenceSymbols.swift: QR codes made by segno, the fixtures LatchkeyQR's tests
compare with (they need no Python to run).

    python3 -m venv /tmp/qrvenv && /tmp/qrvenv/bin/pip install segno==1.6.6 qrcode==8.2
    /tmp/qrvenv/bin/python Server/Tests/interop/qr_fixtures.py > Server/Tests/LatchkeyQRTests/ReferenceSymbols.swift

Every symbol is byte mode with the error-correction level given (no boosting, no ECI), in the smallest version that
holds the bytes; the mask is segno's choice unless a case forces one. Whole symbols are written as rows of hex
(a row's modules most significant bit first, 1 dark, padded with 0 to whole digits). For every version and level the
byte capacity, segno's mask and an FNV-1a 64 hash of the modules (row by row, one byte 0 or 1 each) are written too.

segno 1.6.6 adds a whole zero codeword where the bit stream already ends on a codeword boundary (clause 7.4.10 pads
only to the boundary; https://github.com/heuer/segno/issues/148): byte mode always ends there after its terminator,
so this script mends that one function. Each whole symbol is also made by python-qrcode, a second encoder, with the
same version and mask, and must be identical.
"""

import qrcode
import qrcode.util
import segno
from segno import consts, encoder


def _write_padding_bits(buff, version, length):
    """segno's own, less the extra codeword of issue 148 (Micro QR's M1 and M3 still get none)."""
    if version not in (consts.VERSION_M1, consts.VERSION_M3):
        buff.extend([0] * (-length % 8))


encoder.write_padding_bits = _write_padding_bits

LEVELS = (("L", ".low"), ("M", ".medium"), ("Q", ".quartile"), ("H", ".high"))

OTPAUTH_100 = "otpauth://totp/Latchkey:ada.lovelace%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEH&issuer=Latchkey"
OTPAUTH_250 = (
    "otpauth://totp/Latchkey%20Staging%20Console:zo%C3%AB.hern%C3%A1ndez-garc%C3%ADa%40operations.eu-west-1.example.com"
    "?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBV&issuer=Latchkey%20Staging%20Console"
    "&algorithm=SHA256&digits=8&period=30"
)
assert len(OTPAUTH_100) == 100 and len(OTPAUTH_250) == 250

# (what it shows, text, level, forced mask or None); the name gets the version and level segno chose.
WHOLE_SYMBOLS = [
    ("one word", "Latchkey", "M", None),
    ("UTF-8 text", "Zoë signs in to 日本 with Latchkey", "L", None),
    ("a 100-byte otpauth URI", OTPAUTH_100, "M", None),
    ("a 250-byte otpauth URI", OTPAUTH_250, "M", None),
    ("the 100-byte URI at level Q", OTPAUTH_100, "Q", None),
    ("the 100-byte URI at level H", OTPAUTH_100, "H", None),
    ("the first version with version information", "v7 " + "x" * 150, "L", None),
    ("a long text", "Latchkey QR codes, byte mode. " * 20, "M", None),
    ("the largest version", "The largest symbol of all: version 40. " * 32, "H", None),
    # Found by search: without the dark-module balance (N4) segno would choose mask 4, not 2.
    ("a mask that the dark-module balance decides", "Latchkey 117", "M", None),
] + [(f"mask {mask} forced", "https://latchkey.example/enrol?code=42", "Q", mask) for mask in range(8)]


def capacity(version, level):
    """Bytes of one byte-mode segment that fit: data bits less the mode indicator and the count."""
    count_bits = 8 if version <= 9 else 16
    return (consts.SYMBOL_CAPACITY[version][consts.ERROR_MAPPING[level]] - 4 - count_bits) // 8


def filler(count, version, level_index):
    """The bytes of the capacity table's symbols (the tests make the same)."""
    return bytes((index * 73 + version * 11 + level_index * 5 + 1) & 0xFF for index in range(count))


def make(data, level, mask=None):
    qr = segno.make_qr(data, error=level.lower(), mode="byte", mask=mask, boost_error=False, eci=False)
    assert qr.mode == "byte" and qr.error == level and not qr.is_micro
    return qr


def python_qrcode_matrix(data, level, version, mask):
    """The same symbol made by python-qrcode: byte mode, the version and mask given, no quiet zone."""
    levels = {"L": qrcode.constants.ERROR_CORRECT_L, "M": qrcode.constants.ERROR_CORRECT_M,
              "Q": qrcode.constants.ERROR_CORRECT_Q, "H": qrcode.constants.ERROR_CORRECT_H}
    qr = qrcode.QRCode(version=version, error_correction=levels[level], border=0, mask_pattern=mask)
    qr.add_data(qrcode.util.QRData(data, mode=qrcode.util.MODE_8BIT_BYTE), optimize=0)
    qr.make(fit=False)
    return [[bool(module) for module in row] for row in qr.get_matrix()]


def hex_rows(qr):
    rows = []
    for row in qr.matrix:
        bits = "".join("1" if module else "0" for module in row)
        bits += "0" * (-len(bits) % 4)
        rows.append("".join(f"{int(bits[i:i + 4], 2):x}" for i in range(0, len(bits), 4)))
    return rows


def fnv1a64(qr):
    digest = 0xCBF29CE484222325
    for row in qr.matrix:
        for module in row:
            digest = ((digest ^ (1 if module else 0)) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return digest


def swift_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    level_names = dict(LEVELS)
    out = [
        f"// Generated by Server/Tests/interop/qr_fixtures.py with segno {segno.__version__}: do not edit by hand.",
        "import LatchkeyQR",
        "",
        "extension ReferenceSymbol {",
        "    static let all: [ReferenceSymbol] = [",
    ]
    for name, text, level, forced in WHOLE_SYMBOLS:
        data = text.encode("utf-8")
        qr = make(data, level, forced)
        segno_matrix = [[bool(module) for module in row] for row in qr.matrix]
        assert segno_matrix == python_qrcode_matrix(data, level, qr.version, qr.mask), name
        out += [
            "        ReferenceSymbol(",
            f"            name: {swift_string(f'{name}, version {qr.version}-{level}')},",
        ]
        chunks = [swift_string(text[i:i + 96]) for i in range(0, len(text), 96)]
        if len(chunks) == 1:
            out.append(f"            text: [{chunks[0]}],")
        else:
            out += ["            text: ["] + [f"                {chunk}," for chunk in chunks] + ["            ],"]
        out += [
            f"            errorCorrection: {level_names[level]}, forcedMask: {'nil' if forced is None else forced},"
            f" version: {qr.version}, mask: {qr.mask},",
            "            rows: [",
        ]
        out += [f'                "{row}",' for row in hex_rows(qr)]
        out += ["            ]", "        ),"]
    out += ["    ]", "}", "", "extension ReferenceHash {", "    static let all: [ReferenceHash] = ["]
    for version in range(1, 41):
        for level_index, (level, swift_level) in enumerate(LEVELS):
            count = capacity(version, level)
            data = filler(count, version, level_index)
            qr = make(data, level)
            assert qr.version == version, (version, level, qr.version)
            assert [[bool(module) for module in row] for row in qr.matrix] == python_qrcode_matrix(data, level, version, qr.mask)
            if version < 40:
                assert make(filler(count + 1, version, level_index), level).version == version + 1
            out.append(
                f"        ReferenceHash(version: {version}, errorCorrection: {swift_level}, byteCount: {count},"
                f" mask: {qr.mask}, hash: 0x{'_'.join(f'{fnv1a64(qr):016x}'[i:i + 4] for i in range(0, 16, 4))}),"
            )
    out += ["    ]", "}"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
